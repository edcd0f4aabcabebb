"""Keyword ranking: the terms keyword search matches on (stems, so "flooded" finds "flooding"), and Okapi BM25."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from nltk.stem.snowball import SnowballStemmer

from encoder.words import is_word, normalize

STEMMERS = {"en": "english"}
"""Languages whose words are stemmed (Snowball, no data to download); Korean tokens are already morphemes (Kiwi)."""


def terms(tokens: Iterable[str]) -> list[str]:
    """The words of a token list as they are counted: lowercased, punctuation dropped."""
    return [normalize(t) for t in tokens if is_word(t)]


class KeywordTerms:
    """What keyword search compares: each word's stem in a language with a stemmer, else the word itself."""

    def __init__(self, language: str):
        stemmer = SnowballStemmer(STEMMERS[language]) if language in STEMMERS else None
        self._stem = stemmer.stem if stemmer is not None else None
        self._known: dict[str, str] = {}  # word -> stem, as met (a corpus has far fewer words than tokens)

    def term(self, word: str) -> str:
        """The keyword term of one word (already a ``terms`` word: lowercased)."""
        if self._stem is None:
            return word
        stem = self._known.get(word)
        if stem is None:
            stem = self._known[word] = self._stem(word)
        return stem

    def __call__(self, tokens: Iterable[str]) -> list[str]:
        """The keyword terms of a token list (``terms``, stemmed)."""
        return [self.term(word) for word in terms(tokens)]


class BM25:
    """Okapi BM25 (k1, b) precomputed as a sparse document x term weight matrix, so a query is a column sum."""

    def __init__(self, documents: Iterable[Sequence[str]], k1: float = 1.5, b: float = 0.75):
        """``documents``: each document's keyword terms (``KeywordTerms``)."""
        self.vocab: dict[str, int] = {}
        indices, indptr = [], [0]
        for document in documents:
            indices.extend(self.vocab.setdefault(t, len(self.vocab)) for t in document)
            indptr.append(len(indices))
        n = len(indptr) - 1
        tf = sp.csr_matrix((np.ones(len(indices), np.float32), indices, indptr), shape=(n, len(self.vocab)))
        tf.sum_duplicates()
        length = np.diff(indptr).astype(np.float32)
        df = np.bincount(tf.indices, minlength=len(self.vocab))
        idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
        rows = np.repeat(np.arange(n), np.diff(tf.indptr))
        norm = k1 * (1 - b + b * length[rows] / max(length.mean() if n else 1.0, 1e-9))
        tf.data = idf[tf.indices] * tf.data * (k1 + 1) / (tf.data + norm)
        self.matrix = tf.tocsc()

    def scores(self, query: Sequence[str], deleted: np.ndarray | None = None) -> np.ndarray:
        """Every document's score for the query's keyword terms (0 where it holds none of them, or is deleted)."""
        columns = sorted({self.vocab[t] for t in query if t in self.vocab})
        if not columns:
            return np.zeros(self.matrix.shape[0], np.float32)
        scores = np.asarray(self.matrix[:, columns].sum(axis=1)).ravel()
        if deleted is not None:
            scores[deleted] = 0
        return scores

    def search(self, query: Sequence[str], k: int, deleted: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, document ids) among documents holding at least one of the query's terms."""
        scores = self.scores(query, deleted)
        candidates = np.flatnonzero(scores > 0)
        top = candidates[np.argsort(-scores[candidates], kind="stable")[:k]]
        return scores[top], top
