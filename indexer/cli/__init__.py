"""``python -m indexer``'s command line: one module per sub-command (its options, ``run`` and ``show``), ``common``
for the options several share, and here the parser and the frame every command runs in.

A command's ``run(args)`` returns its result (a dict), or the exit status of a command that printed its own output as
it went (``search --queries``, ``serve``). The frame prints a result with the command's ``show(result, args)``, or
with ``--json`` as one JSON object (schemas in docs/indexer.md). Errors are one line on stderr (exit status 2);
notices (e.g. a truncated query) go to stderr, or into the JSON ``notices`` list; Ctrl-C is one line (exit 130).
The encoder's program keeps its own frame (``encoder/__main__.py``), where commands print as they go.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

from encoder.commands import parser_for
from encoder.terminal import show, show_json

from . import add, build, delete, export, glove, neighbors, search, senses, serve, stats
from .common import answer_or_error

COMMANDS = (build, add, delete, search, neighbors, senses, stats, glove, export, serve)
"""The sub-commands, in the order ``--help`` lists them."""


def make_parser() -> argparse.ArgumentParser:
    parser = parser_for(
        "indexer",
        "ELMo Search indexes: build them from a corpus, then find similar sentences, uses of a word in context, and "
        "word senses; serve them over HTTP, or export their vectors.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(commands)
    return parser


def _show_warning(message: Warning | str, *_: Any, **__: Any) -> None:
    """A library's warning (an undecodable byte read from a corpus) as the command line says it: one line."""
    show(f"warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` asks for; its exit status (argparse's usage errors and ``fail`` raise
    ``SystemExit`` as they always do)."""
    args = make_parser().parse_args(argv)
    with warnings.catch_warnings():  # puts showwarning back when the command ends (tests call main in-process)
        warnings.showwarning = _show_warning
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        result = answer_or_error(lambda: args.run(args))
    except KeyboardInterrupt:
        print(getattr(args, "interrupted", "interrupted"), file=sys.stderr)
        return 130
    if isinstance(result, int):
        return result
    if "error" in result:
        show(f"error: {result['error']}", file=sys.stderr)
        return 2
    if args.json:
        show_json(result, indent=2)
        return 0
    shown = getattr(args, "shown_notices", ())
    for notice in result.pop("notices"):
        if getattr(notice, "key", None) not in shown:
            show(f"notice: {notice}", file=sys.stderr)
    args.show(result, args)
    return 0


def cli() -> None:
    """``python -m indexer`` and the ``elmo-indexer`` command."""
    try:
        sys.exit(main())
    except BrokenPipeError:  # `... | head` closed the pipe: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
