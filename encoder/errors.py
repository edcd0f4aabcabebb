"""How every command line of the project (``python -m encoder``, ``indexer``, ``app``) ends on an error.

Exit status: 0 done; 2 with one ``error: ...`` line on stderr that names the file or option and says what to do
(bad input, a missing or damaged file; argparse's own usage errors also exit 2); 130 when interrupted (Ctrl-C,
SIGINT) and 143 when terminated (SIGTERM), from the first moment, with one line, never a traceback from each
process. A command line calls ``interrupts_at_start`` before its heavy imports (a second of
torch) and ``interruptible`` once it runs; ``interrupted`` is its one line. Once its output is in place (``finishing``)
a command is no longer interrupted: it records what it wrote and says so.
"""

from __future__ import annotations

import errno
import importlib.metadata
import multiprocessing
import os
import shlex
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

from .terminal import show

ERROR_EXIT = 2
INTERRUPTED_EXIT = 128 + signal.SIGINT  # 130
TERMINATED_EXIT = 128 + signal.SIGTERM  # 143


class Terminated(KeyboardInterrupt):
    """SIGTERM while a command runs: stops it as Ctrl-C does (what is being written is cleaned up on the way out),
    and the command line exits with 143."""

    status = TERMINATED_EXIT


_finishing = False
"""Whether the running command's output is in place (``finishing``): the signal handlers then do nothing."""

_output: str | None = None
"""The absolute path of the running command's one output (``ends_with``), once it said which."""


def finishing() -> None:
    """The command's output is whole and going in place, or its result is being printed: from here to its end
    Ctrl-C and SIGTERM are ignored. Stopped there, it said "interrupted; nothing was written" of a file it had
    replaced whole, and left it unrecorded (``ownership.record_written``: the same command then refused to replace
    it without ``--overwrite``) and its result unsaid."""
    global _finishing
    _finishing = True


def ends_with(output: str | os.PathLike[str]) -> None:
    """``output`` (a file or folder) is what the running command writes last: once it is whole and going in place
    (``placing``, from ``files.atomic_path``, ``files.atomic_directory`` and ship's swap), the command is
    ``finishing``. A signal just after the output was put in place stopped glove, punkt, export and ship with
    "interrupted" (exit 130) and left their output unrecorded."""
    global _output
    _output = os.path.abspath(output)


def placing(target: str | os.PathLike[str]) -> None:
    """``target`` is whole and goes in place now: if it is the running command's output (``ends_with``), the
    command is ``finishing``. Called before the rename, so that no signal comes between it and the command's end."""
    if _output is not None and os.path.abspath(target) == _output:
        finishing()


def _exit_at_start(number: int, frame: object) -> None:
    if _finishing:
        return
    show("interrupted", file=sys.stderr)
    os._exit(128 + number)


def _interrupt(number: int, frame: object) -> None:
    if not _finishing:
        raise KeyboardInterrupt


def _terminate(number: int, frame: object) -> None:
    if not _finishing:
        raise Terminated


def interrupts_at_start(module: str, script: str) -> None:
    """The first thing a command line's module (``module``: its ``__name__``) does: until the command runs
    (``interruptible``), Ctrl-C and SIGTERM end it at once with one line (nothing is written yet), even where the
    process was started with Ctrl-C ignored (in the background of a script). In a worker process the command
    started (multiprocessing runs the command's module there too), Ctrl-C, which the terminal sends to every
    process, is ignored: the command stops its workers. Only where the module runs as the program (``python -m``,
    its console ``script``, a worker's copy): imported, by a test, it changes nothing."""
    if module not in ("__main__", "__mp_main__") and os.path.basename(sys.argv[0]) != script:
        return
    in_worker = multiprocessing.parent_process() is not None
    signal.signal(signal.SIGINT, signal.SIG_IGN if in_worker else _exit_at_start)
    if not in_worker:
        signal.signal(signal.SIGTERM, _exit_at_start)


@contextmanager
def interrupting() -> Iterator[None]:
    """``interruptible`` for the block, and the handlers there were before it put back after: a command run in-process
    (by a test) leaves the caller's own."""
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    interruptible()
    try:
        yield
    finally:
        for number, handler in before.items():
            if handler is not None:  # None: set outside Python, not to be set again from here
                signal.signal(number, handler)


def interruptible() -> None:
    """From here on Ctrl-C raises ``KeyboardInterrupt`` and SIGTERM ``Terminated``, so that what is being written
    is cleaned up on the way out (``files.atomic_path``) and the command line says ``interrupted``. SIGTERM is
    left as it is where the process does not stop on it by default (a test runner's own handler). A command
    starting here is not ``finishing``, and has not said its output (``ends_with``)."""
    global _finishing, _output
    _finishing, _output = False, None
    signal.signal(signal.SIGINT, _interrupt)
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, _exit_at_start):
        signal.signal(signal.SIGTERM, _terminate)


def interrupted(message: str = "interrupted", status: int = INTERRUPTED_EXIT) -> NoReturn:
    """Print the one line of an interrupted command (``report_interrupted``) and exit with ``status`` (130, or 143
    for SIGTERM)."""
    raise SystemExit(report_interrupted(message, status))


def report_interrupted(message: str = "interrupted", status: int = INTERRUPTED_EXIT) -> int:
    """Print the one line of an interrupted command (``message``), on a line of its own after any progress bar it
    cut short; returns ``status``, the exit status."""
    if "tqdm" in sys.modules:
        for bar in list(getattr(sys.modules["tqdm"].tqdm, "_instances", [])):
            bar.close()
    show(message, file=sys.stderr)
    return status


class MissingExtra(ImportError):
    """A feature whose optional dependencies (an extra of ``pyproject.toml``: ko, ray) are not installed: the hint
    names the packages themselves, as the installed project's metadata lists them, since the project is installed
    from a checkout or a wheel, not by a name on the package index."""

    def __init__(self, feature: str, extra: str):
        packages = extra_packages(extra)
        install = f"pip install {shlex.join(packages)}" if packages else f"pip install '.[{extra}]' in the checkout"
        super().__init__(
            f"{feature} needs the optional dependencies [{extra}]: {install} (in a checkout: make install)"
        )


def extra_packages(extra: str) -> list[str]:
    """The requirements of the project's optional dependencies ``extra`` (``pyproject.toml``), as installed."""
    try:
        requires = importlib.metadata.requires("elmo-search") or []
    except importlib.metadata.PackageNotFoundError:  # run from a folder that was never installed
        return []
    return [r.split(";")[0].strip() for r in requires if f'extra == "{extra}"' in r.replace("'", '"')]


def fail(message: str) -> NoReturn:
    """Print ``error: message`` (its control characters made visible: ``terminal.visible``) and exit with status 2."""
    show(f"error: {message}", file=sys.stderr)
    raise SystemExit(ERROR_EXIT)


def is_out_of_memory(error: BaseException) -> bool:
    """An allocation that failed: Python's ``MemoryError``, or torch's (its CPU allocator's or CUDA's)."""
    text = str(error).lower()
    return isinstance(error, MemoryError) or (
        isinstance(error, RuntimeError) and ("can't allocate memory" in text or "out of memory" in text)
    )


REPORTED = (OSError, ValueError, MemoryError, RuntimeError, MissingExtra)
"""What a command line reports as one ``error:`` line (``describe``); a RuntimeError only when it is a failed
allocation (``is_out_of_memory``): any other is a bug, and its traceback the way to find it. An optional
dependency that is missing says which extra to install."""


def reported(error: BaseException) -> bool:
    """Whether a command line words ``error`` as one line (see ``REPORTED``) rather than letting it through."""
    return isinstance(error, REPORTED) and (not isinstance(error, RuntimeError) or is_out_of_memory(error))


def describe(error: BaseException) -> str:
    """One line for an error a command did not word itself: a file error names the file and what is wrong with it
    (Python's "[Errno 2] No such file or directory: 'x'" says neither plainly), anything else its own message."""
    if is_out_of_memory(error):
        reason = str(error).strip().splitlines()[0] if str(error).strip() else "MemoryError"
        return f"not enough memory ({reason}); choose smaller sizes (e.g. --batch-size) or a smaller input"
    if not isinstance(error, OSError) or error.filename is None:
        return str(error)
    path = error.filename
    if isinstance(error, FileNotFoundError):
        return f"{path} does not exist; check the path"
    if isinstance(error, IsADirectoryError):
        return f"{path} is a folder; give a file"
    if isinstance(error, FileExistsError):
        return f"{path} already exists and is not a folder; choose another path"
    if isinstance(error, NotADirectoryError):
        return f"{path}: part of this path is a file, not a folder; check the path"
    if error.errno == errno.ENOSPC:
        return (
            f"{path}: disk full (no space left on device); free some space and run the command again "
            "(what was already there is left as it was)"
        )
    if isinstance(error, PermissionError):
        return f"{path}: permission denied; choose a file or folder you may read and write"
    return f"{path}: {error.strerror}"
