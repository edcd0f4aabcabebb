"""An index's manifest: the only code that knows its keys (the folder's names are ``layout``'s).

``Manifest.to_json``/``from_json`` map the dataclasses below to the JSON file one to one; ``FORMAT_VERSION``
changes whenever what an index holds changes: an index older than ``OLDEST_READABLE`` (format 5, the first with
each token vector's sense readout, which Word in context and Senses read) is refused with the command that rebuilds
it (``rebuild_command``).
Opening what a manifest names (model, GloVe, shard vectors) is ``parts.py``'s; how an index is built
(``Settings``) is ``settings.py``'s.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from encoder import Elmo, locks
from encoder.commands import program
from encoder.glove import check as check_glove
from encoder.glove import source_name
from encoder.options import flag_of, option_fields
from encoder.readout import ReadoutSettings

from . import layout, storage
from .errors import CorruptIndexError, IndexFormatError
from .settings import TRAIN_GLOVE, Settings

FORMAT_VERSION = 5
OLDEST_READABLE = 5  # format 4 and older lack the token readout that Word in context and Senses read
TRAINED_GLOVE = "trained"  # the manifest's GloVe source when GloVe was trained on the corpus


def glove_source_name(spec: str) -> str:
    """The source a manifest records for ``Settings.glove`` = ``spec`` (compare before opening an index)."""
    return TRAINED_GLOVE if spec == TRAIN_GLOVE else source_name(spec)


NOT_A_MANIFEST = "a file of that name no build wrote, or a damaged index; build into another folder, or move it away"
"""The advice for a manifest.json this code cannot read: nothing in its folder is taken for an index's (``build
--overwrite`` deletes none of it), so it is the same for a search and a build."""


def _not_a_manifest(path: Path, why: str) -> IndexFormatError:
    return IndexFormatError(f"{path} is not an index manifest this code reads ({why}): {NOT_A_MANIFEST}")


MIXES = ("layers", "search_layers")  # the two layer mixes an index is built with (Settings fields, manifest entries)

ModelSpec = str | Path | Sequence[str | Path] | Elmo


@dataclass(frozen=True)
class StoredFile:
    """A file the index wrote, checked when it is opened: its name in its folder, size and sha256."""

    file: str
    size: int
    sha256: str

    @classmethod
    def of(cls, folder: Path, name: str) -> StoredFile:
        return cls(name, **storage.file_record(folder / name))

    def check(self, folder: Path, verify_hash: bool) -> None:
        storage.check_file(folder / self.file, {"size": self.size, "sha256": self.sha256}, verify_hash)


@dataclass(frozen=True)
class Shard:
    """One shard of documents: its folder name under shards/, what it holds, and its files."""

    name: str
    documents: int
    first_doc_id: str
    sentences: int
    tokens: int
    token_vectors: int
    files: tuple[StoredFile, ...] = ()

    def to_json(self) -> dict:
        record = {k: v for k, v in asdict(self).items() if k != "files"}
        return {**record, "files": {f.file: {"size": f.size, "sha256": f.sha256} for f in self.files}}

    @classmethod
    def from_json(cls, data: dict) -> Shard:
        files = tuple(StoredFile(name, **record) for name, record in data["files"].items())
        return cls(**{**data, "files": files})


@dataclass(frozen=True)
class FaissFile(StoredFile):
    """One FAISS index of the index: its file, how it was made and is searched, and what it holds."""

    factory: str
    search_params: str | None
    ntotal: int
    dim: int


@dataclass(frozen=True)
class ModelRecord:
    """The model an index was built with: checked by content hash whenever the index is opened."""

    name: str
    hash: str
    source: str | list[str] | None  # "default", our model folder, or [options.json, weights.hdf5]
    dim: int
    n_layers: int
    head_hash: str | None = None  # its LM head and vocabulary (``encoder.readout.head_hash``); None: none, or unknown


@dataclass(frozen=True)
class MixRecord:
    """A layer mix as the user gave it (``spec``), its normalised weights and a description."""

    spec: str
    weights: tuple[float, ...]
    description: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", tuple(self.weights))  # a JSON list, read back


@dataclass(frozen=True)
class Counts:
    """Live counts (deleted documents left out), stored counts, and what reading the corpus skipped or fixed."""

    documents: int
    sentences: int
    tokens: int
    token_vectors: int
    stored_documents: int
    stored_sentences: int
    stored_tokens: int
    stored_token_vectors: int
    deleted_documents: int
    skipped_empty_documents: int
    replaced_characters: int


@dataclass(frozen=True)
class CorpusFile:
    """A corpus file that was indexed: where it was, its size and sha256, and what it gave."""

    name: str
    path: str
    size: int
    sha256: str
    documents: int
    replaced_characters: int


_NESTED = {"model": ModelRecord, "layers": MixRecord, "search_layers": MixRecord, "counts": Counts}


@dataclass(frozen=True)
class Manifest:
    """What an index is: its model, layer mixes and settings, its shards and files, and its history.

    ``glove_source`` says where the GloVe baseline's vectors are (``encoder.glove.resolve``'s record of Stanford's
    package or a file, or ``{"file": "glove.txt", "source": "trained", ...}``); ``glove`` describes them.
    ``build`` is the build's inputs and settings: re-running the same build finds it done.
    """

    generation: int
    created_at: str
    updated_at: str
    model: ModelRecord
    layers: MixRecord
    search_layers: MixRecord
    pooling: str
    settings: Settings
    counts: Counts
    corpus: tuple[CorpusFile, ...]
    shards: tuple[Shard, ...]
    vocab: StoredFile
    glove_source: dict[str, Any]
    indexes: dict[str, FaissFile]  # "sentences", "tokens", "glove"
    glove: dict[str, Any]
    deleted_doc_ids: tuple[str, ...] = ()  # one entry per removal; which rows are live: live.LiveRows
    build: dict[str, Any] = field(default_factory=dict)
    calibration: tuple[StoredFile, ...] = ()  # the random queries' words and vectors (calibration.py)
    readout: ReadoutSettings = ReadoutSettings()  # how each token vector's sense readout was made (encoder.readout)
    format_version: int = FORMAT_VERSION

    def replace(self, **changes: Any) -> Manifest:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "generation": self.generation,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            **{name: asdict(getattr(self, name)) for name in _NESTED},
            "pooling": self.pooling,
            "settings": asdict(self.settings),
            "corpus": [asdict(c) for c in self.corpus],
            "shards": [s.to_json() for s in self.shards],
            "files": {
                "vocab": asdict(self.vocab),
                "glove": self.glove_source,
                "calibration": [asdict(f) for f in self.calibration],
            },
            "indexes": {kind: asdict(entry) for kind, entry in self.indexes.items()},
            "glove": self.glove,
            "deleted_doc_ids": list(self.deleted_doc_ids),
            "build": self.build,
            "readout": self.readout.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict) -> Manifest:
        """The manifest in ``data``; KeyError/TypeError/ValueError when it is not one of this format."""
        nested = {name: kind(**data[name]) for name, kind in _NESTED.items()}
        return cls(
            format_version=data["format_version"],
            generation=data["generation"],
            created_at=data["created_at"],
            updated_at=data["updated_at"],
            **nested,
            pooling=data["pooling"],
            settings=Settings(**data["settings"]),
            corpus=tuple(CorpusFile(**c) for c in data["corpus"]),
            shards=tuple(Shard.from_json(s) for s in data["shards"]),
            vocab=StoredFile(**data["files"]["vocab"]),
            glove_source=data["files"]["glove"],
            indexes={kind: FaissFile(**entry) for kind, entry in data["indexes"].items()},
            glove=data["glove"],
            deleted_doc_ids=tuple(data["deleted_doc_ids"]),
            build=data["build"],
            calibration=tuple(StoredFile(**f) for f in data["files"].get("calibration", [])),
            readout=ReadoutSettings(**data["readout"]),
        )

    @classmethod
    def read(cls, out: Path) -> Manifest:
        """The manifest of the index at ``out``, or a clear error if there is none, or it is of another format."""
        path = out / layout.MANIFEST
        if not path.is_file():
            if locks.is_locked(out / layout.LOCK):
                raise IndexFormatError(
                    f"an index is being built in {out} right now (another process is writing it); "
                    "try again when that build has finished"
                )
            if (out / layout.STATE).is_file():
                raise IndexFormatError(f"{out} holds an interrupted build; re-run the same build command to resume it")
            if not out.exists():
                raise IndexFormatError(f"{out} does not exist; build an index with `{program('indexer')} build`")
            raise IndexFormatError(
                f"{out} is not an index ({layout.MANIFEST} is missing); build one with `{program('indexer')} build`"
            )
        data = storage.read_json(path, NOT_A_MANIFEST)
        if not isinstance(data, dict) or "format_version" not in data:
            raise _not_a_manifest(path, "no format_version")
        version = data["format_version"]
        if not isinstance(version, int) or isinstance(version, bool):
            raise _not_a_manifest(path, f"its format_version is {version!r}, not a whole number")
        if version > FORMAT_VERSION:
            raise IndexFormatError(
                f"{out} was written in index format {version}, newer than this code reads "
                f"({FORMAT_VERSION}); update ELMo Search or rebuild the index"
            )
        if version < OLDEST_READABLE:
            raise IndexFormatError(
                f"{out} was written in index format {version} by an older ELMo Search (this one reads format "
                f"{FORMAT_VERSION}: it stores each word's sense readout for Word in context and Senses); rebuild it: "
                f"{rebuild_command(out)}"
            )
        try:
            return cls.from_json(data)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise _not_a_manifest(path, f"{type(error).__name__}: {error}") from None

    @staticmethod
    def older(out: Path) -> dict | None:
        """The manifest in ``out`` as JSON where it is one of a format older than this code reads (None: it is not):
        enough to know which files in the folder an earlier build wrote, so that ``build --overwrite`` (what
        reading it advises) may replace them."""
        path = out / layout.MANIFEST
        try:
            data = storage.read_json(path) if path.is_file() else None
        except CorruptIndexError:  # not a manifest: reading it says so
            return None
        version = data.get("format_version") if isinstance(data, dict) else None
        old = isinstance(version, int) and not isinstance(version, bool) and version < OLDEST_READABLE
        return data if old else None

    def write(self, out: Path) -> None:
        storage.write_json(out / layout.MANIFEST, self.to_json())

    # ------------------------------------------------------------------------------ what it refers to
    def check_files(self, out: Path, verify_hashes: bool) -> None:
        """Every file the manifest lists exists with its size (and, if asked, its sha256)."""
        for shard in self.shards:
            for stored in shard.files:
                stored.check(layout.shard_dir(out, shard.name), verify_hashes)
        for stored in [self.vocab, *self.indexes.values(), *self.calibration]:
            stored.check(out, verify_hashes)
        if "file" in self.glove_source:
            StoredFile(self.glove_source["file"], self.glove_source["size"], self.glove_source["sha256"]).check(
                out, verify_hashes
            )
        else:  # GloVe outside the index: Stanford's package or a file elsewhere
            check_glove_source(out, self.glove_source)

    def files(self) -> list[str]:
        """The index's own files, relative to its folder (GloVe referred to elsewhere is not one of them)."""
        names = [self.vocab.file, *(entry.file for entry in self.indexes.values()), *(f.file for f in self.calibration)]
        names += [self.glove_source["file"]] if "file" in self.glove_source else []
        return names + [f"{layout.SHARDS}/{s.name}/{f.file}" for s in self.shards for f in s.files]

    def disk_bytes(self) -> int:
        """Bytes of the index's own files (shards, FAISS, vocabulary, calibration, trained GloVe)."""
        sizes = [self.vocab.size, *(entry.size for entry in self.indexes.values()), *(f.size for f in self.calibration)]
        sizes += [self.glove_source["size"]] if "file" in self.glove_source else []
        return sum(sizes) + sum(f.size for s in self.shards for f in s.files)


@dataclass(frozen=True)
class FolderInfo:
    """What a folder says about the index in it without opening it: enough to choose between using, resuming
    and rebuilding (the app's first run)."""

    has_index: bool  # a manifest.json (of any format version)
    interrupted: bool  # a build-state.json: a build is running there, or was killed
    format_version: int | None
    model_source: Any  # as ModelRecord.source
    model_hash: str | None
    glove_source: str | None  # as encoder.glove.source_name names it, or "trained" (on the corpus)
    stamp: int  # changes whenever the index is rebuilt or changed in place
    corpus: tuple[str, ...] = ()  # the paths of the corpus files it was built from
    demo: str | None = None  # the app's demo collection this index is, as the app built it (``build_index(demo=)``),
    # None for any other index and for a demo index changed since (documents added or deleted)
    readout: dict | None = None  # the readout settings it was built with (``ReadoutSettings.to_json``), as recorded

    @classmethod
    def of(cls, out: Path) -> FolderInfo:
        path = out / layout.MANIFEST
        data = storage.read_json(path, NOT_A_MANIFEST) if path.is_file() else {}
        data = data if isinstance(data, dict) else {}
        model = data.get("model") if isinstance(data.get("model"), dict) else {}
        files = data.get("files") if isinstance(data.get("files"), dict) else {}
        build = data.get("build") if isinstance(data.get("build"), dict) else {}
        unchanged = data.get("generation") == 1 and not data.get("deleted_doc_ids")
        return cls(
            has_index=path.is_file(),
            interrupted=(out / layout.STATE).is_file(),
            format_version=data.get("format_version"),
            model_source=model.get("source"),
            model_hash=model.get("hash"),
            glove_source=glove.get("source") if isinstance(glove := (files or {}).get("glove"), dict) else None,
            stamp=path.stat().st_mtime_ns if path.is_file() else 0,
            corpus=tuple(_corpus_paths(data)),
            demo=build.get("demo") if unchanged and isinstance(build.get("demo"), str) else None,
            readout=data.get("readout") if isinstance(data.get("readout"), dict) else None,
        )


def _corpus_paths(data: dict) -> list[str]:
    """The paths of the corpus files a manifest (read as JSON, of any format) lists."""
    corpus = data.get("corpus") if isinstance(data.get("corpus"), list) else []
    return [c["path"] for c in corpus if isinstance(c, dict) and isinstance(c.get("path"), str)]


_READER_FLAGS = {"text_column": "--text-column", "id_column": "--id-column", "title_column": "--title-column"}
SHOWN_CORPUS_FILES = 20  # more corpus files than this are named by the folder that holds them


def rebuild_command(out: Path) -> str:
    """The ``python -m indexer build`` command that builds the index in ``out`` again from its own corpus, with its
    model and settings (an index of any format this code can read the manifest of; what it does not record, such
    as ``glove_max_vocab``, is left at its default). Where no file holds some of its documents (given as strings),
    the corpus is ``YOUR_FILES``."""
    data = storage.read_json(out / layout.MANIFEST, NOT_A_MANIFEST)
    data = data if isinstance(data, dict) else {}
    paths = _corpus_paths(data)
    if "" in paths:  # some documents were given as strings (Index.from_texts, add): no file holds them
        paths = []
    elif len(paths) > SHOWN_CORPUS_FILES:
        paths = [os.path.commonpath(paths)]
    words = [*shlex.split(program("indexer")), "build", "--corpus", *(paths or ["YOUR_FILES"]), "--out", str(out)]
    source = data.get("model", {}).get("source") if isinstance(data.get("model"), dict) else None
    if isinstance(source, list) and len(source) == 2:
        words += ["--model", str(source[0]), "--weights", str(source[1])]
    elif isinstance(source, str) and source != "default":
        words += ["--model", source]
    words += settings_flags(data.get("settings") if isinstance(data.get("settings"), dict) else {})
    build = data.get("build") if isinstance(data.get("build"), dict) else {}
    reader = build.get("reader") if isinstance(build.get("reader"), dict) else {}
    for name, flag in _READER_FLAGS.items():
        if reader.get(name) not in (None, "text" if name == "text_column" else None):
            words += [flag, str(reader[name])]
    words += ["--doc-per-file"] * (reader.get("doc_per_file") is True)
    return shlex.join([*words, "--overwrite"])


def settings_flags(settings: dict) -> list[str]:
    """The ``build`` options that give ``settings`` (a manifest's, read as JSON) where they differ from the
    defaults: made from the ``Settings`` fields, so a new setting is in every rebuild command."""
    words = []
    for setting in option_fields(Settings):
        value, default = settings.get(setting.name, setting.default), setting.default
        if isinstance(default, bool):
            words += [flag_of(setting)] * (value is not default and isinstance(value, bool))
        elif value not in (default, None):
            words += [flag_of(setting), str(value)]
    return words


def check_glove_source(out: Path, entry: dict) -> None:
    """Refuse GloVe outside the index (Stanford's package, a file elsewhere) that is not what it recorded."""
    try:
        check_glove(entry)
    except ValueError as error:
        raise IndexFormatError(f"{out}: {error}; rebuild the index") from None
