"""An index folder's writers: one at a time (a lock), and each deletes only files a build of ours wrote.

A folder may hold a user's own files (an unlucky ``--out``); a build refuses such a folder rather than guess,
and everything it removes - an older index it replaces, files of an unfinished generation, temporaries - is
recognised by name *and* by the manifest or build state that owns it, at every depth (``encoder.ownership``,
the rule every command that writes follows).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from encoder import locks, ownership
from encoder.files import temporary_target

from . import storage
from .errors import IndexFormatError
from .manifest import GLOVE_FILE, LOCK, MANIFEST, SHARD_FILES, SHARD_RECORD, SHARDS, STATE, TRAIN_GLOVE, Manifest

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
    with locks.locked(out / LOCK, IndexFormatError(f"another process is writing {out}; wait for it to finish")):
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


def is_ours(out: Path, owner: Manifest | dict | None) -> ownership.Owned:
    """Whether a path in the index folder is one a build writes: the only kind a build ever deletes or replaces.

    ``owner`` is the manifest or build state of the folder (None: it holds neither, so nothing in it is ours
    but the lock). GloVe's file is ours only when that build trained it. Inside a shard, only a shard's files.
    """
    top = {LOCK}
    if owner is not None:
        top |= {MANIFEST, STATE, SHARDS} | ({GLOVE_FILE} if _trained_glove(owner) else set())

    def ours(path: Path) -> bool:
        temporary = temporary_target(path.name)
        name = temporary or path.name
        if path.parent == out:
            return name in top or (owner is not None and bool(GENERATION_FILE.fullmatch(name)))
        if path.parent == out / SHARDS:  # a finished shard appears whole, with its record
            shard = temporary is not None or (path / SHARD_RECORD).is_file()
            return owner is not None and bool(SHARD_NAME.fullmatch(name)) and shard and path.is_dir()
        in_a_shard = path.parent.parent == out / SHARDS and ours(path.parent)
        return in_a_shard and name in (*SHARD_FILES, SHARD_RECORD) and path.is_file()

    return ours


def foreign(out: Path, owner: Manifest | dict | None) -> list[str]:
    """Entries of the index folder, at every depth, that no build of ours wrote."""
    if not out.is_dir():
        return []
    return [str(p.relative_to(out)) for p in ownership.foreign(out, is_ours(out, owner))]


def clear(out: Path, owner: Manifest | dict) -> None:
    """Delete everything an earlier index or build (``owner``) wrote in ``out``, and nothing else."""
    ours = is_ours(out, owner)
    ownership.remove(out, [p for p in out.iterdir() if ours(p) and p.name != LOCK], ours)


def remove_unreferenced(
    out: Path, manifest: Manifest | None, owner: Manifest | dict, keep_shards: Iterable[str] = ()
) -> None:
    """Delete our generation files, shard directories and temporaries that ``manifest`` (or the running build,
    ``keep_shards``) does not refer to; ``owner`` (the manifest or state) says what is ours. Nothing else."""
    ours = is_ours(out, owner)
    referenced = set(manifest.files()) if manifest is not None else set()
    shards = {s.name for s in manifest.shards} if manifest is not None else set()
    shards |= set(keep_shards)
    entries = [*out.iterdir(), *((out / SHARDS).iterdir() if (out / SHARDS).is_dir() else [])]
    unreferenced = [
        path
        for path in entries
        if ours(path)
        and path.name not in (LOCK, MANIFEST, STATE, SHARDS, GLOVE_FILE)
        and (temporary_target(path.name) is not None or path.name not in (referenced if path.parent == out else shards))
    ]
    ownership.remove(out, unreferenced, ours)
