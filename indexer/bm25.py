"""Keyword ranking for hybrid search: Okapi BM25 over the stored sentence tokens, and rank fusion."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from .words import is_word, normalize


def terms(tokens: Iterable[str]) -> list[str]:
    """BM25 terms of a token list: lowercased words, punctuation dropped."""
    return [normalize(t) for t in tokens if is_word(t)]


class BM25:
    """Okapi BM25 (k1, b) precomputed as a sparse sentence x term weight matrix, so a query is a column sum."""

    def __init__(self, sentences: Iterable[Sequence[str]], k1: float = 1.5, b: float = 0.75):
        self.vocab: dict[str, int] = {}
        indices, indptr = [], [0]
        for tokens in sentences:
            indices.extend(self.vocab.setdefault(t, len(self.vocab)) for t in terms(tokens))
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

    def search(self, tokens: Sequence[str], k: int, deleted: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, sentence ids) among sentences sharing at least one term with the query."""
        columns = sorted({self.vocab[t] for t in terms(tokens) if t in self.vocab})
        if not columns:
            return np.zeros(0, np.float32), np.zeros(0, np.int64)
        scores = np.asarray(self.matrix[:, columns].sum(axis=1)).ravel()
        if deleted is not None:
            scores[deleted] = 0
        candidates = np.flatnonzero(scores > 0)
        top = candidates[np.argsort(-scores[candidates], kind="stable")[:k]]
        return scores[top], top


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k: int, c: int = 60) -> list[tuple[int, float]]:
    """Fuse ranked id lists: score(id) = sum over lists of 1 / (c + rank), rank from 1 (Cormack et al. 2009)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[int(item)] = fused.get(int(item), 0.0) + 1.0 / (c + rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
