"""``python -m encoder train``: train or fine-tune a biLM; its options are ``TrainConfig``'s fields
(``encoder.train_config``), made by ``encoder.options``."""

from __future__ import annotations

import argparse

from .. import distributed, train
from ..errors import interrupted
from ..options import add_options, given
from ..train_config import TrainConfig


def config_of(args: argparse.Namespace) -> TrainConfig:
    """The ``TrainConfig`` that ``train``'s options say: a recipe's, where ``--recipe`` names one, with the options
    given explicitly over it (a field a recipe fills is absent from ``args`` unless given)."""
    options = given(args, TrainConfig)
    recipe = options.pop("recipe")
    return TrainConfig.from_recipe(recipe, **options) if recipe else TrainConfig(**options)


def run(args: argparse.Namespace) -> int:
    """Train (it prints its progress as it goes); the exit status."""
    try:
        train.train(config_of(args))
    except train.Interrupted as stop:
        interrupted(str(stop), stop.status)
    finally:
        distributed.finish()
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``train`` sub-command."""
    parser = commands.add_parser(
        "train",
        help="train or fine-tune a biLM on plain text",
        description=train.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_options(parser, TrainConfig)
    parser.set_defaults(run=run)
