"""Hand-made labels of some words' uses in the demo corpora: the sense and the part of speech of every use of the
word-in-context examples' words (``labels.tsv`` beside each demo corpus; its README says how they were made).

A label belongs to a sentence and a token position in it, so it applies wherever that sentence is: a hit of the
demo index, an example sentence typed as it is, or the same document in one's own index.
"""

from __future__ import annotations

import csv
import functools
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .corpora import DEMOS

LABELS_FILE = "labels.tsv"
COLUMNS = ["doc_id", "position", "word", "sense", "pos", "sentence"]


@dataclass(frozen=True)
class UseLabel:
    """What one use of a word means (``sense``, as the labels file names it) and its part of speech (``pos``)."""

    word: str
    sense: str
    pos: str


def read_labels(path: Path) -> dict[tuple[str, int], UseLabel]:
    """(sentence, token position) -> the label of that use, from one labels file."""
    with path.open(encoding="utf-8", newline="") as lines:
        rows = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
        if rows.fieldnames != COLUMNS:
            raise ValueError(f"{path}: the columns must be {', '.join(COLUMNS)}")
        return {
            (row["sentence"], int(row["position"])): UseLabel(row["word"], row["sense"], row["pos"]) for row in rows
        }


@functools.cache
def demo_labels() -> dict[tuple[str, int], UseLabel]:
    """The labels of every shipped demo corpus (a missing file: none)."""
    labels: dict[tuple[str, int], UseLabel] = {}
    for demo in DEMOS.values():
        path = demo.corpus_dir / LABELS_FILE
        if path.is_file():
            labels.update(read_labels(path))
    return labels


@dataclass(frozen=True)
class Agreement:
    """How many labelled neighbours share the query's sense and part of speech, out of ``labelled``."""

    same_sense: int
    same_pos: int
    labelled: int


def agreement(query: UseLabel, neighbours: Sequence[UseLabel | None]) -> Agreement:
    """Count, among the neighbours that have labels, those of the query's sense and those of its part of speech."""
    known = [label for label in neighbours if label is not None]
    return Agreement(
        same_sense=sum(label.word == query.word and label.sense == query.sense for label in known),
        same_pos=sum(label.pos == query.pos for label in known),
        labelled=len(known),
    )


def purity(clusters: Sequence[int], labels: Sequence[UseLabel | None]) -> float | None:
    """How well clusters follow the labelled senses: the share of labelled uses that are of their cluster's most
    common labelled sense (so each cluster weighs by its labelled uses). None when no use is labelled."""
    senses: dict[int, Counter[str]] = defaultdict(Counter)
    for cluster, label in zip(clusters, labels):
        if label is not None:
            senses[cluster][label.sense] += 1
    labelled = sum(sum(counts.values()) for counts in senses.values())
    return sum(max(counts.values()) for counts in senses.values()) / labelled if labelled else None
