"""An index folder's writers: one at a time (a lock), and each deletes only files a build of ours wrote.

A folder may hold a user's own files (an unlucky ``--out``); a build refuses such a folder rather than guess,
and everything it removes - an older index it replaces, files of an unfinished generation, temporaries - is
recognised by name *and* by the manifest or build state that owns it.
"""

from __future__ import annotations

import fcntl
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from . import storage
from .errors import IndexFormatError
from .manifest import GLOVE_FILE, LOCK, MANIFEST, SHARD_RECORD, SHARDS, STATE, TRAIN_GLOVE, Manifest

GENERATION_FILE = re.compile(  # one generation's files
    r"(sentences|tokens|glove)\.g\d+\.faiss|vocab\.g\d+\.parquet|calibration\.g\d+\.(parquet|npy)"
)
SHARD_NAME = re.compile(r"\d{5}")  # shard directories


@contextmanager
def locked(out: Path, create: bool = True) -> Iterator[None]:
    """One writer per index directory at a time; ``create``: make the directory (a build), else it must exist."""
    if not create and out.exists() and not out.is_dir():
        raise IndexFormatError(f"{out} is a file, not an index folder; give the folder an index was built in")
    if not create and not out.is_dir():
        raise IndexFormatError(f"{out} does not exist; build an index with `python -m indexer build`")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexFormatError(f"another process is writing {out}; wait for it to finish") from None
        yield


def read_state(out: Path) -> dict | None:
    """The build state of an unfinished build or add in ``out`` (None: there is none)."""
    return storage.read_json(out / STATE) if (out / STATE).is_file() else None


def owner_of(out: Path) -> Manifest | dict | None:
    """What owns the files in ``out``: its manifest, else an unfinished build's state, else nothing."""
    return Manifest.read(out) if (out / MANIFEST).is_file() else read_state(out)


def _trained_glove(owner: Manifest | dict | None) -> bool:
    if isinstance(owner, Manifest):
        return "file" in owner.glove_source
    return owner is not None and owner.get("settings", {}).get("glove") == TRAIN_GLOVE


def is_ours(out: Path, owner: Manifest | dict | None) -> Callable[[Path], bool]:
    """Whether a path in the index folder is one a build writes: the only kind a build ever deletes or replaces.

    ``owner`` is the manifest or build state of the folder (None: it holds neither, so nothing in it is ours
    but the lock). GloVe's file is ours only when that build trained it.
    """
    top = {LOCK}
    if owner is not None:
        top |= {MANIFEST, STATE, SHARDS} | ({GLOVE_FILE} if _trained_glove(owner) else set())

    def ours(path: Path) -> bool:
        temporary = storage.temporary_target(path.name)
        name = temporary or path.name
        if path.parent == out / SHARDS:  # a finished shard appears whole, with its record
            shard = temporary is not None or (path / SHARD_RECORD).is_file()
            return owner is not None and bool(SHARD_NAME.fullmatch(name)) and shard
        return name in top or (owner is not None and bool(GENERATION_FILE.fullmatch(name)))

    return ours


def _entries(out: Path) -> list[Path]:
    return [*out.iterdir(), *((out / SHARDS).iterdir() if (out / SHARDS).is_dir() else [])]


def foreign(out: Path, owner: Manifest | dict | None) -> list[str]:
    """Entries of the index folder (and of its shards folder) that no build of ours wrote."""
    if not out.is_dir():
        return []
    ours = is_ours(out, owner)
    return sorted(str(p.relative_to(out)) for p in _entries(out) if not ours(p))


def _remove(path: Path) -> None:
    shutil.rmtree(path) if path.is_dir() else path.unlink()


def clear(out: Path, owner: Manifest | dict) -> None:
    """Delete everything an earlier index or build (``owner``) wrote in ``out``, and nothing else."""
    ours = is_ours(out, owner)
    for path in list(out.iterdir()):
        if ours(path) and path.name != LOCK:
            _remove(path)


def remove_unreferenced(
    out: Path, manifest: Manifest | None, owner: Manifest | dict, keep_shards: Iterable[str] = ()
) -> None:
    """Delete our generation files, shard directories and temporaries that ``manifest`` (or the running build,
    ``keep_shards``) does not refer to; ``owner`` (the manifest or state) says what is ours. Nothing else."""
    ours = is_ours(out, owner)
    referenced = set(manifest.files()) if manifest is not None else set()
    shards = {s.name for s in manifest.shards} if manifest is not None else set()
    shards |= set(keep_shards)
    for path in _entries(out):
        if not ours(path) or path.name in (LOCK, MANIFEST, STATE, SHARDS, GLOVE_FILE):
            continue
        temporary = storage.temporary_target(path.name) is not None
        if temporary or path.name not in (referenced if path.parent == out else shards):
            _remove(path)
