"""``python -m indexer glove``: GloVe vectors trained on a plain-text corpus (a baseline for ``build --glove``)."""

from __future__ import annotations

import argparse

from encoder import ownership
from encoder.commands import path_argument
from encoder.errors import fail
from encoder.files import text_files
from encoder.options import add_options, given
from encoder.terminal import counted, show
from encoder.text import LANGUAGES
from encoder.threads import add_threads_option

from ..glove import NUMBERS as GLOVE_NUMBERS
from ..glove import GloveTraining, save_glove, train_glove_on_text

GLOVE_KIND = "glove"  # what ``glove --out`` records it wrote (``ownership.record_written``)


def run(args: argparse.Namespace) -> dict:
    """Train GloVe and write it; where, and its size."""
    if args.out.is_dir():
        fail(f"--out {args.out} is a folder; give the GloVe file to write, e.g. {args.out / 'glove.txt'}")
    ownership.check_replace(args.out, GLOVE_KIND, args.overwrite, "--out", "a GloVe file", inputs=args.corpus)
    for path in args.corpus:
        if not path.exists():
            fail(f"--corpus {path} does not exist")
    list(text_files(args.corpus))  # a file that is not plain text is refused now, before any work
    training = GloveTraining(**given(args, GloveTraining))
    glove = train_glove_on_text(args.corpus, args.max_tokens, training, language=args.language)
    save_glove(args.out, glove)
    ownership.record_written(args.out, GLOVE_KIND)
    return {"out": str(args.out), "words": len(glove.index), "dim": glove.dim}


def show_glove(result: dict, args: argparse.Namespace) -> None:
    """Where the vectors went, and how many."""
    show(f"wrote {counted(result['words'], 'word')} x {result['dim']} dims to {result['out']}")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``glove`` sub-command."""
    glove = commands.add_parser(
        "glove",
        help="train GloVe vectors on a plain-text corpus (a baseline to pass to build --glove)",
        description="Train GloVe (Pennington et al. 2014) on the first --max-tokens tokens of plain-text files "
        "(.txt/.gz/.xz, folders), lower-cased, and write the standard GloVe text format.",
    )
    glove.add_argument("--corpus", nargs="+", required=True, type=path_argument, help="text files or folders")
    glove.add_argument(
        "--out", required=True, type=ownership.output_file, help="GloVe text file to write (.xz compresses it)"
    )
    glove.add_argument(
        "--max-tokens", type=GLOVE_NUMBERS["max_tokens"], default=5_000_000, help="tokens to read (default 5,000,000)"
    )
    add_options(glove, GloveTraining)
    add_threads_option(glove)
    glove.add_argument(
        "--language",
        choices=list(LANGUAGES),
        default="en",
        help="how the text is split into sentences and words: en (Punkt + NLTK), ko (Kiwi morphemes) or ko-eojeol "
        "(eojeol); "
        "the same rules as a model of that language (default en)",
    )
    glove.add_argument(
        "--overwrite",
        action="store_true",
        help="replace --out even when this command did not write it (a file it wrote, as recorded in "
        f"{ownership.OUTPUTS} beside it, is replaced anyway); never a file of an index",
    )
    glove.add_argument("--json", action="store_true", help="print one JSON object: out, words, dim")
    glove.set_defaults(run=run, show=show_glove)
