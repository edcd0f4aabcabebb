"""``python -m indexer neighbors``: the nearest uses in context of a word in a sentence."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from encoder.numbers import Number
from encoder.terminal import show

from ..index import MAX_QUERY_CHARS, K
from .common import add_layers_option, add_query_options, add_representation_option, open_index


def run(args: argparse.Namespace) -> dict:
    """The nearest uses of the word (and GloVe's nearest words)."""
    found = open_index(args).neighbors(
        args.sentence,
        args.word,
        position=args.position,
        k=args.k,
        same_word=args.same_word,
        layers=args.layers,
        representation=args.representation,
        explain=args.explain,
    )
    return {"sentence": args.sentence[:MAX_QUERY_CHARS], "word": args.word, **asdict(found)}


def _highlight(sentence: str, start: int, end: int) -> str:
    return f"{sentence[:start]}[{sentence[start:end]}]{sentence[end:]}"


def show_neighbors(result: dict, args: argparse.Namespace) -> None:
    """What the model expects at the word (``--explain``), the nearest uses with the word marked, GloVe's words."""
    word = result["query_tokens"][result["position"]]
    for expectation in result["expected"]:
        side = "the words before" if expectation["direction"] == "forward" else "the words after"
        show(f"the model expects here, from {side}: " + ", ".join(f"{w} {p:.1%}" for w, p in expectation["words"]))
    show(f"uses in context nearest to {word!r} (token {result['position']}), by {result['representation']}:")
    for hit in result["hits"]:
        show(
            f"{hit['rank']:3d}. {hit['score']:.3f}  [{hit['doc_id']}] "
            f"{_highlight(hit['sentence'], hit['char_start'], hit['char_end'])}"
        )
    if result["glove_note"]:
        show(f"GloVe: {result['glove_note']}")
    else:
        show("GloVe nearest words: " + ", ".join(f"{w} ({s:.2f})" for w, s in result["glove"]))


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``neighbors`` sub-command."""
    neighbors = commands.add_parser(
        "neighbors",
        help="nearest uses in context of a word in a sentence",
        description="Other uses of words in the collection nearest to WORD as used in "
        "SENTENCE, and GloVe's nearest words (context-free) for contrast.",
    )
    neighbors.add_argument("--sentence", required=True, help="a sentence containing the word")
    neighbors.add_argument("--word", required=True, help="the word (as it appears in the sentence; case-insensitive)")
    neighbors.add_argument(
        "--position", type=Number(int, 0), help="its token position (0-based) if it occurs more than once"
    )
    neighbors.add_argument("--k", type=K, default=10, help="number of uses to show (default: 10)")
    neighbors.add_argument("--same-word", action="store_true", help="only uses of the same word")
    neighbors.add_argument(
        "--explain",
        action="store_true",
        help="also print what the model expects at the word: the forward LM's 10 likeliest words given the words "
        "before it and the backward LM's given the words after it, with their probabilities (a Korean model: its "
        "10 likeliest nouns among its 100 likeliest words)",
    )
    add_layers_option(neighbors)
    add_representation_option(neighbors)
    add_query_options(neighbors)
    neighbors.set_defaults(run=run, show=show_neighbors)
