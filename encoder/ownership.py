"""What a command may delete or replace: only what it wrote, checked at every depth before anything goes.

Every command that writes asks here: an index build (``indexer.folder``), a training run's ``--out``
(``run_folder``), ``ship``'s model folder, and the one-file outputs of ``indexer glove`` and ``encoder embed``.
Each describes what it writes as ``Owned``, a test of a path ("is this a file or folder I write, where I write
it?"); a folder it owns may still hold someone else's file, so everything under it is looked at too, and a
symbolic link is never ours (nor followed). Anything in the way is refused with its path named, before the
first file is removed, whatever ``--overwrite`` says: that flag lets a command replace its own earlier output,
never a file it did not write. A one-file output replaces a file it wrote (``record_written`` keeps the record
beside it; a file that merely looks like one is not), and another file only with ``--overwrite``; it is never
written into a folder another command writes whole (``owning_folder``), nor over the command's own input.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from .commands import path_argument
from .errors import ends_with
from .files import TEXT_FILE_SUFFIXES

Owned = Callable[[Path], bool]
"""Whether a path (inside the folder a command writes) is one the command writes there."""

SHOWN = 5  # paths named in a refusal

OWNER_RECORDS = {
    "manifest.json": "format_version",
    "build-state.json": "kind",
    "run.json": "start",
    "prepared.json": "format",
}
"""The record that each command writing a folder whole keeps in it, with a key its JSON object always holds: an
index's manifest or unfinished build (``indexer.layout``), a training run's ``run.json`` (``run_folder``), prepare's
record (``corpus``). A name alone says nothing (a web app has a manifest.json), nor does a lock (other tools name
theirs ``.lock`` too), which a copy may also have lost."""
OWNED_DEPTH = 3
"""How far above a file ``owning_folder`` looks: an index's shard files and a run's checkpoints lie two folders
below the folder that holds the record."""


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
    given = [p for p in paths if p.exists() or p.is_symlink()]
    strangers = foreign(root, ours, given)
    whole = next((p for p in strangers if p in given), None)
    if whole is not None:  # the output path itself, not something inside it: name it, not its folder
        kind = "folder" if whole.is_dir() and not whole.is_symlink() else "file"
        raise NotOwnedError(
            f"{whole} is a {kind} this command did not write; it deletes only its own files: move it away, or "
            "choose another path"
        )
    if strangers:  # named from the one output path that holds them all, when one does ("out", not its folder ".")
        holder = next((p for p in given if all(p in s.parents for s in strangers)), root)
        raise NotOwnedError(
            f"{holder} holds files this command did not write ({listing(holder, strangers)}); it deletes only its "
            "own files: move them away, or choose another folder"
        )


def remove(root: Path, paths: Iterable[Path], ours: Owned) -> None:
    """Delete ``paths`` (files and folders under ``root``) once every path under them has been checked to be ours;
    otherwise delete nothing and raise ``NotOwnedError`` naming what is not."""
    paths = [p for p in paths if p.exists() or p.is_symlink()]
    check_removable(root, paths, ours)
    for path in paths:
        shutil.rmtree(path) if path.is_dir() else path.unlink()


OUTPUTS = ".elmo-search-outputs.json"
"""The record, in the folder of a one-file output, of the files there that a command wrote: each file's name, its
kind (e.g. "glove") and its size, modification time and inode as written. A file whose record matches is one the
command wrote and nobody replaced since; any other, however much it looks like one (a downloaded GloVe file, an
hdf5 file in the same layout, Punkt parameters of another tool), is not."""


def _identity(path: Path) -> dict:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino}


def _outputs(folder: Path) -> dict:
    try:
        record = json.loads((folder / OUTPUTS).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return record if isinstance(record, dict) else {}


def is_written(path: Path, kind: str) -> bool:
    """Whether ``path`` is a file of ``kind`` that a command wrote (``record_written``) and nobody replaced since."""
    entry = _outputs(path.parent).get(path.name)
    return path.is_file() and isinstance(entry, dict) and entry == {"kind": kind, **_identity(path)}


def record_written(path: Path, kind: str) -> None:
    """Record that a command has just written ``path``, a file of ``kind`` (in its folder's ``OUTPUTS``), so that
    a later run replaces it without ``--overwrite``. Records of files gone since are dropped. A record that cannot
    be written only means that the next run asks for ``--overwrite``."""
    from .files import atomic_path

    folder = path.parent
    outputs = {name: entry for name, entry in _outputs(folder).items() if (folder / name).is_file()}
    outputs[path.name] = {"kind": kind, **_identity(path)}
    try:
        with atomic_path(folder / OUTPUTS) as tmp:
            Path(tmp).write_text(json.dumps(outputs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError:
        pass


def output_file(text: str) -> Path:
    """argparse's ``type`` for a one-file output: its path (``commands.path_argument``), refused when it ends in a
    slash (a folder's path, which ``Path`` would silently take for a file of the folder's name)."""
    if text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"{text!r} ends in a slash, so names a folder; give the path of a file")
    return path_argument(text)


def check_writable_folder(target: Path, option: str) -> None:
    """Refuse, before any work, a file that could not be written where it goes: the nearest folder on its path that
    exists must be a folder this process may write in (the folders below it are made when the file is written)."""
    folder = target.parent
    while not folder.exists() and not folder.is_symlink() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(f"{option} {target}: {folder} is a file, not a folder; check the path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"{option} {target}: the folder {folder} may not be written in; choose another path")


def owning_folder(target: Path) -> Path | None:
    """The folder of ours that ``target`` lies in or below (up to ``OWNED_DEPTH`` folders up, ``..`` resolved),
    where a command keeps its record (``OWNER_RECORDS``): an index, a training run, prepared shards. Its files are
    that command's alone."""
    parent = Path(target).resolve().parent
    for folder in [parent, *parent.parents][:OWNED_DEPTH]:
        if any(_is_record(folder / name, key) for name, key in OWNER_RECORDS.items()):
            return folder
    return None


def _is_record(path: Path, key: str) -> bool:
    """Whether ``path`` is a JSON object holding ``key``: one of ``OWNER_RECORDS`` as its command writes it."""
    if not path.is_file():
        return False
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(record, dict) and key in record


def check_outside_owned(target: Path, option: str, what: str) -> None:
    """Refuse an output ``target`` (a file or an export folder) inside a folder another command writes whole: it
    would replace that command's files, or stop its next run, which deletes only files it wrote."""
    folder = owning_folder(target)
    if folder is not None:
        raise NotOwnedError(
            f"{option} {target} is inside {folder}, a folder a command writes whole (an index, a training run or "
            f"prepared text: its record says so), whose files only that command writes; write {what} elsewhere"
        )


def input_holding(target: str | os.PathLike, inputs: Iterable[str | os.PathLike]) -> str | os.PathLike | None:
    """The first of ``inputs`` (files and folders a command reads) that is ``target`` or a folder holding it, or
    None: an output there would be read as input, by this run or the next."""
    for given in inputs:
        if Path(target).resolve().is_relative_to(Path(given).resolve()):
            return given
    return None


def check_replace(
    target: Path, kind: str, overwrite: bool, option: str, what: str, inputs: Iterable[Path] = ()
) -> None:
    """A command writing the one file ``target`` (its ``option``) replaces a file of ``kind`` it wrote there
    (``is_written``), and another file only when told to (``--overwrite``); a folder or a link never, nor a file in
    a folder another command writes whole (``check_outside_owned``), nor one of the command's ``inputs`` (the files
    and folders it reads). ``what`` names the kind in the message ("a GloVe file"). ``target`` is the command's
    output (``errors.ends_with``): a signal once it is whole no longer stops the command, which records it and says
    so."""
    ends_with(target)
    if target.is_symlink():
        raise NotOwnedError(f"{option} {target} is a symbolic link; give the path of a file to write")
    check_outside_owned(target, option, what)
    given = input_holding(target, inputs)
    if given is not None and target.resolve() == Path(given).resolve():
        raise NotOwnedError(f"{option} {target} is the input {given}; write {what} elsewhere")
    if given is not None and target.name.endswith(TEXT_FILE_SUFFIXES):  # the next run would read it as text
        raise NotOwnedError(f"{option} {target} is a text file inside the input folder {given}; write {what} elsewhere")
    check_writable_folder(target, option)
    if not target.exists() or (target.is_file() and (is_written(target, kind) or overwrite)):
        return
    if target.is_dir():
        raise IsADirectoryError(f"{option} {target} is a folder; give the path of a file to write")
    raise NotOwnedError(
        f"{option} {target} already exists and is not {what} this command wrote (it records those in {OUTPUTS}); "
        "choose another path, or pass --overwrite to replace it"
    )
