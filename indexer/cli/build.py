"""``python -m indexer build``: an index from a corpus (re-run to resume a killed build)."""

from __future__ import annotations

import argparse
from dataclasses import Field, fields
from pathlib import Path

from ..build import build_index
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
    build.add_argument("--out", required=True, type=Path, help="the index directory to create")
    add_model_options(build, "default")
    for setting in _setting_options().values():
        _add_setting_option(build, setting)
    build.add_argument(
        "--overwrite", action="store_true", help="replace an existing index or interrupted build in --out"
    )
    add_ray_options(build)
    build.set_defaults(run=run, show=show_stats, json=False, interrupted=RESUMABLE)


def settings_of(args: argparse.Namespace) -> Settings:
    """The ``Settings`` that ``build``'s options say (a field without an option keeps its default)."""
    return Settings(**{name: getattr(args, name) for name in _setting_options()})


def _setting_options() -> dict[str, Field]:
    """The ``Settings`` fields that ``build`` has an option for (their metadata gives its help)."""
    return {setting.name: setting for setting in fields(Settings) if setting.metadata["help"] is not None}


def _add_setting_option(build: argparse.ArgumentParser, setting: Field) -> None:
    """A ``Settings`` field's option as its metadata declares it (``indexer.settings.option``): a switch that turns
    an on-by-default field off, else ``--the-field-name`` with the field's default and rule."""
    spec = setting.metadata
    if spec["switch"] is not None:
        build.add_argument(spec["switch"], dest=setting.name, action="store_false", help=spec["help"])
        return
    build.add_argument(
        "--" + setting.name.replace("_", "-"),
        dest=setting.name,
        type=spec["rule"],
        default=setting.default,
        help=spec["help"],
        **spec["argparse"],
    )
