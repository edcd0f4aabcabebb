"""What several of ``python -m indexer``'s sub-commands share: their model, query, reader, Ray and thread options,
and opening the index they name."""

from __future__ import annotations

import argparse
from typing import Any

from encoder import model_files
from encoder.commands import path_argument
from encoder.device import add_device_option
from encoder.errors import fail
from encoder.numbers import Number
from encoder.threads import add_threads_option

from ..index import Index
from ..options import LAYERS_HELP

RESUMABLE = "interrupted; re-run the same command to resume"
"""The one line of an interrupted build or add (``interrupted`` of their parsers' defaults)."""


def model_spec(args: argparse.Namespace) -> Any:
    """The model ``--model`` and ``--weights`` name, as ``Elmo.load`` takes it (None: the index's own)."""
    if args.weights is not None:
        if args.model is None:
            fail("--weights needs --model OPTIONS.json (the published options file)")
        return [args.model, args.weights]
    return args.model


def open_index(args: argparse.Namespace) -> Index:
    """The index ``--index`` names, with the model, device and hash checking the options ask for."""
    return Index.open(args.index, model=model_spec(args), device=args.device, verify=not args.no_verify)


def reader_options(args: argparse.Namespace) -> dict:
    """How the corpus is read (``add_reader_options``), as ``build_index`` and ``add_documents`` take it."""
    return {
        "text_column": args.text_column,
        "id_column": args.id_column,
        "title_column": args.title_column,
        "doc_per_file": args.doc_per_file,
    }


def ray_options(args: argparse.Namespace) -> dict:
    """``--ray`` and ``--ray-workers``, as ``build_index`` and ``add_documents`` take them."""
    if args.ray_workers is not None and args.ray is False:
        fail("--ray-workers needs --ray")
    return {"ray": args.ray, "ray_workers": args.ray_workers}


def add_model_options(parser: argparse.ArgumentParser, default: str | None) -> None:
    """``--model``, ``--weights``, ``--device`` and ``--threads``; ``default`` None: the index's own model."""
    where = "default: the model named in the index manifest" if default is None else "default: %(default)s"
    model_files.add_model_options(parser, default, where)
    add_device_option(parser)
    add_threads_option(parser)


def add_reader_options(parser: argparse.ArgumentParser) -> None:
    """``--corpus`` and how its documents are read (build, add)."""
    parser.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        type=path_argument,
        metavar="PATH",
        help="files (.txt, .jsonl, .csv, .parquet, .md, .rst; text ones also .gz/.xz/.bz2) or folders (searched "
        "recursively, in sorted order)",
    )
    parser.add_argument("--text-column", default="text", help="column/field holding the text (default: text)")
    parser.add_argument("--id-column", help="column/field with document ids (default: 'id' if present, else FILE:LINE)")
    parser.add_argument("--title-column", help="column/field with titles (default: 'title' if present, else none)")
    parser.add_argument(
        "--doc-per-file", action="store_true", help=".txt files are one document each (default: one document per line)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def add_ray_options(parser: argparse.ArgumentParser) -> None:
    """``--ray`` and ``--ray-workers`` (build, add)."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const=True,
        default=False,
        metavar="ADDRESS",
        help="encode the shards on a Ray cluster: the one at ADDRESS (HOST:PORT, ray://HOST:PORT, or auto: the one "
        "RAY_ADDRESS or `ray start` names), or with no ADDRESS that one if there is one, else a new one on this "
        "machine. The index folder must be on storage every node mounts at the same path (checked)",
    )
    parser.add_argument(
        "--ray-workers",
        type=Number(int, 1, 100_000),
        metavar="N",
        help="Ray actors, each holding one model (default: one per GPU of the cluster, else one per CPU)",
    )


def add_query_options(parser: argparse.ArgumentParser) -> None:
    """What a command that opens an index takes: ``--index``, the model and threads, ``--no-verify``, ``--json``."""
    parser.add_argument("--index", required=True, type=path_argument, help="the index directory")
    add_model_options(parser, None)
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="skip checking file hashes on open (sizes are still checked); faster for huge indexes",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object (schema in docs/indexer.md)")


def add_layers_option(parser: argparse.ArgumentParser) -> None:
    """``--layers``: the layer mix of one question (``export``; the questions have it as a field of their options)."""
    parser.add_argument("--layers", help=LAYERS_HELP)
