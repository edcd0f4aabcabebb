"""``python -m indexer export``: an index's vectors and ids for another vector store, as NumPy ``.npy`` or Parquet.

The folder written (``--out``) holds ``export.json`` (what the files hold: the model, the layer mix, the dimension,
the counts) and, row for row in index order, the live rows only (``live.LiveRows``: removed and replaced
documents left out):

  ``--format npy``       documents.npy       float32 (n_documents, dim)
                         document_ids.npy    unicode (n_documents,)   the documents' ids (``np.load`` without pickle)
      with ``--tokens``  tokens.npy          float32 (n_tokens, dim)
                         token_ids.npy       int64 (n_tokens,)        the token vectors' ids in the index
                         token_words.npy     unicode (n_tokens,)
                         token_document_ids.npy unicode (n_tokens,)
  ``--format parquet``   documents.parquet   doc_id, title (string), vector (fixed-size list of float32, dim)
      with ``--tokens``  tokens.parquet      token_id (int64), doc_id, word (string), sentence_id, position, char_start,
                                             char_end (int64: the word's place in its sentence), vector

A document's vector is the mean of its sentences' vectors (each pooled as the index pools them, mixed under the
layer mix and L2-normalised), L2-normalised: cosine similarity is then a dot product. A token's vector is its
occurrence's vector under the mix, L2-normalised. The layer mix is the index's search mix for documents and its
word-in-context mix for tokens, unless ``--layers`` gives one.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from encoder import LayerMix, ownership
from encoder.errors import placing
from encoder.files import atomic_directory

from .errors import QueryError
from .index import Index
from .parts import shard_layers
from .vectors import normalize

FORMATS = ("npy", "parquet")
LAYOUT_FILE = "export.json"
EXPORT_FILES = {
    "npy": (
        "documents.npy",
        "document_ids.npy",
        "tokens.npy",
        "token_ids.npy",
        "token_words.npy",
        "token_document_ids.npy",
    ),
    "parquet": ("documents.parquet", "tokens.parquet"),
}
"""Every file an export may write: an earlier export of ours is replaced as a whole, anything else is refused."""


def is_export(path: Path) -> bool:
    """Whether ``path`` is an export folder written here (or an empty one), or a file that such a folder's
    ``export.json`` records writing (``ownership``): never a file by its name alone, such as a user's corpus called
    ``documents.parquet``."""
    if path.is_dir():  # claimed when it is one (each file in it is then looked at), or empty
        return _written_files(path) is not None or not any(path.iterdir())
    written = _written_files(path.parent)
    return written is not None and (path.name == LAYOUT_FILE or path.name in written)


def _written_files(folder: Path) -> set[str] | None:
    """The export files that ``folder``'s ``export.json`` says an export wrote there; None where it holds no
    readable record of ours."""
    try:
        layout = json.loads((folder / LAYOUT_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    files = layout.get("files") if isinstance(layout, dict) else None
    if not isinstance(files, list):
        return None
    return {name for name in files if any(name in names for names in EXPORT_FILES.values())}


def document_vectors(index: Index, weights: tuple[float, ...]) -> tuple[list[dict], np.ndarray]:
    """The live documents (id and title) and their vectors: the mean of their sentences' mixed vectors."""
    dims = (index.elmo.n_layers, index.elmo.dim)
    sentences = shard_layers(index.path, index.manifest.shards, "sentence", dims)
    sums = np.zeros((len(index.docs), index.elmo.dim), np.float32)
    start = 0
    for chunk in sentences.mixed(weights):
        np.add.at(
            sums, index.parts.sentence_docs[start : start + len(chunk)], chunk
        )  # by row: an id may be stored twice
        start += len(chunk)
    live = index.live.documents
    documents = index.docs.loc[live, ["doc_id", "title"]]
    return documents.to_dict("records"), normalize(sums[live])


Tokens = tuple[pd.DataFrame, np.ndarray]
"""Token occurrences (their table's rows, index = token id) and their vectors, row for row."""


def token_vectors(index: Index, weights: tuple[float, ...]) -> Tokens:
    """The live token occurrences (their table's columns) and their vectors under ``weights``."""
    if not index.manifest.settings.keep_exact_tokens:
        raise QueryError(
            "this index keeps no exact token vectors (built with --no-exact-tokens); export without --tokens"
        )
    layers = shard_layers(index.path, index.manifest.shards, "token", (index.elmo.n_layers, index.elmo.dim))
    table = index.tokens.assign(doc_id=index.sentences["doc_id"].to_numpy()[index.tokens["sentence_id"].to_numpy()])
    live = index.live.tokens
    table = table[live]
    vectors = np.concatenate(list(layers.mixed(weights))) if len(layers) else np.zeros((0, index.elmo.dim), np.float32)
    return table, vectors[live]


def export(index: Index, out: Path, fmt: str = "npy", tokens: bool = False, layers: str | None = None) -> dict:
    """Write the export folder ``out`` (see the module's docstring) in one step; returns what ``export.json``
    says. A folder of an earlier export is replaced; anything else in the way is refused, untouched."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    ownership.check_outside_owned(out, "the export folder", "the export")  # before any work
    ownership.check_removable(out.parent, [out], is_export)
    try:
        document_mix = LayerMix.parse(layers, index.elmo.n_layers) if layers else index.search_mix
    except ValueError as error:
        raise QueryError(f"bad layer mix: {error}") from None
    token_mix = document_mix if layers else index.layer_mix
    documents, vectors = document_vectors(index, document_mix.weights)
    found = token_vectors(index, token_mix.weights) if tokens else None
    layout = {
        "format": fmt,
        "index": str(index.path),
        "model": {"name": index.elmo.name, "hash": index.elmo.model_hash},
        "dim": index.elmo.dim,
        "documents": {"count": len(documents), "layers": list(document_mix.weights)},
        **({"tokens": {"count": len(found[0]), "layers": list(token_mix.weights)}} if found else {}),
        "normalised": True,
    }
    with atomic_directory(out) as tmp:
        (_write_npy if fmt == "npy" else _write_parquet)(tmp, documents, vectors, found)
        layout["files"] = sorted(p.name for p in tmp.iterdir())
        (tmp / LAYOUT_FILE).write_text(json.dumps(layout, indent=2, ensure_ascii=False))
        # an earlier export goes only once the new one is whole (a failed or interrupted write leaves it as it was)
        placing(out)
        ownership.remove(out.parent, [out], is_export)
    return layout


def _write_npy(folder: Path, documents: list[dict], vectors: np.ndarray, found: Tokens | None) -> None:
    arrays = {"documents": vectors, "document_ids": np.array([d["doc_id"] for d in documents], dtype=str)}
    if found is not None:
        table, token_vectors_ = found
        arrays |= {
            "tokens": token_vectors_,
            "token_ids": table.index.to_numpy(np.int64),
            "token_words": table["word"].to_numpy(str),
            "token_document_ids": table["doc_id"].to_numpy(str),
        }
    for name, array in arrays.items():
        np.save(folder / f"{name}.npy", array, allow_pickle=False)


def _vector_column(vectors: np.ndarray) -> pa.Array:
    dim = vectors.shape[1]
    return pa.FixedSizeListArray.from_arrays(pa.array(vectors.astype(np.float32).ravel()), dim)


def _write_parquet(folder: Path, documents: list[dict], vectors: np.ndarray, found: Tokens | None) -> None:
    table = pa.table(
        {
            "doc_id": pa.array([d["doc_id"] for d in documents], pa.string()),
            "title": pa.array([d["title"] for d in documents], pa.string()),
            "vector": _vector_column(vectors),
        }
    )
    pq.write_table(table, folder / "documents.parquet")
    if found is not None:
        rows, token_vectors_ = found
        columns = {"token_id": pa.array(rows.index.to_numpy(np.int64))}
        columns |= {c: pa.array(rows[c].to_numpy()) for c in ("doc_id", "word")}
        columns |= {
            c: pa.array(rows[c].to_numpy(np.int64)) for c in ("sentence_id", "position", "char_start", "char_end")
        }
        pq.write_table(pa.table({**columns, "vector": _vector_column(token_vectors_)}), folder / "tokens.parquet")
