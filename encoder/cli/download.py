"""``python -m encoder download``: fetch one of AllenNLP's published biLMs into the cache (``encoder.download``)."""

from __future__ import annotations

import argparse
import sys

from ..commands import path_argument
from ..download import BASE_URL, BASE_URL_ENV, download_model
from ..errors import fail
from ..files import CACHE_ENV, cache_root
from ..model_files import PUBLISHED, published_dir, read_download_record
from ..terminal import show


def run(args: argparse.Namespace) -> dict:
    """Download the model ``args.name`` (without one, or with ``--list``: which are downloaded); where it is."""
    if args.list and args.name is not None:  # the name was ignored: nothing downloaded, and nothing said
        fail(f"give {args.name} to download it, or --list to see which models are downloaded, not both")
    root = (args.cache or cache_root()).expanduser().resolve()
    if args.list or args.name is None:
        return {
            "models": [
                {
                    "name": name,
                    "downloaded": read_download_record(published_dir(name, root)) is not None,
                    "folder": str(published_dir(name, root)),
                }
                for name in PUBLISHED
            ]
        }
    found = download_model(args.name, root, args.base_url, progress=not args.quiet, force=args.force)
    folder = found.weights.parent
    return {
        "name": args.name,
        "folder": str(folder),
        "files": read_download_record(folder)["files"],
        "cache_env": None if root == cache_root() else f"{CACHE_ENV}={root}",
    }


def show_download(result: dict, args: argparse.Namespace) -> None:
    if "models" in result:
        for model in result["models"]:
            found = "downloaded" if model["downloaded"] else "not downloaded"
            show(f"{model['name']:20s} {found}  {model['folder']}")
        return
    sizes = ", ".join(f"{ours} {entry['size'] / 1e6:,.1f} MB" for ours, entry in result["files"].items())
    show(f"{result['name']}: checked and ready in {result['folder']} ({sizes})", file=sys.stderr)
    if result["cache_env"]:
        show(f"set {result['cache_env']} so that --model {result['name']} finds it there", file=sys.stderr)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``download`` sub-command."""
    parser = subparsers.add_parser(
        "download",
        help="download one of AllenNLP's published biLMs (then --model NAME)",
        description="Download a published biLM (options.json and weights.hdf5) into the cache, resuming a download "
        "cut short (while the server's file is the same: its ETag or Last-Modified), and check it (the model has the "
        "shape published under its name, the hdf5 opens and every tensor has the shape options.json gives; sizes and "
        f"sha256 recorded) before any command uses it. Models: {', '.join(PUBLISHED)} (docs/models.md has their "
        "sizes and speed). Nothing else ever downloads a model.",
    )
    parser.add_argument("name", nargs="?", choices=list(PUBLISHED), metavar="NAME", help=", ".join(PUBLISHED))
    parser.add_argument(
        "--cache",
        type=path_argument,
        metavar="DIR",
        help=f"the cache folder (default: ${CACHE_ENV}, else the platform's user cache, now {cache_root()}); "
        f"--model NAME looks in ${CACHE_ENV}'s",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help=f"where the models' folders are (default: ${BASE_URL_ENV}, else {BASE_URL}); a mirror, or a "
        "local copy served over HTTP (a user:password@ in it is sent as basic authentication, never shown)",
    )
    parser.add_argument("--force", action="store_true", help="download again even if the model is already there")
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the published models and which are downloaded (instead of downloading NAME)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"name", "folder", "files", "cache_env"} (with --list: {"models": [{"name", "downloaded", '
        '"folder"}]})',
    )
    parser.set_defaults(run=run, show=show_download, interrupted="interrupted; run the same command again to resume")
