"""``evaluate all --report DIR``: report.md (every table and the commands behind it), results.json, and plots.

Plots: ``scores.png``, each task's headline rows across the layer columns (which layer to use), and
``mix_weights.png``, the learned scalar-mix weights per task (as in the ELMo paper's figure of layer weights).
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .. import ownership  # noqa: E402
from ..files import atomic_path  # noqa: E402
from ..ownership import NotOwnedError  # noqa: E402
from .results import TaskResult  # noqa: E402

PLOT_ROWS = 2  # the first rows of a task are its headline ones (e.g. WSD's two ALL rows)


def plot_scores(results: dict[str, TaskResult], path: Path) -> None:
    """One panel per task: score against column (token, layers, average, mix, GloVe) for its headline rows."""
    tasks = [r for r in results.values() if r.rows and "token" in r.columns]
    figure, axes = plt.subplots(1, max(len(tasks), 1), figsize=(4.2 * max(len(tasks), 1), 3.6), squeeze=False)
    for ax, result in zip(axes[0], tasks):
        for row, cells in list(result.rows.items())[:PLOT_ROWS]:
            ax.plot(result.columns, [float("nan") if v is None else v for v in cells.values()], "o-", label=row)
        ax.set_title(result.task)
        ax.set_ylabel(result.metric)
        ax.tick_params(axis="x", labelrotation=45)
        ax.legend(fontsize=7)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=120)
    plt.close(figure)


def plot_mix_weights(results: dict[str, TaskResult], path: Path) -> None:
    """Grouped bars: each learned mix's normalized weight per layer."""
    mixes = [(f"{r.task}: {row}", w) for r in results.values() for row, w in r.mix_weights.items() if w]
    figure, ax = plt.subplots(figsize=(6, 3.6))
    width = 0.8 / max(len(mixes), 1)
    for k, (label, weights) in enumerate(mixes):
        ax.bar([j + k * width for j in range(len(weights))], weights, width, label=label)
    if mixes:
        n_layers = len(mixes[0][1])
        ax.set_xticks(
            [j + width * (len(mixes) - 1) / 2 for j in range(n_layers)],
            ["token", *(f"layer {j}" for j in range(1, n_layers))],
        )
        ax.legend(fontsize=7)
    ax.set_ylabel("softmax-normalized weight")
    ax.set_title("learned scalar-mix weights")
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=120)
    plt.close(figure)


def limit_text(limit: int | None) -> str:
    if limit is None:
        return "none (the full protocols)"
    return f"{limit} test items per task (training data never limited; each task's notes say what was cut)"


REPORT_FILES = ("report.md", "results.json", "scores.png", "mix_weights.png")


def is_report_folder(directory: Path) -> bool:
    """Whether ``directory`` holds a report of ours (its ``results.json`` as ``write_report`` writes it)."""
    try:
        output = json.loads((directory / "results.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(output, dict) and {"model", "results", "commands"} <= set(output)


def check_report_folder(directory: Path) -> None:
    """``--report`` writes its four files into a new folder, or one that holds other files but none of those
    names, or replaces an earlier report of ours; a file of someone else's under one of its names is refused
    (before any task runs)."""
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise NotOwnedError(f"--report {directory} is not a folder; give a folder to write the report into")
    taken = [
        directory / name for name in REPORT_FILES if (directory / name).exists() or (directory / name).is_symlink()
    ]
    if taken and not (is_report_folder(directory) and all(p.is_file() and not p.is_symlink() for p in taken)):
        raise NotOwnedError(
            f"--report {directory} holds {ownership.listing(directory, taken)}, which is not a report of ours; "
            "choose another folder"
        )


def write_report(directory: Path, output: dict, results: dict[str, TaskResult], command: str) -> None:
    """Write report.md, results.json, scores.png and mix_weights.png into ``directory`` (``check_report_folder``
    first), each atomically."""
    check_report_folder(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with atomic_path(directory / "results.json") as tmp:
        Path(tmp).write_text(json.dumps(output, indent=1) + "\n", encoding="utf-8")
    plot_scores(results, directory / "scores.png")
    plot_mix_weights(results, directory / "mix_weights.png")
    model = output["model"]
    lines = [
        "# ELMo evaluation report",
        "",
        f"Model **{model['name']}** (weights {model['hash']}, {model['layers']} layers of {model['dim']} dims); "
        f"GloVe: {output['glove'] or 'none given (no GloVe column)'}; "
        f"limit: {limit_text(output['limit'])}; total {sum(r.seconds for r in results.values()):.0f} s.",
        "",
        "Reproduce the whole report:",
        "",
        "```",
        command,
        "```",
        "",
        "or one task at a time:",
        "",
        "```",
        *output["commands"],
        "```",
        "",
        "![scores per layer](scores.png)",
        "",
        "![learned mix weights](mix_weights.png)",
        "",
    ]
    lines += ["| task | seconds |", "|---|---:|", *(f"| {n} | {r.seconds:.0f} |" for n, r in results.items()), ""]
    for name, result in results.items():
        lines += [f"## {name} ({result.seconds:.0f} s)", "", result.table(markdown=True), ""]
        if result.details:
            lines += [f"Details: `{json.dumps(result.details)}`", ""]
    with atomic_path(directory / "report.md") as tmp:
        Path(tmp).write_text("\n".join(lines), encoding="utf-8")
