"""One writer per folder: the lock every command that writes a folder holds while it works (an index build, add or
delete; a training run; a prepared corpus).

``locked(lock_file, busy)`` holds an exclusive ``flock`` on ``lock_file`` (created empty in the folder, never
truncated, and never through a symbolic link: a link planted there is refused) for the block; while another
process holds it, the block does not start and ``busy`` (an exception that says who is writing and what to do)
is raised instead. The kernel drops the lock when its process ends, however it ends, so a killed writer never
leaves a folder locked. ``is_locked`` tells a reader that a writer is at work (a search during a rebuild).
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .ownership import NotOwnedError

LOCK = ".lock"
"""The lock file's name in a folder of ours that has no name of its own for it."""


class FolderBusy(OSError):
    """Another process is writing the folder (the message says which folder and what to do)."""


def _open(lock_file: Path, flags: int) -> int:
    try:
        return os.open(lock_file, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotOwnedError(
                f"{lock_file} is a symbolic link, not the lock file of this folder: remove it, or choose another folder"
            ) from None
        raise


_HELD: set[Path] = set()  # the lock files this process holds


@contextmanager
def locked(lock_file: Path, busy: BaseException) -> Iterator[None]:
    """Hold the folder's lock for the block; raise ``busy`` if another process holds it. A lock file this call
    created is removed again when the block fails (a refused command leaves nothing behind); it is removed while
    held, and a process that opened it before then finds it gone once it holds it, and is told ``busy``."""
    try:
        handle, created = _open(lock_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL), True
    except FileExistsError:
        handle, created = _open(lock_file, os.O_WRONLY | os.O_APPEND), False
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy from None
        if not _same_file(handle, lock_file):  # its holder removed it as we opened it: that writer was at work
            raise busy
        _HELD.add(lock_file.absolute())
        try:
            yield
        except BaseException:
            if created:
                lock_file.unlink(missing_ok=True)
            raise
    finally:
        _HELD.discard(lock_file.absolute())
        os.close(handle)


def _same_file(handle: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(handle), os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return False


def is_locked(lock_file: Path) -> bool:
    """Whether another writer holds ``lock_file`` now (False when there is none, or this process holds it)."""
    if lock_file.absolute() in _HELD:
        return False
    try:
        handle = _open(lock_file, os.O_RDONLY)
    except OSError:  # none there (or no folder), a link, or not readable: no writer this process can see
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(handle)
    return False
