"""``python -m indexer`` and the ``elmo-indexer`` command: build, add, delete, search, neighbors, senses, stats, glove,
export and serve, thin wrappers over the Python API (the command line: ``indexer/cli/``)."""

from __future__ import annotations

from .cli import cli, main, make_parser

__all__ = ["cli", "main", "make_parser"]

if __name__ == "__main__":
    cli()
