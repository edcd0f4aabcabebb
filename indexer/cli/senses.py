"""``python -m indexer senses``: a word's uses clustered into senses."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from encoder.terminal import show

from ..index import OCCURRENCES, SENSES_K
from .common import add_layers_option, add_query_options, add_representation_option, open_index


def run(args: argparse.Namespace) -> dict:
    """The word's senses: clusters of its uses."""
    found = open_index(args).senses(
        args.word,
        k=args.k,
        max_occurrences=args.max_occurrences,
        layers=args.layers,
        representation=args.representation,
    )
    return asdict(found)


def _senses_k(text: str) -> int | str:
    """``--k`` of senses: auto, or a number of senses (``SENSES_K``)."""
    if text == "auto":
        return text
    if SENSES_K.text_problem(text) is not None:
        raise argparse.ArgumentTypeError(f"must be auto or {SENSES_K.describe()}, not {text!r}")
    return SENSES_K(text)


def show_senses(result: dict, args: argparse.Namespace) -> None:
    """Each sense: its size, the words that mark it, its typical sentences."""
    silhouette = f", silhouette {result['silhouette']:.2f}" if result["silhouette"] is not None else ""
    show(
        f"{result['word']!r}: {result['n_occurrences']} occurrences, {len(result['clusters'])} sense(s){silhouette}, "
        f"by {result['representation']}"
    )
    for number, cluster in enumerate(result["clusters"]):
        show(f"sense {number}  ({cluster['size']} uses; marked by: {cluster['label'] or 'no distinctive words'})")
        for example in cluster["examples"]:
            show(f"    - {example}")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``senses`` sub-command."""
    senses = commands.add_parser(
        "senses",
        help="cluster a word's uses into senses",
        description="Cluster the uses of WORD in the collection by their ELMo vectors (k-means, "
        "k by silhouette among clusterings whose every sense has 5 uses or more when auto) and give each cluster's typical sentences and "
        "2-D (PCA) coordinates for plotting.",
    )
    senses.add_argument("--word", required=True, help="the word")
    senses.add_argument(
        "--k", type=_senses_k, default="auto", help="number of senses, or auto (default: auto, at most 8)"
    )
    senses.add_argument(
        "--max-occurrences",
        type=OCCURRENCES,
        default=2000,
        help="cluster a random sample of this many uses at most (default: %(default)s)",
    )
    add_layers_option(senses)
    add_representation_option(senses)
    add_query_options(senses)
    senses.set_defaults(run=run, show=show_senses)
