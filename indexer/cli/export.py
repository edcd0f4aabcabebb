"""``python -m indexer export``: an index's document (and token) vectors and ids as .npy or Parquet."""

from __future__ import annotations

import argparse

from encoder.commands import path_argument
from encoder.errors import ends_with
from encoder.terminal import counted, show

from ..export import FORMATS, export
from .common import add_layers_option, add_query_options, open_index


def run(args: argparse.Namespace) -> dict:
    """Write the vectors; what was written (``export.json``)."""
    ends_with(args.out)
    return export(open_index(args), args.out, args.format, args.tokens, args.layers)


def show_export(result: dict, args: argparse.Namespace) -> None:
    """How many vectors were written, and how."""
    tokens = f" and {counted(result['tokens']['count'], 'token vector')}" if "tokens" in result else ""
    show(
        f"wrote {counted(result['documents']['count'], 'document vector')}{tokens} ({result['dim']} dims) as {result['format']}"
    )


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``export`` sub-command."""
    export = commands.add_parser(
        "export",
        help="write an index's document (and token) vectors and ids as .npy or Parquet",
        description="Write the vectors of an index's documents, and with --tokens of its word occurrences, with their "
        "ids, into a new folder, for another vector store. Layout: docs/indexer.md (export.json in the folder says "
        "what it holds). A document's vector is the mean of its sentences' vectors, L2-normalised.",
    )
    export.add_argument(
        "--out", required=True, type=path_argument, help="folder to write (an earlier export is replaced)"
    )
    export.add_argument("--format", choices=FORMATS, default="npy", help="npy (NumPy arrays) or parquet (default npy)")
    export.add_argument("--tokens", action="store_true", help="also every indexed word occurrence's vector")
    add_layers_option(export)
    add_query_options(export)
    export.set_defaults(run=run, show=show_export)
