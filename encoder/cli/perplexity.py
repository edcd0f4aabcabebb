"""``python -m encoder perplexity``: forward and backward perplexity of a model on a text file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

from ..commands import path_argument
from ..errors import fail
from ..files import REPLACEMENT_CHAR, check_plain_text, open_text, reading, warn_replaced
from ..lm_head import perplexity
from ..numbers import Number
from ..terminal import show
from ..threads import add_threads_option


def run(args: argparse.Namespace) -> dict:
    """The model's perplexity over ``--corpus``; undecodable bytes of it (read as U+FFFD) are a warning."""
    replaced = [0]

    def counted_lines(f: Iterable[str]) -> Iterator[str]:
        for line in f:
            replaced[0] += line.count(REPLACEMENT_CHAR)
            yield line

    try:
        check_plain_text(args.corpus)
    except ValueError as error:
        fail(str(error))
    with reading(args.corpus), open_text(args.corpus) as f:
        try:
            result = perplexity(args.model, counted_lines(f), args.max_tokens)
        except (FileNotFoundError, ValueError) as error:
            fail(str(error))
    warn_replaced(args.corpus, replaced[0])
    return result


MOSTLY_UNKNOWN = 0.5  # a share of <UNK> targets above which the perplexity says little of the text


def show_perplexity(result: dict, args: argparse.Namespace) -> None:
    show(
        f"perplexity over {result['tokens']:,} tokens, vocabulary {result['vocab_size']:,}: forward "
        f"{result['forward']:.2f}, backward {result['backward']:.2f}, mean {result['mean']:.2f}"
    )
    if result["unknown"] > MOSTLY_UNKNOWN:  # text in another language: mostly <UNK>, a flattering perplexity
        show(
            f"warning: {result['unknown']:.0%} of the tokens are not in the model's vocabulary and count as <UNK>, "
            "which is easy to predict: this perplexity says little (is the text in the model's language?)",
            file=sys.stderr,
        )


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``perplexity`` sub-command."""
    parser = commands.add_parser(
        "perplexity",
        help="forward and backward perplexity of a model on a text file, and their mean as exp(mean loss)",
        description="Perplexity over the model's full softmax vocabulary (out-of-vocabulary words count as <UNK>). "
        "Each input line (paragraph) starts from a zero LSTM state carried across its sentences.",
    )
    parser.add_argument(
        "--model",
        default="default",
        help="one of our models: 'default', 'ko' or a model folder with its LM head (default %(default)s)",
    )
    parser.add_argument(
        "--corpus", required=True, type=path_argument, help="text file (.txt/.gz/.xz), one paragraph per line"
    )
    add_threads_option(parser)
    parser.add_argument("--max-tokens", type=Number(int, 1), help="stop after the lines holding this many tokens")
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"forward", "backward", "mean", "tokens", "vocab_size", "unknown"} (unknown: the share of '
        "the tokens out of the model's vocabulary, which count as <UNK>)",
    )
    parser.set_defaults(run=run, show=show_perplexity)
