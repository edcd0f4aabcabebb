"""``python -m encoder`` and the ``elmo-encoder`` command: embed, download, punkt, evaluate, train, ship, perplexity
and prepare (the command line: ``encoder/cli/``)."""

# ruff: noqa: E402 (Ctrl-C is answered with one line from the first moment: before the imports that follow)
from __future__ import annotations

from .errors import interrupts_at_start

interrupts_at_start(__name__, "elmo-encoder")

from .cli import build_parser, cli, main
from .cli.frame import exit_now

__all__ = ["build_parser", "cli", "exit_now", "main"]

if __name__ == "__main__":
    cli()
