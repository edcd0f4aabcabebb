"""``python -m encoder ship``: a finished training run as a model folder for the repository."""

from __future__ import annotations

import argparse

from ..commands import path_argument
from ..errors import ends_with, fail
from ..ship import ship
from ..terminal import show
from ..weights import read_config


def run(args: argparse.Namespace) -> dict:
    """Ship the run; what the shipped model was trained on."""
    ends_with(args.to)
    try:
        ship(args.run_folder, args.to, overwrite=args.overwrite, storage=args.storage)
    except (FileNotFoundError, ValueError) as error:
        fail(str(error))
    training = read_config(args.to)["training"]
    return {"run": str(args.run_folder), "to": str(args.to), "training": training}


def show_shipped(result: dict, args: argparse.Namespace) -> None:
    training = result["training"]
    show(
        f"shipped {result['run']} into {result['to']}: {training['tokens']:,} tokens, {training['step']:,} steps, "
        f"{training['train_seconds'] / 3600:.2f} training hours"
    )


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``ship`` sub-command."""
    parser = commands.add_parser(
        "ship",
        help="turn a finished training run into a model folder for the repository (float16)",
        description="Turn a finished training run (train --out) into a model folder: the weights stored small "
        "(--storage), a float16 LM head, the vocabulary and the learning curve. When the run continued the model "
        "already in --to, its log goes on from that model's and the model card (README.md) keeps its text, with its "
        "training figures rewritten; other files shipped beside the model are kept. The new folder replaces the old "
        "one only once whole, and only a model the run continued or made (--overwrite: any model).",
    )
    # args.run is the command's run (encoder.cli.frame): the folder goes to args.run_folder
    parser.add_argument(
        "--run", dest="run_folder", metavar="RUN", required=True, type=path_argument, help="the run's --out folder"
    )
    parser.add_argument(
        "--to",
        required=True,
        type=path_argument,
        help="model folder to write, e.g. data/models/default: a new or empty folder, the model the run continued "
        "(--continue), or one this run was shipped to before; the files shipped beside the model (its model card, "
        "a GloVe) are kept",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a model folder the run did not continue (its model files; other files beside it are kept)",
    )
    parser.add_argument(
        "--storage",
        choices=["auto", "fp16", "int8"],
        default="auto",
        help="how the biLM's weights are stored: fp16, or int8 with a scale per row (a quarter of float32); "
        "auto: fp16 when the model then stays within 24 MB, else int8 (default %(default)s)",
    )
    parser.add_argument(
        "--json", action="store_true", help='print {"run", "to", "training"} (the shipped model\'s counters)'
    )
    parser.set_defaults(run=run, show=show_shipped)
