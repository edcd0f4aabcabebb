"""Shipping a finished run as a model folder for the repository, and the model card's block of figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .lm_head import LanguageModel, load_language_model
from .run_folder import LOG_FILE, plot_learning_curve, save_language_model
from .weights import read_config

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


def ship(run: str | Path, destination: str | Path, storage: str = "auto") -> None:
    """A finished run as a model folder for the repository: weights in ``storage`` (``shipped_storage``), a float16
    head, the vocabulary, and the learning curve; when the run continued the model already at ``destination``,
    its log goes on from that
    model's log and the model card (README.md) is kept, its block of training figures rewritten (see
    ``update_card_figures``) and so are the other files shipped beside the model (the Korean GloVe). The new
    folder replaces the old one only when whole."""
    run, destination = Path(run), Path(destination)
    lm, vocab = load_language_model(run)
    info = {k: v for k, v in read_config(run).items() if k in ("name", "language", "training")}  # _model_info's
    staging = destination.with_name(f".{destination.name}.shipping")
    shutil.rmtree(staging, ignore_errors=True)
    save_language_model(lm, vocab, staging, info, storage=shipped_storage(lm, storage), head_storage="fp16")
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
