"""Files of an index directory: atomic writes, hashes, and readers that turn damage into clear errors.

Every file is written to a temporary name and renamed into place, so a killed process leaves either
the old file or the new one. Shards are whole directories renamed into place the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from encoder.files import atomic_path, sha256_of
from encoder.numbers import check_finite

from .errors import CorruptIndexError


def file_record(path: Path) -> dict[str, Any]:
    """Size and sha256 of a file, as stored in the manifest."""
    return {"size": path.stat().st_size, "sha256": sha256_of(path)}


def check_file(path: Path, record: dict[str, Any], verify_hash: bool) -> None:
    """Raise CorruptIndexError if ``path`` is missing, has the wrong size or (optionally) the wrong hash."""
    advice = "the index is damaged; rebuild it (or restore the directory from a backup)"
    if not path.is_file():
        raise CorruptIndexError(f"{path} is missing: {advice}")
    size = path.stat().st_size
    if size != record["size"]:
        raise CorruptIndexError(
            f"{path} has {size} bytes but the manifest says {record['size']} (truncated?): {advice}"
        )
    if verify_hash and file_record(path)["sha256"] != record["sha256"]:
        raise CorruptIndexError(f"{path} does not match its sha256 in the manifest: {advice}")


def write_json(path: Path, data: Any) -> None:
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read_json(path: Path, advice: str = "the index is damaged, rebuild it") -> Any:
    try:
        data = path.read_bytes()
    except OSError as error:  # permissions, a folder of that name: what to do is not the advice for bad contents
        raise CorruptIndexError(f"{path} cannot be read ({error.strerror or error}); check it") from None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorruptIndexError(f"{path} cannot be read ({error}); {advice}") from None


def write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def write_parquet(path: Path, frame: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp)


def read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pq.read_table(path).to_pandas()
    except (OSError, pa.ArrowException) as error:
        raise CorruptIndexError(f"{path} cannot be read ({error}); the index is damaged, rebuild it") from None


def write_npy(path: Path, array: np.ndarray) -> None:
    """Write vectors, none of them NaN or infinite (so an index never holds one: its hash is checked on opening)."""
    check_finite(f"the vectors to write to {path}", array)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.save(f, array, allow_pickle=False)


def read_npy(path: Path, shape: tuple[int, ...]) -> np.ndarray:
    """Memory-map an array written by ``write_npy``, checking its shape (never unpickles)."""
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as error:
        raise CorruptIndexError(f"{path} cannot be read ({error}); the index is damaged, rebuild it") from None
    if array.shape != tuple(shape):
        raise CorruptIndexError(
            f"{path} holds an array of shape {array.shape}, expected {tuple(shape)}; rebuild the index"
        )
    return array


def write_faiss(path: Path, index: faiss.Index) -> None:
    with atomic_path(path) as tmp:
        faiss.write_index(index, tmp)


def read_faiss(path: Path, ntotal: int, dim: int) -> faiss.Index:
    try:
        index = faiss.read_index(str(path))
    except RuntimeError as error:
        raise CorruptIndexError(
            f"{path} is not a readable FAISS index ({str(error).splitlines()[0]}); rebuild the index"
        ) from None
    if index.ntotal != ntotal or index.d != dim:
        raise CorruptIndexError(
            f"{path} holds {index.ntotal} vectors of dim {index.d}, the manifest says "
            f"{ntotal} of dim {dim}; rebuild the index"
        )
    return index
