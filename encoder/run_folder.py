"""A training run's folder: the model it writes, its checkpoints and its learning curve.

``--out`` holds ``log.jsonl`` (learning curve), ``learning_curve.png``, ``checkpoints/`` (the latest two, each
complete: model, head, vocabulary, optimizer, data position, carried state, RNG; named by
``checkpoints/latest.json``, written last, so a run killed at any moment resumes from a whole checkpoint),
``run.json`` (what the run started from, written first: ``ship`` reads it) and, when the run stops, the model
directory itself (``config.json``, ``model.safetensors``, ``head.safetensors``, ``vocab.txt``); ``.lock`` is the lock
the running run holds (``locked_run``: one run at a time in a folder). Everything is
safetensors or JSON: nothing here is ever unpickled. ``run_files`` says which files are a run's: the only ones
``--overwrite`` removes (``encoder.ownership``).
"""

from __future__ import annotations

import json
import os
import re
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import torch
from safetensors.torch import save_file

from . import locks, ownership
from .distributed import barrier
from .files import atomic_path, temporary_target, writing
from .lm_data import VOCAB_FILE, LMBatches, Vocabulary
from .lm_head import HEAD_FILE, LanguageModel
from .model import State
from .weights import CONFIG_FILE, WEIGHTS_FILE, WEIGHTS_INDEX, read_safetensors, save_model

CHECKPOINTS, LATEST = "checkpoints", "latest.json"
LOG_FILE, PLOT_FILE, RUN_RECORD = "log.jsonl", "learning_curve.png", "run.json"
RUN_FILES = (RUN_RECORD, CHECKPOINTS, LOG_FILE, PLOT_FILE, CONFIG_FILE)  # what says a folder holds a run or a model
MODEL_FILES = (CONFIG_FILE, WEIGHTS_FILE, WEIGHTS_INDEX, HEAD_FILE, VOCAB_FILE)  # and the weight shards, by name:
WEIGHT_SHARD = re.compile(r"model-\d{5}-of-\d{5}\.safetensors")
STEP = re.compile(r"step-\d{8}")  # a checkpoint's folder
CHECKPOINT_FILE = re.compile(r"optimizer\.safetensors|trainer\.json|rank\d+\.(safetensors|json)")


def is_model_file(name: str) -> bool:
    """Whether ``name`` is one of a model folder's own files (config, weights or their shards, head, vocabulary)."""
    return name in MODEL_FILES or bool(WEIGHT_SHARD.fullmatch(name))


def run_files(out: Path) -> ownership.Owned:
    """Whether a path in ``out`` is one a training run writes there (or its temporary): the run record, log and
    plot, the model, ``checkpoints/`` with ``latest.json`` and step folders of a model, optimizer and rank states."""

    def ours(path: Path) -> bool:
        name = temporary_target(path.name) or path.name
        if path.parent == out:
            return (
                name in (RUN_RECORD, LOG_FILE, PLOT_FILE, locks.LOCK)
                or is_model_file(name)
                or (name == CHECKPOINTS and path.is_dir())
            )
        if path.parent == out / CHECKPOINTS:
            return name == LATEST or (bool(STEP.fullmatch(name)) and path.is_dir())
        in_a_step = path.parent.parent == out / CHECKPOINTS and bool(STEP.fullmatch(path.parent.name))
        return in_a_step and (is_model_file(name) or bool(CHECKPOINT_FILE.fullmatch(name))) and path.is_file()

    return ours


RUN_STARTS = ("fresh", "init_from", "continue")
"""How a run starts, as its record says (``train._run_record``)."""


def is_run(out: Path) -> bool:
    """Whether ``out`` holds a training run (its record, or the checkpoints of a run older than records), not just
    a model, nor someone else's files under the same names: ``--overwrite`` starts over a run, never anything else.
    A ``run.json`` counts only when it reads as a run's record."""
    try:
        record = read_run_record(out) if (out / RUN_RECORD).is_file() else {}
    except ValueError:
        record = {}
    return record.get("start") in RUN_STARTS or (out / CHECKPOINTS / LATEST).is_file()


def locked_run(out: Path) -> AbstractContextManager:
    """One run at a time in ``out``: its lock, held by rank 0 for every rank (``locks``), from before ``out`` is
    looked at until the run stops; a second run into the same folder is refused."""
    if os.environ.get("RANK", "0") != "0":
        return nullcontext()
    return locks.locked(out / locks.LOCK, run_busy(out))


def run_busy(out: Path) -> locks.FolderBusy:
    """The refusal of a run into ``out`` while another run writes it."""
    return locks.FolderBusy(
        f"another training run is writing {out}; wait for it to finish, or train into another --out"
    )


def check_clear_run(out: Path) -> None:
    """Refuse now what ``clear_run`` would refuse: a file the run did not write among the run's files."""
    ours = run_files(out)
    ownership.check_removable(out, [p for p in out.iterdir() if ours(p) and p.name != locks.LOCK], ours)


def clear_run(out: Path) -> None:
    """Remove what an earlier run wrote into ``out`` (for ``--overwrite``), each file checked to be the run's at
    every depth before any is removed; other files, and the lock the run holds, stay."""
    ours = run_files(out)
    ownership.remove(out, [p for p in out.iterdir() if ours(p) and p.name != locks.LOCK], ours)


def read_json(path: Path, what: str, keys: dict[str, type | tuple[type, ...]] | None = None) -> dict:
    """A JSON object the run wrote (``what`` it is, for the message), with ``keys`` of the given types; a file that is
    not one is a ``ValueError`` naming it and what it should be."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} cannot be read as JSON ({error}); it is {what}: restore it") from None
    wrong = [
        key
        for key, kind in (keys or {}).items()
        if not isinstance(record, dict) or not isinstance(record.get(key), kind)
    ]
    if not isinstance(record, dict) or wrong:
        raise ValueError(f"{path} is not {what} (no {', '.join(wrong) or 'JSON object'}); restore it") from None
    return record


TRAINER_KEYS = {"config": dict, "progress": dict, "param_groups": list}
"""What ``trainer.json`` holds: the run's options, its counters and the optimizer's settings."""


def read_trainer(checkpoint: Path) -> dict:
    """A checkpoint's ``trainer.json`` (``save_checkpoint``)."""
    return read_json(checkpoint / "trainer.json", "the checkpoint's record of the run", TRAINER_KEYS)


def write_run_record(out: Path, record: dict) -> None:
    """``run.json``: what the run started from (``train._run_record``), written before anything else of the run."""
    with atomic_path(out / RUN_RECORD) as tmp:
        Path(tmp).write_text(json.dumps(record, indent=2) + "\n")


def read_run_record(run: Path) -> dict:
    """The run's ``run.json`` ({} for a run older than records)."""
    path = run / RUN_RECORD
    if not path.is_file():
        return {}
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} cannot be read ({error}); it is the run's record of what it started from") from None
    return record if isinstance(record, dict) else {}


def save_language_model(
    lm: LanguageModel, vocab: Vocabulary, directory: Path, info: dict, storage: str = "fp32", head_storage: str = "fp32"
) -> None:
    """A model directory: what ``Elmo.load`` reads, plus the head and vocabulary for perplexity and fine-tuning."""
    save_model(lm.bilm, directory, extra_config={"vocab_size": len(vocab), **info}, storage=storage)
    lm.head.save(directory / HEAD_FILE, vocab, storage=head_storage)
    vocab.save(directory / VOCAB_FILE)


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


def load_rank_state(directory: Path, rank: int, data: LMBatches, device: torch.device) -> State:
    tensors = read_safetensors(directory / f"rank{rank}.safetensors")
    torch.set_rng_state(tensors["rng.cpu"])
    if "rng.cuda" in tensors and device.type == "cuda":
        torch.cuda.set_rng_state(tensors["rng.cuda"])
    path = directory / f"rank{rank}.json"
    position = read_json(
        path, f"rank {rank}'s place in the data", {"pass": int, "window": int, "files": (list, type(None))}
    )
    if position["pass"] < 0 or position["window"] < 0 or not all(isinstance(f, str) for f in position["files"] or []):
        raise ValueError(f"{path} is not rank {rank}'s place in the data (a negative place, or a file that is no name)")
    data.load_state(position)
    n_layers = sum(1 for k in tensors if k.endswith(".h"))
    return [(tensors[f"lstm.{l}.h"].to(device), tensors[f"lstm.{l}.c"].to(device)) for l in range(n_layers)]


def _optimizer_files(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    """Optimizer state as safetensors tensors + JSON (its ``state_dict`` would otherwise need pickle)."""
    sd = optimizer.state_dict()
    tensors = {f"{i}.{k}": v.detach().cpu().contiguous() for i, s in sd["state"].items() for k, v in s.items()}
    return tensors, {"param_groups": sd["param_groups"]}


def restore_optimizer(optimizer: torch.optim.Optimizer, checkpoint: Path, meta: dict) -> None:
    """The optimizer state saved in ``checkpoint``; ``meta``: its ``trainer.json``."""
    tensors = read_safetensors(checkpoint / "optimizer.safetensors")
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
    info: dict,
    config: dict,
    corpus: list[dict],
    rank: int,
    world: int,
) -> None:
    """Every rank writes its own state into the step's folder; rank 0 adds the rest and moves ``latest`` last.
    ``position``: where this rank's data continues (``LMBatches.state``); ``info``: what config.json records besides
    the architecture; ``config``: the run's options and ``corpus`` its files (``train.corpus_record``), which
    ``--resume`` checks against its own."""
    directory = out / CHECKPOINTS / f"step-{progress['step']:08d}"
    if rank == 0:
        directory.mkdir(parents=True, exist_ok=True)
    barrier(world)
    _save_rank_state(directory, rank, position, state)
    barrier(world)
    if rank != 0:
        return
    save_language_model(lm, vocab, directory, info)
    tensors, meta = _optimizer_files(optimizer)
    with atomic_path(directory / "optimizer.safetensors") as tmp:
        save_file(tensors, tmp)
    with atomic_path(directory / "trainer.json") as tmp:
        record = {**meta, "progress": progress, "world_size": world, "config": config, "corpus": corpus}
        Path(tmp).write_text(json.dumps(record))
    with atomic_path(out / CHECKPOINTS / LATEST) as tmp:
        Path(tmp).write_text(json.dumps({"checkpoint": directory.name}))
    ours = run_files(out)
    stale = [old for old in sorted((out / CHECKPOINTS).glob("step-*"))[:-2] if old.name != directory.name]
    # never the one latest.json now names, nor one holding a file the run did not write
    ownership.remove(out, [old for old in stale if not ownership.foreign(out, ours, [old])], ours)


def latest_checkpoint(out: Path) -> Path | None:
    pointer = out / CHECKPOINTS / LATEST
    if not pointer.is_file():
        return None
    name = read_json(pointer, "the name of the run's latest checkpoint", {"checkpoint": str})["checkpoint"]
    if not STEP.fullmatch(name) or not (out / CHECKPOINTS / name).is_dir():
        raise ValueError(f"{pointer} names {name!r}, which is not a checkpoint in {out / CHECKPOINTS}; restore it")
    return out / CHECKPOINTS / name


def append_log(out: Path, record: dict) -> None:
    with writing(out / LOG_FILE), open(out / LOG_FILE, "a") as f:
        f.write(json.dumps(record) + "\n")


def truncate_log(out: Path, step: int) -> None:
    """On resume, drop what the interrupted run logged after the checkpoint it resumes from (and a last line a kill
    cut short)."""
    path = out / LOG_FILE
    if path.is_file():
        kept = [record for record in read_log(out, killed=True) if record["step"] <= step]
        with atomic_path(path) as tmp:
            Path(tmp).write_text("".join(json.dumps(record) + "\n" for record in kept))


def read_log(folder: Path, killed: bool = False) -> list[dict]:
    """The records of a run's or a model's ``log.jsonl`` (none when it has no log); a line that is not a record of
    the log is a ``ValueError`` naming the file and line, but for a last line cut short by a kill (``killed``: the
    run was killed, and ends without its newline)."""
    path = folder / LOG_FILE
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            if killed and number == len(lines):  # the last line, without its newline: cut short by the kill
                break
            raise ValueError(f"{path}, line {number} is not a record of the run's log ({error}); restore it") from None
        if not isinstance(record, dict) or not isinstance(record.get("step"), int):
            raise ValueError(f"{path}, line {number} is not a record of the run's log (no step); restore it")
        records.append(record)
    return records


def plot_learning_curve(out: Path) -> None:
    """``learning_curve.png``: training and validation perplexity against tokens seen."""
    records = read_log(out)
    curves = {
        "train (running, both directions)": [(r["tokens"], r["train_ppl"]) for r in records if "train_ppl" in r],
        "validation (mean of directions)": [(r["tokens"], r["valid"]["mean"]) for r in records if "valid" in r],
    }
    plot_perplexity(curves, out / PLOT_FILE, marked=["validation (mean of directions)"])


def plot_perplexity(
    curves: dict[str, list[tuple[float, float]]],
    path: Path,
    ylabel: str = "perplexity",
    marked: list[str] | None = None,
    xlabel: str = "tokens seen (per direction)",
) -> None:
    """Perplexity curves (label -> (x, perplexity) points; x: tokens seen unless ``xlabel`` says otherwise) on a
    log scale, written atomically as a PNG; the ``marked`` curves (default: all) show their points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in curves.items():
        if points:
            marker = "o" if marked is None or label in marked else None
            ax.plot(*zip(*points), label=label, marker=marker, markersize=3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)
