"""``python -m indexer add``: documents added to an index (an upsert with ``--replace``)."""

from __future__ import annotations

import argparse

from encoder.commands import path_argument

from ..index import add_documents
from .common import (
    RESUMABLE,
    add_model_options,
    add_ray_options,
    add_reader_options,
    model_spec,
    ray_options,
    reader_options,
)
from .stats import show_stats


def run(args: argparse.Namespace) -> dict:
    """Add the documents; the index's stats."""
    return add_documents(
        args.index,
        args.corpus,
        model=model_spec(args),
        device=args.device,
        progress=not args.quiet,
        replace=args.replace,
        **ray_options(args),
        **reader_options(args),
    ).stats()


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``add`` sub-command."""
    add = commands.add_parser(
        "add",
        help="add documents to an index",
        description="Append documents to an index (resumable like build). The FAISS indexes keep "
        "their type and training; GloVe is not retrained. The id of a deleted document can be used again.",
    )
    add.add_argument("--index", required=True, type=path_argument, help="the index directory")
    add.add_argument(
        "--replace",
        action="store_true",
        help="a document whose id the index holds replaces it, in the same commit (an upsert); by default such a "
        "document is refused",
    )
    add_reader_options(add)
    add_model_options(add, None)
    add_ray_options(add)
    add.set_defaults(run=run, show=show_stats, json=False, interrupted=RESUMABLE)
