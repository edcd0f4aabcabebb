"""The ``train``, ``ship`` and ``perplexity`` sub-commands of ``python -m encoder``: options in, one call out."""

from __future__ import annotations

import argparse
from dataclasses import fields

from . import distributed, train
from .device import add_device_option
from .errors import fail, interrupted
from .files import open_text, reading
from .lm_head import perplexity
from .model_files import MODEL_SPEC_HELP
from .numbers import Number
from .ship import ship
from .terminal import show_json
from .text import LANGUAGES
from .train import DEFAULT_RECIPE, NUMBERS, RECIPES, SCHEDULES, SIZES, TrainConfig
from .weights import read_config


def ship_command(args: argparse.Namespace) -> None:
    try:
        ship(args.run, args.to, overwrite=args.overwrite, storage=args.storage)
    except (FileNotFoundError, ValueError) as error:
        fail(str(error))
    training = read_config(args.to)["training"]
    print(
        f"shipped {args.run} into {args.to}: {training['tokens']:,} tokens, {training['step']:,} steps, "
        f"{training['train_seconds'] / 3600:.2f} training hours"
    )


def train_command(args: argparse.Namespace) -> None:
    names = {f.name for f in fields(TrainConfig)} - {"recipe"}
    given = {k: v for k, v in vars(args).items() if k in names}  # a recipe's options are absent unless given
    cfg = TrainConfig.from_recipe(args.recipe, **given) if args.recipe else TrainConfig(**given)
    try:
        train.train(cfg)
    except train.Interrupted as stop:
        interrupted(str(stop), stop.status)
    finally:
        distributed.finish()


def perplexity_command(args: argparse.Namespace) -> None:
    with reading(args.corpus), open_text(args.corpus) as f:
        try:
            result = perplexity(args.model, f, args.max_tokens)
        except (FileNotFoundError, ValueError) as error:
            fail(str(error))
    if args.json:
        show_json(result)
    else:
        print(
            f"perplexity over {result['tokens']} tokens, vocabulary {result['vocab_size']}: forward "
            f"{result['forward']:.2f}, backward {result['backward']:.2f}, mean {result['mean']:.2f}"
        )


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``train``, ``ship`` and ``perplexity`` sub-commands."""
    defaults = TrainConfig(corpus=[], out="")
    p = commands.add_parser(
        "train",
        help="train or fine-tune a biLM on plain text",
        description=train.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _what_to_train(p, defaults)
    _optimization_options(p, defaults)
    _run_options(p, defaults)
    p.set_defaults(func=train_command)
    _add_ship(commands)
    _add_perplexity(commands)


def _what_to_train(p: argparse.ArgumentParser, defaults: TrainConfig) -> None:
    """``train``'s corpus, output and the model it starts from (a size, a recipe, a config, a model to go on from)."""
    p.add_argument(
        "--corpus", nargs="+", required=True, help="text files (.txt/.gz/.xz, one paragraph per line) or folders"
    )
    p.add_argument("--out", required=True, help="output folder: model, checkpoints, log, plot")
    p.add_argument("--name", help="model name written into config.json (default: the --out folder's name)")
    p.add_argument(
        "--recipe",
        nargs="?",
        const=DEFAULT_RECIPE,
        choices=list(RECIPES),
        help="fill --size, --optimizer, --lr, --batch-size, --schedule, --warmup-steps and --compile from a recipe "
        f"(those given explicitly win): {'; '.join(f'{k}: {v}' for k, v in RECIPES.items())}. Without a name: "
        f"{DEFAULT_RECIPE!r}, the recipe rule's pick (docs/training.md), which `make train-default` trains",
    )
    p.add_argument(
        "--size",
        choices=sorted(SIZES),
        default=argparse.SUPPRESS,
        help=f"architecture (default: the recipe's, else {defaults.size})",
    )
    (
        p.add_argument(
            "--language",
            choices=list(LANGUAGES),
            help="how the corpus becomes sentences and tokens: en (Punkt + NLTK), ko (Kiwi surface morphemes) or "
            "ko-eojeol (Kiwi sentences, eojeol with punctuation split off); "
            "recorded in the model, whose every user then tokenizes the same way (default: the model given to "
            "--init-from/--continue, else en)",
        ),
    )
    p.add_argument("--config", help="JSON file of BiLMConfig fields (overrides --size)")
    p.add_argument(
        "--init-from",
        metavar="MODEL",
        help=f"start from a model: {MODEL_SPEC_HELP}; published weights have no softmax, so the head "
        "is made fresh and the vocabulary counted",
    )
    p.add_argument(
        "--continue",
        dest="continue_from",
        metavar="MODEL",
        help="carry on the pretraining of one of our models ('default' or a directory with its head and "
        "vocabulary): its weights, tokens and steps seen go on, with a fresh optimizer warmed up "
        "over --warmup-steps (optimizer state is not shipped, so this restart is not exact)",
    )
    p.add_argument(
        "--warmup-steps",
        type=NUMBERS["warmup_steps"],
        default=argparse.SUPPRESS,
        help="steps of linear learning-rate warm-up at the start of this invocation (default: the recipe's, else "
        "300 with --continue, whose optimizer starts fresh, and none for a run from scratch, as the reference)",
    )


def _optimization_options(p: argparse.ArgumentParser, defaults: TrainConfig) -> None:
    """``train``'s vocabulary, batches and optimizer."""
    p.add_argument("--vocab", help="vocabulary file (one word per line, <S> </S> <UNK> first) instead of counting one")
    p.add_argument(
        "--vocab-size",
        type=NUMBERS["vocab_size"],
        default=defaults.vocab_size,
        help="softmax classes (default %(default)s)",
    )
    p.add_argument(
        "--batch-size",
        type=NUMBERS["batch_size"],
        default=argparse.SUPPRESS,
        help=f"rows per rank (default: the recipe's, else {defaults.batch_size})",
    )
    p.add_argument(
        "--unroll", type=NUMBERS["unroll"], default=defaults.unroll, help="truncated-BPTT window (default %(default)s)"
    )
    p.add_argument(
        "--optimizer",
        choices=["adagrad", "adam", "adamw"],
        default=argparse.SUPPRESS,
        help=f"adagrad: the reference's (initial accumulator 1.0); adam; adamw: Adam with decoupled weight decay "
        f"(default: the recipe's, else {defaults.optimizer})",
    )
    p.add_argument(
        "--lr",
        type=NUMBERS["lr"],
        default=argparse.SUPPRESS,
        help=f"peak learning rate (default: the recipe's, else {defaults.lr})",
    )
    p.add_argument(
        "--weight-decay",
        type=NUMBERS["weight_decay"],
        default=defaults.weight_decay,
        help="adamw's decoupled weight decay (default %(default)s)",
    )
    p.add_argument(
        "--schedule",
        choices=SCHEDULES,
        default=argparse.SUPPRESS,
        help="the learning rate after the warm-up: constant, or a linear or cosine decay to --final-lr-ratio x "
        "--lr over this invocation's --max-tokens or --time-budget, whichever ends first "
        f"(default: the recipe's, else {defaults.schedule})",
    )
    p.add_argument(
        "--final-lr-ratio",
        type=NUMBERS["final_lr_ratio"],
        default=defaults.final_lr_ratio,
        help="where a decaying --schedule ends, as a share of --lr (default %(default)s)",
    )
    p.add_argument(
        "--clip", type=NUMBERS["clip"], default=defaults.clip, help="global gradient-norm clip (default %(default)s)"
    )
    p.add_argument("--dropout", type=NUMBERS["dropout"], default=defaults.dropout, help="default %(default)s")


def _run_options(p: argparse.ArgumentParser, defaults: TrainConfig) -> None:
    """How long ``train`` runs, on what, and what it writes and shows while it runs."""
    p.add_argument(
        "--max-tokens", type=NUMBERS["max_tokens"], help="stop after this many tokens per direction (all ranks)"
    )
    p.add_argument(
        "--time-budget", type=NUMBERS["time_budget"], help="stop after this many minutes, with a final checkpoint"
    )
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --out")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="start over in an --out that holds a training run: its checkpoints, log and model are replaced (never a "
        "model folder that is not a run, nor a file the run did not write)",
    )
    add_device_option(p)
    p.add_argument(
        "--precision",
        choices=["auto", "fp32", "bf16"],
        default=defaults.precision,
        help="bf16: autocast with float32 weights and optimizer; auto: bf16 on CUDA, fp32 on CPU (default %(default)s)",
    )
    p.add_argument(
        "--compile",
        action="store_true",
        default=argparse.SUPPRESS,
        help="capture the training step with torch.compile (CUDA graphs on a GPU; the fused LSTM stays cuDNN's): "
        "the first steps compile for a minute or more; a part that fails to compile runs eagerly",
    )
    p.add_argument(
        "--workers",
        type=NUMBERS["workers"],
        help="tokenizing processes; 0: tokenize in this process (default: all cores but one; none for corpora under "
        "200 kB)",
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="keep adding text files that appear under --corpus folders; they join at the next pass "
        "(copy them in under another name, then rename)",
    )
    p.add_argument("--seed", type=NUMBERS["seed"], default=defaults.seed, help="default %(default)s")
    p.add_argument("--threads", type=NUMBERS["threads"], help="torch CPU threads (default: torch's choice)")
    p.add_argument("--valid", help="held-out text for periodic validation perplexity")
    p.add_argument(
        "--valid-tokens",
        type=NUMBERS["valid_tokens"],
        default=defaults.valid_tokens,
        help="validation tokens (first lines of --valid, default %(default)s)",
    )
    p.add_argument(
        "--valid-every", type=NUMBERS["valid_every"], default=defaults.valid_every, help="steps (default %(default)s)"
    )
    p.add_argument(
        "--checkpoint-every",
        type=NUMBERS["checkpoint_every"],
        default=defaults.checkpoint_every,
        help="minutes between checkpoints (default %(default)s)",
    )
    p.add_argument(
        "--log-every",
        type=NUMBERS["log_every"],
        default=defaults.log_every,
        help="steps between log lines (default %(default)s)",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")


def _add_ship(commands: argparse._SubParsersAction) -> None:
    r = commands.add_parser(
        "ship",
        help="turn a finished training run into a model folder for the repository (float16)",
        description=ship.__doc__,
    )
    r.add_argument("--run", required=True, help="the run's --out folder")
    r.add_argument(
        "--to",
        required=True,
        help="model folder to write, e.g. data/models/default: a new or empty folder, the model the run continued "
        "(--continue), or one this run was shipped to before; the files shipped beside the model (its model card, "
        "a GloVe) are kept",
    )
    r.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a model folder the run did not continue (its model files; other files beside it are kept)",
    )
    r.add_argument(
        "--storage",
        choices=["auto", "fp16", "int8"],
        default="auto",
        help="how the biLM's weights are stored: fp16, or int8 with a scale per row (a quarter of float32); "
        "auto: fp16 when the model then stays within 24 MB, else int8 (default %(default)s)",
    )
    r.set_defaults(func=ship_command)


def _add_perplexity(commands: argparse._SubParsersAction) -> None:
    q = commands.add_parser(
        "perplexity",
        help="forward and backward perplexity of a model on a text file, and their mean as exp(mean loss)",
        description="Perplexity over the model's full softmax vocabulary (out-of-vocabulary words count as <UNK>). "
        "Each input line (paragraph) starts from a zero LSTM state carried across its sentences.",
    )
    q.add_argument("--model", default="default", help="model directory or 'default' (default %(default)s)")
    q.add_argument("--corpus", required=True, help="text file (.txt/.gz/.xz), one paragraph per line")
    q.add_argument("--max-tokens", type=Number(int, 1), help="stop after the lines holding this many tokens")
    q.add_argument("--json", action="store_true", help='print {"forward", "backward", "mean", "tokens", "vocab_size"}')
    q.set_defaults(func=perplexity_command)
