"""biLM training (and the ``train`` / ``perplexity`` sub-commands): one loop, config as a dataclass.

The objective is the reference one (bilm-tf): forward and backward LMs over separate streams, sharing the char
CNN and one softmax (here an adaptive softmax, see ``lm_head``); loss = mean of the two directions' token
cross-entropies, scaled by the unroll length for the gradient; dropout on every LSTM layer's input and on the
top output; global-norm gradient clipping; LSTM state carried between windows and detached (truncated BPTT).

A run writes into ``--out``: ``log.jsonl`` (learning curve), ``learning_curve.png``, ``checkpoints/`` (the
latest two, each complete: model, head, vocabulary, optimizer, data position, carried state, RNG; named by
``checkpoints/latest.json``, written last, so a run killed at any moment resumes from a whole checkpoint) and,
when it stops, the model directory itself (``config.json``, ``model.safetensors``, ``head.safetensors``,
``vocab.txt``). Distributed: under ``torchrun`` each rank reads its own lines of the corpus, gradients are
averaged across ranks every step (gloo on CPU, NCCL on GPU) and rank 0 writes the files.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
import torch.distributed as dist
from safetensors.torch import load_file, save_file

from .elmo import MODEL_SPEC_HELP, model_folder, resolve_model
from .errors import fail
from .files import atomic_path, open_text
from .lm_data import VOCAB_FILE, Batch, LMBatches, TokenizedCorpus, Vocabulary, prefetch
from .lm_head import HEAD_FILE, LanguageModel, LMHead, evaluate, load_language_model, perplexity
from .model import BiLM, BiLMConfig, State
from .text import LANGUAGES, text_rules
from .weights import CONFIG_FILE, WEIGHTS_INDEX, load_hdf5, load_model, read_config, save_model, weight_files

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
}


@dataclass
class TrainConfig:
    """Everything a run needs; the CLI options map one to one onto these fields."""

    corpus: list[str]
    out: str
    name: str | None = None  # written into config.json; default: the output folder's name
    language: str | None = None  # how text becomes tokens (encoder.text); default: the model started from, else en
    size: str = "small"
    config: str | None = None  # a JSON file of BiLMConfig fields, overrides --size
    init_from: str | None = None  # fine-tune (paper 3.4): new data, fresh counters
    continue_from: str | None = None  # carry on a model's own pretraining: its counters, a fresh optimizer
    warmup_steps: int = 300  # with continue_from: linear learning-rate warm-up of that fresh optimizer
    vocab: str | None = None  # a vocabulary file to use instead of counting one
    vocab_size: int = 100_000
    batch_size: int = 64
    unroll: int = 20
    optimizer: str = "adagrad"
    lr: float = 0.2
    clip: float = 10.0
    dropout: float = 0.1
    max_tokens: int | None = None
    time_budget: float | None = None  # minutes of this invocation
    resume: bool = False
    overwrite: bool = False  # start over in an --out that holds a run or a model (its run files are replaced)
    device: str = "cpu"
    precision: str = "auto"  # fp32 | bf16 (autocast, fp32 weights) | auto: bf16 on CUDA, fp32 on CPU
    compile: bool = False  # capture the step with torch.compile (CUDA graphs on a GPU); see captured_top_layer
    seed: int = 0
    threads: int | None = None
    workers: int | None = None  # tokenizing processes (default: all cores but one; none for small corpora)
    watch: bool = False  # add files that appear in the corpus folders while the run goes on
    valid: str | None = None
    valid_tokens: int = 20_000
    valid_every: int = 500  # steps
    checkpoint_every: float = 5.0  # minutes
    log_every: int = 20  # steps
    progress: bool = True


# ---------------------------------------------------------------------------------------------- distributed
def _init_distributed(device: str) -> tuple[int, int, torch.device]:
    """(rank, world size, device); starts a process group when launched by torchrun with more than one rank."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    rank = dist.get_rank() if world > 1 else 0
    if device.startswith("cuda"):
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        return rank, world, torch.device("cuda", local)
    return rank, world, torch.device(device)


def _average_gradients(params: list[torch.nn.Parameter], world: int) -> None:
    """One all-reduce over all gradients flattened together (a parameter without gradient counts as zero)."""
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= world
    offset = 0
    for p in params:
        p.grad = flat[offset : offset + p.numel()].view_as(p).clone()
        offset += p.numel()


def _agree(flags: list[bool], world: int) -> list[bool]:
    """Rank 0's decisions (stop, checkpoint), which depend on its clock, made the same on every rank."""
    if world == 1:
        return flags
    tensor = torch.tensor([float(f) for f in flags])
    dist.broadcast(tensor, src=0)
    return [bool(v) for v in tensor.tolist()]


def _barrier(world: int) -> None:
    if world > 1:
        dist.barrier()


# ---------------------------------------------------------------------------------------------- model setup
def model_config(cfg: TrainConfig) -> BiLMConfig:
    if cfg.config:
        return BiLMConfig.from_json(cfg.config)
    if cfg.size not in SIZES:
        raise ValueError(f"unknown size {cfg.size!r}; choose from {', '.join(SIZES)}")
    return SIZES[cfg.size]


def load_pretrained(spec: str | Path) -> tuple[BiLM, LMHead | None, Vocabulary | None]:
    """A biLM to start from, found by ``resolve_model``: our model (with its head and vocabulary when it has
    them), or published AllenNLP weights, which have no softmax."""
    found = resolve_model(spec)
    if found.folder is None:
        return load_hdf5(found.options, found.weights), None, None
    bilm = load_model(found.folder)
    if (found.folder / HEAD_FILE).is_file() and (found.folder / VOCAB_FILE).is_file():
        return bilm, LMHead.load(found.folder / HEAD_FILE), Vocabulary.load(found.folder / VOCAB_FILE)
    return bilm, None, None


def _build_vocabulary(cfg: TrainConfig, corpus: TokenizedCorpus, rank: int, world: int) -> Vocabulary:
    """Counted once on rank 0 over the whole tokenized corpus, written to the output, read by the other ranks."""
    path = Path(cfg.out) / VOCAB_FILE
    if rank == 0:
        Vocabulary.from_counts(corpus.word_counts(), cfg.vocab_size).save(path)
    _barrier(world)
    return Vocabulary.load(path)


def check_modes(cfg: TrainConfig) -> None:
    """``--resume``, ``--init-from`` and ``--continue`` each mean one thing; refuse combinations."""
    given = [
        flag
        for flag, value in (("--resume", cfg.resume), ("--init-from", cfg.init_from), ("--continue", cfg.continue_from))
        if value
    ]
    if len(given) > 1:
        raise ValueError(
            f"{' and '.join(given)} exclude each other: --resume continues a run folder exactly, "
            "--init-from fine-tunes a model on new data with fresh counters, --continue carries on a "
            "model's own pretraining"
        )
    if cfg.language is not None and cfg.language not in LANGUAGES:
        raise ValueError(f"--language must be one of {', '.join(LANGUAGES)}, not {cfg.language!r}")
    if cfg.continue_from and cfg.vocab:
        raise ValueError("--continue keeps the model's own vocabulary; --vocab goes with training from scratch")
    for name in ("max_tokens", "batch_size", "unroll", "vocab_size"):
        value = getattr(cfg, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, not {value}")
    if cfg.resume and cfg.overwrite:
        raise ValueError("--resume continues the run in --out and --overwrite starts it over: give one of them")
    check_out(cfg)


CHECKPOINTS, LATEST = "checkpoints", "latest.json"
LOG_FILE, PLOT_FILE = "log.jsonl", "learning_curve.png"
RUN_FILES = (CHECKPOINTS, LOG_FILE, PLOT_FILE, CONFIG_FILE)  # what says a folder holds a run or a model


def check_out(cfg: TrainConfig) -> None:
    """A run never replaces another run or a model unless told to: ``--resume`` needs a checkpoint (of the same
    architecture), and an --out holding a run or a model needs ``--resume`` or ``--overwrite``."""
    out = Path(cfg.out)
    checkpoint = latest_checkpoint(out) if out.is_dir() else None
    if cfg.resume:
        if checkpoint is None:
            raise ValueError(f"--resume: {out} holds no checkpoint to resume (checkpoints/latest.json is missing)")
        before = json.loads((checkpoint / "trainer.json").read_text())["config"]
        keys = ("size", "config", "vocab_size", "unroll", "language")
        changed = [key for key in keys if before.get(key) != getattr(cfg, key)]
        if changed:
            raise ValueError(
                f"--resume: the run in {out} was started with other "
                + ", ".join(f"--{k.replace('_', '-')} ({before.get(k)!r}, now {getattr(cfg, k)!r})" for k in changed)
                + "; resume it with the same options, or train into another --out"
            )
        return
    found = [name for name in RUN_FILES if (out / name).exists()]
    if found and not cfg.overwrite:
        raise FileExistsError(
            f"{out} already holds a training run or a model ({', '.join(found)}): pass --resume to continue it, "
            "--overwrite to start over (its checkpoints, log and model are replaced), or choose another --out"
        )


def clear_run(out: Path) -> None:
    """Remove what an earlier run wrote into ``out`` (for ``--overwrite``); other files stay."""
    if (out / CHECKPOINTS).is_dir():
        shutil.rmtree(out / CHECKPOINTS)
    for name in (
        LOG_FILE,
        PLOT_FILE,
        CONFIG_FILE,
        HEAD_FILE,
        VOCAB_FILE,
        WEIGHTS_INDEX,
        *[p.name for p in weight_files(out)],
    ):
        if (out / name).is_file():
            (out / name).unlink()


def build_language_model(
    cfg: TrainConfig, corpus: TokenizedCorpus, rank: int = 0, world: int = 1
) -> tuple[LanguageModel, Vocabulary]:
    """Fresh (seeded), ``--init-from`` or ``--continue``; a head is made fresh whenever the starting point has none
    (which ``--continue`` refuses: carrying on pretraining needs the model's own softmax)."""
    head, vocab = None, None
    if cfg.init_from or cfg.continue_from:
        bilm, head, vocab = load_pretrained(cfg.init_from or cfg.continue_from)
        if cfg.continue_from and head is None:
            raise ValueError(
                f"{cfg.continue_from} has no LM head and vocabulary to continue with; "
                "fine-tune it with --init-from instead"
            )
    else:
        bilm = BiLM(model_config(cfg))
        bilm.reset_parameters(cfg.seed)
    if head is None:
        vocab = Vocabulary.load(cfg.vocab) if cfg.vocab else _build_vocabulary(cfg, corpus, rank, world)
        head = LMHead(bilm.config.projection_dim, len(vocab))
        head.reset_parameters(cfg.seed)
    return LanguageModel(bilm, head).train(), vocab


def make_optimizer(cfg: TrainConfig, params: list[torch.nn.Parameter]) -> torch.optim.Optimizer:
    if cfg.optimizer == "adagrad":  # the reference: initial accumulator 1.0
        return torch.optim.Adagrad(params, lr=cfg.lr, initial_accumulator_value=1.0)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r} (adagrad or adam)")


# ---------------------------------------------------------------------------------------------- checkpoints


def save_language_model(lm: LanguageModel, vocab: Vocabulary, directory: Path, info: dict, fp16: bool = False) -> None:
    """A model directory: what ``Elmo.load`` reads, plus the head and vocabulary for perplexity and fine-tuning."""
    save_model(lm.bilm, directory, extra_config={"vocab_size": len(vocab), **info}, fp16=fp16)
    lm.head.save(directory / HEAD_FILE, fp16=fp16)
    vocab.save(directory / VOCAB_FILE)


def run_language(cfg: TrainConfig) -> str:
    """The language of the model being trained: that of the model it starts from (another is refused: its
    vocabulary and weights are of that language), else --language, else English."""
    start = cfg.init_from or cfg.continue_from
    if start is None:
        return cfg.language or "en"
    language = resolve_model(start).text().name
    if cfg.language not in (None, language):
        raise ValueError(f"{start} is a model of language {language!r}; it cannot be trained on as {cfg.language!r}")
    return language


def _model_info(cfg: TrainConfig, out: Path, progress: dict) -> dict:
    """What config.json records besides the architecture; a continued model keeps its name unless given one."""
    continued = read_config(model_folder(cfg.continue_from)).get("name") if cfg.continue_from else None
    return {"name": cfg.name or continued or out.resolve().name, "language": run_language(cfg), "training": progress}


def _continued_progress(cfg: TrainConfig) -> dict:
    """The counters a continued model carries on from, and a data seed of its own so that it reads the corpus in
    another order than the run it continues (whose exact data position is not shipped)."""
    progress = {
        "step": 0,
        "tokens": 0,
        "train_seconds": 0.0,
        **read_config(model_folder(cfg.continue_from)).get("training", {}),
    }
    progress["data_seed"] = cfg.seed + progress["step"]
    return progress


def _save_rank_state(directory: Path, rank: int, position: dict, state: State) -> None:
    """What differs between ranks: data position, carried LSTM state, RNG."""
    tensors = {
        f"lstm.{l}.{k}": t.detach().cpu().contiguous()
        for l, (h, c) in enumerate(state)
        for k, t in (("h", h), ("c", c))
    }
    tensors["rng.cpu"] = torch.get_rng_state()
    if torch.cuda.is_available() and state[0][0].is_cuda:
        tensors["rng.cuda"] = torch.cuda.get_rng_state()
    with atomic_path(directory / f"rank{rank}.safetensors") as tmp:
        save_file(tensors, tmp)
    with atomic_path(directory / f"rank{rank}.json") as tmp:
        Path(tmp).write_text(json.dumps(position))


def _load_rank_state(directory: Path, rank: int, data: LMBatches, device: torch.device) -> State:
    tensors = load_file(str(directory / f"rank{rank}.safetensors"))
    torch.set_rng_state(tensors["rng.cpu"])
    if "rng.cuda" in tensors and device.type == "cuda":
        torch.cuda.set_rng_state(tensors["rng.cuda"])
    data.load_state(json.loads((directory / f"rank{rank}.json").read_text()))
    n_layers = sum(1 for k in tensors if k.endswith(".h"))
    return [(tensors[f"lstm.{l}.h"].to(device), tensors[f"lstm.{l}.c"].to(device)) for l in range(n_layers)]


def _optimizer_files(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    """Optimizer state as safetensors tensors + JSON (its ``state_dict`` would otherwise need pickle)."""
    sd = optimizer.state_dict()
    tensors = {f"{i}.{k}": v.detach().cpu().contiguous() for i, s in sd["state"].items() for k, v in s.items()}
    return tensors, {"param_groups": sd["param_groups"]}


def _restore_optimizer(optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], meta: dict) -> None:
    state: dict[int, dict] = {}
    for name, tensor in tensors.items():
        index, key = name.split(".", 1)
        state.setdefault(int(index), {})[key] = tensor
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})


def save_checkpoint(
    out: Path,
    lm: LanguageModel,
    vocab: Vocabulary,
    optimizer: torch.optim.Optimizer,
    position: dict,
    state: State,
    progress: dict,
    cfg: TrainConfig,
    rank: int,
    world: int,
) -> None:
    """Every rank writes its own state into the step's folder; rank 0 adds the rest and moves ``latest`` last.
    ``position``: where this rank's data continues (``LMBatches.state``)."""
    directory = out / CHECKPOINTS / f"step-{progress['step']:08d}"
    if rank == 0:
        directory.mkdir(parents=True, exist_ok=True)
    _barrier(world)
    _save_rank_state(directory, rank, position, state)
    _barrier(world)
    if rank != 0:
        return
    save_language_model(lm, vocab, directory, _model_info(cfg, out, progress))
    tensors, meta = _optimizer_files(optimizer)
    with atomic_path(directory / "optimizer.safetensors") as tmp:
        save_file(tensors, tmp)
    with atomic_path(directory / "trainer.json") as tmp:
        Path(tmp).write_text(json.dumps({**meta, "progress": progress, "world_size": world, "config": asdict(cfg)}))
    with atomic_path(out / CHECKPOINTS / LATEST) as tmp:
        Path(tmp).write_text(json.dumps({"checkpoint": directory.name}))
    for old in sorted((out / CHECKPOINTS).glob("step-*"))[:-2]:
        if old.name != directory.name:  # never the one latest.json now names
            shutil.rmtree(old)


def latest_checkpoint(out: Path) -> Path | None:
    pointer = out / CHECKPOINTS / LATEST
    return out / CHECKPOINTS / json.loads(pointer.read_text())["checkpoint"] if pointer.is_file() else None


# ---------------------------------------------------------------------------------------------- logging
def _append_log(out: Path, record: dict) -> None:
    with open(out / LOG_FILE, "a") as f:
        f.write(json.dumps(record) + "\n")


def _truncate_log(out: Path, step: int) -> None:
    """On resume, drop what the interrupted run logged after the checkpoint it resumes from."""
    path = out / LOG_FILE
    if path.is_file():
        kept = [line for line in path.read_text().splitlines() if json.loads(line)["step"] <= step]
        with atomic_path(path) as tmp:
            Path(tmp).write_text("".join(line + "\n" for line in kept))


def plot_learning_curve(out: Path) -> None:
    """``learning_curve.png``: training and validation perplexity against tokens seen."""
    records = [json.loads(line) for line in (out / LOG_FILE).read_text().splitlines()]
    curves = {
        "train (running, both directions)": [(r["tokens"], r["train_ppl"]) for r in records if "train_ppl" in r],
        "validation (mean of directions)": [(r["tokens"], r["valid"]["mean"]) for r in records if "valid" in r],
    }
    plot_perplexity(curves, out / PLOT_FILE, marked=["validation (mean of directions)"])


def plot_perplexity(
    curves: dict[str, list[tuple[int, float]]], path: Path, ylabel: str = "perplexity", marked: list[str] | None = None
) -> None:
    """Perplexity curves (label -> (tokens seen, perplexity) points) on a log scale, written atomically as a PNG;
    the ``marked`` curves (default: all) show their points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in curves.items():
        if points:
            marker = "o" if marked is None or label in marked else None
            ax.plot(*zip(*points), label=label, marker=marker, markersize=3)
    ax.set_xlabel("tokens seen (per direction)")
    ax.set_ylabel(ylabel)
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)


def _valid_lines(path: str | None, n_tokens: int) -> list[str]:
    """The first lines of the validation file holding about ``n_tokens`` words (read once, kept in memory)."""
    if path is None:
        return []
    lines, words = [], 0
    with open_text(path) as f:
        for line in f:
            lines.append(line)
            words += len(line.split())
            if words >= n_tokens:
                break
    return lines


# ---------------------------------------------------------------------------------------------- the loop
def resolve_precision(precision: str, device: torch.device) -> str:
    """``auto`` is bf16 on CUDA (autocast; weights, optimizer and loss stay float32) and fp32 elsewhere."""
    if precision == "auto":
        return "bf16" if device.type == "cuda" else "fp32"
    if precision not in ("fp32", "bf16"):
        raise ValueError(f"unknown precision {precision!r} (fp32, bf16 or auto)")
    if precision == "bf16" and device.type != "cuda":  # CPU autocast keeps the softmax in bf16, and gains nothing
        raise ValueError("bf16 training needs a CUDA device; use --precision fp32 on the CPU")
    return precision


TYPE_MULTIPLE = 1024
"""With ``--compile`` each window's table of word types is padded to a multiple of this: a few shapes to capture."""


def compile_options(device: torch.device) -> dict:
    """``torch.compile`` arguments: on a GPU, CUDA graphs of the compiled parts (``reduce-overhead``)."""
    return {"mode": "reduce-overhead"} if device.type == "cuda" else {}


def captured_top_layer(lm: LanguageModel, device: torch.device) -> Callable:
    """``lm.top_layer`` under ``torch.compile``, for ``train_step``: the char CNN and the LSTM stack run as generated
    kernels (and CUDA graphs on a GPU), each graph for fixed shapes; cuDNN's fused LSTM kernel stays as it is (not
    a decomposition). The adaptive softmax, whose rows per cluster change with every window, and the evaluation
    (``lm`` itself) stay eager. A part that fails to compile runs eagerly too, so the flag can never stop a run."""
    import torch._dynamo  # imported here: it adds a second to every start of the encoder

    torch._dynamo.config.suppress_errors = True
    for layer in lm.bilm.lstm.layers:
        layer._forward_fused = torch.compiler.disable(layer._forward_fused)
    return torch.compile(lm.top_layer, dynamic=False, **compile_options(device))  # static shapes: one graph each


def train_step(
    lm: LanguageModel,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    state: State,
    cfg: TrainConfig,
    precision: str = "fp32",
    world: int = 1,
    top_layer: Callable | None = None,
) -> tuple[torch.Tensor, State]:
    """One optimizer step on one window -> its summed NLL per direction (left on the device), the carried state.

    ``top_layer``: ``captured_top_layer(lm)`` for a compiled step (None: eager); the same objective.
    """
    captured = top_layer is not None
    if captured and batch.targets.is_cuda:
        torch.compiler.cudagraph_mark_step_begin()  # the last step's graph outputs are no longer needed
    with torch.autocast(batch.targets.device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
        nll, count, state = lm(batch, state, dropout=cfg.dropout, top_layer=top_layer)
        loss = (nll / count).mean()
    optimizer.zero_grad(set_to_none=True)
    (loss * cfg.unroll).backward()  # the reference's gradient scale (matters for Adagrad and the clip)
    params = list(lm.parameters())
    if world > 1:
        _average_gradients(params, world)
    torch.nn.utils.clip_grad_norm_(params, cfg.clip)
    optimizer.step()
    nll, state = nll.detach(), [(h.detach(), c.detach()) for h, c in state]
    if captured:  # copies: a CUDA graph writes its next outputs into the same memory
        return nll.clone(), [(h.clone(), c.clone()) for h, c in state]
    return nll, state


def train(cfg: TrainConfig) -> tuple[LanguageModel, Vocabulary]:
    """Run (or resume) training until ``max_tokens`` or ``time_budget``; returns the trained model."""
    started = time.monotonic()
    check_modes(cfg)  # before the corpus is tokenized, which can take a minute
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    out = Path(cfg.out)
    if cfg.overwrite and os.environ.get("RANK", "0") == "0":
        clear_run(out)
    out.mkdir(parents=True, exist_ok=True)
    text = text_rules(run_language(cfg))
    corpus = TokenizedCorpus.from_paths(
        cfg.corpus, cfg.workers, progress=os.environ.get("RANK", "0") == "0", language=text.name
    )  # before CUDA
    rank, world, device = _init_distributed(cfg.device)
    precision = resolve_precision(cfg.precision, device)
    checkpoint = latest_checkpoint(out) if cfg.resume else None
    if checkpoint is not None:
        lm = LanguageModel(load_model(checkpoint), LMHead.load(checkpoint / HEAD_FILE)).train()
        vocab = Vocabulary.load(checkpoint / VOCAB_FILE)
    else:
        lm, vocab = build_language_model(cfg, corpus, rank, world)
    lm.to(device)
    optimizer = make_optimizer(cfg, list(lm.parameters()))
    torch.manual_seed(cfg.seed * 1000 + rank)  # dropout masks: reproducible, different on every rank
    state = lm.bilm.lstm.zero_state(cfg.batch_size, device)
    trainer = json.loads((checkpoint / "trainer.json").read_text()) if checkpoint is not None else None
    if trainer is not None:
        progress = trainer["progress"]
    elif cfg.continue_from:
        progress = _continued_progress(cfg)
    else:
        progress = {"step": 0, "tokens": 0, "train_seconds": 0.0, "data_seed": cfg.seed}
    data = LMBatches(
        corpus,
        vocab,
        cfg.batch_size,
        cfg.unroll,
        progress.get("data_seed", cfg.seed),
        rank,
        world,
        type_multiple=TYPE_MULTIPLE if cfg.compile else 1,
        cutoffs=lm.head.cutoffs,
    )
    top_layer = captured_top_layer(lm, device) if cfg.compile else None
    if trainer is not None:
        _restore_optimizer(optimizer, load_file(str(checkpoint / "optimizer.safetensors")), trainer)
        state = _load_rank_state(checkpoint, rank, data, device)
        if rank == 0:
            _truncate_log(out, progress["step"])
    elif rank == 0 and (out / LOG_FILE).exists():
        (out / LOG_FILE).unlink()
    warmup_from = progress["step"] if cfg.continue_from and cfg.warmup_steps > 0 else None
    hardware = f"{world} x {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'}"
    progress["hardware"] = sorted({*progress.get("hardware", []), hardware})  # every kind that trained the model
    if cfg.watch:
        corpus.watch(cfg.corpus)
    valid_lines = _valid_lines(cfg.valid, cfg.valid_tokens) if rank == 0 else []
    tokens_per_step = cfg.batch_size * cfg.unroll * world
    if rank == 0:
        n_params = sum(p.numel() for p in lm.bilm.parameters())
        fused = "fused LSTM" if lm.bilm.lstm.layers[0].fused else "step-by-step LSTM (clipped)"
        print(
            f"biLM {n_params / 1e6:.1f}M parameters, head {sum(p.numel() for p in lm.head.parameters()) / 1e6:.1f}M, "
            f"vocabulary {len(vocab)}, {world} rank(s) on {device}, {precision}, {fused}, "
            f"{'compiled' if cfg.compile else 'eager'}, "
            f"{tokens_per_step} tokens per step",
            file=sys.stderr,
        )

    from tqdm.auto import tqdm

    bar = tqdm(
        total=cfg.max_tokens,
        initial=progress["tokens"],
        unit="tok",
        unit_scale=True,
        dynamic_ncols=True,
        disable=rank != 0 or not cfg.progress,
        mininterval=2.0,
    )
    # the running loss stays on the device: reading it every step would make the CPU wait for the GPU
    interval_nll, interval_count = torch.zeros(2, dtype=torch.float64, device=device), 0
    last_checkpoint = step_started = last_log = time.monotonic()
    position = data.state()
    batches = prefetch(data, pin_memory=device.type == "cuda")
    while True:
        done = cfg.max_tokens is not None and progress["tokens"] >= cfg.max_tokens
        out_of_time = cfg.time_budget is not None and time.monotonic() - started >= cfg.time_budget * 60
        due = time.monotonic() - last_checkpoint >= cfg.checkpoint_every * 60
        stop, checkpoint_now = _agree([done or out_of_time, due], world)
        if stop:
            break
        if checkpoint_now:
            save_checkpoint(out, lm, vocab, optimizer, position, state, progress, cfg, rank, world)
            last_checkpoint = time.monotonic()

        if warmup_from is not None and progress["step"] - warmup_from <= cfg.warmup_steps:
            for group in optimizer.param_groups:
                group["lr"] = cfg.lr * min(1.0, (progress["step"] - warmup_from + 1) / cfg.warmup_steps)
        batch, position = next(batches)
        nll, state = train_step(lm, optimizer, batch.to(device), state, cfg, precision, world, top_layer)

        now = time.monotonic()
        progress["step"] += 1
        progress["tokens"] += tokens_per_step
        progress["train_seconds"] += now - step_started
        step_started = now
        interval_nll += nll.double()
        interval_count += cfg.batch_size * cfg.unroll
        bar.update(tokens_per_step)
        if progress["step"] % cfg.log_every == 0:  # rank 0's running loss stands for all ranks
            per_direction = (interval_nll / interval_count).tolist()
            interval_nll.zero_()
            interval_count = 0
            train_ppl = math.exp(sum(per_direction) / 2)
            bar.set_postfix(loss=f"{sum(per_direction) / 2:.3f}", ppl=f"{train_ppl:.1f}", refresh=False)
            if rank == 0:
                _append_log(
                    out,
                    {
                        **progress,
                        "train_loss": per_direction,
                        "train_ppl": train_ppl,
                        "tokens_per_second": round(tokens_per_step * cfg.log_every / (now - last_log)),
                    },
                )
            last_log = now
        if rank == 0 and valid_lines and progress["step"] % cfg.valid_every == 0:
            result = evaluate(lm, vocab, valid_lines, cfg.valid_tokens, text=text)
            bar.write(
                f"step {progress['step']}: validation perplexity forward {result['forward']:.1f} "
                f"backward {result['backward']:.1f} mean {result['mean']:.1f}"
            )
            _append_log(out, {**progress, "valid": result})
            plot_learning_curve(out)
    bar.close()
    corpus.close()

    save_checkpoint(out, lm, vocab, optimizer, position, state, progress, cfg, rank, world)
    if rank == 0:
        if valid_lines:
            result = evaluate(lm, vocab, valid_lines, cfg.valid_tokens, text=text)
            _append_log(out, {**progress, "valid": result})
            print(f"final validation perplexity: mean {result['mean']:.1f} (vocabulary {len(vocab)})", file=sys.stderr)
        save_language_model(lm, vocab, out, _model_info(cfg, out, progress))
        if (out / LOG_FILE).is_file():
            plot_learning_curve(out)
        print(f"{progress['tokens']} tokens in {progress['step']} steps; model written to {out}", file=sys.stderr)
    _barrier(world)
    return lm, vocab


# ---------------------------------------------------------------------------------------------- shipping
CARD_FILE = "README.md"
FIGURES_START, FIGURES_END = "<!-- training figures: written by `encoder ship` -->", "<!-- end of training figures -->"


def update_card_figures(card: str, training: dict, log: list[dict]) -> str:
    """The model card with its block of training figures (between the two markers, if it has them) rewritten
    from the model's counters and learning curve; the rest of the card is the authors' to keep true."""
    if FIGURES_START not in card or FIGURES_END not in card:
        return card
    valid = [r for r in log if "valid" in r]
    lines = [
        f"| tokens seen | {training['tokens']:,} |",
        f"| steps | {training['step']:,} |",
        f"| training time | {training['train_seconds'] / 3600:.2f} hours |",
        f"| hardware | {', '.join(training.get('hardware', [])) or 'not recorded'} |",
    ]
    if valid:
        last = valid[-1]["valid"]
        lines.append(
            f"| validation perplexity (last, {last['tokens']:,} tokens) | forward {last['forward']:.1f}, "
            f"backward {last['backward']:.1f}, mean {last['mean']:.1f} |"
        )
    block = "\n".join(
        [FIGURES_START, "", "| | |", "|---|---|", *lines, "", "![learning curve](learning_curve.png)", "", FIGURES_END]
    )
    before, rest = card.split(FIGURES_START, 1)
    return before + block + rest.split(FIGURES_END, 1)[1]


def ship(run: str | Path, destination: str | Path) -> None:
    """A finished run as a model folder for the repository: float16 weights and head, the vocabulary, and the
    learning curve; when the run continued the model already at ``destination``, its log goes on from that
    model's log and the model card (README.md) is kept, its block of training figures rewritten (see
    ``update_card_figures``) and so are the other files shipped beside the model (the Korean GloVe). The new
    folder replaces the old one only when whole."""
    run, destination = Path(run), Path(destination)
    lm, vocab = load_language_model(run)
    info = {k: v for k, v in read_config(run).items() if k in ("name", "language", "training")}  # _model_info's
    staging = destination.with_name(f".{destination.name}.shipping")
    shutil.rmtree(staging, ignore_errors=True)
    save_language_model(lm, vocab, staging, info, fp16=True)
    run_log = (
        [json.loads(line) for line in (run / LOG_FILE).read_text().splitlines()] if (run / LOG_FILE).is_file() else []
    )
    first_step = run_log[0]["step"] if run_log else info["training"]["step"]
    earlier = []
    if (destination / LOG_FILE).is_file():
        earlier = [
            r for r in map(json.loads, (destination / LOG_FILE).read_text().splitlines()) if r["step"] < first_step
        ]
    (staging / LOG_FILE).write_text("".join(json.dumps(r) + "\n" for r in earlier + run_log))
    if earlier or run_log:
        plot_learning_curve(staging)
    if (destination / CARD_FILE).is_file():
        card = (destination / CARD_FILE).read_text()
        (staging / CARD_FILE).write_text(update_card_figures(card, info["training"], earlier + run_log))
    for kept in destination.glob("*") if destination.is_dir() else []:  # what ships beside the model (a GloVe)
        if kept.is_file() and not (staging / kept.name).exists():
            shutil.copy2(kept, staging / kept.name)
    old = destination.with_name(f".{destination.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if destination.exists():
        destination.rename(old)
    staging.rename(destination)
    shutil.rmtree(old, ignore_errors=True)


def ship_command(args: argparse.Namespace) -> None:
    try:
        ship(args.run, args.to)
    except (FileNotFoundError, ValueError) as error:
        fail(str(error))
    training = read_config(args.to)["training"]
    print(
        f"shipped {args.run} into {args.to}: {training['tokens']:,} tokens, {training['step']:,} steps, "
        f"{training['train_seconds'] / 3600:.2f} training hours"
    )


# ---------------------------------------------------------------------------------------------- CLI
def train_command(args: argparse.Namespace) -> None:
    names = {f.name for f in fields(TrainConfig)}
    cfg = TrainConfig(**{k: v for k, v in vars(args).items() if k in names})
    try:
        train(cfg)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def perplexity_command(args: argparse.Namespace) -> None:
    with open_text(args.corpus) as f:
        try:
            result = perplexity(args.model, f, args.max_tokens)
        except (FileNotFoundError, ValueError) as error:
            fail(str(error))
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"perplexity over {result['tokens']} tokens, vocabulary {result['vocab_size']}: forward "
            f"{result['forward']:.2f}, backward {result['backward']:.2f}, mean {result['mean']:.2f}"
        )


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``train`` and ``perplexity`` sub-commands."""
    defaults = TrainConfig(corpus=[], out="")
    p = commands.add_parser(
        "train",
        help="train or fine-tune a biLM on plain text",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--corpus", nargs="+", required=True, help="text files (.txt/.gz/.xz, one paragraph per line) or folders"
    )
    p.add_argument("--out", required=True, help="output folder: model, checkpoints, log, plot")
    p.add_argument("--name", help="model name written into config.json (default: the --out folder's name)")
    p.add_argument("--size", choices=sorted(SIZES), default=defaults.size, help="architecture (default %(default)s)")
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
        type=int,
        default=defaults.warmup_steps,
        help="with --continue: steps of linear learning-rate warm-up (default %(default)s)",
    )
    p.add_argument("--vocab", help="vocabulary file (one word per line, <S> </S> <UNK> first) instead of counting one")
    p.add_argument("--vocab-size", type=int, default=defaults.vocab_size, help="softmax classes (default %(default)s)")
    p.add_argument("--batch-size", type=int, default=defaults.batch_size, help="rows per rank (default %(default)s)")
    p.add_argument("--unroll", type=int, default=defaults.unroll, help="truncated-BPTT window (default %(default)s)")
    p.add_argument("--optimizer", choices=["adagrad", "adam"], default=defaults.optimizer, help="default %(default)s")
    p.add_argument("--lr", type=float, default=defaults.lr, help="learning rate (default %(default)s)")
    p.add_argument("--clip", type=float, default=defaults.clip, help="global gradient-norm clip (default %(default)s)")
    p.add_argument("--dropout", type=float, default=defaults.dropout, help="default %(default)s")
    p.add_argument("--max-tokens", type=int, help="stop after this many tokens per direction (all ranks)")
    p.add_argument("--time-budget", type=float, help="stop after this many minutes, with a final checkpoint")
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --out")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="start over in an --out that holds a run or a model: its checkpoints, log and model are replaced",
    )
    p.add_argument("--device", default=defaults.device, help="cpu or cuda (default %(default)s)")
    p.add_argument(
        "--precision",
        choices=["auto", "fp32", "bf16"],
        default=defaults.precision,
        help="bf16: autocast with float32 weights and optimizer; auto: bf16 on CUDA, fp32 on CPU (default %(default)s)",
    )
    p.add_argument(
        "--compile",
        action="store_true",
        help="capture the training step with torch.compile (CUDA graphs on a GPU; the fused LSTM stays cuDNN's): "
        "the first steps compile for a minute or more; a part that fails to compile runs eagerly",
    )
    p.add_argument(
        "--workers", type=int, help="tokenizing processes (default: all cores but one; none for corpora under 200 kB)"
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="keep adding text files that appear under --corpus folders; they join at the next pass "
        "(copy them in under another name, then rename)",
    )
    p.add_argument("--seed", type=int, default=defaults.seed, help="default %(default)s")
    p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--valid", help="held-out text for periodic validation perplexity")
    p.add_argument(
        "--valid-tokens",
        type=int,
        default=defaults.valid_tokens,
        help="validation tokens (first lines of --valid, default %(default)s)",
    )
    p.add_argument("--valid-every", type=int, default=defaults.valid_every, help="steps (default %(default)s)")
    p.add_argument(
        "--checkpoint-every",
        type=float,
        default=defaults.checkpoint_every,
        help="minutes between checkpoints (default %(default)s)",
    )
    p.add_argument(
        "--log-every", type=int, default=defaults.log_every, help="steps between log lines (default %(default)s)"
    )
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    p.set_defaults(func=train_command)

    r = commands.add_parser(
        "ship",
        help="turn a finished training run into a model folder for the repository (float16)",
        description=ship.__doc__,
    )
    r.add_argument("--run", required=True, help="the run's --out folder")
    r.add_argument("--to", default="data/models/default", help="model folder to write (default %(default)s)")
    r.set_defaults(func=ship_command)

    q = commands.add_parser(
        "perplexity",
        help="forward and backward perplexity of a model on a text file, and their mean as exp(mean loss)",
        description="Perplexity over the model's full softmax vocabulary (out-of-vocabulary words count as <UNK>). "
        "Each input line (paragraph) starts from a zero LSTM state carried across its sentences.",
    )
    q.add_argument("--model", default="default", help="model directory or 'default' (default %(default)s)")
    q.add_argument("--corpus", required=True, help="text file (.txt/.gz/.xz), one paragraph per line")
    q.add_argument("--max-tokens", type=int, help="stop after the lines holding this many tokens")
    q.add_argument("--json", action="store_true", help='print {"forward", "backward", "mean", "tokens", "vocab_size"}')
    q.set_defaults(func=perplexity_command)
