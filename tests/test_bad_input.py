"""Bad input and faults: each case gets a clear error (or a correct answer) and leaves every file as it was.

Three tables, one row per case: ``API`` (the Python API), ``CLI`` (``python -m indexer|encoder|app``, run
in-process) and ``APP`` (the Streamlit pages). Each row names the outcome it must have:

- a clear error: the API raises the named exception with the given words in its message; a command line
  exits 2 with exactly one line ``error: ...`` on stderr holding the words and no traceback (``USAGE``:
  argparse's own usage error, also exit 2);
- ``WORKS``: the call succeeds, its result passes the row's check and any notice holds the words.

Every case compares the files it was given (the model, the shared index and corpus, and its own folder)
before and after: nothing that existed may change, and a refused call leaves nothing behind but a lock file.
A row's ``setup`` prepares (or damages) its own copy of the index before that snapshot is taken.
"""

from __future__ import annotations

import errno
import fcntl
import gzip
import json
import lzma
import os
import re
import shutil
import stat
import subprocess
import sys
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any
from unittest import mock

import h5py
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from test_indexer import SETTINGS, write_corpus

import app.__main__ as app_cli
import encoder.__main__ as encoder_cli
import indexer.__main__ as indexer_cli
from encoder import Elmo, text
from encoder.corpus import prepare
from encoder.files import atomic_path
from encoder.glove import Glove
from encoder.lm_data import Vocabulary
from encoder.lm_head import LanguageModel, LMHead
from encoder.mix import LayerMix
from encoder.model import BiLM, BiLMConfig
from encoder.run_folder import save_language_model
from encoder.train import SIZES, TrainConfig, train
from encoder.weights import save_hdf5, save_model
from indexer import (
    CorpusError,
    CorruptIndexError,
    Index,
    IndexFormatError,
    IndexMismatchError,
    QueryError,
    Results,
    Settings,
    add_documents,
    build_index,
    delete_documents,
    storage,
)
from indexer.glove import train_glove

ROOT = Path(__file__).resolve().parents[1]
WORKS, ERROR, USAGE = "works", "error", "usage"
ROOTLESS = pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes any file, whatever its mode")
BIG_QUERY = "river bank " + "x" * 1_000_000  # 1 MB, most of it one word (a query is cut at 10,000 characters)
CONTROL = "the \x00river\x07 bank\x1b[31m\x7f\u200b\u202e"
EMOJI = "🏦 the river 🌊 bank 👩‍👩‍👧"
NO_MATCH = "no document contains any of the query's words"
FEW = ["The muddy river bank flooded.", "She saved money at the bank.", "Volcanoes erupt when magma rises."]
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\\u202e"
"""Set the terminal's title, clear it, plant a hidden link, reverse the text: what a document must not do."""
MARKDOWN = "![x](http://evil.example/x.png) [click](http://evil.example/)"
HOSTILE = f"bank {ESCAPES} {MARKDOWN}"
C1 = "\x9b2J"  # clear the screen with the one-character CSI of C1 (what json.dumps leaves raw)
OTHER_MODEL = dict(char_embed_dim=4, filters=[[1, 4], [2, 8]], n_highway=1, projection_dim=8, lstm_dim=16, n_layers=2)


# ------------------------------------------------------------------------------------------ fixtures
@dataclass
class World:
    """What the module builds once: the tiny model, a corpus, its index (opened), and another model."""

    model: Path
    corpus: Path
    index: Path
    opened: Index
    other_model: Path
    published: Path  # the tiny model as AllenNLP's options.json + weights.hdf5
    run: Path  # a finished training run of a tiny model, started fresh (not continuing a model): ``make_run``
    hostile: Path  # an index of documents holding terminal escape sequences and markdown


def make_run(out: Path) -> None:
    """What ``encoder train`` leaves in --out after a few steps from scratch, without the steps: a tiny model with
    its head and vocabulary, its counters, a log and its record (``trains`` gives its options)."""
    vocab = Vocabulary(["<S>", "</S>", "<UNK>", "the", "bank"])
    lm = LanguageModel(BiLM(SIZES["tiny"]), LMHead(SIZES["tiny"].projection_dim, len(vocab)))
    lm.bilm.reset_parameters(seed=0)
    progress = {"step": 3, "tokens": 60, "train_seconds": 1.0, "data_seed": 0, "hardware": ["1 x CPU"]}
    save_language_model(lm, vocab, out, {"name": "run", "language": "en", "training": progress})
    (out / "log.jsonl").write_text(json.dumps({**progress, "train_ppl": 5.0}) + "\n")
    (out / "run.json").write_text(json.dumps({"start": "fresh"}))


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_model_dir) -> World:
    root = tmp_path_factory.mktemp("bad-input")
    corpus = write_corpus(root / "corpus")
    build_index([corpus], root / "index", model=tiny_model_dir, settings=SETTINGS, progress=False)
    other = BiLM(BiLMConfig(**OTHER_MODEL))
    other.reset_parameters(seed=1)
    save_model(other, root / "other", extra_config={"name": "other"})
    (root / "published").mkdir()
    save_hdf5(Elmo.load(tiny_model_dir).model, root / "published" / "options.json", root / "published" / "weights.hdf5")
    opened = Index.open(root / "index")
    make_run(root / "run")
    hostile = [{"id": f"h{i}{C1}{ESCAPES}", "title": f"{HOSTILE} {i}", "text": f"{FEW[i]} {HOSTILE}"} for i in range(3)]
    (root / "hostile.jsonl").write_text("".join(json.dumps(d) + "\n" for d in hostile))
    build_index([root / "hostile.jsonl"], root / "hostile", model=tiny_model_dir, settings=SETTINGS, progress=False)
    return World(
        tiny_model_dir,
        corpus,
        root / "index",
        opened,
        root / "other",
        root / "published",
        root / "run",
        root / "hostile",
    )


class Ctx:
    """One case's view: the shared (read-only) things, and its own folder ``tmp`` with copies made on demand.

    Every file the case is given (``file``, ``jsonl``, the copies) is remembered with its bytes in ``given``,
    so that whether it was made before the call or during it, it is checked to be intact afterwards."""

    def __init__(self, world: World, tmp: Path):
        self.world, self.tmp = world, tmp
        self.model, self.corpus, self.opened = world.model, world.corpus, world.opened
        self.shared_index, self.other_model, self.published = world.index, world.other_model, world.published
        self.run, self.hostile = world.run, world.hostile
        self.given: dict[Path, bytes] = {}

    def _give(self, root: Path) -> Path:
        self.given |= {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} if root.is_dir() else {}
        self.given |= {root: root.read_bytes()} if root.is_file() else {}
        return root

    def seal(self) -> None:
        """What the case was given is what it holds now (after its setup)."""
        self.given = {p: p.read_bytes() for p in self.given if p.is_file()}

    @cached_property
    def index(self) -> Path:
        """A copy of the shared index that this case may damage or change."""
        return self._give(Path(shutil.copytree(self.world.index, self.tmp / "index")))

    @cached_property
    def model_copy(self) -> Path:
        return self._give(Path(shutil.copytree(self.world.model, self.tmp / "model")))

    def file(self, name: str, content: str | bytes) -> Path:
        path = self.tmp / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return self._give(path)

    def jsonl(self, *records: dict | str, name: str = "docs.jsonl") -> Path:
        return self.file(name, "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))

    def few(self) -> Path:
        """A corpus of three short documents: quick to build."""
        return self.jsonl(*({"id": f"few-{i}", "text": t} for i, t in enumerate(FEW)), name="few.jsonl")

    def build(self, corpus: Path | list[Path], **options: Any) -> Index:
        """A build of ``corpus`` into ``tmp/out`` with the tiny model and a trained GloVe (fast)."""
        settings = options.pop("settings", SETTINGS)
        corpus = corpus if isinstance(corpus, list) else [corpus]
        return build_index(corpus, self.tmp / "out", model=self.model, settings=settings, progress=False, **options)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes: what "nothing was touched" compares."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def snapshots(ctx: Ctx) -> dict[str, dict[str, bytes]]:
    roots = [ctx.tmp, ctx.model, ctx.corpus, ctx.shared_index, ctx.other_model, ctx.published, ctx.run, ctx.hostile]
    return {str(root): snapshot(root) for root in roots}


def assert_intact(c: Ctx, before: dict, refused: bool, partial: bool = False) -> None:
    """Nothing that existed or was given changed; a refused call added nothing but lock files (``partial``: and
    the resumable state of a build or run refused after it started, under ``out/``, ``index/`` or ``run/``)."""
    after = snapshots(c)
    for root, files in before.items():
        assert {k: v for k, v in after[root].items() if k in files} == files, f"files under {root} changed"
    for path, content in c.given.items():
        assert path.is_file() and path.read_bytes() == content, f"{path} changed"
    if refused:
        made = {str(p) for p in c.given}
        added = [
            name
            for root, files in after.items()
            for name in files
            if name not in before[root]
            and str(Path(root) / name) not in made
            and not name.endswith(".lock")
            and not (partial and name.split("/")[0] in ("out", "index", "run"))
        ]
        assert not added, f"a refused call left {added}"


def lock(path: Path) -> Callable[[], None]:
    """Hold the index's write lock as another writer would (released when the case's folder goes)."""
    handle = open(path / ".lock", "a")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    LOCKS.append(handle)


LOCKS: list = []


@pytest.fixture(autouse=True)
def _release_locks():
    yield
    while LOCKS:
        LOCKS.pop().close()


# ------------------------------------------------------------------------------------------ damage
def truncate(path: Path, keep: int = 100) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    data = json.loads(path.read_text())
    path.write_text(json.dumps(change(data)))


def shard(c: Ctx, name: str = "", number: int = 0) -> Path:
    return c.index / "shards" / f"{number:05d}" / name


def faiss_file(c: Ctx, kind: str = "sentences") -> Path:
    return c.index / json.loads((c.index / "manifest.json").read_text())["indexes"][kind]["file"]


def manifest(c: Ctx) -> Path:
    return c.index / "manifest.json"


def without(data: dict, key: str) -> dict:
    return {k: v for k, v in data.items() if k != key}


# ------------------------------------------------------------------------------------------ the API table


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Ctx], Any]
    expect: type[BaseException] | str  # the exception a clear error raises, or WORKS
    words: str = ""  # a regex its message (or, for WORKS, a notice or warning) must match
    check: Callable[[Any], bool] | None = None  # WORKS: the result is right
    setup: Callable[[Ctx], Any] | None = None  # prepares the case's own files before the snapshot


def is_hits(hits: Any) -> bool:
    return isinstance(hits, Results) and all(h.rank == i for i, h in enumerate(hits, start=1))


def found(n: int) -> Callable[[Any], bool]:
    return lambda hits: is_hits(hits) and len(hits) == n


def built(documents: int, **counts: int) -> Callable[[Index], bool]:
    return lambda index: (
        index.stats()["counts"]["documents"] == documents
        and all(index.stats()["counts"][k] == v for k, v in counts.items())
    )


def capped(tokens: int, run: Callable[[], Any]) -> Any:
    """``run()`` with sentences cut at ``tokens`` tokens instead of MAX_SENTENCE_TOKENS (to keep the test small)."""
    with mock.patch.object(text, "MAX_SENTENCE_TOKENS", tokens):
        return run()


def small(**fields: Any) -> Settings:
    return Settings(**{**SETTINGS.__dict__, **fields})


def diverged_model() -> BiLM:
    """A model one of whose weights is NaN, as a diverged run leaves it."""
    model = BiLM(BiLMConfig(**OTHER_MODEL))
    with torch.no_grad():
        next(model.parameters()).fill_(float("nan"))
    return model


def searched_with(manifest: dict, params: str) -> dict:
    """A manifest whose FAISS indexes are searched with ``params``."""
    return {**manifest, "indexes": {k: {**v, "search_params": params} for k, v in manifest["indexes"].items()}}


def other_shape_options(c: Ctx) -> None:
    shutil.copytree(c.published, c.tmp / "published")
    edit_json(c.tmp / "published" / "options.json", lambda o: {**o, "lstm": {**o["lstm"], "dim": 32}})


BINARY = bytes(range(256)) * 8
LATIN1 = "Caf\xe9 au lait near the river bank.\nNa\xefve savings at the bank.\n".encode("latin-1")

API = [
    # ---- queries: empty, odd, huge
    Case("search an empty query", lambda c: c.opened.search(""), QueryError, "empty"),
    Case("search whitespace only", lambda c: c.opened.search(" \t\n\u3000 "), QueryError, "empty"),
    Case("search None", lambda c: c.opened.search(None), QueryError, "empty"),
    Case("search a number", lambda c: c.opened.search(42), QueryError, "empty"),
    Case("search punctuation only", lambda c: c.opened.search("?!... ;", method="keywords"), WORKS, check=is_hits),
    Case(
        "search control characters", lambda c: c.opened.search(CONTROL, k=3, method="keywords"), WORKS, check=found(3)
    ),
    Case("search emoji", lambda c: c.opened.search(EMOJI, k=3, method="keywords"), WORKS, check=found(3)),
    Case("search a 1 MB query", lambda c: c.opened.search(BIG_QUERY, k=2), WORKS, "first 10,000", found(2)),
    Case(
        "search unknown words", lambda c: c.opened.search("qwxzt blorft vrrmm", k=3), WORKS, "no good match", found(3)
    ),
    Case(
        "search one 5,000-letter word",
        lambda c: c.opened.search("a" * 5000, k=1, method="keywords"),
        WORKS,
        NO_MATCH,
        found(0),
    ),
    Case(
        "search right-to-left text", lambda c: c.opened.search("ضفة النهر", k=2, method="glove"), WORKS, check=found(0)
    ),
    Case("search k=0", lambda c: c.opened.search("bank", k=0), QueryError, "k must be a whole number from 1"),
    Case("search k=-1", lambda c: c.opened.search("bank", k=-1), QueryError, "k must be .* not -1"),
    Case("search a huge k", lambda c: c.opened.search("bank", k=10**12), QueryError, "from 1 to 1,000"),
    Case("search k=2.5", lambda c: c.opened.search("bank", k=2.5), QueryError, "not 2.5"),
    Case("search k=True", lambda c: c.opened.search("bank", k=True), QueryError, "not True"),
    Case("search k as text", lambda c: c.opened.search("bank", k="3"), QueryError, "not '3'"),
    Case(
        "search k above the documents",
        lambda c: c.opened.search("bank", k=1000, method="keywords"),
        WORKS,
        check=found(24),
    ),
    Case("search an unknown method", lambda c: c.opened.search("bank", method="magic"), QueryError, "one of hybrid"),
    Case("search layers with nan", lambda c: c.opened.search("bank", layers="nan,nan,nan"), QueryError, "finite"),
    Case("search layers with inf", lambda c: c.opened.search("bank", layers="1,inf,0"), QueryError, "finite"),
    Case("search negative layers", lambda c: c.opened.search("bank", layers="-1,-1,-1"), QueryError, "non-negative"),
    Case("search all-zero layers", lambda c: c.opened.search("bank", layers="0,0,0"), QueryError, "not all zero"),
    Case("search 2 layer weights for 3", lambda c: c.opened.search("bank", layers="1,1"), QueryError, "3 layers"),
    Case("search a layer mix name", lambda c: c.opened.search("bank", layers="bottom"), QueryError, "bad layer mix"),
    Case(
        "search layers as a list",
        lambda c: c.opened.search("muddy river bank", k=2, method="elmo", layers=[1, 0, 0]),
        WORKS,
        check=found(2),
    ),
    Case("sentences k=0", lambda c: c.opened.search_sentences("bank", k=0), QueryError, "k must be"),
    Case("sentences by hybrid", lambda c: c.opened.search_sentences("bank", method="hybrid"), QueryError, "'elmo'"),
    Case(
        "sentences by glove, unknown words",
        lambda c: c.opened.search_sentences("qwxzt blorft", method="glove"),
        WORKS,
        "none of the query's words has a GloVe vector",
        found(0),
    ),
    Case("sentences of emoji", lambda c: c.opened.search_sentences(EMOJI, k=4), WORKS, check=found(4)),
    # ---- word in context
    Case("neighbors of an empty sentence", lambda c: c.opened.neighbors("", "bank"), QueryError, "sentence is empty"),
    Case(
        "neighbors of an empty word", lambda c: c.opened.neighbors("the river bank", " "), QueryError, "word is empty"
    ),
    Case(
        "neighbors of a word not in the sentence",
        lambda c: c.opened.neighbors("the river bank", "money"),
        QueryError,
        "'money' is not a word of the sentence; its words are: the | river | bank",
    ),
    Case(
        "neighbors position past the end",
        lambda c: c.opened.neighbors("the river bank", "bank", position=99),
        QueryError,
        "outside the sentence",
    ),
    Case(
        "neighbors position -1",
        lambda c: c.opened.neighbors("the river bank", "bank", position=-1),
        QueryError,
        "outside the sentence",
    ),
    Case(
        "neighbors position of another word",
        lambda c: c.opened.neighbors("the river bank", "bank", position=1),
        QueryError,
        "token 1 of the sentence is 'river'",
    ),
    Case("neighbors k=0", lambda c: c.opened.neighbors("the bank", "bank", k=0), QueryError, "k must be"),
    Case(
        "neighbors same word, unknown word",
        lambda c: c.opened.neighbors("a qwxzt here", "qwxzt", same_word=True),
        QueryError,
        "does not occur in the indexed documents",
    ),
    Case(
        "neighbors same word, a stopword",
        lambda c: c.opened.neighbors("the bank", "the", same_word=True),
        QueryError,
        "stopwords are not indexed",
    ),
    Case(
        "neighbors of an emoji",
        lambda c: c.opened.neighbors(EMOJI, "🌊", k=3),
        WORKS,
        check=lambda n: len(n.hits) == 3 and n.query_tokens[n.position] == "🌊" and "not in the GloVe" in n.glove_note,
    ),
    Case(
        "neighbors of a word twice",
        lambda c: c.opened.neighbors("bank to bank", "bank", k=2),
        WORKS,
        check=lambda n: n.position == 0 and "occurs 2 times" in n.notices[0],
    ),
    Case(
        "neighbors in a 1 MB sentence",
        lambda c: c.opened.neighbors(BIG_QUERY, "bank", k=2),
        WORKS,
        "first 10,000",
        lambda n: n.position == 1 and len(n.hits) == 2,
    ),
    Case(
        "neighbors with bad layers",
        lambda c: c.opened.neighbors("the bank", "bank", layers="1,2,3,4"),
        QueryError,
        "bad layer mix",
    ),
    # ---- senses
    Case("senses of an empty word", lambda c: c.opened.senses(""), QueryError, "word is empty"),
    Case("senses of an unknown word", lambda c: c.opened.senses("qwxzt"), QueryError, "does not occur"),
    Case("senses of punctuation", lambda c: c.opened.senses("."), QueryError, "punctuation is not indexed"),
    Case("senses of a stopword", lambda c: c.opened.senses("The"), QueryError, "stopwords are not indexed"),
    Case("senses k=0", lambda c: c.opened.senses("bank", k=0), QueryError, "k must be 'auto' or a whole number"),
    Case("senses k=51", lambda c: c.opened.senses("bank", k=51), QueryError, "from 1 to 50"),
    Case("senses k as text", lambda c: c.opened.senses("bank", k="three"), QueryError, "not 'three'"),
    Case(
        "senses of no occurrences",
        lambda c: c.opened.senses("bank", max_occurrences=0),
        QueryError,
        "max_occurrences must be",
    ),
    Case(
        "senses of one sampled occurrence",
        lambda c: c.opened.senses("bank", max_occurrences=1),
        WORKS,
        check=lambda s: s.n_occurrences == 1 and len(s.clusters) == 1 and "sample of 1" in s.notices[0],
    ),
    Case("senses with NaN layers", lambda c: c.opened.senses("bank", layers="nan,1,1"), QueryError, "finite"),
    Case(
        "senses with more clusters than uses",
        lambda c: c.opened.senses("glaciers", k=5),
        WORKS,
        check=lambda s: s.n_occurrences == 1 and len(s.clusters) == 1,
    ),
    # ---- opening an index
    Case("open a missing folder", lambda c: Index.open(c.tmp / "nowhere"), IndexFormatError, "does not exist"),
    Case("open a file", lambda c: Index.open(c.file("notes.txt", "hi")), IndexFormatError, "not an index"),
    Case("open an empty folder", lambda c: Index.open(c.tmp), IndexFormatError, "not an index"),
    Case("open the corpus folder", lambda c: Index.open(c.corpus), IndexFormatError, "not an index"),
    Case(
        "open a manifest cut short",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "manifest.json cannot be read",
        setup=lambda c: truncate(manifest(c), 50),
    ),
    Case(
        "open a manifest that is a JSON list",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "manifest.json is not an index manifest",
        setup=lambda c: manifest(c).write_text("[]"),
    ),
    Case(
        "open a manifest without shards",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "manifest.json is not a valid index manifest .*shards",
        setup=lambda c: edit_json(manifest(c), lambda m: without(m, "shards")),
    ),
    Case(
        "open a manifest of a newer format",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "newer",
        setup=lambda c: edit_json(manifest(c), lambda m: {**m, "format_version": 99}),
    ),
    Case(
        "open a manifest of an older format",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "rebuild",
        setup=lambda c: edit_json(manifest(c), lambda m: {**m, "format_version": 1}),
    ),
    Case(
        "open an index missing a shard",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "missing",
        setup=lambda c: shutil.rmtree(shard(c, number=1)),
    ),
    Case(
        "open a truncated parquet",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "docs.parquet .*truncated|docs.parquet.*size",
        setup=lambda c: truncate(shard(c, "docs.parquet")),
    ),
    Case(
        "open a truncated npy",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "token_layers.npy",
        setup=lambda c: truncate(shard(c, "token_layers.npy")),
    ),
    Case(
        "open a truncated faiss",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "faiss",
        setup=lambda c: truncate(faiss_file(c)),
    ),
    Case(
        "open an altered npy",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "sha256",
        setup=lambda c: flip_last_byte(shard(c, "sentence_layers.npy")),
    ),
    Case(
        "open a garbled faiss unverified",
        lambda c: Index.open(c.index, verify=False),
        CorruptIndexError,
        "not a readable FAISS index",
        setup=lambda c: faiss_file(c).write_bytes(b"\0" * faiss_file(c).stat().st_size),
    ),
    Case(
        "open a garbled parquet unverified",
        lambda c: Index.open(c.index, verify=False),
        CorruptIndexError,
        "docs.parquet cannot be read",
        setup=lambda c: shard(c, "docs.parquet").write_bytes(b"\0" * shard(c, "docs.parquet").stat().st_size),
    ),
    Case(
        "open without its trained GloVe",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "glove.txt is missing",
        setup=lambda c: (c.index / "glove.txt").unlink(),
    ),
    Case(
        "open an interrupted build",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "interrupted",
        setup=lambda c: manifest(c).rename(c.index / "build-state.json"),
    ),
    Case("open with another model", lambda c: Index.open(c.shared_index, model=c.other_model), IndexMismatchError),
    Case("open with a missing model", lambda c: Index.open(c.shared_index, model=c.tmp / "nope"), IndexMismatchError),
    Case("open on an unknown device", lambda c: Index.open(c.shared_index, device="tpu"), ValueError, "device"),
    Case(
        "open with a truncated model",
        lambda c: Index.open(c.shared_index, model=c.model_copy),
        IndexMismatchError,
        "model.safetensors is not a readable safetensors file",
        setup=lambda c: truncate(c.model_copy / "model.safetensors", 200),
    ),
    # ---- models
    Case("load a missing model", lambda c: Elmo.load(c.tmp / "nope"), FileNotFoundError, "there is no model at"),
    Case("load a corpus folder as a model", lambda c: Elmo.load(c.corpus), FileNotFoundError, "holds neither"),
    Case(
        "load options without weights",
        lambda c: Elmo.load(c.published / "options.json"),
        FileNotFoundError,
        "--weights",
    ),
    Case(
        "load a truncated model.safetensors",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "model.safetensors is not a readable safetensors file; restore the model|model.safetensors",
        setup=lambda c: truncate(c.model_copy / "model.safetensors", 200),
    ),
    Case(
        "load a config.json with a wrong size",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "shape",
        setup=lambda c: edit_json(c.model_copy / "config.json", lambda m: {**m, "lstm_dim": 32}),
    ),
    Case(
        "load a config.json with an unknown field",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "config.json",
        setup=lambda c: edit_json(c.model_copy / "config.json", lambda m: {**m, "n_layers": "two"}),
    ),
    Case(
        "load a config.json that is not JSON",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "config.json",
        setup=lambda c: (c.model_copy / "config.json").write_text("{model"),
    ),
    Case(
        "load options.json of another shape",
        lambda c: Elmo.load(c.tmp / "published"),
        ValueError,
        "shape|weights",
        setup=other_shape_options,
    ),
    Case("embed nothing", lambda c: c.opened.elmo.embed([]), WORKS, check=lambda v: v == []),
    Case(
        "embed an empty sentence", lambda c: c.opened.elmo.embed([""]), WORKS, check=lambda v: v[0].shape == (3, 0, 16)
    ),
    Case(
        "embed emoji and control", lambda c: c.opened.elmo.embed([EMOJI, CONTROL]), WORKS, check=lambda v: len(v) == 2
    ),
    Case(
        "embed a 10,000-letter token",
        lambda c: c.opened.elmo.embed([["x" * 10_000]]),
        WORKS,
        check=lambda v: v[0].shape == (3, 1, 16) and np.isfinite(v[0]).all(),
    ),
    Case(
        "embed batch size 0",
        lambda c: c.opened.elmo.embed(["a b"], batch_size=0),
        ValueError,
        "batch_size must be a whole number from 1",
    ),
    Case("embed a NaN mix", lambda c: c.opened.elmo.embed(["a b"], mix="nan,1,1"), ValueError, "finite"),
    Case("embed a mix of 4 for 3", lambda c: c.opened.elmo.embed(["a"], mix=[1, 1, 1, 1]), ValueError, "3 layers"),
    # ---- building
    Case("build from a missing path", lambda c: c.build(c.tmp / "missing.txt"), CorpusError, "does not exist"),
    Case(
        "build from an empty folder",
        lambda c: c.build(c.tmp / "in"),
        CorpusError,
        "holds no corpus files",
        setup=lambda c: (c.tmp / "in").mkdir(),
    ),
    Case(
        "build from a folder of unsupported files",
        lambda c: c.build(c.tmp / "in"),
        CorpusError,
        "holds no corpus files",
        setup=lambda c: c.file("report.docx", BINARY),
    ),
    Case(
        "build from a .tsv file",
        lambda c: c.build(c.file("a.tsv", "id\ttext\n1\tOne.\n")),
        CorpusError,
        "unsupported file type",
    ),
    Case(
        "build from a binary .txt",
        lambda c: c.build([c.few(), c.file("blob.txt", BINARY)]),
        WORKS,
        "blob.txt: .* undecodable",
        lambda i: i.stats()["counts"]["replaced_characters"] > 0,
    ),
    Case(
        "build from a Latin-1 .txt",
        lambda c: c.build([c.few(), c.file("latin.txt", LATIN1)]),
        WORKS,
        "latin.txt: 2 undecodable",
        built(5, replaced_characters=2),
    ),
    Case(
        "build from a binary .parquet",
        lambda c: c.build(c.file("blob.parquet", BINARY)),
        CorpusError,
        "blob.parquet cannot be read as parquet",
    ),
    Case(
        "build from a .gz that is not gzip",
        lambda c: c.build(c.file("a.txt.gz", "plain")),
        CorpusError,
        "a.txt.gz cannot be read",
    ),
    Case(
        "build from a cut-off .gz",
        lambda c: c.build(c.file("a.jsonl.gz", gzip.compress(b'{"text": "One."}\n' * 50)[:-30])),
        CorpusError,
        "a.jsonl.gz cannot be read",
    ),
    Case(
        "build from a JSONL with a broken line",
        lambda c: c.build(c.jsonl({"text": "One."}, '{"text": "Tw')),
        CorpusError,
        "line 2: not valid JSON",
    ),
    Case(
        "build from a JSONL without the text field",
        lambda c: c.build(c.jsonl({"body": "One."})),
        CorpusError,
        "has no 'text' field .*--text-column",
    ),
    Case(
        "build from a JSONL with duplicate ids",
        lambda c: c.build(c.jsonl({"id": "a", "text": "One."}, {"id": "a", "text": "Two."})),
        CorpusError,
        "'a' appears more than once",
    ),
    Case(
        "build from a JSONL of numbers and strings as one id",
        lambda c: c.build(c.jsonl({"id": 7, "text": "One."}, {"id": "7", "text": "Two."})),
        CorpusError,
        "'7' appears more than once",
    ),
    Case("build from a JSONL of lists", lambda c: c.build(c.jsonl("[1, 2]")), CorpusError, "expected a JSON object"),
    Case(
        "build with a missing --id-column",
        lambda c: c.build(c.jsonl({"text": "One."}), id_column="key"),
        CorpusError,
        "has no 'key' field",
    ),
    Case(
        "build from a JSONL with a BOM",
        lambda c: c.build(
            [c.few(), c.file("bom.jsonl", "\ufeff" + json.dumps({"id": "b", "text": "The bank."}) + "\n")]
        ),
        WORKS,
        check=built(4),
    ),
    Case(
        "build from a CSV without the text column",
        lambda c: c.build(c.file("a.csv", "id,body\n1,One.\n")),
        CorpusError,
        "has no 'text' field",
    ),
    Case(
        "build from a ragged CSV",
        lambda c: c.build(c.file("a.csv", 'id,text\n1,"One."\n2,Two.,extra,more\n')),
        CorpusError,
        "a.csv cannot be read as csv",
    ),
    Case("build from an empty CSV", lambda c: c.build(c.file("a.csv", "")), CorpusError, "a.csv cannot be read as csv"),
    Case("build from a CSV header only", lambda c: c.build(c.file("a.csv", "id,text\n")), CorpusError, "holds no text"),
    Case(
        "build from a CSV with a BOM and quoted newlines",
        lambda c: c.build([c.few(), c.file("b.csv", '\ufeffid,text\nq1,"The river bank.\nThe money bank."\n')]),
        WORKS,
        check=built(4),
    ),
    Case(
        "build from a semicolon CSV",
        lambda c: c.build(c.file("a.csv", "id;text\n1;One.\n")),
        CorpusError,
        "has no 'text' field \\(fields: id;text\\)",
    ),
    Case("build from blank documents", lambda c: c.build(c.file("a.txt", "\n  \n\t\n")), CorpusError, "holds no text"),
    Case(
        "build into a file",
        lambda c: build_index([c.corpus], c.file("out", "mine"), model=c.model, progress=False),
        FileExistsError,
        "in/out",
    ),
    Case(
        "build into a folder under a file",
        lambda c: build_index([c.corpus], c.file("out", "mine") / "index", model=c.model, progress=False),
        NotADirectoryError,
        "in/out",
    ),
    Case(
        "build into a folder of other files",
        lambda c: c.build(c.corpus),
        FileExistsError,
        "not empty and not an index",
        setup=lambda c: c.file("../out/thesis.docx", "mine"),
    ),
    Case(
        "build over an index",
        lambda c: build_index([c.tmp / "in"], c.index, model=c.model, progress=False),
        FileExistsError,
        "--overwrite",
        setup=lambda c: c.jsonl({"text": "One."}),
    ),
    Case(
        "build with an unknown index factory",
        lambda c: c.build(c.corpus, index_factory="Bogus42"),
        ValueError,
        "Bogus42",
    ),
    Case(
        "build with IVF on too few vectors",
        lambda c: c.build(c.few(), index_factory="IVF4096,Flat"),
        ValueError,
        "IVF4096",
    ),
    Case(
        "build with a bad nprobe",
        lambda c: c.build(c.few(), settings=small(search_params="nprobe=abc")),
        ValueError,
        "nprobe=abc",
    ),
    Case(
        "build with an unknown search parameter",
        lambda c: c.build(c.few(), settings=small(search_params="speed=11")),
        ValueError,
        "speed=11",
    ),
    Case("build with 2 layer weights for 3", lambda c: c.build(c.corpus, layers="1,1"), ValueError, "3 layers"),
    Case("build with negative layers", lambda c: c.build(c.corpus, search_layers="-1,0,2"), ValueError, "non-negative"),
    Case(
        "build with an unknown pooling",
        lambda c: c.build(c.corpus, pooling="median"),
        ValueError,
        "pooling must be one of",
    ),
    Case(
        "build with a missing GloVe file",
        lambda c: c.build(c.corpus, glove=c.tmp / "g.txt"),
        FileNotFoundError,
        "g.txt does not exist",
    ),
    Case(
        "build with a GloVe file that is not GloVe",
        lambda c: c.build(c.few(), glove=c.file("g.txt", "hello world\nriver 1 2\n")),
        ValueError,
        "g.txt",
    ),
    Case(
        "build with min_freq 0",
        lambda c: c.build(c.corpus, settings=small(min_freq=0)),
        ValueError,
        "min_freq must be a whole number of at least 1, not 0",
    ),
    Case(
        "build with shard_tokens 0",
        lambda c: c.build(c.corpus, settings=small(shard_tokens=0)),
        ValueError,
        "shard_tokens",
    ),
    Case(
        "build with an unknown reader option",
        lambda c: c.build(c.corpus, text_col="body"),
        TypeError,
        "unknown reader option",
    ),
    Case(
        "build into a locked folder",
        lambda c: c.build(c.corpus),
        IndexFormatError,
        "another process is writing",
        setup=lambda c: ((c.tmp / "out").mkdir(), lock(c.tmp / "out")),
    ),
    Case(
        "build a sentence longer than the cap",  # at a cap of 8 tokens; tests/test_text.py checks the real one
        lambda c: capped(8, lambda: c.build(c.jsonl({"id": "long", "text": " ".join(["river bank"] * 10)}))),
        WORKS,
        check=lambda i: (
            i.sentences["tokens"].map(len).tolist() == [8, 8, 4]
            and " ".join(i.sentences["text"]) == " ".join(["river bank"] * 10)
        ),
    ),
    # ---- adding and deleting
    Case(
        "add a document id the index has",
        lambda c: add_documents(c.index, [c.jsonl({"id": "river-0", "text": "Again."})], progress=False),
        CorpusError,
        "'river-0'",
    ),
    Case(
        "add duplicate ids",
        lambda c: add_documents(
            c.index, [c.jsonl({"id": "n", "text": "A."}, {"id": "n", "text": "B."})], progress=False
        ),
        CorpusError,
        "'n' appears more than once",
    ),
    Case(
        "add to a corpus folder",
        lambda c: add_documents(c.tmp / "in", [c.jsonl({"text": "A."})], progress=False),
        IndexFormatError,
        "not an index",
    ),
    Case(
        "add with another model",
        lambda c: add_documents(c.index, [c.jsonl({"text": "A bank."})], model=c.other_model, progress=False),
        IndexMismatchError,
    ),
    Case(
        "add to a locked index",
        lambda c: add_documents(c.index, [c.jsonl({"text": "A bank."})], progress=False),
        IndexFormatError,
        "another process is writing",
        setup=lambda c: lock(c.index),
    ),
    Case(
        "add to a damaged index",
        lambda c: add_documents(c.index, [c.jsonl({"text": "A bank."})], progress=False),
        CorruptIndexError,
        "token_layers.npy",
        setup=lambda c: truncate(shard(c, "token_layers.npy")),
    ),
    Case(
        "add a broken JSONL",
        lambda c: add_documents(c.index, [c.jsonl('{"text": ')], progress=False),
        CorpusError,
        "not valid JSON",
    ),
    Case("delete an unknown id", lambda c: delete_documents(c.index, ["no-such-doc"]), QueryError, "no-such-doc"),
    Case("delete nothing", lambda c: delete_documents(c.index, []), QueryError, "no document ids"),
    Case(
        "delete an id twice",
        lambda c: delete_documents(c.index, ["river-0"]),
        QueryError,
        "river-0",
        setup=lambda c: delete_documents(c.index, ["river-0"]),
    ),
    Case(
        "delete from a locked index",
        lambda c: delete_documents(c.index, ["river-0"]),
        IndexFormatError,
        "another process is writing",
        setup=lambda c: lock(c.index),
    ),
    Case(
        "delete from a broken manifest",
        lambda c: delete_documents(c.index, ["river-0"]),
        CorruptIndexError,
        "manifest.json",
        setup=lambda c: truncate(manifest(c), 30),
    ),
    Case(
        "delete from a missing index",
        lambda c: delete_documents(c.tmp / "nowhere", ["a"]),
        IndexFormatError,
        "does not exist",
    ),
    # ---- JSON fields and layer weights (the first rows of this table)
    Case(
        "json text is a list",
        lambda c: c.build(c.jsonl({"id": "a", "text": ["One.", "Two."]})),
        CorpusError,
        "is a list, not text",
    ),
    Case(
        "json text is a dict",
        lambda c: c.build(c.jsonl({"id": "a", "text": {"p": "One."}})),
        CorpusError,
        "is a dict, not text",
    ),
    Case(
        "json title is a bool",
        lambda c: c.build(c.jsonl({"text": "One.", "title": True})),
        CorpusError,
        "'title' field is a bool",
    ),
    Case("build with NaN layer weights", lambda c: c.build(c.corpus, layers="nan,nan,nan"), ValueError, "finite"),
    Case(
        "build with overflowing layer weights",
        lambda c: c.build(c.corpus, search_layers="1e308,1e308,1e308"),
        ValueError,
        "finite",
    ),
    Case("infinite layer weight", lambda c: LayerMix.parse("1,inf,0", 3), ValueError, "finite"),
    # ==== issue 31: ownership, finite numbers and native errors at the API
    Case(
        "build with overwrite over a user file inside a shard",
        lambda c: build_index([c.corpus], c.index, model=c.model, settings=SETTINGS, progress=False, overwrite=True),
        FileExistsError,
        "shards/00001/thesis.docx",
        setup=lambda c: shard(c, "thesis.docx", 1).write_text("mine"),
    ),
    Case(
        "train with a NaN clip",
        lambda c: train(TrainConfig(corpus=[str(c.corpus)], out=str(c.tmp / "r"), clip=float("nan"))),
        ValueError,
        "--clip must be a number above 0, not nan",
    ),
    Case(
        "train with dropout 1.5",
        lambda c: train(TrainConfig(corpus=[str(c.corpus)], out=str(c.tmp / "r"), dropout=1.5)),
        ValueError,
        "--dropout must be a number of at least 0 and below 1, not 1.5",
    ),
    Case(
        "GloVe with a NaN x_max",
        lambda c: train_glove(sp.identity(3, format="csr"), ["a", "b", "c"], x_max=float("nan"), progress=False),
        ValueError,
        "x_max must be a number above 0, not nan",
    ),
    Case(
        "GloVe beyond this machine's memory",
        lambda c: train_glove(sp.csr_matrix((10**7, 10**7)), ["w"] * 10**7, dim=10_000, progress=False),
        ValueError,
        "GiB of memory, more than this machine has",
    ),
    Case(
        "build with nprobe 0",
        lambda c: c.build(c.few(), settings=small(search_params="nprobe=0")),
        ValueError,
        "nprobe must be a whole number of at least 1, not '0'",
    ),
    Case(
        "open an index whose manifest sets efSearch 0",
        lambda c: Index.open(c.index),
        ValueError,
        "efSearch must be a whole number of at least 1, not '0'",
        setup=lambda c: edit_json(manifest(c), lambda m: searched_with(m, "efSearch=0")),
    ),
    Case(
        "load a model holding NaN",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "model.safetensors holds NaN or infinite values",
        setup=lambda c: poisoned(c.model_copy / "model.safetensors"),
    ),
    Case(
        "save a model holding NaN",
        lambda c: save_model(diverged_model(), c.tmp / "m"),
        ValueError,
        "hold NaN or infinite values .* nothing was written",
    ),
    Case(
        "read a GloVe file holding inf",
        lambda c: Glove.load(c.file("g.txt", "a 1 2\nb inf 2\n")),
        ValueError,
        "g.txt, line 2 holds NaN or infinite numbers",
    ),
    Case(
        "write index vectors holding NaN",
        lambda c: storage.write_npy(c.tmp / "v.npy", np.array([[1.0, np.nan]])),
        ValueError,
        "v.npy holds NaN or infinite values",
    ),
    Case(
        "embed a batch of 1e9",
        lambda c: c.opened.elmo.embed(["a"], batch_size=10**9),
        ValueError,
        "batch_size must be a whole number from 1 to 65,536",
    ),
    Case("load a model on an unknown device", lambda c: Elmo.load(c.model, device="tpu"), ValueError, "unknown device"),
    Case(
        "load a truncated LM head",
        lambda c: LMHead.load(run_copy(c) / "head.safetensors"),
        ValueError,
        "head.safetensors is not a readable safetensors file",
        setup=lambda c: truncate(run_copy(c) / "head.safetensors", 50),
    ),
    pytest.param(
        Case(
            "build into a read-only folder",
            lambda c: build_index([c.corpus], c.tmp / "ro" / "out", model=c.model, progress=False),
            PermissionError,
            "Permission denied",
            setup=lambda c: ((c.tmp / "ro").mkdir(), (c.tmp / "ro").chmod(0o555)),
        ),
        marks=ROOTLESS,
    ),
    pytest.param(
        Case(
            "build from a folder with an unreadable subfolder",
            lambda c: c.build(c.tmp / "in"),
            CorpusError,
            "secret cannot be read",
            setup=lambda c: (
                c.jsonl({"text": "One."}),
                (c.tmp / "in" / "secret").mkdir(),
                (c.tmp / "in" / "secret").chmod(0),
            ),
        ),
        marks=ROOTLESS,
    ),
]


def _params(table: list) -> list:
    return [row if not isinstance(row, Case) else pytest.param(row, id=row.name) for row in table]


@pytest.mark.parametrize("case", _params(API))
def test_api(case: Case, world: World, tmp_path: Path) -> None:
    c = Ctx(world, tmp_path)
    if case.setup is not None:
        case.setup(c)
    c.seal()
    before = snapshots(c)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if case.expect == WORKS:
            result = case.run(c)
        else:
            with pytest.raises(case.expect, match=case.words):
                case.run(c)
    assert_intact(c, before, refused=case.expect != WORKS)
    if case.expect == WORKS:
        assert case.check is None or case.check(result), result
        said = [*getattr(result, "notices", []), *(str(w.message) for w in caught)]  # a result's, a library's
        notices = "\n".join(said)
        assert re.search(case.words, notices), notices


# ------------------------------------------------------------------------------------------ the CLI table
@dataclass(frozen=True)
class Cmd:
    name: str
    argv: Callable[[Ctx], list[str]]  # its first word picks the program: indexer, encoder or app
    expect: str  # ERROR (one "error:" line, exit 2), USAGE (argparse's usage error, exit 2) or WORKS (exit 0)
    words: str = ""  # a regex the error line (or, for WORKS, stdout and stderr) must match
    check: Callable[[str], bool] | None = None  # WORKS: stdout is right
    setup: Callable[[Ctx], Any] | None = None
    partial: bool = False  # refused after encoding started: the resumable build state may stay in out/
    during: Callable[[Ctx], AbstractContextManager] | None = None  # a fault in force during the call
    after: Callable[[Ctx], Any] | None = None  # what must still work afterwards (e.g. the index opens)


PROGRAMS = {"indexer": indexer_cli.main, "encoder": encoder_cli.main, "app": app_cli.main}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``python -m PROGRAM ARGS``, run in this process."""
    try:
        code = PROGRAMS[argv[0]](argv[1:])
    except SystemExit as exit:
        code = exit.code
    out, err = capsys.readouterr()
    return code or 0, out, err


def is_json(check: Callable[[dict], bool] = lambda _: True) -> Callable[[str], bool]:
    return lambda out: check(json.loads(out))


def hdf5_of(c: Ctx, n: int) -> bool:
    with h5py.File(c.tmp / "out.hdf5") as f:
        return len(f) == n + 1 and f["0"].shape[0] == 3


def q(c: Ctx, *words: str) -> list[str]:
    """A query command on the shared index."""
    return ["indexer", words[0], "--index", str(c.shared_index), *words[1:]]


def b(c: Ctx, *words: str, corpus: Path | None = None) -> list[str]:
    """A build of the corpus (or ``corpus``) into tmp/out with the tiny model."""
    return [
        "indexer",
        "build",
        "--corpus",
        str(corpus or c.corpus),
        "--out",
        str(c.tmp / "out"),
        "--model",
        str(c.model),
        "--quiet",
        *words,
    ]


def e(c: Ctx, command: str, *words: str) -> list[str]:
    return ["encoder", command, *words]


def glove(c: Ctx, *words: str) -> list[str]:
    """A quick GloVe training of the corpus (or what ``words`` say) into tmp/g.txt."""
    return ["indexer", "glove", "--corpus", str(c.corpus), "--out", str(c.tmp / "g.txt"), "--epochs", "1", *words]


def lines(c: Ctx, text: str | bytes) -> str:
    return str(c.file("lines.txt", text))


def poisoned(path: Path) -> None:
    """Write one weight of a safetensors file as NaN, as a diverged run would have (bypassing our writers)."""
    tensors = load_file(path)
    first = sorted(tensors)[0]
    tensors[first] = tensors[first].clone().fill_(float("nan"))
    save_file(tensors, path)


def own_hdf5(c: Ctx, datasets: tuple[str, ...] = ("0", "sentence_to_index")) -> Path:
    """An hdf5 file of the case's, holding ``datasets`` (by default, an embeddings file's)."""
    path = c.tmp / "in" / "o.hdf5"
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as f:
        for name in datasets:
            f.create_dataset(name, data=[1.0])
    return c._give(path)


def run_copy(c: Ctx) -> Path:
    """A copy of the world's training run that the case may damage (in tmp/run: what a refused resume may leave)."""
    copy = c.tmp / "run"
    return copy if copy.exists() else c._give(Path(shutil.copytree(c.run, copy)))


def trains(c: Ctx, *words: str, out: str = "r") -> list[str]:
    """A training command on a few lines of text into tmp/OUT, with the world's run's options."""
    corpus = lines(c, "\n".join(FEW * 40) + "\n")
    options = ["--size", "tiny", "--batch-size", "4", "--unroll", "5", "--vocab-size", "50", "--workers", "0"]
    return ["encoder", "train", "--corpus", corpus, "--out", str(c.tmp / out), *options, "--no-progress", *words]


def trained_run(c: Ctx) -> Path:
    """A run trained for one step into tmp/run by ``trains``' options: the one fixture with a checkpoint."""
    assert encoder_cli.main(trains(c, "--max-tokens", "20")[1:] + ["--out", str(c.tmp / "run")]) is None
    return c._give(c.tmp / "run")


def ships(c: Ctx, to: Path, *flags: str) -> list[str]:
    """Shipping the world's run to ``to``."""
    return ["encoder", "ship", "--run", str(c.run), "--to", str(to), *flags]


def embeds(c: Ctx, *words: str) -> list[str]:
    return ["encoder", "embed", "--model", str(c.model), "--input", lines(c, "a b\n"), "--quiet", *words]


# Full disks: each writer fails as it does when the file system is full (measured on a small tmpfs; the test at the
# end of this file does it for real where it can mount one): FAISS, safetensors and numpy in their own words, the
# rest (h5py through a Python file, text, parquet) with errno ENOSPC.
FAISS_FULL = RuntimeError(
    "Error in void faiss::write_index(const Index*, IOWriter*, int) at index_write.cpp:499: Error: 'ret == (size * 4)' "
    "failed: write error in x.faiss: 262099 != 6400000 (No space left on device)"
)
SAFETENSORS_FULL = SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")
NUMPY_FULL = OSError("2880 requested and 1984 written")  # no errno: only the file system says why
OS_FULL = OSError(errno.ENOSPC, "No space left on device")
NO_SPACE_LEFT = os.statvfs_result((4096, 4096, 100, 0, 0, 100, 0, 0, 0, 255))  # no block left (f_bavail 0)


def failing(target: str, error: BaseException, no_space: bool = False) -> Callable[[Ctx], AbstractContextManager]:
    """During the call ``target`` (a writer, "module.name") raises ``error``; ``no_space``: and the file system
    reports no space left, as it does after numpy's short write."""

    def during(c: Ctx) -> AbstractContextManager:
        stack = ExitStack()
        stack.enter_context(mock.patch(target, side_effect=error))
        if no_space:
            stack.enter_context(mock.patch("os.statvfs", return_value=NO_SPACE_LEFT))
        return stack

    return during


def no_escapes(out: str) -> bool:
    """Printed text shows the documents' escape sequences and direction overrides, never sends them."""
    shown = "\\x1b]0;pwned\\x07\\x1b[2J" in out and "\\u202e" in out
    return shown and not {"\x1b", "\u202e", "\x9b"} & set(out)


def json_exact(out: str) -> bool:
    """JSON output sends no escape either (C1 and direction overrides escaped as JSON), and parses to the data."""
    hit = json.loads(out)["results"][0]
    return hit["doc_id"].endswith(ESCAPES) and C1 in hit["doc_id"] and not {"\x1b", "\u202e", "\x9b"} & set(out)


CLI = [
    # ---- indexer search
    Cmd("search an empty query", lambda c: q(c, "search", ""), ERROR, "the query is empty"),
    Cmd(
        "search k 0", lambda c: q(c, "search", "bank", "--k", "0"), USAGE, "--k: must be a whole number from 1 to 1,000"
    ),
    Cmd("search k -1", lambda c: q(c, "search", "bank", "--k", "-1"), USAGE, "--k: .*not '-1'"),
    Cmd("search k huge", lambda c: q(c, "search", "bank", "--k", "99999999999"), USAGE, "from 1 to 1,000"),
    Cmd("search k abc", lambda c: q(c, "search", "bank", "--k", "abc"), USAGE, "--k: must be .*, not 'abc'"),
    Cmd(
        "search an unknown method",
        lambda c: q(c, "search", "bank", "--method", "magic"),
        USAGE,
        "--method: invalid choice",
    ),
    Cmd(
        "search nan layers", lambda c: q(c, "search", "bank", "--layers", "nan,nan,nan"), ERROR, "bad layer mix.*finite"
    ),
    Cmd("search layers of wrong count", lambda c: q(c, "search", "bank", "--layers", "1,2"), ERROR, "3 layers"),
    Cmd(
        "search a missing index",
        lambda c: ["indexer", "search", "--index", str(c.tmp / "no"), "bank"],
        ERROR,
        "does not exist",
    ),
    Cmd(
        "search a file as index",
        lambda c: ["indexer", "search", "--index", lines(c, "x"), "bank"],
        ERROR,
        "not an index",
    ),
    Cmd(
        "search a damaged index",
        lambda c: ["indexer", "search", "--index", str(c.index), "bank"],
        ERROR,
        "sentence_layers.npy .*rebuild|sentence_layers.npy",
        setup=lambda c: truncate(shard(c, "sentence_layers.npy")),
    ),
    Cmd(
        "search with another model",
        lambda c: q(c, "search", "bank", "--model", str(c.other_model)),
        ERROR,
        "built with model 'tiny'",
    ),
    Cmd(
        "search with --weights only",
        lambda c: q(c, "search", "bank", "--weights", "w.hdf5"),
        ERROR,
        "--weights needs --model",
    ),
    Cmd(
        "search unknown words as JSON",
        lambda c: q(c, "search", "qwxzt blorft", "--json", "--k", "2", "--method", "keywords"),
        WORKS,
        check=is_json(lambda r: r["results"] == [] and r["notices"] == [NO_MATCH]),
    ),
    Cmd(
        "search a 1 MB query as JSON",
        lambda c: q(c, "search", BIG_QUERY, "--json", "--k", "1", "--method", "keywords"),
        WORKS,
        check=is_json(lambda r: len(r["query"]) == 10_000 and any("first 10,000" in n for n in r["notices"])),
    ),
    Cmd(
        "search emoji and control characters",
        lambda c: q(c, "search", EMOJI + CONTROL + " bank", "--k", "2", "--baseline", "--method", "keywords"),
        WORKS,
        "GloVe baseline",
    ),
    Cmd(
        "search sentences of unknown words with the baseline",
        lambda c: q(c, "search", "qwxzt", "--sentences", "--baseline", "--json", "--k", "3"),
        WORKS,
        check=is_json(lambda r: len(r["results"]) == 3 and r["glove"] == []),
    ),
    Cmd(
        "search unverified",
        lambda c: q(c, "search", "bank", "--no-verify", "--k", "1", "--method", "keywords"),
        WORKS,
        "  1\\. +\\d+%",
    ),
    # ---- neighbors, senses, stats
    Cmd(
        "neighbors of a word not there",
        lambda c: q(c, "neighbors", "--sentence", "a b c", "--word", "bank"),
        ERROR,
        "'bank' is not a word",
    ),
    Cmd(
        "neighbors position -1",
        lambda c: q(c, "neighbors", "--sentence", "the bank", "--word", "bank", "--position", "-1"),
        USAGE,
        "--position: must be a whole number of at least 0, not '-1'",
    ),
    Cmd(
        "neighbors position abc",
        lambda c: q(c, "neighbors", "--sentence", "the bank", "--word", "bank", "--position", "x"),
        USAGE,
        "--position: must be a whole number of at least 0, not 'x'",
    ),
    Cmd(
        "neighbors an empty sentence",
        lambda c: q(c, "neighbors", "--sentence", " ", "--word", "bank"),
        ERROR,
        "sentence is empty",
    ),
    Cmd(
        "neighbors of emoji as JSON",
        lambda c: q(c, "neighbors", "--sentence", EMOJI, "--word", "🏦", "--k", "2", "--json"),
        WORKS,
        check=is_json(lambda r: r["position"] == 0 and len(r["hits"]) == 2 and r["glove_note"]),
    ),
    Cmd(
        "senses k abc",
        lambda c: q(c, "senses", "--word", "bank", "--k", "abc"),
        USAGE,
        "--k: must be auto or a whole number from 1 to 50, not 'abc'",
    ),
    Cmd(
        "senses k 0",
        lambda c: q(c, "senses", "--word", "bank", "--k", "0"),
        USAGE,
        "--k: must be auto or a whole number from 1 to 50, not '0'",
    ),
    Cmd(
        "senses k -2",
        lambda c: q(c, "senses", "--word", "bank", "--k", "-2"),
        USAGE,
        "--k: must be auto or .*, not '-2'",
    ),
    Cmd(
        "senses no occurrences",
        lambda c: q(c, "senses", "--word", "bank", "--max-occurrences", "0"),
        USAGE,
        "--max-occurrences: must be a whole number of at least 1, not '0'",
    ),
    Cmd("senses of an unknown word", lambda c: q(c, "senses", "--word", "qwxzt"), ERROR, "'qwxzt' does not occur"),
    Cmd(
        "senses as JSON",
        lambda c: q(c, "senses", "--word", "bank", "--k", "2", "--json"),
        WORKS,
        check=is_json(lambda r: len(r["clusters"]) == 2),
    ),
    Cmd(
        "stats as JSON",
        lambda c: q(c, "stats", "--json"),
        WORKS,
        check=is_json(lambda r: r["counts"]["documents"] == 34),
    ),
    Cmd(
        "stats of a newer format",
        lambda c: ["indexer", "stats", "--index", str(c.index)],
        ERROR,
        "newer",
        setup=lambda c: edit_json(manifest(c), lambda m: {**m, "format_version": 99}),
    ),
    Cmd(
        "stats of a manifest that is not JSON",
        lambda c: ["indexer", "stats", "--index", str(c.index)],
        ERROR,
        "manifest.json cannot be read",
        setup=lambda c: manifest(c).write_text("{oops"),
    ),
    Cmd("stats on an unknown device", lambda c: q(c, "stats", "--device", "tpu"), ERROR, "device"),
    # ---- indexer build, add, delete, glove
    Cmd("build from a missing corpus", lambda c: b(c, corpus=c.tmp / "none.txt"), ERROR, "none.txt does not exist"),
    Cmd(
        "build into a file",
        lambda c: ["indexer", "build", "--corpus", str(c.corpus), "--out", lines(c, "mine"), "--model", str(c.model)],
        ERROR,
        "lines.txt already exists and is not a folder",
    ),
    Cmd("build with a bad factory", lambda c: b(c, "--index-factory", "Bogus42"), ERROR, "Bogus42"),
    Cmd(
        "build with a bad nprobe",
        lambda c: b(c, "--search-params", "nprobe=-3", corpus=c.few()),
        ERROR,
        "nprobe=-3",
        partial=True,
    ),
    Cmd("build with shard tokens 0", lambda c: b(c, "--shard-tokens", "0"), USAGE, "--shard-tokens: must be .*not '0'"),
    Cmd("build with min freq -1", lambda c: b(c, "--min-freq", "-1"), USAGE, "--min-freq: .* at least 1, not '-1'"),
    Cmd(
        "build with glove dim 0",
        lambda c: b(c, "--glove", "train", "--glove-dim", "0"),
        USAGE,
        "--glove-dim: must be a whole number from 1 to 10,000, not '0'",
    ),
    Cmd("build with an unknown pooling", lambda c: b(c, "--pooling", "median"), USAGE, "--pooling: invalid choice"),
    Cmd(
        "build with a missing GloVe file",
        lambda c: b(c, "--glove", str(c.tmp / "g.txt")),
        ERROR,
        "g.txt does not exist",
    ),
    Cmd("build with a missing model", lambda c: [*b(c), "--model", str(c.tmp / "m")], ERROR, "there is no model at"),
    Cmd(
        "build with a truncated model",
        lambda c: [*b(c), "--model", str(c.model_copy)],
        ERROR,
        "model.safetensors",
        setup=lambda c: truncate(c.model_copy / "model.safetensors", 300),
    ),
    Cmd(
        "build with --weights without options",
        lambda c: [*b(c), "--weights", str(c.published / "weights.hdf5")],
        ERROR,
        "is a folder: with --weights FILE.hdf5, --model names its options.json",
    ),
    Cmd(
        "build with options of another shape",
        lambda c: [*b(c), "--model", str(c.tmp / "published")],
        ERROR,
        "shape|weights",
        setup=other_shape_options,
    ),
    Cmd("build with a bad layer mix", lambda c: b(c, "--layers", "inf,1,1"), ERROR, "finite"),
    Cmd("build a broken JSONL", lambda c: b(c, corpus=c.jsonl({"text": "a"}, "{")), ERROR, "line 2: not valid JSON"),
    Cmd("build a CSV without text", lambda c: b(c, corpus=c.file("a.csv", "id,body\n1,x\n")), ERROR, "--text-column"),
    Cmd(
        "build a duplicate id",
        lambda c: b(c, corpus=c.jsonl({"id": 1, "text": "a"}, {"id": 1, "text": "b"})),
        ERROR,
        "'1' appears more than once",
    ),
    Cmd(
        "build --out an index of other inputs",
        lambda c: [*b(c, corpus=c.jsonl({"text": "The bank."})), "--out", str(c.index)],
        ERROR,
        "--overwrite",
    ),
    Cmd(
        "build with published weights and a binary file",
        lambda c: [
            *b(
                c,
                "--glove",
                "train",
                "--glove-min-count",
                "1",
                corpus=c.file("blob.txt", BINARY + b"\nThe river bank.\n"),
            ),
            "--model",
            str(c.published / "options.json"),
            "--weights",
            str(c.published / "weights.hdf5"),
        ],
        WORKS,
        "warning: .*blob.txt: .* undecodable",
    ),
    Cmd(
        "add a duplicate id",
        lambda c: [
            "indexer",
            "add",
            "--index",
            str(c.index),
            "--corpus",
            str(c.jsonl({"id": "other-1", "text": "x"})),
            "--quiet",
        ],
        ERROR,
        "'other-1'",
    ),
    Cmd(
        "add to a missing index",
        lambda c: ["indexer", "add", "--index", str(c.tmp / "no"), "--corpus", str(c.corpus)],
        ERROR,
        "does not exist",
    ),
    Cmd(
        "add to a locked index",
        lambda c: ["indexer", "add", "--index", str(c.index), "--corpus", str(c.jsonl({"text": "A bank."})), "--quiet"],
        ERROR,
        "another process is writing",
        setup=lambda c: lock(c.index),
    ),
    Cmd(
        "delete an unknown id",
        lambda c: ["indexer", "delete", "--index", str(c.index), "--doc-id", "ghost"],
        ERROR,
        "ghost",
    ),
    Cmd(
        "delete from a file",
        lambda c: ["indexer", "delete", "--index", lines(c, "x"), "--doc-id", "a"],
        ERROR,
        "not an index",
    ),
    Cmd(
        "delete without ids",
        lambda c: ["indexer", "delete", "--index", str(c.index), "--doc-id"],
        USAGE,
        "--doc-id: expected at least one",
    ),
    Cmd(
        "glove from a missing corpus",
        lambda c: ["indexer", "glove", "--corpus", str(c.tmp / "x"), "--out", str(c.tmp / "g.txt")],
        ERROR,
        "--corpus .*x does not exist",
    ),
    Cmd(
        "glove into a folder",
        lambda c: ["indexer", "glove", "--corpus", str(c.corpus), "--out", str(c.tmp), "--min-count", "1"],
        ERROR,
        "--out .* is a folder; give the GloVe file to write",
    ),
    Cmd(
        "glove dim 0",
        lambda c: ["indexer", "glove", "--corpus", str(c.corpus), "--out", str(c.tmp / "g.txt"), "--dim", "0"],
        USAGE,
        "--dim: must be a whole number from 1 to 10,000, not '0'",
    ),
    Cmd(
        "glove max tokens 0",
        lambda c: ["indexer", "glove", "--corpus", str(c.corpus), "--out", str(c.tmp / "g.txt"), "--max-tokens", "0"],
        USAGE,
        "--max-tokens: must be a whole number of at least 1, not '0'",
    ),
    Cmd(
        "glove of a binary file",
        lambda c: [*glove(c, "--corpus", lines(c, BINARY)), "--min-count", "1"],
        WORKS,
        "warning: .*lines.txt: .*undecodable",
    ),
    Cmd(
        "glove of emoji and control characters as JSON",
        lambda c: glove(
            c, "--corpus", lines(c, f"{EMOJI}\n{CONTROL}\n" * 3), "--min-count", "1", "--dim", "4", "--json"
        ),
        WORKS,
        check=is_json(lambda r: r["dim"] == 4 and r["words"] > 3),
    ),
    Cmd("indexer without a command", lambda c: ["indexer"], USAGE, "required: COMMAND"),
    # ---- encoder
    Cmd(
        "embed a missing input",
        lambda c: e(
            c, "embed", "--model", str(c.model), "--input", str(c.tmp / "x.txt"), "--output", str(c.tmp / "o.hdf5")
        ),
        ERROR,
        "x.txt does not exist",
    ),
    Cmd(
        "embed a folder",
        lambda c: e(c, "embed", "--model", str(c.model), "--input", str(c.corpus), "--output", str(c.tmp / "o.hdf5")),
        ERROR,
        "corpus is a folder",
    ),
    Cmd(
        "embed a non-UTF-8 line",
        lambda c: e(
            c, "embed", "--model", str(c.model), "--input", lines(c, LATIN1), "--output", str(c.tmp / "o.hdf5")
        ),
        ERROR,
        "line 1 is not valid UTF-8",
    ),
    Cmd(
        "embed batch size 0",
        lambda c: e(
            c,
            "embed",
            "--model",
            str(c.model),
            "--input",
            lines(c, "a b\n"),
            "--output",
            str(c.tmp / "o.hdf5"),
            "--batch-size",
            "0",
        ),
        USAGE,
        "--batch-size: must be a whole number from 1 to 65,536, not '0'",
    ),
    Cmd(
        "embed with a missing model",
        lambda c: e(
            c, "embed", "--model", str(c.tmp / "m"), "--input", lines(c, "a\n"), "--output", str(c.tmp / "o.hdf5")
        ),
        ERROR,
        "there is no model",
    ),
    Cmd(
        "embed into a missing folder",
        lambda c: e(
            c, "embed", "--model", str(c.model), "--input", lines(c, "a\n"), "--output", str(c.tmp / "no" / "o.hdf5")
        ),
        WORKS,
        "wrote 1 sentences",
    ),
    Cmd(
        "embed onto a folder",
        lambda c: e(c, "embed", "--model", str(c.model), "--input", lines(c, "a\n"), "--output", str(c.tmp)),
        ERROR,
        "is a folder",
    ),
    Cmd(
        "embed an unknown precision",
        lambda c: e(c, "embed", "--input", "x", "--output", "y", "--precision", "fp8"),
        USAGE,
        "--precision: invalid choice",
    ),
    Cmd(
        "embed empty, emoji and control lines",
        lambda c: e(
            c,
            "embed",
            "--model",
            str(c.model),
            "--input",
            lines(c, f"\n{EMOJI}\n{CONTROL}\n"),
            "--output",
            str(c.tmp / "out.hdf5"),
            "--quiet",
        ),
        WORKS,
        "wrote 3 sentences",
    ),
    Cmd(
        "train zero tokens",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "run"), "--max-tokens", "0"),
        USAGE,
        "--max-tokens: must be a whole number of at least 1, not '0'",
    ),
    Cmd(
        "train batch size 0",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "run"), "--batch-size", "0"),
        USAGE,
        "--batch-size: must be a whole number from 1 to 65,536, not '0'",
    ),
    Cmd(
        "train an unknown size",
        lambda c: e(c, "train", "--corpus", "x", "--out", "y", "--size", "huge"),
        USAGE,
        "--size: invalid choice",
    ),
    Cmd(
        "train from a missing corpus",
        lambda c: e(
            c,
            "train",
            "--corpus",
            str(c.tmp / "x.txt"),
            "--out",
            str(c.tmp / "run"),
            "--size",
            "tiny",
            "--max-tokens",
            "100",
        ),
        ERROR,
        "x.txt",
    ),
    Cmd(
        "train into a model folder",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.model), "--size", "tiny"),
        ERROR,
        "--resume|--overwrite",
    ),
    Cmd(
        "train resume and overwrite",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "r"), "--resume", "--overwrite"),
        ERROR,
        "give one of them",
    ),
    Cmd(
        "train with a config that is not JSON",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "r"), "--config", lines(c, "{")),
        ERROR,
        "lines.txt is not valid JSON",
    ),
    Cmd(
        "perplexity of a missing corpus",
        lambda c: e(c, "perplexity", "--model", str(c.model), "--corpus", str(c.tmp / "x.txt")),
        ERROR,
        "x.txt does not exist",
    ),
    Cmd(
        "perplexity of a missing model",
        lambda c: e(c, "perplexity", "--model", str(c.tmp / "m"), "--corpus", lines(c, "a b\n")),
        ERROR,
        "there is no model",
    ),
    Cmd(
        "perplexity without a head",
        lambda c: e(c, "perplexity", "--model", str(c.model), "--corpus", lines(c, "a b\n")),
        ERROR,
        "head.safetensors",
    ),
    Cmd(
        "perplexity of published weights",
        lambda c: e(c, "perplexity", "--model", str(c.published), "--corpus", lines(c, "a b\n")),
        ERROR,
        "published AllenNLP model",
    ),
    Cmd(
        "ship a missing run",
        lambda c: e(c, "ship", "--run", str(c.tmp / "run"), "--to", str(c.tmp / "m")),
        ERROR,
        "run",
    ),
    Cmd(
        "ship a folder that is no run",
        lambda c: e(c, "ship", "--run", str(c.corpus), "--to", str(c.tmp / "m")),
        ERROR,
        "head.safetensors is missing",
    ),
    Cmd(
        "prepare nan part tokens",
        lambda c: e(c, "prepare", "--corpus", lines(c, "a b\n"), "--out", str(c.tmp / "p"), "--part-tokens", "nan"),
        USAGE,
        "--part-tokens: .*nan",
    ),
    Cmd(
        "prepare over a folder of the user's, --overwrite included",
        lambda c: e(c, "prepare", "--corpus", lines(c, "a b\n"), "--out", str(c.tmp / "in" / "mine"), "--overwrite"),
        ERROR,
        "holds files prepare did not write \\(notes.txt\\)",
        setup=lambda c: c.file("mine/notes.txt", "mine\n"),
    ),
    Cmd(
        "train on a damaged prepared file",
        lambda c: trains(c, "--corpus", str(c.file("x.000.tokens.xz", b"not xz"))),
        ERROR,
        "x.000.tokens.xz is not a prepared corpus file",
    ),
    Cmd(
        "train a Korean model on English prepared files",
        lambda c: trains(c, "--corpus", str(c.tmp / "in" / "p"), "--language", "ko"),
        ERROR,
        "prepared with the 'en' text rules, but this model's are 'ko'",
        setup=lambda c: (
            prepare([c.file("few.txt", "\n".join(FEW) + "\n")], c.tmp / "in" / "p", "en", 0, progress=False)
            and c._give(c.tmp / "in" / "p")
        ),
    ),
    Cmd(
        "punkt --out over a file of the user's",
        lambda c: e(
            c, "punkt", "--corpus", lines(c, "Mr. Smith sat. He left.\n"), "--out", str(c.file("mine.json", "{}"))
        ),
        ERROR,
        "mine.json already exists and is not a file of Punkt parameters; .*--overwrite",
    ),
    Cmd(
        "evaluate --report over a file of the user's, before any task runs",
        lambda c: e(c, "evaluate", "all", "--model", str(c.model), "--report", str(c.tmp / "in")),
        ERROR,
        "holds report.md, which is not a report of ours",
        setup=lambda c: c.file("report.md", "my notes"),
    ),
    Cmd(
        "evaluate --report without all",
        lambda c: e(c, "evaluate", "wic", "--report", str(c.tmp / "r")),
        ERROR,
        "--report goes with the task 'all'",
    ),
    Cmd(
        "evaluate with a missing model",
        lambda c: e(c, "evaluate", "wordsim", "--model", str(c.tmp / "m")),
        ERROR,
        "there is no model",
    ),
    Cmd(
        "evaluate with a missing GloVe",
        lambda c: e(c, "evaluate", "wordsim", "--model", str(c.model), "--glove", str(c.tmp / "g.txt")),
        ERROR,
        "g.txt",
    ),
    Cmd(
        "evaluate with missing data",
        lambda c: e(c, "evaluate", "wordsim", "--model", str(c.model), "--glove", "none", "--data", str(c.tmp / "d")),
        ERROR,
        "wordsim: ",
    ),
    Cmd("evaluate an unknown task", lambda c: e(c, "evaluate", "magic"), USAGE, "invalid choice: 'magic'"),
    Cmd(
        "punkt from a missing corpus",
        lambda c: e(c, "punkt", "--corpus", str(c.tmp / "x"), "--out", str(c.tmp / "p.json")),
        ERROR,
        "no such file or folder",
    ),
    Cmd(
        "punkt of an empty file",
        lambda c: e(c, "punkt", "--corpus", lines(c, ""), "--out", str(c.tmp / "p.json")),
        ERROR,
        "no text to train Punkt on",
    ),
    # ---- app
    Cmd(
        "app --help",
        lambda c: ["app", "--help"],
        WORKS,
        "--rebuild",
        check=lambda out: out.startswith("usage: python -m app"),
    ),
    Cmd("app port abc", lambda c: ["app", "--port", "abc"], USAGE, "--port: must be a whole number from 1 to 65,535"),
    Cmd(
        "app index is a file",
        lambda c: ["app", "--index", lines(c, "mine"), "--model", str(c.model)],
        ERROR,
        "lines.txt already exists and is not a folder",
    ),
    Cmd(
        "app with a missing model",
        lambda c: ["app", "--index", str(c.tmp / "i"), "--model", str(c.tmp / "m")],
        ERROR,
        "there is no model",
    ),
    Cmd(
        "app with a missing GloVe",
        lambda c: ["app", "--index", str(c.tmp / "i"), "--model", str(c.model), "--glove", str(c.tmp / "g.txt")],
        ERROR,
        "g.txt does not exist",
    ),
    Cmd(
        "app index with a broken manifest",
        lambda c: ["app", "--index", str(c.index), "--model", str(c.model)],
        ERROR,
        "manifest.json",
        setup=lambda c: manifest(c).write_text("{"),
    ),
    # ==== issue 31, class 1: user files lost or replaced
    Cmd(
        "build --overwrite over a user file inside a shard",
        lambda c: [*b(c), "--out", str(c.index), "--overwrite"],
        ERROR,
        "shards/00000/thesis.docx.*never deletes files it did not write",
        setup=lambda c: shard(c, "thesis.docx").write_text("mine"),
    ),
    Cmd("ship without --to", lambda c: e(c, "ship", "--run", str(c.run)), USAGE, "--to"),
    Cmd(
        "ship over another model",
        lambda c: ships(c, c.model_copy),
        ERROR,
        "holds another model .*did not continue a model.*--overwrite to replace it",
    ),
    Cmd(
        "ship into a folder of the user's files",
        lambda c: ships(c, c.tmp / "in"),
        ERROR,
        "in holds drafts, which ship would not keep",
        setup=lambda c: (c.file("notes.txt", "mine"), c.file("drafts/chapter.txt", "mine")),
    ),
    Cmd(
        "ship --overwrite into a folder holding the user's folder",
        lambda c: ships(c, c.tmp / "in", "--overwrite"),
        ERROR,
        "in holds drafts, which ship would not keep",
        setup=lambda c: (c.file("config.json", "{}"), c.file("drafts/chapter.txt", "mine")),
    ),
    Cmd(
        "ship --overwrite into a folder that is not a model",
        lambda c: ships(c, c.tmp / "in", "--overwrite"),
        ERROR,
        "not empty and not a model folder",
        setup=lambda c: c.file("notes.txt", "mine"),
    ),
    Cmd(
        "glove --out over the user's file",
        lambda c: glove(c, "--out", lines(c, "my notes\n"), "--min-count", "1"),
        ERROR,
        "--out .*lines.txt already exists and is not a GloVe file; .*--overwrite",
    ),
    Cmd(
        "embed --output over the user's file",
        lambda c: embeds(c, "--output", str(c.file("o.hdf5", "mine"))),
        ERROR,
        "--output .*o.hdf5 already exists and is not an hdf5 file of embeddings",
    ),
    Cmd(
        "embed --output over an hdf5 file of something else",
        lambda c: embeds(c, "--output", str(own_hdf5(c, ("weights",)))),
        ERROR,
        "o.hdf5 already exists and is not an hdf5 file of embeddings",
    ),
    Cmd(
        "train --overwrite over a model",
        lambda c: trains(c, "--overwrite", out="model"),
        ERROR,
        "holds a model, not a training run",
        setup=lambda c: c.model_copy,
    ),
    Cmd(
        "train --overwrite over a run holding the user's file",
        lambda c: trains(c, "--overwrite", out="in"),
        ERROR,
        "checkpoints/step-00000001/notes.txt",
        setup=lambda c: (c.file("run.json", "{}"), c.file("checkpoints/step-00000001/notes.txt", "mine")),
    ),
    # ==== class 2: silent wrong results
    Cmd(
        "train with a NaN clip", lambda c: trains(c, "--clip", "nan"), USAGE, "--clip: .*not 'nan' \\(NaN and infinity"
    ),
    Cmd(
        "train for -1 minutes", lambda c: trains(c, "--time-budget", "-1"), USAGE, "--time-budget: .*above 0, not '-1'"
    ),
    Cmd("train for NaN minutes", lambda c: trains(c, "--time-budget", "nan"), USAGE, "--time-budget: .*'nan'"),
    Cmd("train with NaN dropout", lambda c: trains(c, "--dropout", "nan"), USAGE, "--dropout: .*'nan'"),
    Cmd("train with dropout 1", lambda c: trains(c, "--dropout", "1"), USAGE, "--dropout: .*below 1, not '1'"),
    Cmd("train with an infinite rate", lambda c: trains(c, "--lr", "inf"), USAGE, "--lr: .*not 'inf'"),
    Cmd("glove with a NaN x-max", lambda c: glove(c, "--x-max", "nan"), USAGE, "--x-max: .*not 'nan'"),
    Cmd(
        "build with nprobe 0",
        lambda c: b(c, "--search-params", "nprobe=0", corpus=c.few()),
        ERROR,
        "nprobe must be a whole number of at least 1, not '0'",
    ),
    Cmd(
        "build with efSearch nan",
        lambda c: b(c, "--search-params", "efSearch=nan", corpus=c.few()),
        ERROR,
        "efSearch must be .*not 'nan'",
    ),
    Cmd(
        "search an index whose manifest sets efSearch 0",
        lambda c: ["indexer", "search", "--index", str(c.index), "bank"],
        ERROR,
        "efSearch must be a whole number of at least 1, not '0'",
        setup=lambda c: edit_json(manifest(c), lambda m: searched_with(m, "efSearch=0")),
    ),
    Cmd(
        "train that diverges",
        lambda c: trains(c, "--lr", "1e30", "--log-every", "1", "--max-tokens", "200", out="run"),
        ERROR,
        "training diverged at step \\d+: the loss .*NaN or infinite, so no checkpoint or model was written",
        partial=True,
        after=lambda c: not (c.tmp / "run" / "model.safetensors").exists(),
    ),
    Cmd(
        "embed with a model holding NaN",
        lambda c: e(
            c, "embed", "--model", str(c.model_copy), "--input", lines(c, "a b\n"), "--output", str(c.tmp / "o")
        ),
        ERROR,
        "model.safetensors holds NaN or infinite values .*damaged",
        setup=lambda c: poisoned(c.model_copy / "model.safetensors"),
    ),
    Cmd(
        "build with a GloVe file holding NaN",
        lambda c: b(c, "--glove", str(c.file("g.txt", "river 0.1 0.2\nbank nan 0.3\n"))),
        ERROR,
        "g.txt, line 2 holds NaN or infinite numbers",
    ),
    # ==== class 3: tracebacks
    Cmd("train validating every 0 steps", lambda c: trains(c, "--valid-every", "0"), USAGE, "--valid-every: .*not '0'"),
    Cmd("train a huge batch", lambda c: trains(c, "--batch-size", "1000000000"), USAGE, "from 1 to 65,536"),
    Cmd("embed a huge batch", lambda c: embeds(c, "--batch-size", "1e9", "--output", "o"), USAGE, "65,536, not '1e9'"),
    Cmd("glove of a huge dimension", lambda c: glove(c, "--dim", "1e9"), USAGE, "--dim: .*from 1 to 10,000"),
    Cmd("train on an unknown device", lambda c: trains(c, "--device", "tpu"), ERROR, "unknown device 'tpu'"),
    Cmd("embed on an unknown device", lambda c: embeds(c, "--device", "tpu", "--output", "o"), ERROR, "unknown device"),
    Cmd(
        "perplexity with a truncated head",
        lambda c: e(c, "perplexity", "--model", str(run_copy(c)), "--corpus", lines(c, "a b\n")),
        ERROR,
        "run/head.safetensors is not a readable safetensors file",
        setup=lambda c: truncate(run_copy(c) / "head.safetensors", 50),
    ),
    Cmd(
        "embed with weights that are not hdf5",
        lambda c: embeds(c, "--model", str(c.published / "options.json"), "--weights", lines(c, "x"), "--output", "o"),
        ERROR,
        "lines.txt is not a readable hdf5 file",
    ),
    Cmd(
        "train from a cut-off .xz",
        lambda c: (
            ["encoder", "train", "--corpus", str(c.file("a.txt.xz", lzma.compress(b"The bank.\n" * 99)[:-20]))]
            + trains(c)[4:]
        ),
        ERROR,
        "a.txt.xz cannot be read .*damaged",
    ),
    Cmd(
        "resume from a damaged checkpoint",
        lambda c: trains(c, "--resume", "--max-tokens", "400", out="run"),
        ERROR,
        "optimizer.safetensors is not a readable safetensors file",
        setup=lambda c: truncate(trained_run(c) / "checkpoints" / "step-00000001" / "optimizer.safetensors", 50),
    ),
    # ==== class 4: cryptic (a full disk)
    Cmd(
        "build when FAISS finds the disk full",
        lambda c: b(c, corpus=c.few()),
        ERROR,
        "out/\\w+\\.g1\\.faiss: disk full \\(no space left on device\\)",
        partial=True,
        during=failing("faiss.write_index", FAISS_FULL),
    ),
    Cmd(
        "add when numpy finds the disk full",
        lambda c: [
            "indexer",
            "add",
            "--index",
            str(c.index),
            "--corpus",
            str(c.jsonl({"text": "A new bank."})),
            "--quiet",
        ],
        ERROR,
        "index/shards/\\d{5}: disk full",
        partial=True,
        during=failing("numpy.save", NUMPY_FULL, no_space=True),
        after=lambda c: len(Index.open(c.index).search_sentences("river bank", k=1)) == 1,  # as it was, and it works
    ),
    Cmd(
        "embed when h5py finds the disk full",
        lambda c: embeds(c, "--output", str(own_hdf5(c))),
        ERROR,
        "o.hdf5: disk full",
        during=failing("h5py.Group.create_dataset", OS_FULL),
    ),
    Cmd(
        "glove when the disk is full",
        lambda c: glove(c, "--out", str(c.file("g.txt", "river 0.1 0.2\n")), "--min-count", "1"),
        ERROR,
        "g.txt: disk full",
        during=failing("indexer.glove.open_text", OS_FULL),
    ),
    Cmd(
        "ship when safetensors finds the disk full",
        lambda c: ships(c, c.model_copy, "--overwrite"),
        ERROR,
        "model: disk full",
        during=failing("encoder.weights.save_file", SAFETENSORS_FULL),
    ),
    Cmd(
        "train when a checkpoint finds the disk full",
        lambda c: trains(c, "--max-tokens", "60", out="run"),
        ERROR,
        "run/checkpoints/step-\\d+/[\\w.]+: disk full",
        partial=True,
        during=failing("encoder.run_folder.save_file", SAFETENSORS_FULL),
    ),
    # ==== class 5: injection (terminal escape sequences in documents and paths)
    Cmd(
        "search documents holding escape sequences",
        lambda c: ["indexer", "search", "--index", str(c.hostile), "bank", "--k", "2", "--method", "keywords"],
        WORKS,
        check=lambda out: no_escapes(out) and "[h0\\x9b2J\\x1b]0;pwned" in out,  # the ids too
    ),
    Cmd(
        "search them as JSON, exactly",
        lambda c: [
            "indexer",
            "search",
            "--index",
            str(c.hostile),
            "bank",
            "--k",
            "1",
            "--method",
            "keywords",
            "--json",
        ],
        WORKS,
        check=lambda out: is_json(lambda r: r["results"][0]["title"].startswith(HOSTILE))(out) and json_exact(out),
    ),
    Cmd(
        "neighbors in them",
        lambda c: ["indexer", "neighbors", "--index", str(c.hostile), "--sentence", "the bank", "--word", "bank"],
        WORKS,
        check=no_escapes,
    ),
    Cmd(
        "senses in them",
        lambda c: ["indexer", "senses", "--index", str(c.hostile), "--word", "bank", "--k", "1"],
        WORKS,
        check=no_escapes,
    ),
    Cmd(
        "a path holding escape sequences in an error",
        lambda c: ["indexer", "stats", "--index", str(c.tmp / f"x{ESCAPES}")],
        ERROR,
        "x\\\\x1b\\]0;pwned\\\\x07.* does not exist",
    ),
]


@pytest.mark.parametrize("cmd", [pytest.param(row, id=row.name) if isinstance(row, Cmd) else row for row in CLI])
def test_cli(cmd: Cmd, world: World, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    c = Ctx(world, tmp_path)
    if cmd.setup is not None:
        cmd.setup(c)
    c.seal()
    before = snapshots(c)
    capsys.readouterr()
    argv = cmd.argv(c)
    with cmd.during(c) if cmd.during is not None else nullcontext():
        code, out, err = run_cli(argv, capsys)
    assert "Traceback" not in out + err and "\x1b" not in out + err  # no escape sequence reaches the terminal
    assert_intact(c, before, refused=cmd.expect != WORKS, partial=cmd.partial)
    if cmd.after is not None:
        assert cmd.after(c) is not False
    if cmd.expect == WORKS:
        assert code == 0, err
        assert re.search(cmd.words, out + err), out + err
        assert cmd.check is None or cmd.check(out), out
    elif cmd.expect == ERROR:
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert code == 2 and len(errors) == 1, err
        assert re.search(cmd.words, errors[0]), errors[0]
    else:  # argparse: the usage, then "PROG: error: ..."
        assert code == 2 and re.search(f": error: .*{cmd.words}", err), err


# ------------------------------------------------------------------------------------------ single cases
def test_written_files_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_path(tmp_path / "out.json") as tmp:
            Path(tmp).write_text("{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == 0o644


def test_a_closed_pipe_is_not_a_traceback(tmp_path):
    """`python -m indexer ... | head` must not end in a BrokenPipeError traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "indexer", "--help"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    process.stdout.close()  # the reader goes away before the output is written
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) in (0, 2) and "Traceback" not in stderr


def test_perplexity_of_an_empty_text_is_an_error(tmp_path):
    from encoder.lm_head import evaluate

    with pytest.raises(ValueError, match="no words to predict"):
        evaluate(None, None, [])  # refused before the model is touched


def test_training_refuses_zero_tokens_before_reading_the_corpus(tmp_path):

    with pytest.raises(ValueError, match="--max-tokens must be a whole number of at least 1"):
        train(TrainConfig(corpus=[str(tmp_path / "missing.txt")], out=str(tmp_path / "run"), max_tokens=0))
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------------------------------ the app
def app_on(index: Path, page: str | None = None, params: dict | None = None) -> Any:
    """The Streamlit app on ``index`` (``page``: e.g. "views/senses.py"; ``params``: the URL's), run once."""
    from streamlit.testing.v1 import AppTest

    from app.settings import MAIN_SCRIPT

    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
    at.session_state["index_dir"] = str(index)
    at.query_params.update(params or {})
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def messages(elements) -> str:
    return "\n".join(e.value for e in elements)


def one_sentence(at: Any, sentence: str) -> Any:
    """Word in context, with one sentence typed."""
    at.toggle(key="ui.wic.compare").set_value(False)
    return at.text_input(key="ui.wic.sentence_a").set_value(sentence).run()


APP = [
    # (case, page, URL parameters, what the user does, what the page must show)
    (
        "search emoji and control characters",
        None,
        {},
        lambda at: at.text_input(key="ui.search.query").set_value(EMOJI + CONTROL).run(),
        lambda at: sum(m.value.startswith("**1. ") for m in at.markdown) == 2,  # a first hit in each tab
    ),
    (
        "search whitespace only",
        None,
        {},
        lambda at: at.text_input(key="ui.search.query").set_value(" \t ").run(),
        lambda at: "Type a query" in messages(at.info),
    ),
    (
        "a URL with a 100,000-character query and bad options",  # Streamlit drops URLs over 512 KB
        None,
        {"q": BIG_QUERY[:100_000], "k": "-5", "method": "magic", "layers": "nan,1,1"},
        lambda at: at,
        lambda at: (  # each value is refused whole (longer than the query box allows), not cut: the defaults
            at.text_input(key="ui.search.query").value == ""
            and at.slider(key="ui.search.k").value == 10
            and at.radio(key="ui.search.method").value == "hybrid"
        ),
    ),
    (
        "word in context: a sentence of punctuation",
        "views/word_in_context.py",
        {},
        lambda at: one_sentence(at, "?!"),
        lambda at: "This sentence has no word the collection holds" in messages(at.info),
    ),
    (
        "senses of an emoji",
        "views/senses.py",
        {},
        lambda at: at.text_input(key="ui.senses.word").set_value("🏦").run(),
        lambda at: "'🏦' does not occur" in messages(at.warning),
    ),
    (  # issue 31: a typed word in a message is text, not a link and a remote image
        "senses of a word typed as markdown",
        "views/senses.py",
        {},
        lambda at: at.text_input(key="ui.senses.word").set_value(MARKDOWN).run(),
        lambda at: "as several words" in messages(at.info) and "](http" not in messages(at.info),
    ),
    (
        "a URL with k=² and k=1e999",  # digits that are not ASCII, a number beyond a float: the default
        None,
        {"k": "²", "method": "keywords"},
        lambda at: at,
        lambda at: at.slider(key="ui.search.k").value == 10 and at.radio(key="ui.search.method").value == "keywords",
    ),
]


@pytest.mark.parametrize("page, params, act, shows", [pytest.param(*row[1:], id=row[0]) for row in APP])
def test_app(page, params, act, shows, world: World, tmp_path: Path) -> None:
    c = Ctx(world, tmp_path)
    before = snapshots(c)
    at = act(app_on(c.shared_index, page, params))
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, messages(at.error)
    assert shows(at)
    assert_intact(c, before, refused=False)


def test_app_on_a_file_says_there_is_no_index(world: World, tmp_path: Path) -> None:
    c = Ctx(world, tmp_path)
    at = app_on(c.file("notes.txt", "mine"))
    assert not at.exception and "There is no index" in messages(at.error)
    assert (tmp_path / "in" / "notes.txt").read_text() == "mine"


# ------------------------------------------------------------------------------------------ issue 31, single cases
def ship_cli(run: Path, to: Path, *flags: str) -> None:
    """``python -m encoder ship`` run in this process; it must succeed."""
    assert encoder_cli.main(["ship", "--run", str(run), "--to", str(to), *flags]) is None


def test_ship_replaces_only_the_model_its_run_made_or_continued(world: World, tmp_path: Path) -> None:
    """Shipping a run again into the folder it made needs no flag; another model needs --overwrite, which keeps the
    files beside it; the files shipped beside a model stay, stale weight shards do not."""
    to = tmp_path / "models" / "mine"
    ship_cli(world.run, to)
    (to / "README.md").write_text("the card")
    (to / "model-00001-of-00002.safetensors").write_bytes(b"a stale shard of an older model")
    ship_cli(world.run, to)  # the same run again: the model it made
    assert (to / "README.md").read_text() == "the card"
    assert not (to / "model-00001-of-00002.safetensors").exists()
    other = Path(shutil.copytree(world.model, tmp_path / "other"))
    (other / "glove-ko-50d.txt.xz").write_bytes(b"shipped beside the model")
    with pytest.raises(SystemExit):
        ship_cli(world.run, other)
    ship_cli(world.run, other, "--overwrite")
    assert Elmo.load(other).model_hash == Elmo.load(to).model_hash
    assert (other / "glove-ko-50d.txt.xz").read_bytes() == b"shipped beside the model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models", "other"]  # no staging or old folder left


KILLED_SHIP = """
import os, signal, sys
import encoder.weights
from encoder.__main__ import main

write = encoder.weights.save_file
def write_then_die(*args, **kwargs):
    write(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)  # kill -9 with the new model half written
encoder.weights.save_file = write_then_die
main(["ship", "--run", sys.argv[1], "--to", sys.argv[2], "--overwrite"])
"""


def test_a_ship_killed_half_way_leaves_the_model_as_it_was(world: World, tmp_path: Path) -> None:
    target = Path(shutil.copytree(world.model, tmp_path / "model"))
    before = snapshot(target)
    killed = subprocess.run([sys.executable, "-c", KILLED_SHIP, str(world.run), str(target)], cwd=ROOT)
    assert killed.returncode == -9
    assert snapshot(target) == before
    ship_cli(world.run, target, "--overwrite")  # and it ships when run again
    assert Elmo.load(target).model_hash != Elmo.load(world.model).model_hash


FULL_DISK = """
import contextlib, io, json, os, sys
import h5py
import encoder.__main__ as encoder_cli
import indexer.__main__ as indexer_cli

full, corpus, model = sys.argv[1:4]
with h5py.File(os.path.join(full, "old.hdf5"), "w") as f:  # what was there before: its own kind of output
    f.create_dataset("sentence_to_index", data=["{}"])
with open(os.path.join(full, "old.txt"), "w") as f:
    f.write("river 0.1 0.2\\n")
before = {name: open(os.path.join(full, name), "rb").read() for name in os.listdir(full)}
lines = os.path.join(corpus, "lines.txt")
commands = {
    "embed": (encoder_cli.main, ["embed", "--model", model, "--input", lines, "--output", full + "/old.hdf5", "--quiet"]),
    "glove": (indexer_cli.main, ["glove", "--corpus", lines, "--out", full + "/old.txt", "--min-count", "1",
                                 "--dim", "300", "--epochs", "1"]),
    "build": (indexer_cli.main, ["build", "--corpus", corpus, "--out", full + "/index", "--model", model, "--quiet"]),
}
said = {}
for name, (main, argv) in commands.items():
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit:
            code = exit.code
    said[name] = [code, [line for line in err.getvalue().splitlines() if line.startswith("error:")]]
after = {name: open(os.path.join(full, name), "rb").read() for name in before}
print(json.dumps({"said": said, "intact": after == before}))
"""


def test_a_real_full_disk(world: World, tmp_path: Path) -> None:
    """On a real 192 KiB file system (a tmpfs mounted in a mount namespace of this test's own, so nothing else sees
    it): embed, GloVe and a build each end with one error line naming the file and saying "disk full", and the
    outputs that were there before are byte-identical."""
    if subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode != 0:
        pytest.skip(
            "mounting a small tmpfs needs unshare and CAP_SYS_ADMIN (root); the full-disk rows of the CLI table "
            "cover the same errors without it"
        )
    full, corpus = tmp_path / "full", tmp_path / "corpus"
    full.mkdir()
    corpus.mkdir()
    (corpus / "lines.txt").write_text("".join(f"{FEW[i % 3]} number {i} of many\n" for i in range(600)))
    script = f'mount -t tmpfs -o size=192k tmpfs {full} && exec {sys.executable} -c "$0" "$@"'
    process = subprocess.run(
        ["unshare", "--mount", "sh", "-c", script, FULL_DISK, str(full), str(corpus), str(world.model)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert process.returncode == 0, process.stderr
    result = json.loads(process.stdout.splitlines()[-1])
    assert result["intact"]
    for name, (code, errors) in result["said"].items():
        assert code == 2 and len(errors) == 1 and re.search(f"{full}/.*: disk full", errors[0]), (name, errors)
