"""``python -m encoder``'s command line: one module per sub-command (its options, ``run`` and ``show``), and here the
parser. ``frame`` is the frame every command of both programs runs in (the indexer's too): ``run`` returns a result,
printed by ``show`` or with ``--json``; errors are one ``error:`` line (exit status 2), Ctrl-C one line (exit 130).
"""

from __future__ import annotations

import argparse
import sys

from . import frame

DESCRIPTION = (
    "Embed text with a biLM; download, train, ship and evaluate biLMs; prepare their corpora and retrain the sentence "
    "splitter."
)


COMMANDS = ("embed", "download", "punkt", "evaluate", "train", "ship", "perplexity", "prepare")
"""The sub-commands (modules of this package), in the order ``--help`` lists them."""


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the one ``argv`` names (``frame.make_parser``)."""
    return frame.make_parser("encoder", DESCRIPTION, COMMANDS, argv)


def main(argv: list[str] | None = None) -> None:
    """Run the command ``argv`` asks for; done, it returns, else it raises ``SystemExit`` with the exit status (in a
    test or a script, as argparse's usage errors and ``errors.fail`` end the encoder's commands)."""
    argv = sys.argv[1:] if argv is None else argv
    status = frame.main(build_parser(argv), argv)
    if status:
        raise SystemExit(status)


def cli() -> None:
    """``python -m encoder`` and the ``elmo-encoder`` command; ``embed`` ends at once when done (``exit_now``)."""
    frame.cli(main, exit_now_after=("embed",))
