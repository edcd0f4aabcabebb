"""``python -m encoder prepare``: tokenize a training corpus once (``encoder.prepare``)."""

from __future__ import annotations

import argparse

from .. import prepare
from ..commands import path_argument
from ..corpus import WORKERS
from ..terminal import counted, show
from ..text import LANGUAGES


def run(args: argparse.Namespace) -> dict:
    """Prepare the corpus (a line on stderr per text file as it goes); what was written."""
    if args.model is not None and args.language is not None:
        raise ValueError("give --model (its rules) or --language, not both")
    if args.model is not None:
        from ..model_files import resolve_model

        language = resolve_model(args.model).text().name
    else:
        language = args.language or "en"
    record = prepare.prepare(
        args.corpus, args.out, language, args.workers, args.part_tokens, args.overwrite, args.progress
    )
    return {
        "out": str(args.out),
        "files": len(record["files"]),
        "tokens": sum(f["tokens"] for f in record["files"]),
        "bytes": sum(f["bytes"] for f in record["files"]),
        "rules_identity": record["rules_identity"],
        "seconds": record["seconds"],
    }


def show_prepared(result: dict, args: argparse.Namespace) -> None:
    show(
        f"prepared {result['tokens']:,} ids in {counted(result['files'], 'file')}, {result['bytes'] / 1e6:.1f} MB, into "
        f"{result['out']} ({result['rules_identity']}; {result['seconds']:.0f} s)"
    )


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``prepare`` sub-command."""
    parser = commands.add_parser(
        "prepare",
        help="tokenize a training corpus once into prepared files that `train --corpus` reads without a tokenizer",
        description="Tokenize a training corpus once, into prepared files that `train --corpus` reads: a GPU "
        "machine then trains without the tokenizer (Kiwi and its model, for Korean) and without spending its minutes "
        "tokenizing. Each text file becomes one or more *.tokens.xz files (each under 16 MB, cut between "
        "paragraphs); prepared.json beside them records what was asked and written, so that prepare run again after "
        "an interruption finishes what it started. Only files prepare wrote are ever replaced. train refuses prepared "
        "files made by other text rules than the model's, and those of an unfinished prepare.",
    )
    parser.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        type=path_argument,
        help="text files (.txt/.gz/.xz/.bz2, one paragraph per line) or folders",
    )
    parser.add_argument(
        "--out", required=True, type=path_argument, help="folder to write the prepared files and prepared.json into"
    )
    parser.add_argument("--model", help="tokenize by this model's rules ('default', 'ko' or a model folder)")
    parser.add_argument(
        "--language", choices=list(LANGUAGES), help="tokenize by these rules instead of a model's (default: en)"
    )
    parser.add_argument(
        "--workers",
        type=WORKERS,
        help="tokenizing processes (default: all cores but one; none for corpora under 200 kB)",
    )
    parser.add_argument(
        "--part-tokens",
        type=prepare.PART_TOKENS_RULE,
        default=prepare.PART_TOKENS,
        help="ids per prepared file, cut between paragraphs (default %(default)s, about 9-10 MB; no file exceeds 16 MB)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace the prepared files an earlier prepare wrote in --out"
    )
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"out", "files", "tokens", "bytes", "rules_identity", "seconds"} (what was written)',
    )
    parser.set_defaults(
        run=run, show=show_prepared, interrupted="interrupted; run the same command again to finish the prepare"
    )
