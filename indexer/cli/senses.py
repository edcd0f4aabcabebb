"""``python -m indexer senses``: a word's uses clustered into senses."""

from __future__ import annotations

import argparse

from encoder.options import add_options, given
from encoder.terminal import counted, show

from ..answers import senses_answer
from ..options import SensesOptions
from .common import add_query_options, open_index


def run(args: argparse.Namespace) -> dict:
    """The word's senses: clusters of its uses."""
    return senses_answer(open_index(args), args.word, SensesOptions(**given(args, SensesOptions)))


def show_senses(result: dict, args: argparse.Namespace) -> None:
    """Each sense: its size, the words that mark it, its typical sentences."""
    silhouette = f", silhouette {result['silhouette']:.2f}" if result["silhouette"] is not None else ""
    show(
        f"{result['word']!r}: {counted(result['n_occurrences'], 'occurrence')}, "
        f"{counted(len(result['clusters']), 'sense')}{silhouette}, "
        f"by {result['representation']}"
    )
    for number, cluster in enumerate(result["clusters"]):
        show(
            f"sense {number}  ({counted(cluster['size'], 'use')}; marked by: {cluster['label'] or 'no distinctive words'})"
        )
        for example in cluster["examples"]:
            show(f"    - {example}")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``senses`` sub-command."""
    senses = commands.add_parser(
        "senses",
        help="cluster a word's uses into senses",
        description="Cluster the uses of WORD in the collection by their ELMo vectors (k-means, "
        "k when auto: the most stable under subsampling among clusterings whose every sense has 5 uses or more) and "
        "give each cluster's typical sentences and "
        "2-D (PCA) coordinates for plotting.",
    )
    senses.add_argument("--word", required=True, help="the word")
    add_options(senses, SensesOptions)
    add_query_options(senses)
    senses.set_defaults(run=run, show=show_senses)
