"""``python -m indexer build``: an index from a corpus (re-run to resume a killed build)."""

from __future__ import annotations

import argparse

from encoder.commands import path_argument
from encoder.options import add_options, given

from ..index import build_index
from ..settings import Settings
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
    """Build the index; its stats."""
    index = build_index(
        args.corpus,
        args.out,
        model=model_spec(args) or "default",
        settings=settings_of(args),
        device=args.device,
        progress=not args.quiet,
        overwrite=args.overwrite,
        **ray_options(args),
        **reader_options(args),
    )
    return index.stats()


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``build`` sub-command."""
    build = commands.add_parser(
        "build",
        help="build an index from a corpus (re-run to resume a killed build)",
        description="Build an index: split and tokenize the documents, encode them with ELMo in "
        "shards (a killed build resumes from the completed ones when re-run), train "
        "or load GloVe, and write FAISS indexes and metadata.",
    )
    add_reader_options(build)
    build.add_argument("--out", required=True, type=path_argument, help="the index directory to create")
    add_model_options(build, "default")
    add_options(build, Settings)
    build.add_argument(
        "--overwrite", action="store_true", help="replace an existing index or interrupted build in --out"
    )
    add_ray_options(build)
    build.set_defaults(run=run, show=show_stats, json=False, interrupted=RESUMABLE)


def settings_of(args: argparse.Namespace) -> Settings:
    """The ``Settings`` that ``build``'s options say (a field without an option keeps its default)."""
    return Settings(**given(args, Settings))
