"""What a manifest names, opened and checked against it: the model, the GloVe and the shards' vectors.

``manifest.py`` knows the records; this module turns them into the objects a build and ``Index`` work with
(``Elmo`` checked by content hash, ``GloveVectors``, memory-mapped ``LayerStore``s).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from encoder import Elmo
from encoder.glove import Glove
from encoder.lm_data import VOCAB_FILE
from encoder.lm_head import HEAD_FILE
from encoder.model_files import MODEL_NAMES, resolve_model
from encoder.readout import head_hash

from . import layout, storage
from .errors import IndexMismatchError
from .glove import GloveVectors
from .manifest import ModelRecord, ModelSpec, Shard, check_glove_source
from .vectors import LayerStore


def open_glove(out: Path, entry: dict) -> GloveVectors:
    """The GloVe an index uses: trained on its corpus (a file in the index), or the one it refers to (Stanford's
    package, or a GloVe file elsewhere), checked against what it recorded. Never copied into the index."""
    if "file" in entry:
        return GloveVectors.load(out / entry["file"])
    check_glove_source(out, entry)
    return GloveVectors(Glove.open(entry["source"]))


def model_source(model: str | Path | Sequence[str | Path]) -> str | list[str]:
    """How a manifest names a model (``ModelRecord.source``): a shipped or downloaded published model by name (it is
    found wherever it is installed or cached), our model folder by its absolute path, other published weights as
    [options, weights] (found by ``encoder.model_files.resolve_model``)."""
    if str(model) in MODEL_NAMES:
        return str(model)
    found = resolve_model(*model) if isinstance(model, (list, tuple)) else resolve_model(model)
    if found.folder is not None:
        return str(found.folder.resolve())
    return [str(found.options.resolve()), str(found.weights.resolve())]


def load_model(model: ModelSpec, device: str = "auto") -> tuple[Elmo, ModelRecord]:
    """The Elmo for ``model`` and the manifest's record of it (``model_source``); an index tokenizes text with it,
    so what its language's tokenizer needs must be installed (``MissingExtra`` says which extra)."""
    if isinstance(model, Elmo):
        model.text.require()
        return model, ModelRecord(
            model.name, model.model_hash, None, model.dim, model.n_layers, head_hash(model.folder)
        )
    source = model_source(model)
    elmo = Elmo.load(*(source if isinstance(source, list) else [source]), device=device)
    elmo.text.require()
    return elmo, ModelRecord(elmo.name, elmo.model_hash, source, elmo.dim, elmo.n_layers, head_hash(elmo.folder))


def open_model(expected: ModelRecord, model: ModelSpec | None, device: str) -> Elmo:
    """The model an index was built with (``model``, or the one ``expected`` names), checked by content hash."""
    if model is None:
        if expected.source is None:
            raise IndexMismatchError(
                f"the index does not record where its model ({expected.name}) is; "
                "pass the model directory (model=... / --model)"
            )
        model = expected.source
    try:
        elmo, _ = load_model(model, device)
    except (FileNotFoundError, ValueError, OSError) as error:
        raise IndexMismatchError(
            f"cannot load the model the index was built with ({expected.name}): {error}; "
            "pass its location with model=... / --model"
        ) from None
    if elmo.model_hash != expected.hash:
        raise IndexMismatchError(
            f"the index was built with model {expected.name!r} (hash {expected.hash}), "
            f"but {elmo.name!r} (hash {elmo.model_hash}) was given; open it with the same model "
            "or rebuild the index with this one"
        )
    known = expected.head_hash is not None and elmo.folder is not None  # else the readout is not read: ELMo only
    if known and head_hash(elmo.folder) != expected.head_hash:
        raise IndexMismatchError(
            f"the LM head or vocabulary of model {expected.name!r} ({HEAD_FILE}, {VOCAB_FILE} in {elmo.folder}) is not "
            "the one the index was built with, and they name what the model expects at a word; restore them, or "
            "rebuild the index with this model"
        )
    return elmo


LAYER_PARTS = {
    "sentence": ("sentence_layers", "sentences"),
    "token": ("token_layers", "token_vectors"),
    "title": ("title_layers", "documents"),
    "readout": ("token_readout", "token_vectors"),
}
"""Per-layer vector stores of a shard: their part (``layout.SHARD_FILES``) and the ``Shard`` count of their rows."""


def shard_layers(out: Path, shards: Sequence[Shard], kind: str, dims: tuple[int, int]) -> LayerStore:
    """The per-layer vectors of ``kind`` (``LAYER_PARTS``: "sentence", "token", "title"; "readout", one layer of
    the readout's width) of the shards, memory-mapped."""
    part, count = LAYER_PARTS[kind]
    return LayerStore(
        [storage.read_npy(layout.shard_file(out, s.name, part), (getattr(s, count), *dims)) for s in shards]
    )


def shard_substitutes(out: Path, shards: Sequence[Shard], k: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each shard's stored substitutes of its token vectors: vocabulary ids and probabilities, (n, k) each,
    memory-mapped."""
    ids = [storage.read_npy(layout.shard_file(out, s.name, "token_substitutes"), (s.token_vectors, k)) for s in shards]
    probs = [
        storage.read_npy(layout.shard_file(out, s.name, "token_substitute_probs"), (s.token_vectors, k)) for s in shards
    ]
    return ids, probs
