"""``python -m indexer stats``: what an index holds; its text is also what build and add print."""

from __future__ import annotations

import argparse

from encoder.terminal import counted, show

from .common import add_query_options, open_index


def run(args: argparse.Namespace) -> dict:
    """The index's stats (with ``--docs``, its documents too)."""
    index = open_index(args)
    return {**index.stats(), **({"documents": index.documents()} if args.docs else {})}


def show_stats(result: dict, args: argparse.Namespace) -> None:
    """An index's stats as text, a line per part (also what build and add print)."""
    counts, model = result["counts"], result["model"]
    show(f"index     {result['path']}  (format {result['format_version']}, updated {result['updated_at']})")
    show(f"model     {model['name']}  hash {model['hash']}  dim {model['dim']}  layers {model['n_layers']}")
    show(f"vectors   {result['layers']['description']}, {result['pooling']} pooling, backend {result['backend']}")
    show(
        f"documents {counts['documents']:,}  sentences {counts['sentences']:,}  tokens {counts['tokens']:,}  "
        f"token vectors {counts['token_vectors']:,}  deleted documents {counts['deleted_documents']:,}"
    )
    show(
        f"skipped   {counts['skipped_empty_documents']:,} empty documents; "
        f"{counts['replaced_characters']:,} undecodable characters replaced"
    )
    for kind, entry in result["indexes"].items():
        show(
            f"faiss     {kind:9s} {entry['factory']:16s} {entry['ntotal']:>10,} x {entry['dim']}  {entry['search_params']}"
        )
    tokens = result["token_vectors"]
    if tokens["compressed"]:
        how = "re-ranked with the exact vectors" if tokens["reranked"] else "no exact vectors kept: approximate"
        show(f"tokens    compressed, {tokens['index_bytes_per_vector']:.0f} bytes a vector in FAISS; {how}")
    show(
        f"glove     {result['glove']['source']}, dim {result['glove']['dim']}, {result['glove']['vocab_size']:,} words"
    )
    show(f"disk      {result['disk_bytes'] / 2**20:.1f} MiB in {counted(result['shards'], 'shard')}")
    if "documents" in result:  # stats --docs
        _print_documents(result["documents"])


def _print_documents(documents: list[dict]) -> None:
    """One line per document: its id in brackets, as search shows it (what ``delete --doc-id`` takes: blank space
    at its ends is part of it), then its title."""
    print()
    show(f"{counted(len(documents), 'document')}, [id] and title:")
    width = min(max((len(d["doc_id"]) for d in documents), default=0), 40) + 2
    for doc in documents:
        shown = f"[{doc['doc_id']}]"
        show(f"  {shown:<{width}}  {doc['title']}" if doc["title"] else f"  {shown}")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``stats`` sub-command."""
    stats = commands.add_parser(
        "stats", help="what an index holds", description="Counts, settings and sizes of an index."
    )
    stats.add_argument(
        "--docs", action="store_true", help="also list every document's id (what delete --doc-id takes) and title"
    )
    add_query_options(stats)
    stats.set_defaults(run=run, show=show_stats)
