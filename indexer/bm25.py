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

    def __init__(
        self, documents: Iterable[Sequence[str]], live: np.ndarray | None = None, k1: float = 1.5, b: float = 0.75
    ):
        """``documents``: each document's keyword terms (``KeywordTerms``); ``live``: which of them count (None:
        all). The others score 0 and weigh nothing in the statistics (document frequencies, mean length), so the
        scores are those of an index of the live documents alone."""
        self.vocab: dict[str, int] = {}
        indices, indptr = [], [0]
        for document in documents:
            indices.extend(self.vocab.setdefault(t, len(self.vocab)) for t in document)
            indptr.append(len(indices))
        n = len(indptr) - 1
        tf = sp.csr_matrix((np.ones(len(indices), np.float32), indices, indptr), shape=(n, len(self.vocab)))
        if live is not None:
            tf = (sp.diags(live.astype(np.float32)) @ tf).tocsr()
            tf.eliminate_zeros()
        tf.sum_duplicates()
        length = np.asarray(tf.sum(axis=1)).ravel()
        n_live = n if live is None else int(live.sum())
        df = np.bincount(tf.indices, minlength=len(self.vocab))
        self.document_frequency = df
        idf = np.log1p((n_live - df + 0.5) / (df + 0.5)).astype(np.float32)
        rows = np.repeat(np.arange(n), np.diff(tf.indptr))
        mean_length = length.sum() / n_live if n_live else 1.0
        norm = k1 * (1 - b + b * length[rows] / max(mean_length, 1e-9))
        tf.data = idf[tf.indices] * tf.data * (k1 + 1) / (tf.data + norm)
        self.matrix = tf.tocsc()

    def holds(self, term: str) -> bool:
        """Whether a live document holds ``term`` (a term only deleted documents held is not held)."""
        column = self.vocab.get(term)
        return column is not None and self.document_frequency[column] > 0

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """Every document's score for the query's keyword terms (0 where it holds none of them, or is not live)."""
        columns = sorted({self.vocab[t] for t in query if t in self.vocab})
        if not columns:
            return np.zeros(self.matrix.shape[0], np.float32)
        return np.asarray(self.matrix[:, columns].sum(axis=1)).ravel()

    def search(self, query: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, document ids) among documents holding at least one of the query's terms."""
        scores = self.scores(query)
        candidates = np.flatnonzero(scores > 0)
        top = candidates[np.argsort(-scores[candidates], kind="stable")[:k]]
        return scores[top], top
