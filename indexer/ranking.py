"""Ranking documents: each method's candidates, the hybrid fusion, and one scale for every method's scores.

Methods (``METHODS``; ``Index.search`` runs them):

- ``elmo``: a document scores the best cosine between the query and one of its passages (a sentence or its
  title), each pooled from ELMo vectors with smooth-inverse-frequency weights under the search layer mix.
- ``keywords``: Okapi BM25 over whole documents (title and text).
- ``hybrid`` (the default): ``HYBRID_ELMO_WEIGHT`` x elmo + the rest x keywords, each min-max normalised over
  its own top ``CANDIDATES`` documents (a document missing from one list gets 0 there).
- ``glove``: the static baseline: cosine of the SIF-weighted mean GloVe vectors of query and whole document.

The weight, the search layer mix (``Settings.search_layers``) and the pooling were chosen on the 60 dev queries
of ``bench/queries_en.jsonl``; ``bench/search_quality.py`` measures every method and prints the weight grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

METHODS = ("hybrid", "elmo", "keywords", "glove")
HYBRID_ELMO_WEIGHT = 0.3
CANDIDATES = 100  # documents each method contributes to the fusion
PASSAGE_CANDIDATES = 1_000  # nearest passages gathered for the ELMo document scores
NULL_QUERIES, NULL_QUERY_WORDS = 64, 4  # random queries (of 1 to 4 words) that show what chance scores look like
NO_GOOD_MATCH = 0.5  # best document's relevance below this: no better than half of the random queries


@dataclass
class Ranking:
    """Candidate documents (rows of ``Index.docs``), best first, with the method's scores."""

    ids: np.ndarray
    scores: np.ndarray

    @classmethod
    def of(cls, best: dict[int, float], depth: int) -> Ranking:
        """The ``depth`` best of a document -> score mapping (ties broken by row, so results are stable)."""
        ordered = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]
        return cls(np.array([d for d, _ in ordered], np.int64), np.array([s for _, s in ordered], np.float32))

    def normalized(self, depth: int = CANDIDATES) -> dict[int, float]:
        """The top ``depth`` scores mapped onto [0, 1]: the best is 1, and 0 is what a document outside the list
        gets: the ``depth``-th score when the list was cut there, else 0 (a list that ends early holds every
        document with a score, as BM25's does)."""
        ids, scores = self.ids[:depth], self.scores[:depth]
        if not len(ids):
            return {}
        floor = float(scores[-1]) if len(ids) == depth else min(float(scores[-1]), 0.0)
        span = max(float(scores[0]) - floor, 1e-9)
        return {int(d): (float(s) - floor) / span for d, s in zip(ids, scores)}


def best_per_document(scores: np.ndarray, owners: np.ndarray) -> dict[int, float]:
    """Each document's best score among its passages (``owners[i]`` is passage i's document)."""
    best: dict[int, float] = {}
    for owner, score in zip(owners.tolist(), scores.tolist()):
        if score > best.get(owner, -np.inf):
            best[owner] = score
    return best


def fuse(elmo: Ranking, keywords: Ranking, depth: int, weight: float = HYBRID_ELMO_WEIGHT) -> Ranking:
    """Weighted sum of the two normalised rankings (a document missing from one gets 0 from it)."""
    a, b = elmo.normalized(), keywords.normalized()
    return Ranking.of({d: weight * a.get(d, 0.0) + (1 - weight) * b.get(d, 0.0) for d in a.keys() | b.keys()}, depth)


class Chance:
    """What a method's best score looks like for queries of random words, and where a score falls on it.

    ``relevance(score)`` is the share of random queries whose best document scored lower: about 0.5 is what
    chance gives, 1.0 is beyond every random query. The same scale serves every method, whatever its units.
    """

    def __init__(self, best_scores: list[float]):
        self.best = np.sort(np.asarray(best_scores, np.float64))

    def relevance(self, score: float) -> float:
        return float(np.searchsorted(self.best, score, side="left") / max(len(self.best), 1))


def random_queries(
    vocab: pd.DataFrame,
    stopwords: frozenset[str],
    n: int = NULL_QUERIES,
    words: int = NULL_QUERY_WORDS,
    seed: int = 0,
) -> list[list[str]]:
    """``n`` queries of ``words`` content words (not ``stopwords``) drawn as often as they occur in the indexed
    text (seeded).

    Drawn by occurrence, not uniformly over the vocabulary, so they are as common as a user's words: rare
    words alone would set the bar for keyword scores too high.
    """
    content = vocab[[w not in stopwords and any(ch.isalpha() for ch in w) for w in vocab["word"]]]
    if content.empty:
        return []
    rng = np.random.default_rng(seed)
    p = content["count"].to_numpy(np.float64) / content["count"].sum()
    return [content["word"].iloc[rng.choice(len(content), size=words, p=p)].tolist() for _ in range(n)]
