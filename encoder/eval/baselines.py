"""Baselines that need no biLM, each built in one place so every task that reports it builds it the same way.

A contextual model's score means little until it stands beside what simpler signals already get:

* ``bag_of_context``: the mean GloVe vector of the *other* words of a sentence (stopwords dropped). It has
  no idea which word is the target, yet it separates word senses (the topic of a sentence tells "river
  bank" from "savings bank"), so WiC, WSD and the sense probe report it as their GloVe column.
* ``majority_accuracy``: always answer the training set's most frequent label (WiC).
* ``bag_of_words_cosine`` / ``tfidf_cosine``: sentence similarity from shared words alone (STS-B).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..glove import Glove

STOPWORDS = frozenset(
    """a an the and or but if so than that this these those to of in on at by for from with
    into onto about as up out off over under after before while when until is are was were be been am do does did
    has have had it its i me my we us our you your he him his she her they them their who which what there here
    not no . , ; : ! ? 's n't""".split()
)
"""Left out of a bag of context: they carry no sense and would pull every sentence's mean together."""


def context_words(tokens: Sequence[str], start: int, end: int) -> list[str]:
    """The words of a sentence outside the target span start..end-1, lowercased, stopwords dropped."""
    others = [*tokens[:start], *tokens[end:]]
    return [w for w in (t.lower() for t in others) if w not in STOPWORDS]


def bag_of_context(glove: Glove, tokens: Sequence[str], start: int, end: int) -> np.ndarray:
    """The bag-of-context vector of the target tokens[start:end]: the mean GloVe vector of ``context_words``
    (words GloVe does not know are skipped; zeros when none is known)."""
    return glove.mean(context_words(tokens, start, end))


def majority_accuracy(train_labels: np.ndarray, test_labels: np.ndarray) -> float:
    """Accuracy (%) on test of always answering train's most frequent label (the smaller label on a tie)."""
    values, counts = np.unique(train_labels, return_counts=True)
    return 100.0 * float(np.mean(test_labels == values[np.argmax(counts)]))


def content_words(tokens: Iterable[str]) -> list[str]:
    """Lowercased tokens that hold a letter or digit (punctuation says nothing about what a sentence means)."""
    return [t.lower() for t in tokens if any(c.isalnum() for c in t)]


@dataclass(frozen=True)
class Idf:
    """Smoothed inverse document frequency (scikit-learn's default): ln((1 + n) / (1 + df)) + 1."""

    document_frequency: dict[str, int]
    n_documents: int

    @classmethod
    def fit(cls, documents: Iterable[Iterable[str]]) -> Idf:
        """Count, for each ``content_words`` word, the documents that hold it."""
        frequency: Counter[str] = Counter()
        n = 0
        for document in documents:
            frequency.update(set(content_words(document)))
            n += 1
        return cls(dict(frequency), n)

    def __call__(self, word: str) -> float:
        return math.log((1 + self.n_documents) / (1 + self.document_frequency.get(word, 0))) + 1


def _weighted_cosine(first: Iterable[str], second: Iterable[str], weight: Callable[[str], float]) -> float:
    """Cosine of the two sentences' ``content_words`` count vectors, each word's count times ``weight(word)``."""
    a, b = Counter(content_words(first)), Counter(content_words(second))
    dot = sum(a[w] * b[w] * weight(w) ** 2 for w in a.keys() & b.keys())
    norm_a = math.sqrt(sum((c * weight(w)) ** 2 for w, c in a.items()))
    norm_b = math.sqrt(sum((c * weight(w)) ** 2 for w, c in b.items()))
    return dot / (norm_a * norm_b) if norm_a and norm_b else 0.0


def bag_of_words_cosine(first: Iterable[str], second: Iterable[str]) -> float:
    """Cosine of the two sentences' word-count vectors."""
    return _weighted_cosine(first, second, lambda word: 1.0)


def tfidf_cosine(first: Iterable[str], second: Iterable[str], idf: Idf) -> float:
    """Cosine of the two sentences' TF-IDF vectors (word counts times ``idf``)."""
    return _weighted_cosine(first, second, idf)
