"""Training text as token ids: tokenized once, by a model's language rules, and kept in memory or on disk.

Text becomes sentences and tokens by ``encoder/text.py`` in parallel processes (tokenizing while training
could not keep a GPU busy: one process splits about 50k tokens a second). A file becomes ``TokenizedText``: its
word types, and the framed stream ``<S> w... </S>`` of every sentence as ids into those types (``<S>`` = 0,
``</S>`` = 1), with where each paragraph (line) starts.

``python -m encoder prepare`` (``prepare.py``) writes that to disk as *prepared shards*, so that a GPU machine trains without
the tokenizer (Kiwi and its 88 MB model for Korean) and without spending its minutes tokenizing: each file
(``*.tokens.xz``, at most 16 MB) is a safetensors archive, compressed by xz, of the ids (uint32), the types
(UTF-8, one per line) and a JSON record of the rules that made them (``TextRules.name`` and ``identity``, which
names the tokenizer and its version) and of the text they came from; ``prepared.json`` beside them is the
prepare's record (what it was asked, what it wrote, whether it finished), and ``.lock`` its lock. ``encoder train
--corpus`` reads them beside or instead of text files and refuses those made by other rules than the model's,
those of an unfinished prepare and those its record does not list.

``TokenizedCorpus`` holds a run's files in memory as arrays of shared type ids; ``watch`` adds the files that
appear in its folders while a run goes on. The module passes 450 lines because it is one path, read top to
bottom: text to ids, ids to and from prepared files, files to the corpus a run trains on.
"""

from __future__ import annotations

import functools
import json
import lzma
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import ownership
from .chars import BOS_TOKEN, EOS_TOKEN
from .commands import program
from .files import REPLACEMENT_CHAR, atomic_path, check_plain_text, open_text, reading, text_files, warn_replaced
from .numbers import THREADS, Number
from .terminal import counted, show
from .text import TextRules, text_rules

BOS_ID, EOS_ID = 0, 1
PREPARED_SUFFIX = ".tokens.xz"
PREPARED_FORMAT = "elmo-search prepared tokens 1"
MANIFEST_FILE = "prepared.json"  # what ``prepare`` wrote into its folder: the only files it ever replaces
WORKERS = Number(int, 0, THREADS.at_most)  # tokenizing processes; 0: tokenize in this process
TOKENIZE_CHUNK_LINES = 500  # paragraphs handed to a worker process at a time
IN_PROCESS_BYTES = 200_000  # corpora smaller than this (on disk) are tokenized without worker processes


@dataclass
class TokenizedText:
    """Paragraphs as the framed stream of their sentences: ``ids`` index ``types`` (``<S>`` = 0, ``</S>`` = 1);
    ``paragraphs[i]`` is where paragraph i starts in ``ids``."""

    types: list[str]
    ids: np.ndarray  # uint32
    paragraphs: np.ndarray  # int64

    def sentences(self) -> Iterator[list[list[str]]]:
        """Each paragraph as its sentences' tokens (the framing left out)."""
        bounds = [*self.paragraphs.tolist(), len(self.ids)]
        for start, end in zip(bounds, bounds[1:]):
            ids = self.ids[start:end]
            ends = np.flatnonzero(ids == EOS_ID)
            starts = np.concatenate([[0], ends[:-1] + 1])
            yield [[self.types[t] for t in ids[a + 1 : b].tolist()] for a, b in zip(starts, ends)]

    def parts(self, max_tokens: int) -> list[TokenizedText]:
        """Consecutive pieces of at most about ``max_tokens`` ids, cut between paragraphs (a paragraph longer than
        that is a piece of its own), each with only the types it uses, in order of first use."""
        bounds = [*self.paragraphs.tolist(), len(self.ids)]
        pieces, start = [], 0
        for i in range(1, len(bounds)):
            if bounds[i] - bounds[start] > max_tokens and i - 1 > start:
                pieces.append((start, i - 1))
                start = i - 1
        pieces.append((start, len(bounds) - 1))
        return [self._slice(bounds[a], bounds[b], self.paragraphs[a:b] - bounds[a]) for a, b in pieces if b > a]

    def _slice(self, start: int, end: int, paragraphs: np.ndarray) -> TokenizedText:
        ids = self.ids[start:end]
        used, first = np.unique(ids, return_index=True)
        used = used[np.argsort(first, kind="stable")]  # types in order of first use, as tokenizing gives them
        used = np.concatenate([[BOS_ID, EOS_ID], used[used > EOS_ID]])  # the framing keeps its ids
        local = np.zeros(len(self.types), dtype=np.uint32)
        local[used] = np.arange(len(used), dtype=np.uint32)
        return TokenizedText([self.types[t] for t in used.tolist()], local[ids], paragraphs)


# ---------------------------------------------------------------------------------------------- tokenizing
def tokenize_paragraphs(lines: Sequence[str], language: str) -> TokenizedText:
    """Paragraph lines, tokenized by ``language``'s rules (a name: it crosses to worker processes)."""
    text = text_rules(language)
    types = {BOS_TOKEN: BOS_ID, EOS_TOKEN: EOS_ID}
    ids: list[int] = []
    paragraphs: list[int] = []
    for line in lines:
        start = len(ids)
        for sentence in text.split_and_tokenize(line):
            tokens = sentence.tokens
            if tokens:
                ids.append(BOS_ID)
                ids.extend(types.setdefault(t, len(types)) for t in tokens)
                ids.append(EOS_ID)
        if len(ids) > start:
            paragraphs.append(start)
    return TokenizedText(list(types), np.asarray(ids, dtype=np.uint32), np.asarray(paragraphs, dtype=np.int64))


def _chunks(path: Path) -> Iterator[list[str]]:
    """The non-blank lines of a text file, a chunk at a time; undecodable bytes (read as U+FFFD) are a warning."""
    chunk: list[str] = []
    replaced = 0
    with reading(path), open_text(path) as f:
        for line in f:
            replaced += line.count(REPLACEMENT_CHAR)
            if line.strip():
                chunk.append(line)
                if len(chunk) == TOKENIZE_CHUNK_LINES:
                    yield chunk
                    chunk = []
    if chunk:
        yield chunk
    warn_replaced(path, replaced)


def default_workers() -> int:
    """Tokenizing processes: all cores but one (the training loop's)."""
    return max((os.cpu_count() or 2) - 1, 1)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """Spawned workers: forking a process that runs CUDA or OpenMP threads is unsafe. They ignore Ctrl-C, which the
    terminal sends to every process: the process that started them stops them (and says so, once)."""
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=signal.signal,
        initargs=(signal.SIGINT, signal.SIG_IGN),
    )


class TypeTable:
    """Word types shared by several tokenized pieces: ``merge`` turns a piece's own ids into the table's."""

    def __init__(self) -> None:
        self.types: list[str] = [BOS_TOKEN, EOS_TOKEN]
        self.index: dict[str, int] = {BOS_TOKEN: BOS_ID, EOS_TOKEN: EOS_ID}

    def merge(self, piece: TokenizedText) -> np.ndarray:
        for t in piece.types:
            if t not in self.index:
                self.index[t] = len(self.types)
                self.types.append(t)
        mapping = np.fromiter((self.index[t] for t in piece.types), dtype=np.uint32, count=len(piece.types))
        return mapping[piece.ids]


def tokenize_file(path: Path, language: str, pool: Executor | None = None, progress=None) -> TokenizedText:
    """One text file, tokenized in chunks of paragraphs (by ``pool``'s processes, else here), its types in order
    of first use. ``progress``: a tqdm bar that counts paragraphs."""
    tokenize = functools.partial(tokenize_paragraphs, language=language)
    chunks = pool.map(tokenize, _chunks(path)) if pool is not None else map(tokenize, _chunks(path))
    table, ids, paragraphs, length = TypeTable(), [], [], 0
    for chunk in chunks:
        ids.append(table.merge(chunk))
        paragraphs.append(chunk.paragraphs + length)
        length += len(chunk.ids)
        if progress is not None:
            progress.update(len(chunk.paragraphs))
    if not ids:
        return TokenizedText(table.types, np.zeros(0, np.uint32), np.zeros(0, np.int64))
    return TokenizedText(table.types, np.concatenate(ids), np.concatenate(paragraphs))


# ---------------------------------------------------------------------------------------------- prepared files
def is_prepared(path: Path) -> bool:
    return path.name.endswith(PREPARED_SUFFIX)


def write_prepared(path: Path, piece: TokenizedText, record: dict) -> int:
    """One prepared file (atomically); returns its size in bytes."""
    from safetensors.numpy import save

    tensors = {
        "ids": piece.ids.astype(np.uint32),
        "paragraphs": piece.paragraphs.astype(np.int64),
        "types": np.frombuffer("\n".join(piece.types).encode("utf-8"), dtype=np.uint8),
        "record": np.frombuffer(json.dumps(record, ensure_ascii=False).encode("utf-8"), dtype=np.uint8),
    }
    data = lzma.compress(save(tensors))
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(data)
    return len(data)


def read_prepared(path: Path) -> tuple[TokenizedText, dict]:
    """A prepared file's tokens and record; a file that is not one is an error naming it."""
    from safetensors import SafetensorError
    from safetensors.numpy import load

    try:
        tensors = load(lzma.decompress(path.read_bytes()))
        record = json.loads(tensors["record"].tobytes().decode("utf-8"))
        types = tensors["types"].tobytes().decode("utf-8").split("\n")
        piece = TokenizedText(types, tensors["ids"], tensors["paragraphs"])
    except (lzma.LZMAError, SafetensorError, KeyError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a prepared corpus file ({program('encoder')} prepare writes them): {error}")
    if not isinstance(record, dict) or record.get("format") != PREPARED_FORMAT:
        found = record.get("format") if isinstance(record, dict) else record
        raise ValueError(f"{path}: unknown prepared format {found!r} (this code reads {PREPARED_FORMAT!r})")
    damage = _damage(piece, record)
    if damage:
        raise ValueError(f"{path} is damaged: {damage}; prepare its text again")
    return piece, record


def _damage(piece: TokenizedText, record: dict) -> str | None:
    """What is wrong with a prepared file's contents (None: nothing), as ``write_prepared`` writes them: uint32 ids
    into its types, each sentence framed, paragraphs starting at increasing places inside the ids, the first at 0,
    and a record naming its text rules."""
    missing = [key for key in ("rules", "rules_identity") if not isinstance(record.get(key), str)]
    if missing:
        return f"its record lacks {', '.join(missing)} (the text rules that made it)"
    ids, starts = piece.ids, piece.paragraphs
    if ids.dtype != np.uint32 or starts.dtype != np.int64 or ids.ndim != 1 or starts.ndim != 1:
        return f"its ids are {ids.dtype} and paragraph starts {starts.dtype}, not uint32 and int64 lists"
    if len(ids) and int(ids.max()) >= len(piece.types):
        return f"its ids point past its {len(piece.types)} word types"
    if len(ids) and (not len(starts) or starts[0] != 0):
        return "its first paragraph does not start at its first id"
    if len(starts) and (np.any(np.diff(starts) <= 0) or starts[-1] >= len(ids) or np.any(ids[starts] != BOS_ID)):
        return "its paragraph starts are out of order, out of range, or not at a sentence's <S>"
    if len(ids) and ids[-1] != EOS_ID:
        return "its last sentence does not end with </S>"
    return None


def installed_identity(rules: TextRules) -> str | None:
    """The identity of this machine's tokenizer for ``rules``, or None where it is not installed (a GPU machine
    that trains on prepared files needs neither Kiwi nor nltk)."""
    try:
        rules.require()  # MissingExtra, an ImportError
        return rules.identity
    except ImportError:  # importlib.metadata's PackageNotFoundError is one
        return None


def check_rules(record: dict, language: str, path: Path) -> None:
    """Refuse a prepared file made by other rules than ``language``'s (the model's), or by another version of the
    same tokenizer where this machine has one to compare with."""
    if record["rules"] != language:
        raise ValueError(
            f"{path} was prepared with the {record['rules']!r} text rules, but this model's are {language!r}: "
            f"prepare the text again with --language {language} (or --model the model), or train with its rules"
        )
    here = installed_identity(text_rules(language))
    if here is not None and here != record["rules_identity"]:
        raise ValueError(
            f"{path} was tokenized by {record['rules_identity']!r}, this machine's tokenizer is {here!r}: "
            "prepare the text again here, or train where that tokenizer is installed"
        )


def corpus_files(paths: Sequence[str | Path], must_exist: bool = True) -> list[Path]:
    """Text files and prepared files named by ``paths``: files as given, folders searched recursively (sorted). The
    prepared files of a folder that ``prepare`` wrote are those its finished record lists (``check_listed``)."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            prepared = (p for p in path.rglob(f"*{PREPARED_SUFFIX}") if p.is_file())
            files.extend(sorted({*text_files([path]), *prepared}))
            _refuse_unfinished(path)  # a prepare killed before its first part: said, not "no text files"
        elif path.is_file() or must_exist:
            files.extend(text_files([path]))
    if must_exist and not files:
        raise FileNotFoundError(f"no text files in {', '.join(map(str, paths))}")
    for folder in sorted({f.parent for f in files if is_prepared(f)}):
        check_listed(folder, [f for f in files if f.parent == folder and is_prepared(f)])
    return files


# ---------------------------------------------------------------------------------------------- a prepared folder
# prepared.json is written first (the sources, the rules, complete: false), then after every source (the files it
# gave), and last with complete: true. A folder whose record is unfinished (a prepare killed, or still running) is
# not read by training, and running the same prepare again finishes it.
def read_record(folder: Path) -> dict:
    """The ``prepared.json`` of ``folder``, checked to be one ``prepare`` wrote (an error naming it otherwise)."""
    path = folder / MANIFEST_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} cannot be read as JSON ({error}); it is the record of a prepare") from None
    files = record.get("files") if isinstance(record, dict) else None
    if (
        not isinstance(record, dict)
        or record.get("format") != PREPARED_FORMAT
        or not all(isinstance(record.get(key), str) for key in ("rules", "rules_identity"))
        or not isinstance(files, list)
        or not all(
            isinstance(f, dict) and _plain_name(f.get("file")) and isinstance(f.get("source"), str) for f in files
        )
    ):
        raise ValueError(
            f"{path} is not the record of a prepare (format, rules and a list of files); prepare the text again "
            "into a new folder"
        )
    return record


def _plain_name(name: object) -> bool:
    return isinstance(name, str) and name.endswith(PREPARED_SUFFIX) and Path(name).name == name


def is_complete(record: dict) -> bool:
    """Whether the prepare that wrote ``record`` finished (a record older than ``complete`` has ``seconds`` then)."""
    return bool(record.get("complete", "seconds" in record))


def check_listed(folder: Path, found: Sequence[Path]) -> None:
    """Refuse prepared files of ``folder`` that its ``prepare`` did not finish or does not list (a stray part of
    another run); prepared files copied without a record are read as they are."""
    if not (folder / MANIFEST_FILE).is_file():
        return
    record = read_record(folder)
    _refuse_unfinished(folder, record)
    listed = {f["file"] for f in record["files"]}
    strays = [path for path in found if path.name not in listed]
    if strays:
        raise ValueError(
            f"{folder} holds {ownership.listing(folder, strays)}, which its {MANIFEST_FILE} does not list (left by "
            "another prepare?): move them away, or prepare into a new folder"
        )


def _refuse_unfinished(folder: Path, record: dict | None = None) -> None:
    """Refuse a folder whose prepare has not finished (``record``: its record, else read if it is prepare's; a
    user's file of that name, not a prepare's record, is left alone)."""
    if record is None:
        try:
            record = read_record(folder) if (folder / MANIFEST_FILE).is_file() else None
        except ValueError:
            return
    if record is not None and not is_complete(record):
        raise ValueError(
            f"{folder} holds an unfinished prepare (killed, or still running): run the same `{program('encoder')} "
            "prepare` again to finish it, then train"
        )


# ---------------------------------------------------------------------------------------------- in memory
class TokenizedCorpus:
    """Corpus files as arrays of shared word-type ids (``<S>`` = 0, ``</S>`` = 1), tokenized once, in parallel, or
    read from prepared files.

    ``add`` tokenizes a text file (in ``workers`` processes, started on first need and kept) or reads a prepared
    one; ``watch`` keeps adding the files that appear in the corpus folders from a background thread. Thread-safe.
    """

    def __init__(self, workers: int | None = None, language: str = "en"):
        self.language = language  # whose rules tokenize the files (the model's)
        self.table = TypeTable()
        self.files: dict[str, np.ndarray] = {}  # file path -> framed type ids
        self.workers = default_workers() if workers is None else workers
        self.prepared_identity: str | None = None  # the tokenizer of the prepared files read so far
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def types(self) -> list[str]:
        return self.table.types

    @classmethod
    def from_paths(
        cls, paths: Sequence[str | Path], workers: int | None = None, progress: bool = True, language: str = "en"
    ) -> TokenizedCorpus:
        """Every text or prepared file under ``paths`` (at least one), read by ``language``'s rules before this
        returns."""
        files = corpus_files(paths)
        text_bytes = sum(f.stat().st_size for f in files if not is_prepared(f))
        if workers is None and text_bytes < IN_PROCESS_BYTES:
            workers = 0
        corpus = cls(workers, language)
        started = time.monotonic()
        for path in files:
            corpus.add(path)
        if progress:
            prepared = sum(map(is_prepared, files))
            print(
                f"read {counted(len(files), 'file')} ({prepared} prepared), {corpus.n_tokens():,} tokens, "
                f"{len(corpus.types):,} word types in {time.monotonic() - started:.0f} s "
                f"({corpus.workers if len(files) > prepared and corpus.workers else 'no'} worker processes)",
                file=sys.stderr,
            )
        return corpus

    def _read_prepared(self, path: Path) -> TokenizedText:
        piece, record = read_prepared(path)
        check_rules(record, self.language, path)
        if self.prepared_identity not in (None, record["rules_identity"]):
            raise ValueError(
                f"{path} was tokenized by {record['rules_identity']!r}, other prepared files of this corpus by "
                f"{self.prepared_identity!r}: prepare them all with one tokenizer"
            )
        self.prepared_identity = record["rules_identity"]
        return piece

    def add(self, path: Path) -> None:
        """Tokenize or read one file (a no-op if it was added before)."""
        if str(path) in self.files:
            return
        if is_prepared(path):
            piece = self._read_prepared(path)
        else:
            if self.workers and self._pool is None:
                self._pool = worker_pool(self.workers)
            piece = tokenize_file(path, self.language, self._pool)
        with self._lock:
            self.files[str(path)] = self.table.merge(piece)

    def watch(self, paths: Sequence[str | Path], interval: float = 15.0) -> None:
        """Add new files under ``paths`` every ``interval`` seconds until ``close``. Put files there atomically
        (write them under another name, then rename), or a half-copied file may be read."""

        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    for path in corpus_files(paths, must_exist=False):
                        if str(path) not in self.files and not self._stop.is_set():
                            self.add(path)
                            show(f"added {path} to the corpus ({len(self.files[str(path)]):,} ids)", file=sys.stderr)
                except Exception as error:  # e.g. a file still being written: try again at the next scan
                    if self._stop.is_set():  # closing: the pool was shut down under it
                        return
                    show(f"warning: corpus watch: {error}", file=sys.stderr)

        self._watcher = threading.Thread(target=loop, name="corpus-watch", daemon=True)
        self._watcher.start()

    def close(self) -> None:
        """Stop watching and end the worker processes, without waiting for a file being tokenized."""
        self._stop.set()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self.files)

    def n_tokens(self) -> int:
        with self._lock:
            return sum(len(ids) for ids in self.files.values())

    def word_counts(self) -> Counter:
        """Occurrences of every word type (the framing tokens left out)."""
        with self._lock:
            counts = np.zeros(len(self.types), dtype=np.int64)
            for ids in self.files.values():
                counts += np.bincount(ids, minlength=len(self.types))
            types = list(self.types)
        return Counter({t: int(n) for t, n in zip(types[2:], counts[2:]) if n})


def held_out_paragraphs(path: str | Path, language: str, max_tokens: int) -> list[list[list[str]]]:
    """The first paragraphs of a text or prepared file holding about ``max_tokens`` tokens, as their sentences'
    tokens (for validation: read once, kept in memory)."""
    path = Path(path)
    if is_prepared(path):
        piece, record = read_prepared(path)
        check_rules(record, language, path)
        paragraphs = piece.sentences()
    else:
        check_plain_text(path)
        rules = text_rules(language)
        with reading(path), open_text(path) as f:
            lines = [line for line, _ in zip(f, range(max_tokens))]  # a paragraph holds a token at least
        warn_replaced(path, sum(line.count(REPLACEMENT_CHAR) for line in lines))
        paragraphs = ([s.tokens for s in rules.split_and_tokenize(line) if s.tokens] for line in lines)
    kept, tokens = [], 0
    for sentences in paragraphs:
        if sentences:
            kept.append(sentences)
            tokens += sum(map(len, sentences))
            if tokens >= max_tokens:
                break
    if not kept:
        raise ValueError(f"{path} holds no text to validate on (no paragraph with a word); give held-out text")
    return kept
