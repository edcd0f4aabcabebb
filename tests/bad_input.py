"""The bad-input suite's machinery: what its tables (tests/test_bad_input_<command>.py) are made of and run by.

Three kinds of table, one row per case: ``Case`` (the Python API), ``Cmd`` (``python -m indexer|encoder|app``, run
in-process) and the Streamlit pages' rows. Each row names the outcome it must have:

- a clear error: the API raises the named exception with the given words in its message; a command line
  exits 2 with exactly one line ``error: ...`` on stderr holding the words and no traceback (``USAGE``:
  argparse's own usage error, also exit 2);
- ``WORKS``: the call succeeds, its result passes the row's check and any notice holds the words.

Every case compares the files it was given (the model, the shared index and corpus, and its own folder)
before and after: nothing that existed may change, and a refused call leaves nothing behind but a lock file.
A row's ``setup`` prepares (or damages) its own copy of the index before that snapshot is taken. The shared
things (``World``) are built once per session (``world``, in conftest.py).
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import json
import lzma
import os
import re
import shutil
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
import torch
from helpers import SETTINGS
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

import app.__main__ as app_cli
import encoder.__main__ as encoder_cli
import indexer.__main__ as indexer_cli
from encoder import Elmo, ownership, text
from encoder.corpus import PREPARED_FORMAT, PREPARED_SUFFIX
from encoder.lm_data import Vocabulary
from encoder.lm_head import LanguageModel, LMHead
from encoder.model import BiLM, BiLMConfig
from encoder.prepare import prepare
from encoder.run_folder import save_language_model
from encoder.train import SIZES
from encoder.weights import save_hdf5, save_model
from indexer import (
    Index,
    Results,
    Settings,
    build_index,
)

ROOT = Path(__file__).resolve().parents[1]
WORKS, ERROR, USAGE = "works", "error", "usage"
ROOTLESS = pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes any file, whatever its mode")
BIG_QUERY = "river bank " + "x" * 1_000_000  # 1 MB, most of it one word (a query is cut at 10,000 characters)
CONTROL = "the \x00river\x07 bank\x1b[31m\x7f\u200b\u202e"
EMOJI = "🏦 the river 🌊 bank 👩‍👩‍👧"
NO_MATCH = "no document contains any of the query's words"
FEW = ["The muddy river bank flooded.", "She saved money at the bank.", "Volcanoes erupt when magma rises."]
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\\x9b31m\u202e"
"""Set the terminal's title, clear it, plant a hidden link, turn it red (C1 CSI), reverse the text: what a document
must not do."""
HOSTILE_NAME = "x\x1b]0;pwned\x07\x9b31m\u202etxt.exe"
"""A file name that would do the same (a file name becomes a document id)."""
ACTING = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters that act on a terminal instead of being shown (tab, newline and tqdm's carriage return aside)."""
MARKDOWN = "![x](http://evil.example/x.png) [click](http://evil.example/)"
HOSTILE = f"bank {ESCAPES} {MARKDOWN}"
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


def make_world(root: Path, tiny_model_dir: Path, corpus: Path, index: Path) -> World:
    """The shared things of every bad-input case, built under ``root`` around the session's corpus and its index
    (``corpus_index`` in conftest.py)."""
    other = BiLM(BiLMConfig(**OTHER_MODEL))
    other.reset_parameters(seed=1)
    save_model(other, root / "other", extra_config={"name": "other"})
    (root / "published").mkdir()
    save_hdf5(Elmo.load(tiny_model_dir).model, root / "published" / "options.json", root / "published" / "weights.hdf5")
    opened = Index.open(index)
    make_run(root / "run")
    hostile = [
        {"id": f"h{i}{ESCAPES}", "title": f"{HOSTILE} {i}", "text": f"{FEW[i]} {HOSTILE}"} for i in range(len(FEW))
    ]
    (root / "hostile.jsonl").write_text("".join(json.dumps(d) + "\n" for d in hostile))
    build_index([root / "hostile.jsonl"], root / "hostile", model=tiny_model_dir, settings=SETTINGS, progress=False)
    return World(
        tiny_model_dir,
        corpus,
        index,
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
        fields = {name: options.pop(name) for name in list(options) if name in Settings.__dataclass_fields__}
        settings = dataclasses.replace(options.pop("settings", SETTINGS), **fields)
        corpus = corpus if isinstance(corpus, list) else [corpus]
        return build_index(corpus, self.tmp / "out", model=self.model, settings=settings, progress=False, **options)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes, and every folder (``name/``): what "nothing was touched" compares."""
    return {
        str(p.relative_to(root)) + ("" if p.is_file() else "/"): p.read_bytes() if p.is_file() else b""
        for p in sorted(root.rglob("*"))
    }


def snapshots(ctx: Ctx) -> dict[str, dict[str, bytes]]:
    roots = [ctx.tmp, ctx.model, ctx.corpus, ctx.shared_index, ctx.other_model, ctx.published, ctx.run, ctx.hostile]
    return {str(root): snapshot(root) for root in roots}


def assert_intact(c: Ctx, before: dict, refused: bool, partial: bool = False, own: str = "") -> None:
    """Nothing that existed or was given changed (but the command's own earlier output in ``tmp/own``, which it
    may finish or replace); a refused call added nothing, not even a lock file (``partial``: but the resumable state of
    a build or run refused after it started, under ``out/``, ``index/`` or ``run/``)."""
    after = snapshots(c)
    for root, files in before.items():
        mine = (lambda name: name.startswith(f"{own}/")) if own and root == str(c.tmp) else (lambda name: False)
        files = {k: v for k, v in files.items() if not mine(k)}
        assert {k: v for k, v in after[root].items() if k in files} == files, f"files under {root} changed"
    for path, content in c.given.items():
        assert path.is_file() and path.read_bytes() == content, f"{path} changed"
    if refused:
        made = {str(p) for p in c.given} | {str(folder) for p in c.given for folder in p.parents}
        added = [
            name
            for root, files in after.items()
            for name in files
            if name not in before[root]
            and str(Path(root) / name) not in made
            and not (partial and name.split("/")[0] in ("out", "index", "run"))
        ]
        assert not added, f"a refused call left {added}"


def lock(path: Path) -> None:
    """Hold the index's write lock as another writer would (released when the case ends)."""
    handle = open(path / ".lock", "a")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    LOCKS.append(handle)


LOCKS: list = []


def release_locks() -> None:
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


# ------------------------------------------------------------------------------------------ the API tables


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


def params(table: list) -> list:
    """A table's rows as pytest parameters, each named by its case."""
    return [pytest.param(row, id=row.name) if isinstance(row, (Case, Cmd)) else row for row in table]


def api_test(table: list) -> Callable:
    """The test that runs every row of an API table (a table file says ``test_api = api_test(API)``)."""

    @pytest.mark.parametrize("case", params(table))
    def test_api(case: Case, world: World, tmp_path: Path) -> None:
        run_api_case(case, world, tmp_path)

    return test_api


def cli_test(table: list) -> Callable:
    """The test that runs every row of a CLI table (a table file says ``test_cli = cli_test(CLI)``)."""

    @pytest.mark.parametrize("cmd", params(table))
    def test_cli(cmd: Cmd, world: World, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
        run_cli_case(cmd, world, tmp_path, capsys)

    return test_cli


def app_test(table: list) -> Callable:
    """The test that runs every row of the pages' table: (case, page, URL parameters, what the user does, what the
    page must show)."""

    @pytest.mark.parametrize("page, params, act, shows", [pytest.param(*row[1:], id=row[0]) for row in table])
    def test_app(page, params, act, shows, world: World, tmp_path: Path) -> None:
        run_app_case(page, params, act, shows, world, tmp_path)

    return test_app


def run_api_case(case: Case, world: World, tmp_path: Path) -> None:
    """Run one row of an API table and check its outcome and the files."""
    try:
        _run_api_case(case, Ctx(world, tmp_path))
    finally:
        release_locks()


def _run_api_case(case: Case, c: Ctx) -> None:
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


# ------------------------------------------------------------------------------------------ the CLI tables
@dataclass(frozen=True)
class Cmd:
    name: str
    argv: Callable[[Ctx], list[str]]  # its first word picks the program: indexer, encoder or app
    expect: str  # ERROR (one "error:" line, exit 2), USAGE (argparse's usage error, exit 2) or WORKS (exit 0)
    words: str = ""  # a regex the error line (or, for WORKS, stdout and stderr) must match
    check: Callable[[str], bool] | None = None  # WORKS: stdout is right
    setup: Callable[[Ctx], Any] | None = None
    partial: bool = False  # refused after encoding started: the resumable build state may stay in out/
    own: str = ""  # a folder under tmp holding the command's own earlier output (a killed run's), which it may change
    during: Callable[[Ctx], AbstractContextManager] | None = None  # a fault in force during the call
    after: Callable[[Ctx], Any] | None = None  # what must still work afterwards (e.g. the index opens)


PROGRAMS = {"indexer": indexer_cli.main, "encoder": encoder_cli.main, "app": app_cli.main}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``python -m PROGRAM ARGS``, run in this process; ``python -m app`` ends
    with exit 0 where it would hand this process over to Streamlit."""
    try:
        with serving() if argv[0] == "app" else nullcontext():
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


def own_hdf5(c: Ctx, datasets: tuple[str, ...] = ("0", "sentence_to_index"), kind: str | None = "embeddings") -> Path:
    """An hdf5 file of the case's, holding ``datasets`` (by default, an embeddings file's) and recorded as written by
    the command of ``kind`` (None: written by another tool)."""
    path = c.tmp / "in" / "o.hdf5"
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as f:
        for name in datasets:
            f.create_dataset(name, data=[1.0])
    return written_by(c, c._give(path), kind)


def written_by(c: Ctx, path: Path, kind: str | None) -> Path:
    """``path``, recorded as the output of the command of ``kind`` (``ownership.record_written``; None: not)."""
    if kind is not None:
        ownership.record_written(path, kind)
        c._give(path.parent / ownership.OUTPUTS)
    return path


def run_copy(c: Ctx) -> Path:
    """A copy of the world's training run that the case may damage (in tmp/run: what a refused resume may leave)."""
    copy = c.tmp / "run"
    return copy if copy.exists() else c._give(Path(shutil.copytree(c.run, copy)))


def trains(c: Ctx, *words: str, out: str = "r", corpus: Path | None = None) -> list[str]:
    """A training command on a few lines of text (tmp/in/lines.txt, or ``corpus``) into tmp/OUT, with the world's
    run's options."""
    corpus = str(corpus) if corpus is not None else lines(c, "\n".join(FEW * 40) + "\n")
    options = ["--size", "tiny", "--batch-size", "4", "--unroll", "5", "--vocab-size", "50", "--workers", "0"]
    return ["encoder", "train", "--corpus", corpus, "--out", str(c.tmp / out), *options, "--no-progress", *words]


def prepared_folder(c: Ctx, name: str = "p") -> Path:
    """A finished prepare (``encoder prepare``) of two short text files, tmp/text/a.txt and b.txt, into tmp/NAME."""
    sources = c.tmp / "text"
    sources.mkdir(exist_ok=True)
    (sources / "a.txt").write_text("\n".join(FEW) + "\n")
    (sources / "b.txt").write_text("\n".join(reversed(FEW)) + "\n")
    prepare([sources], c.tmp / name, "en", workers=0, progress=False)
    return c.tmp / name


def killed_prepare(c: Ctx, name: str = "p") -> Path:
    """What ``prepared_folder``'s prepare leaves when killed while writing its second source: its record unfinished
    and listing the first source's files, the second source's part on disk but not listed yet."""
    folder = prepared_folder(c, name)
    record = json.loads((folder / "prepared.json").read_text())
    record.pop("seconds")
    record.update(complete=False, files=[f for f in record["files"] if f["file"].startswith("a.")])
    (folder / "prepared.json").write_text(json.dumps(record))
    return folder


def forged_prepared(c: Ctx, ids: Any, paragraphs: Any, record: dict | None = None) -> Path:
    """A prepared file written by hand, not by ``prepare``: ids and paragraph starts of any type and value, and
    ``record`` (default: a good one) in tmp/in/forged.000.tokens.xz."""
    from safetensors.numpy import save

    rules = text.text_rules("en")
    record = (
        {"format": PREPARED_FORMAT, "rules": rules.name, "rules_identity": rules.identity} if record is None else record
    )
    tensors = {
        "ids": np.asarray(ids),
        "paragraphs": np.asarray(paragraphs),
        "types": np.frombuffer(b"<S>\n</S>\nthe\nbank", np.uint8),
        "record": np.frombuffer(json.dumps(record).encode(), np.uint8),
    }
    return c.file(f"forged.000{PREPARED_SUFFIX}", lzma.compress(save(tensors)))


def trained_run(c: Ctx) -> Path:
    """A run trained for one step into tmp/run by ``trains``' options: the one fixture with a checkpoint."""
    assert encoder_cli.main(trains(c, "--max-tokens", "20")[1:] + ["--out", str(c.tmp / "run")]) is None
    return c._give(c.tmp / "run")


def ships(c: Ctx, to: Path, *flags: str) -> list[str]:
    """Shipping the world's run to ``to``."""
    return ["encoder", "ship", "--run", str(c.run), "--to", str(to), *flags]


def embeds(c: Ctx, *words: str) -> list[str]:
    return ["encoder", "embed", "--model", str(c.model), "--input", lines(c, "a b\n"), "--quiet", *words]


# Full disks: each writer fails as it does when the file system is full (measured on a small tmpfs; test_bad_input_files.py's
# test_a_real_full_disk does it for real where it can mount one): FAISS, safetensors and numpy in their own words, the
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


def serving() -> AbstractContextManager:
    """``python -m app`` without Streamlit: where the app would hand over to it, the command ends with exit 0."""
    stack = ExitStack()
    stack.enter_context(mock.patch.object(app_cli.os, "execve", side_effect=SystemExit(0)))
    stack.enter_context(mock.patch.object(app_cli, "check_port", lambda address, port: None))
    return stack


def no_escapes(out: str) -> bool:
    """Printed text shows the documents' escape sequences and direction overrides, never sends them."""
    return "\\x1b]0;pwned\\x07\\x1b[2J" in out and "\\u202e" in out and not ACTING.search(out)


def json_exact(out: str) -> bool:
    """JSON output sends no escape either (C1 and direction overrides escaped as JSON), and parses to the data."""
    hit = json.loads(out)["results"][0]
    return hit["doc_id"].endswith(ESCAPES) and not ACTING.search(out)


def run_cli_case(cmd: Cmd, world: World, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Run one row of a CLI table and check its exit status, its one error line (or output) and the files."""
    try:
        _run_cli_case(cmd, Ctx(world, tmp_path), capsys)
    finally:
        release_locks()


def _run_cli_case(cmd: Cmd, c: Ctx, capsys: pytest.CaptureFixture) -> None:
    if cmd.setup is not None:
        cmd.setup(c)
    c.seal()
    before = snapshots(c)
    capsys.readouterr()
    argv = cmd.argv(c)
    with cmd.during(c) if cmd.during is not None else nullcontext():
        code, out, err = run_cli(argv, capsys)
    assert "Traceback" not in out + err and not ACTING.search(out + err)  # nothing acts on the terminal
    assert_intact(c, before, refused=cmd.expect != WORKS, partial=cmd.partial, own=cmd.own)
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


# ------------------------------------------------------------------------------------------ the app's pages
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


def run_app_case(page, params, act, shows, world: World, tmp_path: Path) -> None:
    """Run one row of the pages' table: the page must show what the row says, and change no file."""
    c = Ctx(world, tmp_path)
    before = snapshots(c)
    at = act(app_on(c.shared_index, page, params))
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, messages(at.error)
    assert shows(at)
    assert_intact(c, before, refused=False)
