"""biLM training: one loop, config as a dataclass.

The objective is the reference one (bilm-tf): forward and backward LMs over separate streams, sharing the char
CNN and one softmax (here an adaptive softmax, see ``lm_head``); loss = mean of the two directions' token
cross-entropies, scaled by the unroll length for the gradient; dropout on every LSTM layer's input and on the
top output; global-norm gradient clipping; LSTM state carried between windows and detached (truncated BPTT).

A run writes into ``--out`` (``run_folder``): ``log.jsonl`` (learning curve), ``learning_curve.png``,
``checkpoints/`` (the latest two, each complete, so a run killed at any moment resumes from a whole checkpoint)
and, when it stops, the model directory itself (``config.json``, ``model.safetensors``, ``head.safetensors``,
``vocab.txt``). Distributed (``distributed``): under ``torchrun`` each rank reads its own lines of the corpus,
gradients are averaged across ranks every step (gloo on CPU, NCCL on GPU) and rank 0 writes the files.
The run's config, sizes and recipes are ``train_config``; ``train`` passes 450 lines on purpose: like nanoGPT's
train.py, the checks, the step and the loop are one file read in the order they run (the command line, the run folder
and the batches are modules of their own).
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path

import torch

from . import distributed, locks, ownership
from .corpus import TokenizedCorpus, corpus_files, held_out_paragraphs
from .device import resolve_device
from .files import made_folder, sha256_of
from .lm_data import VOCAB_FILE, Batch, LMBatches, Vocabulary, prefetch
from .lm_head import HEAD_FILE, LanguageModel, LMHead, evaluate, load_language_model
from .locks import LOCK
from .model import BiLM, BiLMConfig, State
from .model_files import ModelFiles, model_folder, model_hash, resolve_model
from .numbers import NonFiniteError
from .ownership import NotOwnedError
from .run_folder import (
    LOG_FILE,
    append_log,
    check_clear_run,
    clear_run,
    is_run,
    latest_checkpoint,
    load_rank_state,
    locked_run,
    plot_learning_curve,
    read_run_record,
    read_trainer,
    restore_optimizer,
    run_busy,
    run_files,
    save_checkpoint,
    save_language_model,
    truncate_log,
    write_run_record,
)
from .terminal import counted
from .text import LANGUAGES, text_rules
from .threads import api_threads
from .train_config import NUMBERS, SCHEDULES, SIZES, TrainConfig
from .weights import CONFIG_FILE, load_hdf5, load_model, read_config


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
    if _has_head(found):
        lm, vocab = load_language_model(found.folder)
        return lm.bilm, lm.head, vocab
    return load_model(found.folder), None, None


def _has_head(found: ModelFiles) -> bool:
    """Whether a model has an LM head and its vocabulary (ours may; published weights never do)."""
    return found.folder is not None and (found.folder / HEAD_FILE).is_file() and (found.folder / VOCAB_FILE).is_file()


def _build_vocabulary(cfg: TrainConfig, corpus: TokenizedCorpus, rank: int, world: int) -> Vocabulary:
    """Counted once on rank 0 over the whole tokenized corpus; the other ranks read it from a temporary file of
    --out that rank 0 removes once all have read it. --out holds no vocab.txt until the run writes its model or a
    checkpoint: a run refused for its corpus leaves none behind, and a user's file of that name is refused before."""
    if world == 1:
        return Vocabulary.from_counts(corpus.word_counts(), cfg.vocab_size)
    shared = Path(cfg.out) / f".{VOCAB_FILE}.shared.tmp"  # a temporary of vocab.txt: the run's (``run_files``)
    if rank == 0:
        Vocabulary.from_counts(corpus.word_counts(), cfg.vocab_size).save(shared)
    distributed.barrier(world)
    vocab = Vocabulary.load(shared)
    distributed.barrier(world)
    if rank == 0:
        shared.unlink()
    return vocab


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
    if cfg.freeze_char_cnn and not (cfg.init_from or cfg.continue_from or cfg.resume):
        raise ValueError(
            "--freeze-char-cnn keeps a trained char CNN as it is: give the model to fine-tune with --init-from or "
            "--continue (a run from scratch must train its char CNN)"
        )
    for name, rule in NUMBERS.items():
        if getattr(cfg, name) is not None:
            rule.check(f"--{name.replace('_', '-')}", getattr(cfg, name))
    resolve_device(cfg.device)
    if cfg.resume and cfg.overwrite:
        raise ValueError("--resume continues the run in --out and --overwrite starts it over: give one of them")
    check_start(cfg)
    if cfg.schedule not in SCHEDULES:
        raise ValueError(f"--schedule must be one of {', '.join(SCHEDULES)}, not {cfg.schedule!r}")
    if cfg.schedule != "constant" and cfg.max_tokens is None and cfg.time_budget is None:
        raise ValueError(f"--schedule {cfg.schedule} decays over the run's budget: give --max-tokens or --time-budget")
    check_apart(cfg)
    check_out(cfg)


def check_start(cfg: TrainConfig) -> None:
    """A run from a model (``--init-from``, ``--continue``) keeps its shape, and its softmax and vocabulary when it
    has them: the options that would make new ones are refused, not ignored. A size or vocabulary size left at its
    default cannot be told from one not given, and is not refused; a recipe's size, only with ``--continue`` (a
    recipe fine-tunes any shape)."""
    start = cfg.init_from or cfg.continue_from
    if not start:
        return
    flag = "--init-from" if cfg.init_from else "--continue"
    if cfg.config:
        raise ValueError(f"{flag} keeps {start}'s shape: --config gives the shape of a model trained from scratch")
    found = resolve_model(start)
    asked = (cfg.continue_from and cfg.recipe) or (cfg.size != TrainConfig.size and not cfg.recipe)
    shape = BiLMConfig.from_json(found.options or found.folder / CONFIG_FILE)
    if asked and cfg.size in SIZES and shape != SIZES[cfg.size]:
        given = f"--recipe {cfg.recipe} trains" if cfg.recipe else "--size asks for"
        raise ValueError(
            f"{given} the {cfg.size!r} shape and {start} has another: {flag} keeps the model's shape, and a new "
            f"shape is trained from scratch (leave out {flag})"
        )
    if _has_head(found) and (cfg.vocab or cfg.vocab_size != TrainConfig.vocab_size):
        option = "--vocab" if cfg.vocab else "--vocab-size"
        raise ValueError(
            f"{flag} keeps {start}'s own softmax and vocabulary: {option} goes with training from scratch or with "
            "published weights, which have none"
        )


def corpus_record(names: Iterable[str], hashed: dict[str, dict]) -> list[dict]:
    """Path, size and sha256 of each corpus file a run reads (``hashed`` keeps those already hashed): what a
    checkpoint records of the text it was trained on, and ``--resume`` checks (``check_same_corpus``)."""
    record = []
    for name in names:
        path = str(Path(name).resolve())
        if path not in hashed:
            hashed[path] = {"path": path, "size": Path(path).stat().st_size, "sha256": sha256_of(path)}
        record.append(hashed[path])
    return record


def check_same_corpus(cfg: TrainConfig, checkpoint: Path, recorded: object) -> None:
    """``--resume`` goes on with the text its checkpoint was trained on: each file it read, unchanged (a file
    replaced in place would be read from the checkpoint's place in the old one), and no other (but files that
    ``--watch`` adds)."""
    entries = recorded if isinstance(recorded, list) else None
    if entries is None or not all(isinstance(e, dict) and {"path", "size", "sha256"} <= set(e) for e in entries):
        raise ValueError(
            f"{checkpoint / 'trainer.json'} is not the checkpoint's record of the run (its corpus); restore it"
        )
    given = {str(p.resolve()) for p in corpus_files(cfg.corpus, must_exist=False)}
    problems = []
    for entry in entries:
        path = Path(entry["path"])
        if not path.is_file():
            problems.append(f"{path} is gone")
        elif entry["path"] not in given:
            problems.append(f"{path} is not in --corpus")
        elif path.stat().st_size != entry["size"] or sha256_of(path) != entry["sha256"]:
            problems.append(f"{path} has changed")
    if not cfg.watch:
        problems += [f"{path} is new" for path in sorted(given - {e["path"] for e in entries})]
    if problems:
        shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
        raise ValueError(
            f"--resume: the corpus is not the one the checkpoint in {cfg.out} was trained on ({shown}); resume with "
            "the same files, or start over with --overwrite"
        )


def check_apart(cfg: TrainConfig) -> None:
    """``--out`` is neither a ``--corpus`` folder nor inside one: the run's own files (vocab.txt, log.jsonl) would
    be read as training text by the run that resumes it."""
    given = ownership.input_holding(cfg.out, cfg.corpus)
    if given is not None:
        raise ValueError(
            f"--out {cfg.out} is inside --corpus {given}: the run's own files (vocab.txt, log.jsonl) would be "
            "read as training text; choose an --out outside the corpus folders"
        )


def check_out(cfg: TrainConfig) -> None:
    """A run never replaces another run or a model unless told to: ``--resume`` needs a checkpoint (of the same
    architecture), and an --out holding a run or a model needs ``--resume`` or ``--overwrite``."""
    out = Path(cfg.out)
    checkpoint = latest_checkpoint(out) if out.is_dir() else None
    if cfg.resume:
        if checkpoint is None and locks.is_locked(out / LOCK):  # a run at work, before its first checkpoint
            raise run_busy(out)
        if checkpoint is None:
            raise ValueError(f"--resume: {out} holds no checkpoint to resume (checkpoints/latest.json is missing)")
        trainer = read_trainer(checkpoint)
        before = trainer["config"]
        # what a run keeps to its end, each with its value in a checkpoint older than it (the char CNN trained)
        kept = dict.fromkeys(("size", "config", "vocab_size", "unroll", "language"), None) | {"freeze_char_cnn": False}
        changed = [key for key, old in kept.items() if before.get(key, old) != getattr(cfg, key)]
        if changed:
            raise ValueError(
                f"--resume: the run in {out} was started with other "
                + ", ".join(
                    f"--{k.replace('_', '-')} ({before.get(k, kept[k])!r}, now {getattr(cfg, k)!r})" for k in changed
                )
                + "; resume it with the same options, or train into another --out"
            )
        if "corpus" in trainer:  # a checkpoint older than the record is resumed without the check
            check_same_corpus(cfg, checkpoint, trainer["corpus"])
        return
    ours = run_files(out)  # any file of the names a run writes: a user's vocab.txt would be replaced at the end
    found = sorted(path.name for path in out.iterdir() if ours(path) and path.name != LOCK) if out.is_dir() else []
    if found and not cfg.overwrite:
        raise FileExistsError(
            f"{out} already holds a training run, a model or files of a model's names ({', '.join(found)}): pass "
            "--resume to continue a run, --overwrite to start it over (its checkpoints, log and model are replaced), "
            "or choose another --out"
        )
    if found and not is_run(out):
        raise NotOwnedError(
            f"{out} holds a model or files of its own, not a training run ({', '.join(found)}): --overwrite starts a "
            "run over and never replaces anything else; train into another --out"
        )
    if found:
        check_clear_run(out)  # a file of someone else's among the run's is refused now, before any work


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
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r} (adagrad, adam or adamw)")


CONTINUE_WARMUP_STEPS = 300  # a continued model's fresh optimizer: its first steps would undo what it knows


def warmup_steps(cfg: TrainConfig) -> int:
    if cfg.warmup_steps is not None:
        return cfg.warmup_steps
    return CONTINUE_WARMUP_STEPS if cfg.continue_from else 0


def learning_rate(cfg: TrainConfig, steps_done: int, fraction: float) -> float:
    """The learning rate of the run's next step (``steps_done`` since its start): a linear warm-up over its first
    ``warmup_steps``, times the schedule's decay at ``fraction``, the share of its budget spent (the run's tokens, or
    this invocation's minutes, whichever ends first). A ``--resume`` goes on with both, as the run would have."""
    warmup = warmup_steps(cfg)
    rate = cfg.lr * min(1.0, (steps_done + 1) / warmup) if warmup else cfg.lr
    fraction = min(max(fraction, 0.0), 1.0)
    if cfg.schedule == "linear":
        return rate * (1 - (1 - cfg.final_lr_ratio) * fraction)
    if cfg.schedule == "cosine":
        return rate * (cfg.final_lr_ratio + (1 - cfg.final_lr_ratio) * 0.5 * (1 + math.cos(math.pi * fraction)))
    return rate


# ---------------------------------------------------------------------------------------------- what a run records
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


def _run_record(cfg: TrainConfig, tokens: int, step: int) -> dict:
    """``run.json``: how the run starts and, from a model, which one by its content hash, so that ``ship`` can tell
    the model a run continued (and may replace) from any other; and the model's token and step counts it starts
    from (a continued model's own), from which ``--max-tokens``, the warm-up and the schedule count, on a resume
    too."""
    start = cfg.continue_from or cfg.init_from
    how = "continue" if cfg.continue_from else "init_from" if cfg.init_from else "fresh"
    record = {"start": how, "tokens_at_start": tokens, "step_at_start": step}
    return record | ({"model": str(start), "model_hash": model_hash(start)} if start else {})


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


# ---------------------------------------------------------------------------------------------- the loop
class Interrupted(Exception):
    """A run stopped by SIGINT (Ctrl-C) or SIGTERM once its checkpoint was written: the message says where."""

    def __init__(self, message: str, signal_number: int):
        super().__init__(message)
        self.status = 128 + signal_number  # 130 for SIGINT, 143 for SIGTERM


@contextmanager
def stop_requests() -> Iterator[list[int]]:
    """While the loop runs, SIGINT and SIGTERM ask it to stop at the end of its step and write a checkpoint (the
    yielded list holds the signals received); a second Ctrl-C stops at once, the last checkpoint intact. Signals
    reach the main thread only: elsewhere (a run started from a thread) they are left as they are."""
    asked: list[int] = []

    def ask(number: int, frame: object) -> None:
        if asked and number == signal.SIGINT:
            raise KeyboardInterrupt
        asked.append(number)

    if threading.current_thread() is not threading.main_thread():
        yield asked
        return
    before = {number: signal.signal(number, ask) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield asked
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def _diverged(step: int, what: str, out: Path) -> NonFiniteError:
    """The error that stops a run whose loss or weights stopped being finite: it writes nothing more."""
    return NonFiniteError(
        f"training diverged at step {step:,}: {what} is NaN or infinite, so no checkpoint or model was written from "
        f"it; the last checkpoint in {out} (if any) is intact: resume it with --resume and a lower --lr or --clip"
    )


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
        distributed.average_gradients(params, world)
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
    threads = torch.get_num_threads()
    torch.set_num_threads(api_threads(cfg.threads))  # for this run only: the caller's process gets its own back
    try:
        out = Path(cfg.out)
        with made_folder(out), locked_run(out):
            check_out(cfg)  # again, now that no other run can start in --out
            if cfg.overwrite and os.environ.get("RANK", "0") == "0":
                clear_run(out)
            return _run(cfg, out, started)
    finally:
        torch.set_num_threads(threads)


def _run(cfg: TrainConfig, out: Path, started: float) -> tuple[LanguageModel, Vocabulary]:
    """``train``'s work, in a checked ``--out`` that it holds. One function on purpose, as nanoGPT's loop: set-up,
    steps, checkpoints and the end read in the order they run, sharing the state (model, optimizer, LSTM state,
    progress) that pieces would pass back and forth."""
    text = text_rules(run_language(cfg))
    on_rank_0 = os.environ.get("RANK", "0") == "0"
    # read once, before the corpus: a --valid file missing, not plain text, or without a word is refused first
    held_out = held_out_paragraphs(cfg.valid, text.name, cfg.valid_tokens) if on_rank_0 and cfg.valid else []
    corpus = TokenizedCorpus.from_paths(cfg.corpus, cfg.workers, progress=on_rank_0, language=text.name)  # before CUDA
    hashed: dict[str, dict] = {}  # what checkpoints record of the corpus files (``corpus_record``), hashed once
    if on_rank_0:
        corpus_record(corpus.names(), hashed)
    rank, world, device = distributed.init(cfg.device)
    precision = resolve_precision(cfg.precision, device)
    checkpoint = latest_checkpoint(out) if cfg.resume else None
    if checkpoint is not None:
        lm, vocab = load_language_model(checkpoint)
        lm.train()
    else:
        lm, vocab = build_language_model(cfg, corpus, rank, world)
    lm.to(device)
    lm.freeze_char_cnn(cfg.freeze_char_cnn, cached=device.type == "cpu" and not cfg.compile)
    optimizer = make_optimizer(cfg, list(lm.parameters()))
    torch.manual_seed(cfg.seed * 1000 + rank)  # dropout masks: reproducible, different on every rank
    state = lm.bilm.lstm.zero_state(cfg.batch_size, device)
    trainer = read_trainer(checkpoint) if checkpoint is not None else None
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
        restore_optimizer(optimizer, checkpoint, trainer)
        state = load_rank_state(checkpoint, rank, data, device)
        if rank == 0:
            truncate_log(out, progress["step"])
    elif rank == 0 and (out / LOG_FILE).exists():
        (out / LOG_FILE).unlink()
    first_step, first_tokens = progress["step"], progress["tokens"]  # this invocation starts here
    # --max-tokens, the warm-up and the schedule count from the run's start, which a resumed run's record gives (a
    # record older than those keys: tokens from 0, steps from this invocation), not a continued model's counters
    record = read_run_record(out) if trainer is not None else {"tokens_at_start": first_tokens}
    run_start, step_at_start = record.get("tokens_at_start", 0), record.get("step_at_start", first_step)
    if cfg.warmup_steps is None and record.get("start") == "continue":  # a --resume names no --continue
        cfg = replace(cfg, warmup_steps=CONTINUE_WARMUP_STEPS)  # the warm-up the run started with
    hardware = f"{world} x {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'}"
    progress["hardware"] = sorted({*progress.get("hardware", []), hardware})  # every kind that trained the model
    if cfg.watch:
        corpus.watch(cfg.corpus)
    data.check_size()
    if checkpoint is None and rank == 0:  # the inputs were good: from now on the folder holds this run
        write_run_record(out, _run_record(cfg, run_start, step_at_start))
    tokens_per_step = cfg.batch_size * cfg.unroll * world
    if rank == 0:
        n_params = sum(p.numel() for p in lm.bilm.parameters())
        fused = "fused LSTM" if lm.bilm.lstm.layers[0].fused else "step-by-step LSTM (clipped)"
        print(
            f"biLM {n_params / 1e6:.1f}M parameters, head {sum(p.numel() for p in lm.head.parameters()) / 1e6:.1f}M, "
            f"vocabulary {len(vocab)}, {counted(world, 'rank')} on {device}, {precision}, {fused}, "
            f"{'compiled' if cfg.compile else 'eager'}, "
            f"{tokens_per_step} tokens per step",
            file=sys.stderr,
        )

    from tqdm.auto import tqdm

    bar = tqdm(
        total=cfg.max_tokens,
        initial=progress["tokens"] - run_start,
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

    def save_state() -> None:
        if not bool(torch.stack([torch.isfinite(p).all() for p in lm.parameters()]).all()):
            raise _diverged(progress["step"], "a weight", out)
        info = _model_info(cfg, out, progress)
        files = corpus_record(corpus.names(), hashed) if rank == 0 else []
        save_checkpoint(out, lm, vocab, optimizer, position, state, progress, info, asdict(cfg), files, rank, world)

    def spent() -> float:
        """The share of the budget used: the run's tokens, or this invocation's minutes, whichever ends first."""
        shares = [0.0]
        if cfg.max_tokens is not None:
            shares.append((progress["tokens"] - run_start) / cfg.max_tokens)
        if cfg.time_budget is not None:  # measured from the first step: tokenizing the corpus spent the rest
            left = cfg.time_budget * 60 - (loop_started - started)
            shares.append((time.monotonic() - loop_started) / left if left > 0 else 1.0)
        return max(shares)

    with stop_requests() as asked:  # SIGINT or SIGTERM: stop after this step, with a checkpoint
        batches = prefetch(data, pin_memory=device.type == "cuda")
        loop_started = time.monotonic()
        while True:
            fraction = spent()
            due = time.monotonic() - last_checkpoint >= cfg.checkpoint_every * 60
            stop, checkpoint_now, fraction = distributed.agree([fraction >= 1.0 or bool(asked), due, fraction], world)
            if stop:
                break
            if checkpoint_now:
                save_state()
                last_checkpoint = time.monotonic()

            for group in optimizer.param_groups:
                group["lr"] = learning_rate(cfg, progress["step"] - step_at_start, fraction)
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
                if not all(map(math.isfinite, per_direction)):
                    raise _diverged(progress["step"], f"the loss ({per_direction[0]}, {per_direction[1]})", out)
                interval_nll.zero_()
                interval_count = 0
                train_ppl = math.exp(sum(per_direction) / 2)
                bar.set_postfix(loss=f"{sum(per_direction) / 2:.3f}", ppl=f"{train_ppl:.1f}", refresh=False)
                if rank == 0:
                    append_log(
                        out,
                        {
                            **progress,
                            "train_loss": per_direction,
                            "train_ppl": train_ppl,
                            "lr": optimizer.param_groups[0]["lr"],
                            "tokens_per_second": round(tokens_per_step * cfg.log_every / (now - last_log)),
                        },
                    )
                last_log = now
            if rank == 0 and held_out and progress["step"] % cfg.valid_every == 0:
                result = evaluate(lm, vocab, held_out, cfg.valid_tokens)
                bar.write(
                    f"step {progress['step']}: validation perplexity forward {result['forward']:.1f} "
                    f"backward {result['backward']:.1f} mean {result['mean']:.1f}"
                )
                append_log(out, {**progress, "valid": result})
                plot_learning_curve(out)
        bar.close()
        corpus.close()

    save_state()
    if asked:
        raise Interrupted(
            f"interrupted at step {progress['step']:,}: a checkpoint is written in {out}; resume with --resume",
            asked[0],
        )
    if rank == 0:
        if held_out:
            result = evaluate(lm, vocab, held_out, cfg.valid_tokens)
            append_log(out, {**progress, "valid": result})
            print(f"final validation perplexity: mean {result['mean']:.1f} (vocabulary {len(vocab)})", file=sys.stderr)
        save_language_model(lm, vocab, out, _model_info(cfg, out, progress))
        if (out / LOG_FILE).is_file():
            plot_learning_curve(out)
        print(
            f"trained on {progress['tokens'] - run_start:,} tokens ({progress['tokens']:,} in all, "
            f"{counted(progress['step'], 'step')}); model written to {out}",
            file=sys.stderr,
        )
    distributed.barrier(world)
    return lm, vocab
