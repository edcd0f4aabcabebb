"""Building an index: read and check the corpus, encode it shard by shard, train GloVe, build FAISS, commit.

An index directory is committed by writing ``manifest.json`` last. Until then ``build-state.json``
records what is being built; re-running the same build resumes from the completed shards (each
shard directory appears atomically), and everything after the shards is deterministic, so a resumed
build equals an uninterrupted one. ``add`` appends shards the same way and commits a new manifest
that points at new FAISS files (a killed ``add`` leaves the old index intact); ``delete`` only
rewrites the manifest (deleted documents are filtered out of every result).
"""

from __future__ import annotations

import fcntl
import functools
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from encoder import Elmo, LayerMix
from encoder.glove import STANFORD
from encoder.glove import resolve as resolve_glove
from encoder.text import Sentence, split_and_tokenize

from . import storage
from .errors import CorpusError, IndexFormatError, QueryError
from .glove import GloveVectors, cooccurrence, save_glove, train_glove
from .index import Index, resolve_device
from .manifest import (
    FORMAT_VERSION,
    GLOVE_FILE,
    LOCK,
    MANIFEST,
    SHARD_FILES,
    SHARDS,
    STATE,
    ModelSpec,
    load_model,
    model_record,
    open_glove,
    open_model,
    read_manifest,
    shard_layers,
)
from .readers import Document, ReaderOptions, ReadStats, corpus_files, read_corpus
from .vectors import (
    POOLINGS,
    apply_search_params,
    build_faiss,
    check_factory,
    choose_factory,
    pool,
    tune_search_params,
)
from .words import WordFrequencies, is_content_word, is_word, normalize

SHARD_TOKENS = 50_000  # tokens per shard: the most work a killed build can lose
ENCODE_TOKENS = 8_192  # tokens embedded at once: bounds the float32 layer outputs held in memory
TRAIN_GLOVE = "train"  # Settings.glove: train GloVe on the indexed corpus (stored in the index)
GENERATION_FILE = re.compile(r"(sentences|tokens|glove)\.g\d+\.faiss|vocab\.g\d+\.parquet")  # one generation's files
SHARD_NAME = re.compile(r"\d{5}")  # shard directories


@dataclass(frozen=True)
class Settings:
    """How an index is built; fixed for its lifetime (``add`` reuses them) and compared on resume."""

    layers: str = "average"  # the mix of the token index (word in context, senses)
    search_layers: str = (
        "token"  # the mix of passage search; chosen on bench/queries_en.jsonl (bench/search_quality.py)
    )
    pooling: str = "sif"  # how a passage's token vectors become one: sif, mean or max (see vectors.pool)
    index_factory: str | None = None  # None: chosen by size (see vectors.choose_factory)
    search_params: str | None = None  # None: tuned for recall@10 >= 0.95 (see vectors.tune_search_params)
    skip_stopwords: bool = True
    min_freq: int = 1  # a word needs this many occurrences in the corpus to get token vectors
    glove: str = STANFORD  # "stanford", a GloVe text file (both referred to, not copied), or "train": on the corpus
    glove_dim: int = 50
    glove_epochs: int = 25
    glove_window: int = 10
    glove_min_count: int = 2
    glove_max_vocab: int = 200_000
    shard_tokens: int = SHARD_TOKENS
    seed: int = 0

    def check(self) -> None:
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, not {self.pooling!r}")
        for name in ("min_freq", "glove_dim", "glove_epochs", "glove_window", "glove_min_count", "shard_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.glove not in (STANFORD, TRAIN_GLOVE) and not Path(self.glove).is_file():
            raise FileNotFoundError(f"GloVe file {self.glove} does not exist (or say {STANFORD!r} or {TRAIN_GLOVE!r})")


# ------------------------------------------------------------------------------------------ helpers
def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def _locked(out: Path, create: bool = True) -> Iterator[None]:
    """One writer per index directory at a time; ``create``: make the directory (a build), else it must exist."""
    if not create and not out.is_dir():
        raise IndexFormatError(f"{out} does not exist; build an index with `python -m indexer build`")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexFormatError(f"another process is writing {out}; wait for it to finish") from None
        yield


def _ours(out: Path, owner: dict | None) -> Callable[[Path], bool]:
    """Whether a path in the index folder is one a build writes: the only kind a build ever deletes or replaces.

    ``owner`` is the manifest or build state of the folder (None: it holds neither, so nothing in it is ours
    but the lock). GloVe's file is ours only when that build trained it.
    """
    trained = owner is not None and (
        "file" in owner.get("files", {}).get("glove", {}) or owner.get("settings", {}).get("glove") == TRAIN_GLOVE
    )
    top = {LOCK} | ({MANIFEST, STATE, SHARDS} | ({GLOVE_FILE} if trained else set()) if owner is not None else set())

    def ours(path: Path) -> bool:
        temporary = storage.temporary_target(path.name)
        name = temporary or path.name
        if path.parent == out / SHARDS:  # a finished shard appears whole, with its shard.json
            shard = temporary is not None or (path / "shard.json").is_file()
            return owner is not None and bool(SHARD_NAME.fullmatch(name)) and shard
        return name in top or (owner is not None and bool(GENERATION_FILE.fullmatch(name)))

    return ours


def _foreign(out: Path, owner: dict | None) -> list[str]:
    """Entries of the index folder (and of its shards folder) that no build of ours wrote."""
    if not out.is_dir():
        return []
    ours = _ours(out, owner)
    entries = [*out.iterdir(), *((out / SHARDS).iterdir() if (out / SHARDS).is_dir() else [])]
    return sorted(str(p.relative_to(out)) for p in entries if not ours(p))


def _remove_unreferenced(out: Path, manifest: dict | None, owner: dict, keep_shards: Iterable[str] = ()) -> None:
    """Delete our generation files, shard directories and temporaries that ``manifest`` (or the running build,
    ``keep_shards``) does not refer to; ``owner`` (the manifest or state) says what is ours. Nothing else."""
    ours = _ours(out, owner)
    referenced = {entry["file"] for entry in (manifest or {}).get("files", {}).values() if "file" in entry}
    referenced |= {entry["file"] for entry in (manifest or {}).get("indexes", {}).values()}
    shards = {s["name"] for s in (manifest or {}).get("shards", [])} | set(keep_shards)
    for path in [*out.iterdir(), *((out / SHARDS).iterdir() if (out / SHARDS).is_dir() else [])]:
        if not ours(path) or path.name in (LOCK, MANIFEST, STATE, SHARDS, GLOVE_FILE):
            continue
        temporary = storage.temporary_target(path.name) is not None
        if temporary or path.name not in (referenced if path.parent == out else shards):
            shutil.rmtree(path) if path.is_dir() else path.unlink()


# ------------------------------------------------------------------------------------------ scan
@dataclass
class Scan:
    """What a first pass over the corpus found; it runs before anything is written."""

    stats: ReadStats
    per_file: dict[str, int] = field(default_factory=dict)
    sentences: int = 0
    tokens: int = 0
    counts: Counter = field(default_factory=Counter)  # normalised word -> occurrences


def _scan(files: list[tuple[Path, str]], options: ReaderOptions, taken: set[str], progress: bool) -> Scan:
    """Validate and count: every document parses, ids are unique (also against ``taken``), words counted."""
    scan = Scan(ReadStats())
    seen = set(taken)
    for doc in tqdm(
        read_corpus(files, options, scan.stats, warn=True), desc="reading", unit="doc", disable=not progress
    ):
        if doc.doc_id in seen:
            where = "is already in the index" if doc.doc_id in taken else "appears more than once"
            raise CorpusError(
                f"document id {doc.doc_id!r} {where} (seen again in {doc.source}); "
                "document ids must be unique; fix the id column or leave ids to the file/line default"
            )
        seen.add(doc.doc_id)
        scan.per_file[doc.source] = scan.per_file.get(doc.source, 0) + 1
        for sentence in split_and_tokenize(doc.text):
            scan.sentences += bool(sentence.tokens)
            scan.tokens += len(sentence.tokens)
            scan.counts.update(normalize(t) for t in sentence.tokens if is_word(t))
    if scan.sentences == 0:
        raise CorpusError(
            "the corpus holds no text: every document is empty"
            if scan.stats.documents == 0
            else "the corpus holds no sentences with words"
        )
    return scan


# ------------------------------------------------------------------------------------------ shards
@dataclass
class Parsed:
    """A document split into sentences, and its title's tokens (empty when it has none)."""

    doc: Document
    sentences: list[Sentence]
    title_tokens: list[str]


def _shard_groups(docs: Iterable[Document], shard_tokens: int) -> Iterator[list[Parsed]]:
    """Whole documents grouped into shards of about ``shard_tokens`` tokens (deterministic)."""
    group, tokens = [], 0
    for doc in docs:
        sentences = [s for s in split_and_tokenize(doc.text) if s.tokens]
        title_tokens = [t for s in split_and_tokenize(doc.title) for t in s.tokens]
        group.append(Parsed(doc, sentences, title_tokens))
        tokens += sum(len(s.tokens) for s in sentences)
        if tokens >= shard_tokens:
            yield group
            group, tokens = [], 0
    if group:
        yield group


def _embed(elmo: Elmo, token_lists: Sequence[list[str]]) -> Iterator[np.ndarray]:
    """(L+1, n, dim) layers of each token list, embedded about ``ENCODE_TOKENS`` tokens at a time."""
    start = 0
    while start < len(token_lists):
        end, budget = start, 0
        while end < len(token_lists) and (end == start or budget + len(token_lists[end]) <= ENCODE_TOKENS):
            budget += len(token_lists[end])
            end += 1
        yield from elmo.embed(list(token_lists[start:end]))
        start = end


@dataclass
class Encoding:
    """What encoding a shard needs besides its documents: the model, the settings, the word counts that
    weigh pooling, and the words that get token vectors (None: all)."""

    elmo: Elmo
    settings: Settings
    frequencies: WordFrequencies
    keep: set[str] | None


def _write_shard(path: Path, group: list[Parsed], first_sentence: int, first_token: int, encoding: Encoding) -> dict:
    """Encode one shard and write it as a directory that appears atomically; returns its record."""
    elmo, settings, frequencies, keep = encoding.elmo, encoding.settings, encoding.frequencies, encoding.keep
    flat = [(p.doc, s) for p in group for s in p.sentences]
    dims = (elmo.n_layers, elmo.dim)
    sentence_layers = np.zeros((len(flat), *dims), np.float16)
    sentence_rows, token_rows, token_layers = [], [], []
    per_doc: dict[str, list[int]] = {p.doc.doc_id: [0, 0, 0] for p in group}  # sentences, tokens, vectors
    for row, ((doc, s), layers) in enumerate(zip(flat, _embed(elmo, [s.tokens for _, s in flat]))):
        sentence_id = first_sentence + row
        sentence_layers[row] = pool(layers, settings.pooling, frequencies.weights(s.tokens))
        starts = [a - s.start for a, _ in s.token_spans]
        ends = [b - s.start for _, b in s.token_spans]
        sentence_rows.append((sentence_id, doc.doc_id, doc.title, s.text, s.start, s.end, s.tokens, starts, ends))
        counts = per_doc[doc.doc_id]
        counts[0] += 1
        counts[1] += len(s.tokens)
        for position, token in enumerate(s.tokens):
            if is_content_word(token, settings.skip_stopwords) and (keep is None or normalize(token) in keep):
                token_rows.append(
                    (first_token + len(token_rows), sentence_id, position, token, starts[position], ends[position])
                )
                token_layers.append(layers[:, position].astype(np.float16))
                counts[2] += 1
    titled = [p for p in group if p.title_tokens]
    title_layers = np.zeros((len(group), *dims), np.float16)  # zeros: no title (it then matches nothing)
    title_rows = {id(p): i for i, p in enumerate(group)}
    for p, layers in zip(titled, _embed(elmo, [p.title_tokens for p in titled])):
        title_layers[title_rows[id(p)]] = pool(layers, settings.pooling, frequencies.weights(p.title_tokens))
    docs = pd.DataFrame(
        [(p.doc.doc_id, p.doc.title, p.title_tokens, p.doc.source, *per_doc[p.doc.doc_id]) for p in group],
        columns=["doc_id", "title", "title_tokens", "source", "sentences", "tokens", "token_vectors"],
    )
    sentences = pd.DataFrame(
        sentence_rows,
        columns=["sentence_id", "doc_id", "title", "text", "start", "end", "tokens", "token_starts", "token_ends"],
    )
    tokens = pd.DataFrame(token_rows, columns=["token_id", "sentence_id", "position", "word", "char_start", "char_end"])
    vectors = np.stack(token_layers) if token_layers else np.zeros((0, *dims), np.float16)
    record = {
        "name": path.name,
        "documents": len(group),
        "first_doc_id": group[0].doc.doc_id,
        "sentences": len(flat),
        "tokens": int(docs["tokens"].sum()),
        "token_vectors": len(tokens),
    }
    with storage.atomic_directory(path) as tmp:
        storage.write_parquet(tmp / "docs.parquet", docs)
        storage.write_parquet(tmp / "sentences.parquet", sentences)
        storage.write_parquet(tmp / "tokens.parquet", tokens)
        storage.write_npy(tmp / "sentence_layers.npy", sentence_layers)
        storage.write_npy(tmp / "token_layers.npy", vectors)
        storage.write_npy(tmp / "title_layers.npy", title_layers)
        record["files"] = {name: storage.file_record(tmp / name) for name in SHARD_FILES}
        storage.write_json(tmp / "shard.json", record)
    return record


def _encode(
    out: Path,
    files: list[tuple[Path, str]],
    options: ReaderOptions,
    scan: Scan,
    first_shard: int,
    first_sentence: int,
    first_token: int,
    encoding: Encoding,
    progress: bool,
) -> list[dict]:
    """Encode every shard of the corpus that is not on disk yet; returns the records of all its shards."""
    records = []
    bar = tqdm(total=scan.stats.documents, desc="encoding", unit="doc", disable=not progress)
    encoded_tokens, started = 0, time.perf_counter()
    groups = _shard_groups(read_corpus(files, options), encoding.settings.shard_tokens)
    for number, group in enumerate(groups, start=first_shard):
        path = out / SHARDS / f"{number:05d}"
        if path.is_dir():
            record = storage.read_json(path / "shard.json")
            if record["documents"] != len(group) or record["first_doc_id"] != group[0].doc.doc_id:
                raise IndexFormatError(
                    f"{path} does not match the corpus; the corpus changed since the build "
                    "started: re-run with --overwrite to start over"
                )
        else:
            record = _write_shard(path, group, first_sentence, first_token, encoding)
            encoded_tokens += record["tokens"]
        records.append(record)
        first_sentence += record["sentences"]
        first_token += record["token_vectors"]
        bar.update(record["documents"])
        bar.set_postfix(
            shards=len(records),
            sentences=first_sentence,
            tok_s=f"{encoded_tokens / max(time.perf_counter() - started, 1e-9):.0f}",
        )
    bar.close()
    return records


# ------------------------------------------------------------------------------------------ finalize
def _glove(out: Path, settings: Settings, vocab: pd.DataFrame, shards: list[dict], progress: bool) -> dict:
    """The manifest entry of the index's GloVe: a reference to Stanford's or a file's vectors, or (``train``)
    GloVe trained on the corpus and written to ``glove.txt``."""
    if settings.glove != TRAIN_GLOVE:
        return resolve_glove(settings.glove)
    if not (out / GLOVE_FILE).is_file():  # else written by this build before it was interrupted (writes are atomic)
        words = vocab[vocab["count"] >= settings.glove_min_count].head(settings.glove_max_vocab)["word"].tolist()
        ids = {w: i for i, w in enumerate(words)}

        def sentences() -> Iterator[np.ndarray]:
            for shard in shards:
                for tokens in storage.read_parquet(out / SHARDS / shard["name"] / "sentences.parquet")["tokens"]:
                    yield np.array([ids[w] for w in map(normalize, tokens) if w in ids], dtype=np.int64)

        counts = cooccurrence(sentences(), len(words), settings.glove_window)
        trained = train_glove(
            counts, words, dim=settings.glove_dim, epochs=settings.glove_epochs, seed=settings.seed, progress=progress
        )
        save_glove(out / GLOVE_FILE, trained)
    return {"file": GLOVE_FILE, "source": "trained", **storage.file_record(out / GLOVE_FILE)}


def _vocabulary(out: Path, manifest: dict | None, counts: Counter) -> pd.DataFrame:
    """Word counts of the whole index (previous ones plus the new corpus), most frequent first."""
    if manifest is not None:
        previous = storage.read_parquet(out / manifest["files"]["vocab"]["file"])
        counts = counts + Counter(dict(zip(previous["word"], previous["count"].tolist())))
    frame = pd.DataFrame(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])), columns=["word", "count"])
    return frame.astype({"count": np.int64})


def _build_indexes(
    out: Path,
    base: dict | None,
    shards: list[dict],
    new_shards: list[dict],
    settings: Settings,
    mixes: dict[str, Sequence[float]],
    glove: GloveVectors,
    dims: tuple[int, int],
    generation: int,
) -> dict:
    """Write the three FAISS indexes of this generation: extend the base ones, or build them from scratch.

    ``mixes`` are the layer weights of the sentence index (``search_layers``) and token index (``layers``).
    """

    def glove_chunks(selected: list[dict]) -> Iterator[np.ndarray]:
        for shard in selected:
            tokens = storage.read_parquet(out / SHARDS / shard["name"] / "sentences.parquet")["tokens"]
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
            old = base["indexes"][kind]
            index = storage.read_faiss(out / old["file"], old["ntotal"], old["dim"])
            for chunk in chunks(new_shards):
                index.add(np.ascontiguousarray(chunk, dtype=np.float32))
            factory, params = old["factory"], old["search_params"]
        else:
            n = sum(s[counts[kind]] for s in shards)
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
        entries[kind] = {
            "file": file,
            "factory": factory,
            "search_params": params,
            "ntotal": int(index.ntotal),
            "dim": dim,
            **storage.file_record(out / file),
        }
    return entries


MIXES = ("layers", "search_layers")  # the two layer mixes an index is built with (Settings fields, manifest entries)
COUNTED = ("documents", "sentences", "tokens", "token_vectors")


def _counts(shards: list[dict], deleted: dict[str, int], read: dict[str, int]) -> dict:
    """Manifest counts: live ones, stored ones (deleted documents included), and what reading skipped."""
    stored = {key: sum(s[key] for s in shards) for key in COUNTED}
    return {
        **{key: stored[key] - deleted.get(key, 0) for key in COUNTED},
        **{f"stored_{key}": value for key, value in stored.items()},
        "deleted_documents": deleted.get("documents", 0),
        **read,
    }


def _fingerprint(files: list[tuple[Path, str]]) -> list[dict]:
    """Name, location, size and sha256 of every corpus file."""
    return [{"name": name, "path": str(path), **storage.file_record(path)} for path, name in files]


def _corpus_entries(records: list[dict], scan: Scan) -> list[dict]:
    return [
        {
            **r,
            "documents": scan.per_file.get(r["name"], 0),
            "replaced_characters": scan.stats.replaced.get(r["name"], 0),
        }
        for r in records
    ]


def _read_counts(scan: Scan, previous: dict | None = None) -> dict[str, int]:
    previous = previous or {"skipped_empty_documents": 0, "replaced_characters": 0}
    return {
        "skipped_empty_documents": previous["skipped_empty_documents"] + scan.stats.empty,
        "replaced_characters": previous["replaced_characters"] + sum(scan.stats.replaced.values()),
    }


def _kept_words(vocab: pd.DataFrame, settings: Settings) -> set[str] | None:
    """Words frequent enough for token vectors (None: all of them)."""
    return None if settings.min_freq <= 1 else set(vocab["word"][vocab["count"] >= settings.min_freq])


def _target_status(out: Path, state: dict, overwrite: bool) -> str:
    """``done`` (the same build already finished), ``resume`` (it was interrupted) or ``fresh``; refuses to
    replace an index or an interrupted build of something else unless allowed, and any folder holding files a
    build did not write (even with --overwrite: a build deletes only its own files)."""
    manifest = storage.read_json(out / MANIFEST) if (out / MANIFEST).is_file() else None
    previous = storage.read_json(out / STATE) if (out / STATE).is_file() else None
    foreign = _foreign(out, manifest or previous)
    if foreign:
        what = "an index with other files in it" if manifest or previous else "not empty and not an index"
        raise FileExistsError(
            f"{out} is {what} ({', '.join(foreign[:5])}{' …' if len(foreign) > 5 else ''}); a build never "
            "deletes files it did not write: choose an empty or new directory, or move them away"
        )
    if manifest is not None and not overwrite:
        if manifest.get("build") == state:
            return "done"
        raise FileExistsError(
            f"{out} already holds an index built from other inputs or settings; use "
            "`add` to add documents, choose another --out, or pass --overwrite to replace it"
        )
    if previous is not None and previous != state and not overwrite:
        raise IndexFormatError(
            f"{out} holds an interrupted build with other inputs or settings; re-run that "
            "build to resume it, or pass --overwrite to start over"
        )
    return "resume" if previous == state and not overwrite else "fresh"


# ------------------------------------------------------------------------------------------ public
def build_index(
    corpus: Sequence[str | Path],
    out: str | Path,
    model: ModelSpec = "default",
    layers: str | Sequence[float] = "average",
    search_layers: str | Sequence[float] = "token",
    pooling: str = "sif",
    index_factory: str | None = None,
    glove: str | Path | None = None,
    device: str = "cpu",
    progress: bool = True,
    *,
    overwrite: bool = False,
    settings: Settings | None = None,
    **reader_options: Any,
) -> Index:
    """Build (or resume building) an index of ``corpus`` in ``out`` and open it.

    ``settings`` sets everything else (token filter, GloVe training, shard size, seed); the
    arguments before it override its fields. Reader options: ``text_column``, ``id_column``,
    ``title_column``, ``doc_per_file``. Re-running a finished build with the same inputs just opens it.
    """
    out, device = Path(out), resolve_device(device)
    settings = settings or Settings()
    glove_spec = str(glove or settings.glove)
    if glove_spec not in (STANFORD, TRAIN_GLOVE):
        glove_spec = str(Path(glove_spec).resolve())
    settings = Settings(
        **{
            **asdict(settings),
            "layers": layers if isinstance(layers, str) else ",".join(map(str, layers)),
            "search_layers": search_layers if isinstance(search_layers, str) else ",".join(map(str, search_layers)),
            "pooling": pooling,
            "index_factory": index_factory,
            "glove": glove_spec,
        }
    )
    settings.check()
    options = ReaderOptions.from_kwargs(**reader_options)
    elmo, source = load_model(model, device)
    mixes = {name: LayerMix.parse(getattr(settings, name), elmo.n_layers) for name in MIXES}
    if settings.index_factory:
        check_factory(settings.index_factory, elmo.dim)
    files = corpus_files(list(corpus))
    records = _fingerprint(files)
    state = {
        "kind": "build",
        "format_version": FORMAT_VERSION,
        "settings": asdict(settings),
        "model": model_record(elmo, source),
        "reader": asdict(options),
        "corpus": [{k: r[k] for k in ("name", "size", "sha256")} for r in records],
    }
    if settings.glove not in (STANFORD, TRAIN_GLOVE) and Path(settings.glove).is_relative_to(out.resolve()):
        raise ValueError(f"the GloVe file {settings.glove} is inside --out; keep it elsewhere (the index refers to it)")
    with _locked(out):  # before the folder is looked at, so two builds into one folder cannot both start
        status = _target_status(out, state, overwrite)
        if status == "done":
            return Index.open(out, model=elmo, device=device)
        scan = _scan(files, options, set(), progress)  # validates the whole corpus before anything is written
        if settings.glove == TRAIN_GLOVE and max(scan.counts.values()) < settings.glove_min_count:
            raise CorpusError(
                f"no word occurs {settings.glove_min_count} times, too little text to train GloVe; "
                "lower --glove-min-count or give GloVe vectors with --glove"
            )
        owner = storage.read_json(out / MANIFEST) if (out / MANIFEST).is_file() else None
        owner = owner or (storage.read_json(out / STATE) if (out / STATE).is_file() else None)
        if status == "fresh" and owner is not None:  # what an earlier index or build wrote; nothing else
            ours = _ours(out, owner)
            for path in list(out.iterdir()):
                if ours(path) and path.name != LOCK:
                    shutil.rmtree(path) if path.is_dir() else path.unlink()
        storage.write_json(out / STATE, state)
        _remove_unreferenced(out, None, state, keep_shards=[p.name for p in (out / SHARDS).glob("[0-9]*")])
        vocab = _vocabulary(out, None, scan.counts)
        encoding = Encoding(elmo, settings, WordFrequencies(scan.counts), _kept_words(vocab, settings))
        shards = _encode(out, files, options, scan, 0, 0, 0, encoding, progress)
        generation = 1
        vocab_file = f"vocab.g{generation}.parquet"
        storage.write_parquet(out / vocab_file, vocab)
        glove_entry = _glove(out, settings, vocab, shards, progress)
        glove_vectors = open_glove(out, glove_entry)
        dims = (elmo.n_layers, elmo.dim)
        weights = {name: mix.weights for name, mix in mixes.items()}
        indexes = _build_indexes(out, None, shards, shards, settings, weights, glove_vectors, dims, generation)
        now = _now()
        manifest = {
            "format_version": FORMAT_VERSION,
            "generation": generation,
            "created_at": now,
            "updated_at": now,
            "model": model_record(elmo, source),
            **{
                name: {"spec": getattr(settings, name), "weights": list(mix.weights), "description": mix.describe()}
                for name, mix in mixes.items()
            },
            "pooling": settings.pooling,
            "settings": asdict(settings),
            "counts": _counts(shards, {}, _read_counts(scan)),
            "corpus": _corpus_entries(records, scan),
            "shards": shards,
            "files": {"vocab": {"file": vocab_file, **storage.file_record(out / vocab_file)}, "glove": glove_entry},
            "indexes": indexes,
            "glove": {
                **{k: v for k, v in glove_entry.items() if k in ("source", "package", "license", "sha256")},
                "dim": glove_vectors.dim,
                "vocab_size": len(glove_vectors),
            },
            "deleted_doc_ids": [],
            "build": state,
        }
        storage.write_json(out / MANIFEST, manifest)
        (out / STATE).unlink()
    return Index.open(out, model=elmo, device=device, verify=False)  # just written: sizes are checked, not hashes


def add_documents(
    path: str | Path,
    corpus: Sequence[str | Path],
    model: ModelSpec | None = None,
    device: str = "cpu",
    progress: bool = True,
    **reader_options: Any,
) -> Index:
    """Append the documents of ``corpus`` to the index at ``path`` (resumable like a build) and open it.

    New documents get token vectors under the index's settings; GloVe is not retrained (words it does
    not know do not count in GloVe sentence means), and FAISS indexes keep their type and training.
    """
    out, device = Path(path), resolve_device(device)
    with _locked(out, create=False):
        base = read_manifest(out)
        settings = Settings(**base["settings"])
        elmo = open_model(base, model, device)
        options = ReaderOptions.from_kwargs(**reader_options)
        files = corpus_files(list(corpus))
        records = _fingerprint(files)
        state = {
            "kind": "add",
            "generation": base["generation"],
            "reader": asdict(options),
            "corpus": [{k: r[k] for k in ("name", "size", "sha256")} for r in records],
        }
        previous = storage.read_json(out / STATE) if (out / STATE).is_file() else None
        first_shard = max((int(s["name"]) for s in base["shards"]), default=-1) + 1
        keep_shards = []
        if previous == state:
            keep_shards = [p.name for p in (out / SHARDS).glob("[0-9]*") if int(p.name) >= first_shard]
        elif previous is not None and previous.get("generation") == base["generation"]:
            raise IndexFormatError(
                f"{out} holds an interrupted `add` of other files; re-run that add to finish it "
                f"(or delete {out / STATE} to discard it)"
            )
        taken = set()
        for shard in base["shards"]:
            taken |= set(storage.read_parquet(out / SHARDS / shard["name"] / "docs.parquet")["doc_id"])
        scan = _scan(files, options, taken, progress)  # validates the new documents before anything is written
        _remove_unreferenced(out, base, base, keep_shards)
        storage.write_json(out / STATE, state)
        vocab = _vocabulary(out, base, scan.counts)
        counts = base["counts"]
        first_ids = (counts["stored_sentences"], counts["stored_token_vectors"])
        counts_now = dict(zip(vocab["word"], vocab["count"].tolist()))
        encoding = Encoding(elmo, settings, WordFrequencies(counts_now), _kept_words(vocab, settings))
        new = _encode(out, files, options, scan, first_shard, *first_ids, encoding, progress)
        generation = base["generation"] + 1
        vocab_file = f"vocab.g{generation}.parquet"
        storage.write_parquet(out / vocab_file, vocab)
        shards = base["shards"] + new
        glove_vectors = open_glove(out, base["files"]["glove"])
        dims = (elmo.n_layers, elmo.dim)
        weights = {name: base[name]["weights"] for name in MIXES}
        indexes = _build_indexes(out, base, shards, new, settings, weights, glove_vectors, dims, generation)
        deleted = {key: counts[f"stored_{key}"] - counts[key] for key in COUNTED}
        manifest = {
            **base,
            "generation": generation,
            "updated_at": _now(),
            "shards": shards,
            "indexes": indexes,
            "counts": _counts(shards, deleted, _read_counts(scan, counts)),
            "corpus": base["corpus"] + _corpus_entries(records, scan),
            "files": {**base["files"], "vocab": {"file": vocab_file, **storage.file_record(out / vocab_file)}},
        }
        storage.write_json(out / MANIFEST, manifest)
        (out / STATE).unlink()
        _remove_unreferenced(out, manifest, manifest)
    return Index.open(out, model=elmo, device=device, verify=False)


def delete_documents(path: str | Path, doc_ids: Sequence[str]) -> dict:
    """Remove documents from search results (their vectors stay on disk); returns the new counts."""
    out = Path(path)
    with _locked(out, create=False):
        manifest = read_manifest(out)
        docs = pd.concat([storage.read_parquet(out / SHARDS / s["name"] / "docs.parquet") for s in manifest["shards"]])
        live = docs[~docs["doc_id"].isin(set(manifest["deleted_doc_ids"]))].set_index("doc_id")
        wanted = list(dict.fromkeys(doc_ids))
        unknown = [d for d in wanted if d not in live.index]
        if unknown:
            raise QueryError(
                f"{len(unknown)} document id(s) are not in the index: {', '.join(map(repr, unknown[:10]))}"
                f"{' …' if len(unknown) > 10 else ''}; nothing was deleted (see `stats` for the documents)"
            )
        removed = live.loc[wanted]
        counts = dict(manifest["counts"])
        for key in COUNTED:
            counts[key] -= len(removed) if key == "documents" else int(removed[key].sum())
        counts["deleted_documents"] += len(removed)
        deleted = manifest["deleted_doc_ids"] + wanted
        storage.write_json(
            out / MANIFEST, {**manifest, "updated_at": _now(), "counts": counts, "deleted_doc_ids": deleted}
        )
    return counts
