"""``python -m indexer`` and the ``elmo-indexer`` command: build, add, delete, search, neighbors, senses, stats, glove,
export and serve, thin wrappers over the Python API (the command line: ``indexer/cli/``)."""

# ruff: noqa: E402 (Ctrl-C and SIGTERM are answered with one line from the first moment: before the imports that follow)
from __future__ import annotations

from encoder.errors import interrupts_at_start

interrupts_at_start(__name__, "elmo-indexer")

from .cli import cli, main, make_parser

__all__ = ["cli", "main", "make_parser"]

if __name__ == "__main__":
    cli()
