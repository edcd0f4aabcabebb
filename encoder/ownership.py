"""What a command may delete or replace: only what it wrote, checked at every depth before anything goes.

Every command that writes asks here: an index build (``indexer.folder``), a training run's ``--out``
(``run_folder``), ``ship``'s model folder, and the one-file outputs of ``indexer glove`` and ``encoder embed``.
Each describes what it writes as ``Owned``, a test of a path ("is this a file or folder I write, where I write
it?"); a folder it owns may still hold someone else's file, so everything under it is looked at too, and a
symbolic link is never ours (nor followed). Anything in the way is refused with its path named, before the
first file is removed, whatever ``--overwrite`` says: that flag lets a command replace its own earlier output,
never a file it did not write. A one-file output replaces a file of its own kind, and another file only with
``--overwrite``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

Owned = Callable[[Path], bool]
"""Whether a path (inside the folder a command writes) is one the command writes there."""

SHOWN = 5  # paths named in a refusal


class NotOwnedError(FileExistsError):
    """Something a command would delete or replace is not its own; the message names it."""


def _entries(folder: Path) -> list[Path]:
    with os.scandir(folder) as entries:
        return sorted(Path(entry.path) for entry in entries)


def foreign(root: Path, ours: Owned, entries: Iterable[Path] | None = None) -> list[Path]:
    """The paths under ``root`` (or under ``entries`` of it) that ``ours`` does not claim, at every depth: a folder
    it claims is looked into, one it does not claim is foreign as a whole; a symbolic link is always foreign."""
    found, todo = [], list(_entries(root) if entries is None else entries)
    while todo:
        path = todo.pop()
        if path.is_symlink() or not ours(path):
            found.append(path)
        elif path.is_dir():
            todo.extend(_entries(path))
    return sorted(found)


def listing(root: Path, paths: list[Path]) -> str:
    """The first paths, relative to ``root``, for a message."""
    names = [str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in paths[:SHOWN]]
    return ", ".join(names) + (f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else "")


def check_removable(root: Path, paths: Iterable[Path], ours: Owned) -> None:
    """Raise ``NotOwnedError`` naming what under ``paths`` (in ``root``) is not ours, at any depth."""
    strangers = foreign(root, ours, [p for p in paths if p.exists() or p.is_symlink()])
    if strangers:
        raise NotOwnedError(
            f"{root} holds files this command did not write ({listing(root, strangers)}); it deletes only its own "
            "files: move them away, or choose another folder"
        )


def remove(root: Path, paths: Iterable[Path], ours: Owned) -> None:
    """Delete ``paths`` (files and folders under ``root``) once every path under them has been checked to be ours;
    otherwise delete nothing and raise ``NotOwnedError`` naming what is not."""
    paths = [p for p in paths if p.exists() or p.is_symlink()]
    check_removable(root, paths, ours)
    for path in paths:
        shutil.rmtree(path) if path.is_dir() else path.unlink()


def check_replace(target: Path, own_kind: Callable[[Path], bool], overwrite: bool, option: str, kind: str) -> None:
    """A command writing the one file ``target`` (its ``option``) replaces a file of its own ``kind``
    (``own_kind``), and another file only when told to (``--overwrite``); a folder or a link never."""
    if target.is_symlink():
        raise NotOwnedError(f"{option} {target} is a symbolic link; give the path of a file to write")
    if not target.exists() or (target.is_file() and (own_kind(target) or overwrite)):
        return
    if target.is_dir():
        raise IsADirectoryError(f"{option} {target} is a folder; give the path of a file to write")
    raise NotOwnedError(
        f"{option} {target} already exists and is not {kind}; choose another path, or pass --overwrite to replace it"
    )
