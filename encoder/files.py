"""Files, the same way everywhere: text that may be compressed, writes that replace a file (or a folder) only when
complete and that name the file when they fail (a full disk says so), content hashes, and where the shipped data
and the cache are."""

from __future__ import annotations

import bz2
import collections
import ctypes
import errno
import gzip
import hashlib
import importlib.util
import io
import lzma
import os
import shutil
import tempfile
import warnings
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from safetensors import SafetensorError

from .errors import placing
from .terminal import counted

OPENERS = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}
TEXT_FILE_SUFFIXES = (".txt", ".txt.gz", ".txt.xz", ".txt.bz2")
"""The files a folder given as text holds that are read (``text_files``)."""
NOT_PLAIN_TEXT = {".jsonl": "JSON Lines", ".json": "JSON", ".csv": "CSV", ".tsv": "TSV", ".parquet": "Parquet"}
"""Formats a file named as plain text is refused in, by its suffix (under .gz/.xz/.bz2): their syntax or bytes would
be read as words. `indexer build` reads JSON Lines, CSV and Parquet documents itself."""
REPLACEMENT_CHAR = "\ufffd"
"""What an undecodable byte becomes when files are read (``errors="replace"``)."""
DATA_PACKAGE = "elmo_search_data"  # data/ as `pip install` installs it (pyproject.toml maps it)


def warn_replaced(path: str | os.PathLike[str], count: int) -> None:
    """The one warning of every reader whose reading of ``path`` replaced ``count`` undecodable byte sequences by
    U+FFFD (nothing when none): the text read is not the text in the file."""
    if count:
        was = "was" if count == 1 else "were"
        message = f"{path}: {counted(count, 'undecodable byte sequence')} {was} replaced by U+FFFD"
        warnings.warn(message, stacklevel=3)


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


CACHE_ENV = "ELMO_SEARCH_CACHE"


def cache_root() -> Path:
    """The one folder ELMo Search keeps downloads (published models) and an installed copy's demo indexes in:
    ``$ELMO_SEARCH_CACHE``, else the platform's user cache (``$XDG_CACHE_HOME/elmo-search`` or
    ``~/.cache/elmo-search`` on Linux, ``~/Library/Caches/elmo-search`` on macOS)."""
    import platformdirs

    value = os.environ.get(CACHE_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else Path(platformdirs.user_cache_dir("elmo-search", False))


DECODE_ERRORS = (EOFError, lzma.LZMAError, zlib.error, OSError)
"""What reading a damaged or mis-named compressed file raises: a cut-off .gz or .xz (EOFError), not .xz (LZMAError),
a damaged .gz stream (zlib.error), not .gz or .bz2 (OSError, without the file's name)."""


@contextmanager
def reading(path: str | os.PathLike[str]) -> Iterator[None]:
    """A file the block cannot read (damaged, or not the compression its name says) is a ``ValueError`` naming it;
    an error that names its file already (a missing one) goes on as it is."""
    try:
        yield
    except DECODE_ERRORS as error:
        if isinstance(error, OSError) and error.filename is not None:
            raise
        reason = str(error).strip() or type(error).__name__
        raise ValueError(
            f"{path} cannot be read ({reason}): it is damaged, or not what its name ({Path(path).suffix}) says"
        ) from None


def open_text(path: str | os.PathLike[str], mode: str = "rt", suffix: str | None = None) -> TextIO:
    """Open a .txt, .gz, .xz or .bz2 file as UTF-8 text; ``suffix`` (default: the path's) picks the compression.

    Reading, undecodable bytes become U+FFFD instead of raising, so one bad byte cannot stop a long run
    (``iter_lines`` counts them), and a UTF-8 byte order mark is dropped.
    """
    opener = OPENERS.get((suffix or Path(path).suffix).lower(), open)
    if "r" in mode:
        return opener(path, mode, encoding="utf-8-sig", errors="replace")
    if opener is gzip.open:  # gzip.open would write the temporary file's name into the header: `gunzip -N` takes it
        return io.TextIOWrapper(_NamelessGzip(path), encoding="utf-8")
    return opener(path, mode, encoding="utf-8")


class _NamelessGzip(gzip.GzipFile):
    """A gzip file written with no file name and no time in its header: the same text, the same bytes."""

    def __init__(self, path: str | os.PathLike[str]):
        self._raw = open(path, "wb")
        super().__init__(filename="", mode="wb", fileobj=self._raw, mtime=0)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


DISK_FULL = "disk full (no space left on device)"
NATIVE_WRITE_ERRORS = (OSError, RuntimeError, SafetensorError)
"""What writing a file raises: the file system's OSError, and the native libraries' own errors (FAISS's and
torch's RuntimeError, safetensors' error; h5py, numpy and pyarrow raise OSError, not always with the file's name)."""
TMP_DIR_PREFIX = ".tmp-"


def iter_lines(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    replaced: collections.Counter[Path] | None = None,
) -> Iterator[str]:
    """Stream the lines of files and folders, without their line endings.

    Folders are searched recursively for ``*.txt``, ``*.txt.gz``, ``*.txt.xz`` and ``*.txt.bz2``
    files, in sorted order, so that every run sees the same text in the same order. Blank lines
    are kept: in our corpora they separate documents.

    If ``replaced`` is given, ``replaced[path]`` grows by the number of U+FFFD characters in each
    line read from ``path`` -- bytes that were not valid UTF-8 (and any U+FFFD already in the
    file) -- so the caller can warn, even if it stops reading early.
    """
    for path in text_files(paths):
        with reading(path), open_text(path) as lines:
            for line in lines:
                if replaced is not None and REPLACEMENT_CHAR in line:
                    replaced[path] += line.count(REPLACEMENT_CHAR)
                yield line.rstrip("\n")


def text_files(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
) -> Iterator[Path]:
    """Files given by name, in the order given, and the text files inside folders, sorted."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    for path in map(Path, paths):
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(TEXT_FILE_SUFFIXES))
        elif path.is_file():
            check_plain_text(path)
            yield path
        elif path.exists():
            raise ValueError(f"{path} is not a file or folder (a device or a pipe?); give text files or folders")
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")


def check_plain_text(path: Path) -> None:
    """Refuse a file whose name says it is not plain text (``NOT_PLAIN_TEXT``); any other name is read as text."""
    suffixes = [suffix.lower() for suffix in path.suffixes]
    if suffixes and suffixes[-1] in OPENERS:
        suffixes.pop()
    kind = NOT_PLAIN_TEXT.get(suffixes[-1]) if suffixes else None
    if kind is not None:
        raise ValueError(
            f"{path} is a {kind} file by its name, not plain text (one paragraph per line): its syntax would be read "
            "as words; give its text as a .txt file (`indexer build` reads JSON Lines, CSV and Parquet documents)"
        )


def _is_disk_full(error: BaseException, folder: Path) -> bool:
    """Whether a failed write ran out of space: the error says so (errno ENOSPC or a quota, or a native library's
    message), or the file system has no space left for this user (numpy, FAISS and torch report a short write)."""
    if getattr(error, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(error):
        return True
    try:
        space = os.statvfs(folder)
    except OSError:
        return False
    return space.f_blocks > 0 and space.f_bavail == 0  # /proc and /sys have no blocks at all: they are not full


def _names_a_real_file(error: OSError) -> bool:
    """Whether an error names a file by the name it will keep (not a temporary, nor a file inside one)."""
    return error.filename is not None and not any(temporary_target(part) for part in Path(error.filename).parts)


@contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Errors raised while the block writes ``path`` name it and say what went wrong: a full disk as an ``OSError``
    (ENOSPC) saying "disk full", another native error as an ``OSError`` of the file (a library's own wording kept)."""
    path = Path(path)
    try:
        yield
    except NATIVE_WRITE_ERRORS as error:
        if isinstance(error, OSError) and error.errno is None and type(error) is not OSError:
            raise  # one of our own (a refusal), not the system's nor a library's
        full = _is_disk_full(error, path.parent if path.parent.is_dir() else Path("."))
        if isinstance(error, OSError) and _names_a_real_file(error) and (error.strerror == DISK_FULL or not full):
            raise  # it names its file already (one written by a block inside this one)
        if full:
            raise OSError(errno.ENOSPC, DISK_FULL, str(path)) from error
        if isinstance(error, OSError) and error.errno is not None:
            raise OSError(error.errno, error.strerror or str(error), str(path)) from error
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise OSError(errno.EIO, f"cannot be written ({reason})", str(path)) from error


@contextmanager
def made_folder(folder: Path) -> Iterator[None]:
    """``folder`` made (with its parents) for the block, and removed again, with the parents it made, when the block
    fails and leaves them empty: a refused, failed or interrupted command leaves no folder behind."""
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        for path in made:  # the deepest first
            try:
                path.rmdir()
            except OSError:  # not empty (or not ours to remove any more): the rest stays too
                break
        raise


@contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path beside ``target``; it replaces the target only if the block succeeds. A failure
    leaves the target as it was and names it (``writing``), and no folder it made for it (``made_folder``)."""
    target = Path(target)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder", str(target))
    with made_folder(target.parent):  # a failed or interrupted write leaves no folder it made
        with writing(target):
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            os.close(fd)
        try:
            with writing(target):  # before the temporary goes: a full disk is seen full
                yield tmp
                # mkstemp makes 0600, and some writers (safetensors) replace the file: set the usual permissions last
                os.chmod(tmp, 0o666 & ~current_umask())
                placing(target)
                os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


@contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a temporary folder beside ``target``; it becomes ``target`` only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with writing(target):
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f"{TMP_DIR_PREFIX}{target.name}-"))
        tmp.chmod(0o777 & ~current_umask())  # mkdtemp makes 0700
    try:
        with writing(target):
            yield tmp
            placing(target)
            os.rename(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one step, so that no moment sees either missing (Linux's ``renameat2`` with
    ``RENAME_EXCHANGE``); False where the system cannot (another OS, an old kernel or C library, a file system
    without it), and then nothing happened."""
    function = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if function is None:
        return False
    at_cwd, rename_exchange = -100, 2
    if function(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second), rename_exchange) == 0:
        return True
    number = ctypes.get_errno()
    if number in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(number, os.strerror(number), str(second))


def temporary_target(name: str) -> str | None:
    """The file or folder a temporary named ``name`` was being written for (by ``atomic_path``:
    ".TARGET.XXXXXXXX.tmp", or ``atomic_directory``: ".tmp-TARGET-XXXXXXXX"); None if it is not one."""
    if name.startswith(TMP_DIR_PREFIX) and "-" in name[len(TMP_DIR_PREFIX) :]:
        return name[len(TMP_DIR_PREFIX) :].rsplit("-", 1)[0]
    if name.startswith(".") and name.endswith(".tmp") and name.count(".") >= 3:
        return name[1:-4].rsplit(".", 1)[0]
    return None


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


class RepeatedKeyError(ValueError):
    """A JSON object that gives one key twice."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once (``json.loads``'s ``object_pairs_hook``: alone it keeps a
    repeated key's last value and says nothing); RepeatedKeyError names the key."""
    data = dict(pairs)
    if len(data) < len(pairs):
        repeated = next(key for key in data if sum(k == key for k, _ in pairs) > 1)
        times = sum(k == repeated for k, _ in pairs)
        raise RepeatedKeyError(f"the key {repeated!r} is given {times} times; give it once")
    return data
