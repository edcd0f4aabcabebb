"""After the shards: the word counts, the GloVe baseline and the three FAISS indexes of a new generation.

Everything here is deterministic given the shards, so a build that was killed and resumed ends with the same
files as one that ran through. ``add`` extends the previous generation's FAISS indexes instead of training new
ones, and writes generation G+1 beside generation G (the old manifest keeps working until the new one is written).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from encoder.glove import resolve as resolve_glove

from . import storage
from .glove import GloveVectors, cooccurrence, save_glove, train_glove
from .manifest import GLOVE_FILE, SHARDS, TRAIN_GLOVE, FaissFile, Manifest, Settings, Shard, StoredFile, shard_layers
from .vectors import apply_search_params, build_faiss, choose_factory, tune_search_params
from .words import normalize


def vocabulary(out: Path, base: Manifest | None, counts: Counter) -> pd.DataFrame:
    """Word counts of the whole index (the ``base`` index's plus the new corpus's), most frequent first."""
    if base is not None:
        previous = storage.read_parquet(out / base.vocab.file)
        counts = counts + Counter(dict(zip(previous["word"], previous["count"].tolist())))
    frame = pd.DataFrame(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])), columns=["word", "count"])
    return frame.astype({"count": np.int64})


def write_vocabulary(out: Path, vocab: pd.DataFrame, generation: int) -> StoredFile:
    name = f"vocab.g{generation}.parquet"
    storage.write_parquet(out / name, vocab)
    return StoredFile.of(out, name)


def glove_source(out: Path, settings: Settings, vocab: pd.DataFrame, shards: Sequence[Shard], progress: bool) -> dict:
    """The manifest's record of the index's GloVe: a reference to Stanford's or a file's vectors, or (``train``)
    GloVe trained on the corpus and written to ``glove.txt``."""
    if settings.glove != TRAIN_GLOVE:
        return resolve_glove(settings.glove)
    if not (out / GLOVE_FILE).is_file():  # else written by this build before it was interrupted (writes are atomic)
        words = vocab[vocab["count"] >= settings.glove_min_count].head(settings.glove_max_vocab)["word"].tolist()
        ids = {w: i for i, w in enumerate(words)}

        def sentences() -> Iterator[np.ndarray]:
            for shard in shards:
                for tokens in storage.read_parquet(out / SHARDS / shard.name / "sentences.parquet")["tokens"]:
                    yield np.array([ids[w] for w in map(normalize, tokens) if w in ids], dtype=np.int64)

        counts = cooccurrence(sentences(), len(words), settings.glove_window)
        trained = train_glove(
            counts, words, dim=settings.glove_dim, epochs=settings.glove_epochs, seed=settings.seed, progress=progress
        )
        save_glove(out / GLOVE_FILE, trained)
    return {"file": GLOVE_FILE, "source": "trained", **storage.file_record(out / GLOVE_FILE)}


def describe_glove(source: dict, vectors: GloveVectors) -> dict:
    """What the manifest (and the About page) says of the GloVe baseline: where it is from, and its size."""
    return {
        **{k: v for k, v in source.items() if k in ("source", "package", "license", "sha256")},
        "dim": vectors.dim,
        "vocab_size": len(vectors),
    }


def build_indexes(
    out: Path,
    base: Manifest | None,
    shards: Sequence[Shard],
    new_shards: Sequence[Shard],
    settings: Settings,
    mixes: dict[str, Sequence[float]],
    glove: GloveVectors,
    dims: tuple[int, int],
    generation: int,
) -> dict[str, FaissFile]:
    """Write the three FAISS indexes of this generation: extend the ``base`` ones, or build them from scratch.

    ``mixes`` are the layer weights of the sentence index (``search_layers``) and token index (``layers``).
    """

    def glove_chunks(selected: Sequence[Shard]) -> Iterator[np.ndarray]:
        for shard in selected:
            tokens = storage.read_parquet(out / SHARDS / shard.name / "sentences.parquet")["tokens"]
            yield (
                np.stack([glove.sentence_vector(t) for t in tokens])
                if len(tokens)
                else np.zeros((0, glove.dim), np.float32)
            )

    sources = {
        "sentences": (dims[1], lambda sel: shard_layers(out, sel, "sentence", dims).mixed(mixes["search_layers"])),
        "tokens": (dims[1], lambda sel: shard_layers(out, sel, "token", dims).mixed(mixes["layers"])),
        "glove": (glove.dim, glove_chunks),
    }
    counts = {"sentences": "sentences", "tokens": "token_vectors", "glove": "sentences"}
    entries = {}
    for kind, (dim, chunks) in sources.items():
        file = f"{kind}.g{generation}.faiss"
        if base is not None:
            old = base.indexes[kind]
            index = storage.read_faiss(out / old.file, old.ntotal, old.dim)
            for chunk in chunks(new_shards):
                index.add(np.ascontiguousarray(chunk, dtype=np.float32))
            factory, params = old.factory, old.search_params
        else:
            n = sum(getattr(s, counts[kind]) for s in shards)
            factory = settings.index_factory or choose_factory(n)
            stream = functools.partial(chunks, shards)
            index = build_faiss(factory, dim, n, stream, seed=settings.seed)
            params = (
                settings.search_params
                if settings.search_params is not None
                else tune_search_params(index, n, stream, seed=settings.seed)
            )
            apply_search_params(index, params)
        storage.write_faiss(out / file, index)
        stored = StoredFile.of(out, file)
        entries[kind] = FaissFile(stored.file, stored.size, stored.sha256, factory, params, int(index.ntotal), dim)
    return entries
