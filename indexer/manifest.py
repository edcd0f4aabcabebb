"""The layout of an index directory and its manifest: reading it, checking files and the model.

INDEX_DIR/manifest.json              what the index is; written last, atomically (the commit point)
INDEX_DIR/build-state.json           only while a build/add runs or after one was killed (for resuming)
INDEX_DIR/shards/NNNNN/              one directory per shard of documents (appears atomically)
    docs.parquet sentences.parquet tokens.parquet sentence_layers.npy token_layers.npy title_layers.npy shard.json
INDEX_DIR/{sentences,tokens,glove}.gG.faiss   FAISS indexes of generation G (``add`` writes G+1)
INDEX_DIR/vocab.gG.parquet           word counts of the indexed text
INDEX_DIR/glove.txt                  only when GloVe was trained on the corpus (``--glove train``); Stanford's
                                     vectors or another GloVe file are referred to by the manifest, not copied
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from encoder import Elmo
from encoder.elmo import resolve_model
from encoder.glove import Glove
from encoder.glove import check as check_glove

from . import storage
from .errors import IndexFormatError, IndexMismatchError
from .glove import GloveVectors
from .vectors import LayerStore

FORMAT_VERSION = 2
MANIFEST, STATE, SHARDS, GLOVE_FILE, LOCK = "manifest.json", "build-state.json", "shards", "glove.txt", ".lock"
SHARD_FILES = (
    "docs.parquet",
    "sentences.parquet",
    "tokens.parquet",
    "sentence_layers.npy",
    "token_layers.npy",
    "title_layers.npy",
)

ModelSpec = str | Path | Sequence[str | Path] | Elmo


def read_manifest(out: Path) -> dict:
    """The manifest of the index at ``out``, or a clear error if there is none or it is too new."""
    path = out / MANIFEST
    if not path.is_file():
        if (out / STATE).is_file():
            raise IndexFormatError(f"{out} holds an interrupted build; re-run the same build command to resume it")
        if not out.exists():
            raise IndexFormatError(f"{out} does not exist; build an index with `python -m indexer build`")
        raise IndexFormatError(
            f"{out} is not an index ({MANIFEST} is missing); build one with `python -m indexer build`"
        )
    manifest = storage.read_json(path)
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if not isinstance(version, int):
        raise IndexFormatError(f"{path} is not an index manifest (no format_version); rebuild the index")
    if version > FORMAT_VERSION:
        raise IndexFormatError(
            f"{out} was written in index format {version}, newer than this code reads "
            f"({FORMAT_VERSION}); update ELMo Search or rebuild the index"
        )
    if version < FORMAT_VERSION:
        raise IndexFormatError(
            f"{out} was written in index format {version} by an older ELMo Search (this one writes "
            f"{FORMAT_VERSION}: documents, titles and weighted pooling); rebuild it with the same command and "
            "--overwrite"
        )
    return manifest


def check_files(out: Path, manifest: dict, verify_hashes: bool) -> None:
    """Every file the manifest lists exists with its size (and, if asked, its sha256)."""
    for shard in manifest["shards"]:
        for name, record in shard["files"].items():
            storage.check_file(out / SHARDS / shard["name"] / name, record, verify_hashes)
    for entry in [*manifest["files"].values(), *manifest["indexes"].values()]:
        if "file" in entry:
            storage.check_file(out / entry["file"], entry, verify_hashes)
        else:  # GloVe outside the index: Stanford's package or a file elsewhere
            _check_glove(out, entry)


def _check_glove(out: Path, entry: dict) -> None:
    try:
        check_glove(entry)
    except ValueError as error:
        raise IndexFormatError(f"{out}: {error}; rebuild the index") from None


def open_glove(out: Path, entry: dict) -> GloveVectors:
    """The GloVe an index uses: trained on its corpus (a file in the index), or the one it refers to (Stanford's
    package, or a GloVe file elsewhere), checked against what it recorded. Never copied into the index."""
    if "file" in entry:
        return GloveVectors.load(out / entry["file"])
    _check_glove(out, entry)
    return GloveVectors(Glove.open(entry["source"]))


def load_model(model: ModelSpec, device: str = "cpu") -> tuple[Elmo, Any]:
    """The Elmo for ``model`` and how the manifest names it: "default", our model folder, or [options, weights]
    (found by ``encoder.elmo.resolve_model``)."""
    if isinstance(model, Elmo):
        return model, None
    found = resolve_model(*model) if isinstance(model, (list, tuple)) else resolve_model(model)
    if str(model) == "default":
        source: Any = "default"
    elif found.folder is not None:
        source = str(found.folder.resolve())
    else:
        source = [str(found.options.resolve()), str(found.weights.resolve())]
    return Elmo.load(*(source if isinstance(source, list) else [source]), device=device), source


def model_record(elmo: Elmo, source: Any) -> dict[str, Any]:
    return {"name": elmo.name, "hash": elmo.model_hash, "source": source, "dim": elmo.dim, "n_layers": elmo.n_layers}


def open_model(manifest: dict, model: ModelSpec | None, device: str) -> Elmo:
    """The model the index was built with (``model`` or the one the manifest names), checked by content hash."""
    expected = manifest["model"]
    if model is None:
        if expected["source"] is None:
            raise IndexMismatchError(
                f"the index does not record where its model ({expected['name']}) is; "
                "pass the model directory (model=... / --model)"
            )
        model = expected["source"]
    try:
        elmo, _ = load_model(model, device)
    except (FileNotFoundError, ValueError, OSError) as error:
        raise IndexMismatchError(
            f"cannot load the model the index was built with ({expected['name']}): {error}; "
            "pass its location with model=... / --model"
        ) from None
    if elmo.model_hash != expected["hash"]:
        raise IndexMismatchError(
            f"the index was built with model {expected['name']!r} (hash {expected['hash']}), "
            f"but {elmo.name!r} (hash {elmo.model_hash}) was given; open it with the same model "
            "or rebuild the index with this one"
        )
    return elmo


def shard_layers(out: Path, shards: list[dict], kind: str, dims: tuple[int, int]) -> LayerStore:
    """The per-layer vectors of ``kind`` ("sentence", "token" or "title") of the shards, memory-mapped."""
    count = {"sentence": "sentences", "token": "token_vectors", "title": "documents"}[kind]
    return LayerStore(
        [storage.read_npy(out / SHARDS / s["name"] / f"{kind}_layers.npy", (s[count], *dims)) for s in shards]
    )
