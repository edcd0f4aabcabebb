"""An index folder's writers: one at a time (a lock), and each deletes only files a build of ours wrote.

A folder may hold a user's own files (an unlucky ``--out``); a build refuses such a folder rather than guess,
and everything it removes - an older index it replaces, files of an unfinished generation, temporaries - is
recognised by name (``layout``) *and* by the manifest or build state that owns it, at every depth
(``encoder.ownership``, the rule every command that writes follows). ``read`` looks at the folder once, under the
lock: what a build or add decides from.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from encoder import locks, ownership
from encoder.commands import program
from encoder.files import made_folder, temporary_target

from . import layout, storage
from .errors import IndexFormatError
from .manifest import Manifest
from .settings import TRAIN_GLOVE


@contextmanager
def locked(out: Path, create: bool = True) -> Iterator[None]:
    """One writer per index directory at a time; ``create``: make the directory (a build), else it must exist."""
    if not create and out.exists() and not out.is_dir():
        raise IndexFormatError(f"{out} is a file, not an index folder; give the folder an index was built in")
    if not create and not out.is_dir():
        raise IndexFormatError(f"{out} does not exist; build an index with `{program('indexer')} build`")
    busy = IndexFormatError(f"another process is writing {out}; wait for it to finish")
    with made_folder(out), locks.locked(out / layout.LOCK, busy):
        yield


def read_state(out: Path) -> dict | None:
    """The build state of an unfinished build or add in ``out`` (None: there is none)."""
    return storage.read_json(out / layout.STATE) if (out / layout.STATE).is_file() else None


@dataclass(frozen=True)
class Contents:
    """What an index folder holds, read once: its manifest (or, in ``older``, one of a format this code no longer
    reads), an unfinished build's state, the finished shard folders on disk (names, in order) and the entries no
    build of ours wrote (paths relative to the folder)."""

    manifest: Manifest | None
    older: dict | None
    state: dict | None
    shards: tuple[str, ...]
    foreign: tuple[str, ...]

    @property
    def owner(self) -> Manifest | dict | None:
        """What owns the files in the folder: its manifest (of any format), else an unfinished build's state."""
        return _owner(self.manifest, self.older, self.state)


def _owner(manifest: Manifest | None, older: dict | None, state: dict | None) -> Manifest | dict | None:
    return manifest if manifest is not None else older if older is not None else state


def read_manifest(out: Path) -> Manifest | None:
    """The manifest of the finished index in ``out`` (None: there is none, or one of an older format)."""
    if not (out / layout.MANIFEST).is_file() or Manifest.older(out) is not None:
        return None
    return Manifest.read(out)


def read(out: Path) -> Contents:
    """The contents of the index folder ``out`` (which may not exist yet)."""
    manifest, older, state = read_manifest(out), Manifest.older(out), read_state(out)
    owner = _owner(manifest, older, state)
    shards_dir = out / layout.SHARDS
    entries = sorted(p.name for p in shards_dir.iterdir()) if shards_dir.is_dir() else []
    shards = tuple(name for name in entries if layout.shard_number(name) is not None)
    strangers = ownership.foreign(out, is_ours(out, owner)) if out.is_dir() else []
    return Contents(manifest, older, state, shards, tuple(str(p.relative_to(out)) for p in strangers))


def _trained_glove(owner: Manifest | dict | None) -> bool:
    if isinstance(owner, Manifest):
        return "file" in owner.glove_source
    return owner is not None and owner.get("settings", {}).get("glove") == TRAIN_GLOVE


def _own_generations(owner: Manifest | dict | None) -> set[int] | None:
    """The generations whose files in the folder are ours (``layout.generation_file``): the manifest's, the next
    (an ``add`` cut short before its commit writes it) and the one before (an ``add`` cut short between its commit
    and its clean-up leaves it); a first build's; none without an owner. None where the owner does not say (an
    index of an older format without a generation): any generation's name, as before generations were counted."""
    if owner is None:
        return set()
    current = owner.generation if isinstance(owner, Manifest) else owner.get("generation")
    if isinstance(current, int):
        return {current - 1, current, current + 1}
    return {1} if owner.get("kind") == "build" else None


def is_ours(out: Path, owner: Manifest | dict | None) -> ownership.Owned:
    """Whether a path in the index folder is one a build writes: the only kind a build ever deletes or replaces.

    ``owner`` is the manifest or build state of the folder (None: it holds neither, so nothing in it is ours
    but the lock). GloVe's file is ours only when that build trained it; a generation's files only for the
    generations the owner can have written (``_own_generations``), so that a user's file that merely bears such a
    name is not. Inside a shard, only a shard's files.
    """
    roles = {"lock"}
    if owner is not None:
        roles |= {"manifest", "state", "shards", "generation"} | ({"glove"} if _trained_glove(owner) else set())
    generations = _own_generations(owner)

    def ours(path: Path) -> bool:
        temporary = temporary_target(path.name)
        name = temporary or path.name
        if path.parent == out:
            role = layout.role(name)
            if role == "generation" and generations is not None:
                return layout.generation_of(name) in generations
            return role in roles
        if path.parent == out / layout.SHARDS:  # a finished shard appears whole, with its record
            shard = temporary is not None or (path / layout.SHARD_RECORD).is_file()
            return owner is not None and layout.shard_number(name) is not None and shard and path.is_dir()
        in_a_shard = path.parent.parent == out / layout.SHARDS and ours(path.parent)
        return in_a_shard and layout.is_shard_entry(name) and path.is_file()

    return ours


def clear(out: Path, owner: Manifest | dict) -> None:
    """Delete everything an earlier index or build (``owner``) wrote in ``out``, and nothing else."""
    ours = is_ours(out, owner)
    ownership.remove(out, [p for p in out.iterdir() if ours(p) and p.name != layout.LOCK], ours)


def remove_unreferenced(
    out: Path, manifest: Manifest | None, owner: Manifest | dict, keep_shards: Iterable[str] = ()
) -> None:
    """Delete our generation files, shard directories and temporaries that ``manifest`` (or the running build,
    ``keep_shards``) does not refer to; ``owner`` (the manifest or state) says what is ours. Nothing else."""
    ours = is_ours(out, owner)
    referenced = set(manifest.files()) if manifest is not None else set()
    shards = {s.name for s in manifest.shards} if manifest is not None else set()
    shards |= set(keep_shards)
    shards_dir = out / layout.SHARDS
    entries = [*out.iterdir(), *(shards_dir.iterdir() if shards_dir.is_dir() else [])]

    def unreferenced(path: Path) -> bool:
        if temporary_target(path.name) is not None:
            return True
        if path.parent == out:
            return layout.role(path.name) == "generation" and path.name not in referenced
        return path.name not in shards

    ownership.remove(out, [path for path in entries if ours(path) and unreferenced(path)], ours)
