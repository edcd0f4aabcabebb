"""``python -m encoder punkt``: retrain the shipped Punkt sentence-splitting parameters (``encoder.punkt``)."""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

from .. import ownership
from ..commands import path_argument
from ..files import iter_lines, text_files
from ..numbers import Number
from ..punkt import DEFAULT_MAX_CHARS, PUNKT_PATH, save_punkt, train_punkt
from ..terminal import show

PUNKT_KIND = "punkt"  # what ``punkt --out`` records it wrote (``ownership.record_written``)


def run(args: argparse.Namespace) -> dict:
    """Train Punkt on ``args.corpus`` and save the parameters to ``args.out``; what was learned."""
    ownership.check_replace(
        args.out, PUNKT_KIND, args.overwrite, "--out", "a file of Punkt parameters", inputs=args.corpus
    )
    list(text_files(args.corpus))  # a file that is not plain text is refused now, before any work
    replaced: collections.Counter[Path] = collections.Counter()
    started = time.perf_counter()
    params = train_punkt(iter_lines(args.corpus, replaced), args.max_chars)
    save_punkt(params, args.out)
    ownership.record_written(args.out, PUNKT_KIND)
    for path, count in replaced.items():
        show(f"warning: {path}: {count} U+FFFD characters (undecodable bytes?)", file=sys.stderr)
    return {
        "out": str(args.out),
        "bytes": Path(args.out).stat().st_size,
        "seconds": round(time.perf_counter() - started, 1),
        **{name: len(params[name]) for name in ("abbrev_types", "collocations", "sent_starters", "ortho_context")},
        "trained_on_chars": params["trained_on_chars"],
    }


def show_trained(result: dict, args: argparse.Namespace) -> None:
    show(
        f"trained on {result['trained_on_chars']:,} characters in {result['seconds']:.0f} s: "
        f"{result['abbrev_types']} abbreviations, {result['collocations']} collocations, {result['sent_starters']} "
        f"sentence starters, {result['ortho_context']} words with capitalisation data; wrote {result['out']} "
        f"({result['bytes'] / 1024:.0f} KiB)"
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``punkt`` sub-command."""
    parser = subparsers.add_parser(
        "punkt",
        help="retrain the Punkt sentence-splitter parameters",
        description="Learn Punkt sentence-splitting parameters (abbreviations, collocations, "
        "sentence starters, capitalisation) from text with one paragraph per line, and write "
        f"them as JSON. The shipped parameters are {PUNKT_PATH.name} in the encoder package.",
    )
    parser.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        type=path_argument,
        metavar="FILE",
        help="text files (.txt, .gz, .xz, .bz2) or folders, read in the order given; "
        "folders are searched recursively for *.txt[.gz|.xz|.bz2]",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=ownership.output_file,
        metavar="PATH",
        help="where to write the JSON parameters (a file this command wrote there before is replaced; another file only "
        "with --overwrite)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace --out even when this command did not write it"
    )
    parser.add_argument(
        "--max-chars",
        type=Number(int, 1),
        default=DEFAULT_MAX_CHARS,
        metavar="N",
        help="train on about the first N characters of the corpus (default: %(default)s)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"out", "bytes", "seconds", "abbrev_types", "collocations", "sent_starters", "ortho_context", '
        '"trained_on_chars"} (the counts of what was learned)',
    )
    parser.set_defaults(run=run, show=show_trained)
