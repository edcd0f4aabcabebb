"""After the shards: the word counts, the GloVe baseline, the three FAISS indexes and the calibration queries of a new
generation.

Everything here is deterministic given the shards, so a build that was killed and resumed ends with the same
files as one that ran through. ``add`` extends the previous generation's FAISS indexes instead of training new
ones, and writes generation G+1 beside generation G (the old manifest keeps working until the new one is written).

The token index follows ``Settings.token_index_factory`` (``token_index_factory``); without
``keep_exact_tokens`` the shards' token_layers.npy leave the manifest's records (``exact_token_records``) and,
once the manifest is written, the disk (``drop_exact_tokens``): until then a killed build can still resume.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from encoder import Elmo
from encoder.glove import resolve as resolve_glove
from encoder.words import WordFrequencies, normalize

from . import layout, storage
from .calibration import NullQueries
from .factory import (
    apply_search_params,
    build_faiss,
    check_factory,
    check_trainable,
    choose_factory,
    is_compressed,
    token_factory,
    tune_search_params,
)
from .glove import GloveVectors, cooccurrence, save_glove, train_glove
from .manifest import TRAINED_GLOVE, FaissFile, Manifest, Shard, StoredFile
from .parts import shard_layers
from .settings import AUTO, TRAIN_GLOVE, Settings
from .shards import gets_vector, kept_words
from .vectors import RERANK

TOKEN_LAYERS = layout.SHARD_FILES["token_layers"]  # a shard's exact token vectors (see shards.write_shard)
TOKEN_FACTORY_EXAMPLES = "'auto', 'Flat', 'IVF1024,PQ32np', 'OPQ32,IVF1024,PQ32np' or 'IVF256,PQ16x4np'"


def token_index_factory(settings: Settings, n: int, dim: int) -> str:
    """The token index's factory for n vectors: ``token_index_factory`` as given, or for "auto" the
    ``index_factory`` given for all indexes, else ``factory.token_factory`` (exact while small, IVF-PQ beyond)."""
    if settings.token_index_factory != AUTO:
        return settings.token_index_factory
    return settings.index_factory or token_factory(n, dim)


def planned_token_vectors(counts: Mapping[str, int], stopwords: frozenset[str], settings: Settings) -> int:
    """How many token vectors a new index of a corpus with word ``counts`` (normalised word -> occurrences, as
    the first pass counts them) will hold: content words (stopwords too without ``skip_stopwords``), frequent
    enough (``min_freq``): ``shards.gets_vector``, the rule shards are written by."""
    token_gets_vector = gets_vector(stopwords, settings, kept_words(counts, settings))
    return sum(n for word, n in counts.items() if token_gets_vector(word))


def check_token_index(settings: Settings, dim: int, n: int | None = None) -> None:
    """Fail before any encoding starts if FAISS does not understand ``token_index_factory``, or (given the
    ``n`` token vectors there will be) cannot train the token index's factory on them."""
    given = settings.token_index_factory != AUTO
    if given:
        check_factory(settings.token_index_factory, dim, TOKEN_FACTORY_EXAMPLES)
    factory = settings.token_index_factory if given else settings.index_factory
    if n is not None and factory:
        option = "--token-index-factory" if given else "--index-factory"
        check_trainable(factory, dim, n, "token vectors", option)


def exact_token_records(shards: Sequence[Shard], settings: Settings) -> tuple[Shard, ...]:
    """The shards' records as the manifest keeps them: without token_layers.npy when ``keep_exact_tokens`` is off."""
    if settings.keep_exact_tokens:
        return tuple(shards)
    return tuple(dataclasses.replace(s, files=tuple(f for f in s.files if f.file != TOKEN_LAYERS)) for s in shards)


def drop_exact_tokens(out: Path, manifest: Manifest) -> None:
    """Delete the token_layers.npy files the (written) manifest no longer lists (``exact_token_records``)."""
    for shard in manifest.shards:
        if all(f.file != TOKEN_LAYERS for f in shard.files):
            layout.shard_file(out, shard.name, "token_layers").unlink(missing_ok=True)


def vocabulary(out: Path, base: Manifest | None, counts: Counter, drawn: Counter) -> pd.DataFrame:
    """Each word of the whole index (the ``base`` index's plus the new corpus's) with its occurrences (``count``)
    and its occurrences as the random queries are drawn by them (``drawn``: at most ``ranking.DRAWN_PER_DOCUMENT``
    from one document), most frequent first. A base index written before ``drawn`` was kept gives its occurrences."""
    if base is not None:
        previous = storage.read_parquet(out / base.vocab.file)
        counts = counts + Counter(dict(zip(previous["word"], previous["count"].tolist())))
        drawn = drawn + Counter(dict(zip(previous["word"], previous.get("drawn", previous["count"]).tolist())))
    rows = sorted(((word, n, drawn[word]) for word, n in counts.items()), key=lambda row: (-row[1], row[0]))
    frame = pd.DataFrame(rows, columns=["word", "count", "drawn"])
    return frame.astype({"count": np.int64, "drawn": np.int64})


def write_vocabulary(out: Path, vocab: pd.DataFrame, generation: int) -> StoredFile:
    name = layout.generation_file("vocab", generation)
    storage.write_parquet(out / name, vocab)
    return StoredFile.of(out, name)


def write_calibration(
    out: Path, elmo: Elmo, vocab: pd.DataFrame, frequencies: WordFrequencies, settings: Settings, generation: int
) -> tuple[StoredFile, ...]:
    """The random-word queries relevance is measured against, drawn from this generation's word counts
    (``vocab``, as ``frequencies``) and embedded now, so that no search has to (``calibration.NullQueries``)."""
    queries = NullQueries.make(elmo, vocab, frequencies, settings.pooling, settings.seed)
    return tuple(StoredFile.of(out, name) for name in queries.write(out, generation))


def glove_source(out: Path, settings: Settings, vocab: pd.DataFrame, shards: Sequence[Shard], progress: bool) -> dict:
    """The manifest's record of the index's GloVe: a reference to Stanford's or a file's vectors, or (``train``)
    GloVe trained on the corpus and written to ``glove.txt``."""
    if settings.glove != TRAIN_GLOVE:
        return resolve_glove(settings.glove)
    if not (out / layout.GLOVE).is_file():  # else written by this build before it was interrupted (writes are atomic)
        training = settings.glove_training()
        words = vocab[vocab["count"] >= training.min_count].head(training.vocab_size)["word"].tolist()
        ids = {w: i for i, w in enumerate(words)}

        def sentences() -> Iterator[np.ndarray]:
            for shard in shards:
                for tokens in storage.read_parquet(layout.shard_file(out, shard.name, "sentences"))["tokens"]:
                    yield np.array([ids[w] for w in map(normalize, tokens) if w in ids], dtype=np.int64)

        counts = cooccurrence(sentences(), len(words), training.window)
        trained = train_glove(
            counts, words, training.dim, training.epochs, x_max=training.x_max, seed=training.seed, progress=progress
        )
        save_glove(out / layout.GLOVE, trained)
    return {"file": layout.GLOVE, "source": TRAINED_GLOVE, **storage.file_record(out / layout.GLOVE)}


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
            tokens = storage.read_parquet(layout.shard_file(out, shard.name, "sentences"))["tokens"]
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
        file = layout.generation_file(kind, generation)
        if base is not None:
            old = base.indexes[kind]
            index = storage.read_faiss(out / old.file, old.ntotal, old.dim)
            for chunk in chunks(new_shards):
                index.add(np.ascontiguousarray(chunk, dtype=np.float32))
            factory, params = old.factory, old.search_params
        else:
            n = sum(getattr(s, counts[kind]) for s in shards)
            if kind == "tokens":
                factory = token_index_factory(settings, n, dim)
            else:
                factory = settings.index_factory or choose_factory(n)
            stream = functools.partial(chunks, shards)
            index = build_faiss(factory, dim, n, stream, seed=settings.seed)
            reranked = kind == "tokens" and settings.keep_exact_tokens and is_compressed(index)
            params = (
                settings.search_params
                if settings.search_params is not None
                else tune_search_params(index, n, stream, seed=settings.seed, rerank=RERANK if reranked else 1)
            )
            apply_search_params(index, params)
        storage.write_faiss(out / file, index)
        stored = StoredFile.of(out, file)
        entries[kind] = FaissFile(stored.file, stored.size, stored.sha256, factory, params, int(index.ntotal), dim)
    return entries
