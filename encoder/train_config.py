"""What a training run is asked to do: ``TrainConfig``, the architectures (``SIZES``) and the recipes.

Each ``TrainConfig`` field declares its ``train`` option once, in its ``metadata`` (``encoder.options``): the help,
the rule of a numeric field (checked by ``train.check_modes`` too) and the spelling when it is not the field's name.
``encoder.cli.train`` makes the options and the config from these fields, so adding a train option is one field here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .commands import path_text
from .device import DEVICE_HELP
from .model import BiLMConfig
from .model_files import ONE_PATH_MODEL_HELP
from .numbers import SEED, THREADS, Number
from .options import option, rules
from .text import LANGUAGES
from .threads import THREADS_HELP

SIZES = {
    # for tests and smoke runs
    "tiny": BiLMConfig(
        char_embed_dim=8, filters=[[1, 16], [2, 16], [3, 32]], n_highway=1, projection_dim=32, lstm_dim=64
    ),
    # the first shipped default (clipped): what 2 CPU cores trained in 75 minutes
    "small": BiLMConfig(
        filters=[[1, 32], [2, 32], [3, 64], [4, 128], [5, 256]], n_highway=1, projection_dim=128, lstm_dim=512
    ),
    # the published "small" ELMo shape (2x1024 cells, 128 projection, 2048 filters, 1 highway)
    "base": BiLMConfig(n_highway=1, projection_dim=128, lstm_dim=1024),
    # the shipped default, trained on a GPU (data/models/default/README.md): 2x1024 cells without clipping (cuDNN's
    # fused LSTM), 1024 filters so that the float16 model stays under 16 MB (7.1M parameters; the published
    # shape's 13.6M sit mostly in its 2048-wide highway)
    "medium": BiLMConfig(
        filters=[[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512]],
        n_highway=1,
        projection_dim=128,
        lstm_dim=1024,
        cell_clip=None,
        proj_clip=None,
    ),
    # medium with a 256-wide projection (512-dimensional ELMo vectors, the published models' 2x this): 11.9M
    # parameters, so it ships in int8 storage to stay within 24 MB on disk (encoder/weights.py)
    "wide": BiLMConfig(
        filters=[[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512]],
        n_highway=1,
        projection_dim=256,
        lstm_dim=1024,
        cell_clip=None,
        proj_clip=None,
    ),
}


@dataclass(frozen=True)
class Recipe:
    """How a biLM is trained from scratch: the options that ``bench/recipe_rule.py`` compares at equal GPU minutes.
    ``TrainConfig.from_recipe`` fills a run's options from one; options given explicitly win."""

    size: str
    optimizer: str
    lr: float
    batch_size: int
    schedule: str = "constant"
    warmup_steps: int | None = None
    compile: bool = False

    def __str__(self) -> str:
        parts = [self.size, f"{self.optimizer} lr {self.lr:g}", f"batch {self.batch_size}"]
        parts += [f"{self.schedule} decay"] if self.schedule != "constant" else []
        parts += [f"{self.warmup_steps} warm-up steps"] if self.warmup_steps else []
        return ", ".join(parts + (["compiled"] if self.compile else []))


RECIPES = {
    # bilm-tf's optimizer and clip, batch 512 x 20, eager: the recipe of the shipped default
    "reference": Recipe("medium", "adagrad", 0.2, 512),
    # twice the batch, the step captured by torch.compile: more tokens per GPU second, fewer steps
    "reference-1024-compiled": Recipe("medium", "adagrad", 0.2, 1024, compile=True),
    # AdamW with a linear warm-up and a cosine decay to a tenth over the run's budget
    "adamw-cosine": Recipe("medium", "adamw", 2e-3, 512, schedule="cosine", warmup_steps=300),
    # the wider shape with the reference's optimizer
    "wide": Recipe("wide", "adagrad", 0.2, 512),
}
DEFAULT_RECIPE = "adamw-cosine"
"""What ``make train-default`` trains: the recipe rule's pick, measured on an H200 (docs/training.md, "The recipe
rule"). The shipped default was trained by ``reference``; this recipe carries it on."""


SCHEDULES = ("constant", "linear", "cosine")
"""How the learning rate goes after the warm-up, over the run's budget (``train.learning_rate``)."""
PRECISIONS = ("auto", "fp32", "bf16")
OPTIMIZERS = ("adagrad", "adam", "adamw")
RECIPE_HELP = (
    "fill --size, --optimizer, --lr, --batch-size, --schedule, --warmup-steps and --compile from a recipe (those "
    f"given explicitly win): {'; '.join(f'{k}: {v}' for k, v in RECIPES.items())}. Without a name: "
    f"{DEFAULT_RECIPE!r}, the recipe rule's pick (docs/training.md), which `make train-default` trains"
)


def _recipe_option(help: str, **options) -> dict:
    """The ``metadata`` of a field a recipe fills: absent from the parsed options unless given."""
    return option(f"{help} (default: the recipe's, else %(default)s)", unset=True, **options)


@dataclass
class TrainConfig:
    """Everything a run needs; the ``train`` options map one to one onto these fields (their ``metadata``)."""

    corpus: list[str] = field(
        metadata=option("text files (.txt/.gz/.xz, one paragraph per line) or folders", nargs="+", type=path_text)
    )
    out: str = field(metadata=option("output folder: model, checkpoints, log, plot", type=path_text))
    name: str | None = field(  # written into config.json
        default=None, metadata=option("model name written into config.json (default: the --out folder's name)")
    )
    recipe: str | None = field(  # the RECIPES entry the run was made from (a label; from_recipe applies it)
        default=None, metadata=option(RECIPE_HELP, nargs="?", const=DEFAULT_RECIPE, choices=list(RECIPES))
    )
    size: str = field(default="small", metadata=_recipe_option("architecture", choices=sorted(SIZES)))
    language: str | None = field(  # how text becomes tokens (encoder.text)
        default=None,
        metadata=option(
            "how the corpus becomes sentences and tokens: en (Punkt + NLTK), ko (Kiwi surface morphemes) or "
            "ko-eojeol (Kiwi sentences, eojeol with punctuation split off); recorded in the model, whose every user "
            "then tokenizes the same way (default: the model given to --init-from/--continue, else en)",
            choices=list(LANGUAGES),
        ),
    )
    config: str | None = field(
        default=None,
        metadata=option(
            "JSON file of the model's shape (overrides --size): BiLMConfig's fields, a model folder's config.json or "
            "a published options.json; any other key is refused",
            type=path_text,
        ),
    )
    init_from: str | None = field(  # fine-tune (paper 3.4): new data, fresh counters
        default=None,
        metadata=option(
            f"start from a model: {ONE_PATH_MODEL_HELP}; published weights have no softmax, so the head is made fresh "
            "and the vocabulary counted",
            metavar="MODEL",
        ),
    )
    continue_from: str | None = field(  # carry on a model's own pretraining: its counters, a fresh optimizer
        default=None,
        metadata=option(
            "carry on the pretraining of one of our models ('default' or a directory with its head and vocabulary): "
            "its weights, tokens and steps seen go on, with a fresh optimizer warmed up over --warmup-steps "
            "(optimizer state is not shipped, so this restart is not exact)",
            flag="--continue",
            metavar="MODEL",
        ),
    )
    warmup_steps: int | None = field(  # None: 300 with continue_from (a fresh optimizer), else 0
        default=None,
        metadata=option(
            "steps of linear learning-rate warm-up at the start of the run, which --resume goes on with (default: "
            "the recipe's, else 300 with --continue, whose optimizer starts fresh, and none for a run from scratch, "
            "as the reference)",
            rule=Number(int, 0),
            unset=True,
        ),
    )
    freeze_char_cnn: bool = field(  # the CPU lever of docs/training.md, "Fine-tuning on a CPU"
        default=False,
        metadata=option(
            "fine-tuning (--init-from, --continue): keep the char CNN, highway and projection as they are and train "
            "the LSTMs and the softmax; their backward pass is skipped, and on a CPU each word's vector is computed "
            "once per run and kept (measured on 2 CPU cores: docs/training.md)"
        ),
    )
    vocab: str | None = field(
        default=None,
        metadata=option(
            "vocabulary file (one word per line, <S> </S> <UNK> first) instead of counting one", type=path_text
        ),
    )
    vocab_size: int = field(  # the three specials and a word, up to 16.8M classes
        default=100_000, metadata=option("softmax classes (default %(default)s)", rule=Number(int, 4, 2**24))
    )
    batch_size: int = field(default=64, metadata=_recipe_option("rows per rank", rule=Number(int, 1, 2**16)))
    unroll: int = field(
        default=20, metadata=option("truncated-BPTT window (default %(default)s)", rule=Number(int, 1, 2**12))
    )
    optimizer: str = field(
        default="adagrad",
        metadata=_recipe_option(
            "adagrad: the reference's (initial accumulator 1.0); adam; adamw: Adam with decoupled weight decay",
            choices=list(OPTIMIZERS),
        ),
    )
    lr: float = field(default=0.2, metadata=_recipe_option("peak learning rate", rule=Number(float, above=0)))
    weight_decay: float = field(
        default=0.01, metadata=option("adamw's decoupled weight decay (default %(default)s)", rule=Number(float, 0))
    )
    schedule: str = field(
        default="constant",
        metadata=_recipe_option(
            "the learning rate after the warm-up: constant, or a linear or cosine decay to --final-lr-ratio x --lr "
            "over the run's --max-tokens (which --resume goes on with) or this invocation's --time-budget, whichever ends "
            "first",
            choices=SCHEDULES,
        ),
    )
    final_lr_ratio: float = field(
        default=0.1,
        metadata=option(
            "where a decaying --schedule ends, as a share of --lr (default %(default)s)", rule=Number(float, 0, 1)
        ),
    )
    clip: float = field(
        default=10.0, metadata=option("global gradient-norm clip (default %(default)s)", rule=Number(float, above=0))
    )
    dropout: float = field(default=0.1, metadata=option("default %(default)s", rule=Number(float, 0, below=1)))
    max_tokens: int | None = field(
        default=None,
        metadata=option(
            "stop after this many tokens per direction (all ranks), counted from the run's start: not the tokens a "
            "--continue'd model saw before; --resume goes on to the same total",
            rule=Number(int, 1),
        ),
    )
    time_budget: float | None = field(  # minutes of this invocation
        default=None,
        metadata=option("stop after this many minutes, with a final checkpoint", rule=Number(float, above=0)),
    )
    resume: bool = field(default=False, metadata=option("continue from the latest checkpoint in --out"))
    overwrite: bool = field(
        default=False,
        metadata=option(
            "start over in an --out that holds a training run: its checkpoints, log and model are replaced (never a "
            "model folder that is not a run, nor a file the run did not write)"
        ),
    )
    device: str = field(default="cpu", metadata=option(f"{DEVICE_HELP} (default: %(default)s)", default="auto"))
    precision: str = field(  # bf16: autocast, fp32 weights
        default="auto",
        metadata=option(
            "bf16: autocast with float32 weights and optimizer; auto: bf16 on CUDA, fp32 on CPU (default %(default)s)",
            choices=list(PRECISIONS),
        ),
    )
    compile: bool = field(  # see train.captured_top_layer
        default=False,
        metadata=option(
            "capture the training step with torch.compile (CUDA graphs on a GPU; the fused LSTM stays cuDNN's): the "
            "first steps compile for a minute or more; a part that fails to compile runs eagerly",
            unset=True,
        ),
    )
    workers: int | None = field(
        default=None,
        metadata=option(
            "tokenizing processes; 0: tokenize in this process (default: all cores but one; none for corpora under "
            "200 kB)",
            rule=Number(int, 0, THREADS.at_most),
        ),
    )
    watch: bool = field(
        default=False,
        metadata=option(
            "keep adding text files that appear under --corpus folders; they join at the next pass (copy them in "
            "under another name, then rename)"
        ),
    )
    seed: int = field(default=0, metadata=option("default %(default)s", rule=SEED))
    threads: int | None = field(default=None, metadata=option(THREADS_HELP, rule=THREADS, metavar="N"))
    valid: str | None = field(
        default=None, metadata=option("held-out text for periodic validation perplexity", type=path_text)
    )
    valid_tokens: int = field(
        default=20_000,
        metadata=option("validation tokens (first lines of --valid, default %(default)s)", rule=Number(int, 1)),
    )
    valid_every: int = field(default=500, metadata=option("steps (default %(default)s)", rule=Number(int, 1)))
    checkpoint_every: float = field(
        default=5.0,
        metadata=option("minutes between checkpoints (default %(default)s)", rule=Number(float, above=0)),
    )
    log_every: int = field(
        default=20, metadata=option("steps between log lines (default %(default)s)", rule=Number(int, 1))
    )
    progress: bool = field(default=True, metadata=option("no progress bar", flag="--no-progress"))

    @classmethod
    def from_recipe(cls, recipe: str, **options) -> TrainConfig:
        """A run of ``RECIPES[recipe]``; ``options`` (corpus and out at least) set the rest and override it."""
        if recipe not in RECIPES:
            raise ValueError(f"unknown recipe {recipe!r}; choose from {', '.join(RECIPES)}")
        return cls(**{**asdict(RECIPES[recipe]), "recipe": recipe, **options})


NUMBERS = rules(TrainConfig)
"""The rule of every numeric field of ``TrainConfig``: its option's argparse type, and checked by ``check_modes``."""
