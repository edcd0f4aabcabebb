"""The frame every command of the project's two command lines runs in (``python -m encoder``, ``python -m indexer``):
parse, run, print, end.

A program is a parser (``make_parser``) of sub-commands, one module each, whose ``register`` adds its options and
sets its parser's defaults: ``run`` (``run(args)`` returns the command's result, a dict, or the exit status of a
command that printed its own output as it went: ``train``, ``search --queries``), ``show`` (``show(result, args)``
prints a result as text) and, where there is more to say than "interrupted", ``interrupted``. ``main`` runs the
command: a result is printed by ``show``, or with ``--json`` as one JSON object (``terminal.show_json``); an error the
command did not word itself (``errors.REPORTED``, and the program's own error classes) is one ``error:`` line on
stderr and exit status 2, as ``errors.fail`` ends; a result's ``notices`` (e.g. a truncated query) go to stderr,
or stay in the JSON; a library's warning is one ``warning:`` line; Ctrl-C is one line and exit status 130.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import sys
import warnings
from collections.abc import Callable, Collection, Sequence
from typing import Any

from ..commands import parser_for
from ..errors import (
    ERROR_EXIT,
    INTERRUPTED_EXIT,
    REPORTED,
    describe,
    finishing,
    interrupting,
    report_interrupted,
    reported,
)
from ..terminal import show, show_json
from ..threads import apply_threads

Answer = Callable[[Callable[[], Any]], Any]
"""How a program answers a command: ``answer_or_error`` or its own, given the command's ``run`` to call."""


def make_parser(
    package: str, description: str, commands: Sequence[str], argv: Sequence[str] | None = None
) -> argparse.ArgumentParser:
    """The parser of ``package``'s program: its usage line and ``--version`` (``commands.parser_for``) and the
    sub-commands ``commands``, each a module of ``package.cli`` with ``register``, named as its command, in the order
    ``--help`` lists them. Given the ``argv`` it is for, and that names a command first, only that command's module is
    imported: the other commands' imports took 0.14 s of every ``encoder embed``'s start (timed in-process)."""
    if argv and argv[0] in commands:
        commands = [argv[0]]
    parser = parser_for(package, description)
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in commands:
        importlib.import_module(f"{package}.cli.{name}").register(subcommands)
    for subparser in subcommands.choices.values():  # an unknown option is its command's (``parse``)
        subparser.set_defaults(command_parser=subparser)
    return parser


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``argv`` parsed by ``parser`` (``make_parser``): an option its command does not take is a usage error of
    the command, with the command's usage (argparse gave the program's: "usage: python -m indexer [-h] [--version]
    COMMAND ...", no option of the command shown). An option before the command is said to be misplaced (argparse
    took it for the command's, or its value for the command)."""
    given = sys.argv[1:] if argv is None else argv
    first = given[0] if given else ""
    programs_own = first in ("-h", "--") or (
        len(first) > 2 and any(o.startswith(first) for o in ("--help", "--version"))
    )
    if first.startswith("-") and not programs_own:  # argparse takes --vers for --version, and so does this
        parser.error(f"{first} comes before the command: options follow it ({parser.prog} COMMAND {first} ...)")
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def answer_or_error(question: Callable[[], Any], errors: tuple[type, ...] = ()) -> Any:
    """A question's result (a dict, or the exit status of a command that printed its own output), or ``{"error":
    ...}`` where it fails on bad input, a missing or damaged file or too little memory (``errors.reported``) or with
    one of ``errors``."""
    try:
        return question()
    except (*errors, *REPORTED) as error:
        if not isinstance(error, errors) and not reported(error):
            raise
        return {"error": describe(error)}


def main(parser: argparse.ArgumentParser, argv: list[str] | None = None, answer: Answer = answer_or_error) -> int:
    """Run the command ``argv`` asks for and print its result; its exit status (argparse's usage errors and
    ``errors.fail`` raise ``SystemExit`` as they always do). ``answer``: how the program answers a command (its
    own error classes, its schema)."""
    args = parse(parser, argv)
    # both put back when the command ends (tests call main in-process): the signal handlers, showwarning
    with interrupting(), warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            result = answer(lambda: _run(args))
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (``errors.Terminated``)
            return report_interrupted(
                getattr(args, "interrupted", "interrupted"), getattr(stop, "status", INTERRUPTED_EXIT)
            )
        finishing()  # done: its result is said, not cut off by a late signal
    if isinstance(result, int):
        return result
    if "error" in result:
        show(f"error: {result['error']}", file=sys.stderr)
        return ERROR_EXIT
    if getattr(args, "json", False):
        show_json(result, indent=2)
        return 0
    shown = getattr(args, "shown_notices", ())
    for notice in result.pop("notices", []):
        if getattr(notice, "key", None) not in shown:
            show(f"notice: {notice}", file=sys.stderr)
    args.show(result, args)
    return 0


def _run(args: argparse.Namespace) -> Any:
    """The command's ``run``, after the threads of a command that runs the model (one with ``--threads``:
    ``threads.add_threads_option``) are set, by ``--threads`` or the default rule."""
    if hasattr(args, "threads"):
        apply_threads(args.threads)
    return args.run(args)


def _show_warning(message: Warning | str, *_: Any, **__: Any) -> None:
    """A library's warning (an undecodable byte read from a corpus) as the command line says it: one line."""
    show(f"warning: {message}", file=sys.stderr)


def cli(main: Callable[[], int | None], exit_now_after: Collection[str] = ()) -> None:
    """Run a program's ``main`` as its console script does and exit with its status; a closed pipe (``... | head``)
    is not an error of ours. After a finished command of ``exit_now_after`` the process ends at once (``exit_now``).
    Once the command is over, Ctrl-C and SIGTERM are ignored: in the interpreter's teardown (a second or so of
    freeing torch) Python has put their default handlers back, and the signal killed the process, its status (a
    finished command's 0, an error line's 2) lost. What the imports made (torch's 170,000 objects) lives as long as
    the process: it is frozen out of Python's full garbage collections, one of which walked it for 0.07 s of
    ``embed``'s 6.5 s (docs/benchmarks.md)."""
    gc.freeze()
    try:
        status = main()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 0
    except SystemExit as done:  # a usage error, ``errors.fail``: its line is printed
        status = done.code
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)
    if not status and sys.argv[1:2] and sys.argv[1] in exit_now_after:
        exit_now()
    sys.exit(status)


def exit_now() -> None:
    """End the process at once, skipping the interpreter's teardown: freeing the modules of torch, scipy and the
    rest took 0.8 s on an idle 2-core machine, more than embedding 1,024 sentences spends writing its output.
    Only for a finished command whose files are closed and that started nothing (no child process, thread or
    temporary file) that an exit handler would clean up."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # as the interpreter's own exit does when it cannot flush
        os._exit(120)
    os._exit(0)
