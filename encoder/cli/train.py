"""``python -m encoder train``: train or fine-tune a biLM; its options are ``TrainConfig``'s fields
(``encoder.train_config``), made by ``encoder.options``."""

from __future__ import annotations

import argparse

from .. import distributed, train
from ..errors import interrupted
from ..options import add_options, given
from ..train_config import TrainConfig

DESCRIPTION = """Train a biLM from scratch, fine-tune one (--init-from) or carry on one of our models' pretraining
(--continue), on plain text (one paragraph per line) or on files `prepare` wrote.

The objective is bilm-tf's: forward and backward LMs sharing the char CNN and one (adaptive) softmax, LSTM state
carried between windows. The run writes into --out: log.jsonl (the learning curve), learning_curve.png,
checkpoints/ (the latest two, each whole: --resume goes on from one) and, when it stops, the model folder
(config.json, model.safetensors, head.safetensors, vocab.txt) that `ship` turns into a model for the repository.
Under torchrun each rank reads its own lines and gradients are averaged every step. Recipes, schedules and GPUs:
docs/training.md."""


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
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_options(parser, TrainConfig)
    parser.set_defaults(run=run)
