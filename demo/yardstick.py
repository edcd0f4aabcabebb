"""What a count of same-sense neighbours is worth: beside it, how many of the query's sense chance would give and the
best possible, with a verdict; and the typical cosines of a word's same-sense and other-sense uses, the reference a
single cosine of two uses is read against. Both from the hand-made labels (``demo.labels``) of the word's uses in
the collection the neighbours come from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .labels import UseLabel, agreement

AT_CHANCE = 0.5
"""A count within this many uses of the chance rate is "at chance": counts are whole, the chance rate is not."""
TIE = 1e-4
"""Neighbours whose cosines differ by less than this are tied."""

Use = tuple[str, int]  # a use of a word: its sentence and the word's token position in it


def labelled_senses(uses: Sequence[Use], labels: Mapping[Use, UseLabel], word: str) -> list[str | None]:
    """The labelled sense of each of ``word``'s uses (None where the labels have none)."""
    found = (labels.get(use) for use in uses)
    return [label.sense if label is not None and label.word == word else None for label in found]


@dataclass(frozen=True)
class Yardstick:
    """``same_sense`` of the ``counted`` labelled neighbours share the query's sense, where ``chance`` of them would
    if they were drawn at random from the word's labelled uses, and at most ``best`` could."""

    same_sense: int
    counted: int
    chance: float
    best: int

    @property
    def verdict(self) -> str:
        """ "below", "at" or "above" chance (within ``AT_CHANCE`` of it: at)."""
        if self.same_sense < self.chance - AT_CHANCE:
            return "below"
        return "above" if self.same_sense > self.chance + AT_CHANCE else "at"


def yardstick(query: UseLabel, neighbours: Sequence[UseLabel | None], senses: Sequence[str | None]) -> Yardstick | None:
    """The query's same-sense neighbours against chance and the best possible. ``senses``: the labelled senses of
    the uses the neighbours could have come from (the word's uses in the collection, ``labelled_senses``). None
    when no neighbour or no such use is labelled."""
    counts = agreement(query, neighbours)
    labelled = Counter(sense for sense in senses if sense is not None)
    total = sum(labelled.values())
    if not counts.labelled or not total:
        return None
    in_sense = labelled[query.sense]
    return Yardstick(
        counts.same_sense, counts.labelled, counts.labelled * in_sense / total, min(counts.labelled, in_sense)
    )


def tied(scores: Sequence[float]) -> bool:
    """Whether the neighbours all scored alike (the token layer gives every use of a word one vector): then which of
    the word's uses they are is arbitrary, and so is their count."""
    return len(scores) > 1 and max(scores) - min(scores) < TIE


def leaders(yardsticks: Mapping[str, Yardstick]) -> list[str]:
    """The representations whose neighbours hold the most uses of the query's sense (empty when all tie)."""
    counts = {name: stick.same_sense for name, stick in yardsticks.items()}
    if len(set(counts.values())) < 2:
        return []
    return [name for name, count in counts.items() if count == max(counts.values())]


@dataclass(frozen=True)
class TypicalCosines:
    """The median cosine between two uses of a word of the same labelled sense, and of different senses (None where
    the labels give no such pair), with how many pairs each median is over."""

    same_sense: float | None
    other_sense: float | None
    same_pairs: int
    other_pairs: int


def typical_cosines(vectors: np.ndarray, senses: Sequence[str | None]) -> TypicalCosines:
    """Median cosines of the pairs of labelled uses (``vectors``: unit rows, one per use; ``senses``: their labels,
    None for an unlabelled use), same sense and different senses apart."""
    rows = [i for i, sense in enumerate(senses) if sense is not None]
    labels = np.array([senses[i] for i in rows])
    cosines = vectors[rows] @ vectors[rows].T
    upper = np.triu_indices(len(rows), k=1)
    pairs, same = cosines[upper], (labels[:, None] == labels[None, :])[upper]

    def median(values: np.ndarray) -> float | None:
        return float(np.median(values)) if len(values) else None

    return TypicalCosines(median(pairs[same]), median(pairs[~same]), int(same.sum()), int((~same).sum()))
