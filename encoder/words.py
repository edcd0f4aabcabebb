"""Which tokens are words worth indexing (not punctuation, not one of the language's stopwords: ``TextRules``),
and how much each word weighs when vectors are pooled."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def normalize(token: str) -> str:
    """The form used for counting, GloVe lookup, BM25 and same-word matching."""
    return token.lower()


def is_word(token: str) -> bool:
    """A token with at least one letter or digit (so not punctuation)."""
    return any(ch.isalnum() for ch in token)


def is_content_word(token: str, stopwords: frozenset[str]) -> bool:
    """Indexed in the token index: a word, and not one of ``stopwords`` (the language's, or none)."""
    return is_word(token) and normalize(token) not in stopwords


SIF_A = 1e-3
"""Smooth inverse frequency constant a (Arora et al. 2017): a word of probability p weighs a / (a + p)."""


class WordFrequencies:
    """Word counts of an index's text, and the smooth-inverse-frequency weights that pool vectors by them.

    Frequent words ("the", "of") weigh little and rare ones about 1, so a sentence's pooled vector is
    mostly its content words; punctuation weighs 0. Words the counts have not seen weigh 1.
    """

    def __init__(self, counts: Mapping[str, int]):
        self.counts = counts
        self.total = max(sum(counts.values()), 1)

    def weight(self, token: str) -> float:
        if not is_word(token):
            return 0.0
        return SIF_A / (SIF_A + self.counts.get(normalize(token), 0) / self.total)

    def weights(self, tokens: Sequence[str]) -> np.ndarray:
        """One weight per token; all ones when no token is a word (so pooling stays defined)."""
        w = np.array([self.weight(t) for t in tokens], np.float32)
        return w if w.sum() > 0 else np.ones(len(tokens), np.float32)
