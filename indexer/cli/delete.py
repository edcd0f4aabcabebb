"""``python -m indexer delete``: documents removed from all results."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from encoder.commands import path_argument
from encoder.terminal import counted, show

from ..build import delete_documents, distinct_ids


def run(args: argparse.Namespace) -> dict:
    """Delete the documents; their ids and what the index then holds."""
    return {"deleted": distinct_ids(args.doc_id), "counts": asdict(delete_documents(args.index, args.doc_id))}


def show_deleted(result: dict, args: argparse.Namespace) -> None:
    """How many documents went and how many remain."""
    show(f"deleted {counted(len(result['deleted']), 'document')}; {result['counts']['documents']:,} remain")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``delete`` sub-command."""
    delete = commands.add_parser(
        "delete",
        help="remove documents from an index",
        description="Remove documents from all results. Their vectors stay on disk until the index is rebuilt. "
        "`stats --docs` lists the documents' ids.",
    )
    delete.add_argument("--index", required=True, type=path_argument, help="the index directory")
    delete.add_argument("--doc-id", nargs="+", required=True, help="ids of the documents to remove")
    delete.set_defaults(run=run, show=show_deleted, json=False)
