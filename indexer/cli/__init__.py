"""``python -m indexer``'s command line: one module per sub-command (its options, ``run`` and ``show``), ``common``
for the options several share, and here the parser. Every command runs in the frame both programs share
(``encoder/cli/frame.py``): ``run`` returns a result, printed by ``show`` or with ``--json`` (schemas in
docs/indexer.md); errors are one ``error:`` line (exit status 2), Ctrl-C one line (exit status 130).
"""

from __future__ import annotations

import argparse
import sys

from encoder.cli import frame

from ..answers import answer_or_error

COMMANDS = ("build", "add", "delete", "search", "neighbors", "senses", "stats", "glove", "export", "serve")
"""The sub-commands (modules of this package), in the order ``--help`` lists them."""


def make_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the one ``argv`` names (``frame.make_parser``)."""
    return frame.make_parser(
        "indexer",
        "ELMo Search indexes: build them from a corpus, then find similar sentences, uses of a word in context, and "
        "word senses; serve them over HTTP, or export their vectors.",
        COMMANDS,
        argv,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` asks for; its exit status (argparse's usage errors and ``fail`` raise
    ``SystemExit`` as they always do)."""
    argv = sys.argv[1:] if argv is None else argv
    return frame.main(make_parser(argv), argv, answer_or_error)


def cli() -> None:
    """``python -m indexer`` and the ``elmo-indexer`` command."""
    frame.cli(main)
