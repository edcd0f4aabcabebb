"""Files, the same way everywhere: text that may be compressed, writes that replace a file only when complete,
and content hashes."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

OPENERS = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}


def open_text(path: str | os.PathLike[str], mode: str = "rt", suffix: str | None = None) -> TextIO:
    """Open a .txt, .gz, .xz or .bz2 file as UTF-8 text; ``suffix`` (default: the path's) picks the compression.

    Reading, undecodable bytes become U+FFFD instead of raising, so one bad byte cannot stop a long run
    (``text.iter_lines`` counts them), and a UTF-8 byte order mark is dropped.
    """
    opener = OPENERS.get((suffix or Path(path).suffix).lower(), open)
    if "r" in mode:
        return opener(path, mode, encoding="utf-8-sig", errors="replace")
    return opener(path, mode, encoding="utf-8")


@contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path beside ``target``; it replaces the target only if the block succeeds."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp makes 0600; a written file gets the usual permissions
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def current_umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def sha256_of(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> str:
    """SHA-256 (hex) of a file, or of several files' bytes one after another."""
    digest = hashlib.sha256()
    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()
