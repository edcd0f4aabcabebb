"""Shipping a finished run as a model folder for the repository, and the model card's block of figures."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from . import ownership
from .commands import program
from .errors import placing
from .files import TMP_DIR_PREFIX, current_umask, exchange, writing
from .lm_head import LanguageModel, load_language_model
from .model_files import model_hash
from .ownership import NotOwnedError
from .run_folder import (
    LOG_FILE,
    is_model_file,
    is_run,
    plot_learning_curve,
    read_log,
    read_run_record,
    save_language_model,
)
from .weights import CONFIG_FILE, read_config

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


MODEL_BUDGET_BYTES = 24_000_000  # what one shipped model may weigh on disk
BESIDE_WEIGHTS_BYTES = 2_000_000  # room for what ships beside the weights: vocabulary, learning curve, card, log


def shipped_storage(lm: LanguageModel, storage: str = "auto") -> str:
    """The biLM's storage (``weights.STORAGES``; the head is always float16): ``auto`` is float16 when the model
    then fits ``MODEL_BUDGET_BYTES``, else int8 (its deviation from float32 is measured in the README)."""
    if storage != "auto":
        return storage
    float16_bytes = 2 * sum(p.numel() for p in lm.parameters())
    return "fp16" if float16_bytes + BESIDE_WEIGHTS_BYTES <= MODEL_BUDGET_BYTES else "int8"


def _top_level_file(destination: Path) -> ownership.Owned:
    """What ship may replace in a model folder: its files (the model's, replaced; the others, kept), no folder."""
    return lambda path: path.parent == destination and path.is_file()


def check_destination(run: Path, destination: Path, shipped_hash: str, overwrite: bool) -> None:
    """Ship writes a new (or empty) folder, the model ``run`` continued, or the model this run already made
    (``shipped_hash``, the content hash of what it ships now); another model only with ``overwrite``. Never a
    folder that is not a model, nor one holding folders or links (``ship`` would lose them), whatever the flag."""
    if not destination.exists() and not destination.is_symlink():
        return
    if destination.is_symlink() or not destination.is_dir():
        raise NotOwnedError(f"--to {destination} is not a folder; give the model folder to write")
    strangers = ownership.foreign(destination, _top_level_file(destination))
    if strangers:
        raise NotOwnedError(
            f"--to {destination} holds {ownership.listing(destination, strangers)}, which ship would not keep (it "
            "keeps the files beside a model, not folders or links): move them away, or choose another folder"
        )
    if not any(destination.iterdir()):
        return
    if not (destination / CONFIG_FILE).is_file():
        raise NotOwnedError(
            f"--to {destination} is not empty and not a model folder ({CONFIG_FILE} is missing); ship replaces only a "
            "model: choose a new or empty folder"
        )
    try:
        current = model_hash(destination)
    except (OSError, ValueError):  # a damaged model: the run cannot have continued it
        current = None
    record = read_run_record(run)
    continued = record.get("model_hash") if record.get("start") == "continue" else None
    if overwrite or (current is not None and current in (continued, shipped_hash)):
        return
    if record.get("start") == "init_from" and current is not None and current == record.get("model_hash"):
        raise NotOwnedError(
            f"--to {destination} holds the model {run} was fine-tuned from (--init-from {record['model']}); a "
            "fine-tuned model is a new one: ship it to another folder, or pass --overwrite to replace that model"
        )
    started = f"continued {record['model']} (hash {continued})" if continued else "did not continue a model"
    raise NotOwnedError(
        f"--to {destination} holds another model (hash {current or 'unreadable'}) than the one {run} continued (the "
        f"run {started}); choose another folder, or pass --overwrite to replace it"
    )


def ship(run: str | Path, destination: str | Path, overwrite: bool = False, storage: str = "auto") -> None:
    """A finished run as a model folder for the repository: weights in ``storage`` (``shipped_storage``), a float16
    head, the vocabulary, and the learning curve; when the run continued the model already at ``destination``,
    its log goes on from that model's log and the model card (README.md) is kept, its block of training figures
    rewritten (see ``update_card_figures``) and so are the other files shipped beside the model (the Korean GloVe).
    The new folder replaces the old one only when whole, and only a model the run continued or made
    (``check_destination``; ``overwrite``: any model)."""
    run, destination = Path(run), Path(destination).absolute()  # "" or "." has a parent to stage in beside it
    if is_run(run) and not (run / CONFIG_FILE).is_file():  # a run's model is written when it stops
        raise FileNotFoundError(
            f"the run in {run} has not finished (it writes its model when it stops; an interrupted run keeps only "
            f"its checkpoints): finish it with `{program('encoder')} train --resume --out {run}` and its other "
            "options, then ship it"
        )
    lm, vocab = load_language_model(run)
    info = {k: v for k, v in read_config(run).items() if k in ("name", "language", "training")}  # _model_info's
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=destination.parent, prefix=f"{TMP_DIR_PREFIX}{destination.name}-"))
    staging.chmod(0o777 & ~current_umask())  # mkdtemp makes 0700: the model folder gets the usual permissions
    try:
        with writing(destination):
            save_language_model(lm, vocab, staging, info, storage=shipped_storage(lm, storage), head_storage="fp16")
        check_destination(run, destination, model_hash(staging), overwrite)
        with writing(destination):
            _complete(run, destination, staging, info)
        _swap(destination, staging)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def _complete(run: Path, destination: Path, staging: Path, info: dict) -> None:
    """Add to the new model folder the log (the old model's, then the run's), its plot, the card and the files
    shipped beside the old model."""
    run_log = read_log(run)
    first_step = run_log[0]["step"] if run_log else info["training"]["step"]
    earlier = [r for r in read_log(destination) if r["step"] < first_step]
    (staging / LOG_FILE).write_text("".join(json.dumps(r) + "\n" for r in earlier + run_log))
    if earlier or run_log:
        plot_learning_curve(staging)
    if (destination / CARD_FILE).is_file():
        card = (destination / CARD_FILE).read_text()
        (staging / CARD_FILE).write_text(update_card_figures(card, info["training"], earlier + run_log))
    for kept in destination.iterdir() if destination.is_dir() else []:  # what ships beside the model (a GloVe)
        if kept.is_file() and not (staging / kept.name).exists() and not is_model_file(kept.name):
            shutil.copy2(kept, staging / kept.name)


def _swap(destination: Path, staging: Path) -> None:
    """``staging`` becomes ``destination`` in one step (``files.exchange``: a process killed at any moment leaves the
    old model or the new one there, never neither); the old folder, whose files are all in the new one or replaced
    by it (``check_destination``), goes."""
    placing(destination)
    if not destination.exists():
        staging.rename(destination)
        return
    if exchange(staging, destination):  # staging now holds the old model
        ownership.remove(staging.parent, [staging], lambda path: path == staging or path.is_file())
        return
    old = Path(tempfile.mkdtemp(dir=destination.parent, prefix=f"{TMP_DIR_PREFIX}{destination.name}-old-"))
    destination.rename(old / destination.name)
    staging.rename(destination)
    ownership.remove(old, [old / destination.name], lambda path: path == old / destination.name or path.is_file())
    old.rmdir()
