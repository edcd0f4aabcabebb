"""One task's scores as a table: rows (protocol variants) by columns (ELMo layers, learned mix, GloVe).

Every task returns a ``TaskResult`` so the CLI, ``--json`` and the markdown report print them the same way.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TypeVar

GLOVE, MIX = "GloVe", "learned mix"
MISSING = "—"
T = TypeVar("T")


def cap(items: list[T], limit: int | None, what: str, notes: list[str]) -> list[T]:
    """The first ``limit`` test items, saying in ``notes`` what was left out.

    ``--limit`` caps only what a task scores, never what it trains on (sense centroids, probes, thresholds),
    so a limited run is a noisier estimate of the full one rather than a different, starved protocol.
    """
    if limit is None:
        return items
    notes.append(f"--limit {limit}: scored the first {min(limit, len(items)):,} of {len(items):,} {what}")
    return items[:limit]


@dataclass
class TaskResult:
    """Scores in ``rows[row][column]`` (None where a variant does not apply) plus what is needed to read them."""

    task: str
    metric: str
    columns: list[str]
    rows: dict[str, dict[str, float | None]] = field(default_factory=dict)
    mix_weights: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)
    seconds: float = 0.0
    decimals: dict[str, int] = field(default_factory=dict)  # per row where one decimal says too little (default 1)

    def add(self, row: str, scores: dict[str, float | None]) -> None:
        unknown = set(scores) - set(self.columns)
        if unknown:
            raise ValueError(f"columns {sorted(unknown)} are not among {self.columns}")
        self.rows[row] = {column: scores.get(column) for column in self.columns}

    def to_json(self) -> dict:
        return asdict(self)

    def table(self, markdown: bool = False) -> str:
        """The score table as aligned plain text, or as markdown: '|' in names escaped, and '<' everywhere (a
        row such as "<UNK> targets" would otherwise be read as an HTML tag and not shown)."""
        text = (lambda line: line.replace("<", "\\<")) if markdown else str
        cell = (lambda name: text(name).replace("|", "\\|")) if markdown else str
        header = [cell(c) for c in (self.metric, *self.columns)]
        body = [
            [cell(row), *(MISSING if v is None else f"{v:.{self.decimals.get(row, 1)}f}" for v in cells.values())]
            for row, cells in self.rows.items()
        ]
        if markdown:
            lines = ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * len(self.columns)]
            lines += ["| " + " | ".join(r) + " |" for r in body]
        else:
            widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
            lines = [
                "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                for r in [header, *body]
            ]
        gap = "\n" if markdown else ""  # markdown needs blank lines between paragraphs
        lines += [
            f"{gap}learned mix weights ({row}): " + ", ".join(f"{w:.2f}" for w in weights)
            for row, weights in self.mix_weights.items()
        ]
        lines += [f"{gap}note: {text(n)}" for n in self.notes]
        return "\n".join(lines)
