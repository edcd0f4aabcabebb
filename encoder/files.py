"""Files, the same way everywhere: text that may be compressed, writes that replace a file only when complete,
content hashes, and where the shipped data are."""

from __future__ import annotations

import bz2
import errno
import gzip
import hashlib
import importlib.util
import lzma
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

OPENERS = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}
DATA_PACKAGE = "elmo_search_data"  # data/ as `pip install` installs it (pyproject.toml maps it)


def checkout_root() -> Path | None:
    """The source checkout this code runs from (None when it runs from an installed package)."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "data").is_dir() else None


def shipped_data() -> Path:
    """The shipped data (the default model in models/default, the demo corpus in demo/): data/ of the checkout
    this code runs from, else the copy that `pip install` put in the package ``elmo_search_data``."""
    root = checkout_root()
    if root is not None:
        return root / "data"
    spec = importlib.util.find_spec(DATA_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the shipped data are not installed (no package {DATA_PACKAGE}); reinstall ELMo Search"
        )
    return Path(next(iter(spec.submodule_search_locations)))


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
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder", str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield tmp
        # mkstemp makes 0600, and some writers (safetensors) replace the file: set the usual permissions last
        os.chmod(tmp, 0o666 & ~current_umask())
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
