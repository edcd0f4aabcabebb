"""STS Benchmark: Spearman x 100 between gold similarity and the cosine of mean-pooled sentence vectors.

Unsupervised (nothing is trained, so there is no learned mix): dev and test are scored as they are.
Baselines: GloVe (the mean vector of all the sentence's words), and two that only count shared words, the
cosine of word-count vectors and of TF-IDF vectors (document frequencies from the train split's sentences).
The files are tab-separated with unbalanced quotes and sometimes two trailing licence columns, so lines
are split on tabs and nothing else (no CSV quoting).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..glove import Glove
from ..text import tokenize
from .baselines import Idf, bag_of_words_cosine, tfidf_cosine
from .embeddings import Embedder, cosine, layer_views
from .results import GLOVE, TaskResult, cap

DATA = "stsb"
SPLITS = ("dev", "test")
BAG_OF_WORDS, TFIDF = "bag of words", "TF-IDF"
ANCHORS = (
    "anchors (test): Reimers & Gurevych 2019, mean of 300-d GloVe 840B vectors 58.02; "
    "sentence-transformers all-MiniLM-L6-v2 82.03"
)


@dataclass(frozen=True)
class StsPair:
    score: float
    first: str
    second: str


def read_sts(path: Path) -> list[StsPair]:
    """genre, file, year, id, score, sentence 1, sentence 2[, licence columns] per line, split on tabs."""
    pairs = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < 7 or not fields[5].strip() or not fields[6].strip():
                raise ValueError(f"{path}, line {number}: expected at least 7 tab-separated fields with two sentences")
            pairs.append(StsPair(float(fields[4]), fields[5], fields[6]))
    return pairs


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1 of x, tied values sharing their mean rank (as Spearman's rho needs)."""
    ranks = np.empty(len(x))
    ranks[np.argsort(x, kind="stable")] = np.arange(len(x))
    _, tie_group, tie_size = np.unique(x, return_inverse=True, return_counts=True)
    return (np.bincount(tie_group, weights=ranks) / tie_size)[tie_group]


def spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    """Spearman's rho x 100; None (shown as a dash, never as 0, which would read as measured) for fewer than two
    pairs or a constant side, where rho is undefined (``--limit 1``, a view whose cosines are all equal)."""
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return 100.0 * float(np.corrcoef(average_ranks(np.asarray(x)), average_ranks(np.asarray(y)))[0, 1])


def run(embedder: Embedder, data: Path, glove: Glove | None = None, limit: int | None = None) -> TaskResult:
    """The first ``limit`` pairs of dev and of test."""
    result = TaskResult(
        "sts",
        "Spearman x 100",
        [*embedder.views, *([GLOVE] if glove else []), BAG_OF_WORDS, TFIDF],
        notes=[ANCHORS, "GloVe: mean vector of the sentence's words"],
        details={},
    )
    train = read_sts(data / "sts-train.csv")
    idf = Idf.fit(tokenize(text) for pair in train for text in (pair.first, pair.second))
    for split in SPLITS:
        pairs = cap(read_sts(data / f"sts-{split}.csv"), limit, f"{split} pairs", result.notes)
        gold = np.array([p.score for p in pairs])
        tokens = [tokenize(text) for pair in pairs for text in (pair.first, pair.second)]
        pooled = np.stack([layers.mean(axis=1) for layers in embedder.layers(tokens)])  # (2N, L+1, D)
        scores = {name: cosine(v[0::2], v[1::2]) for name, v in layer_views(pooled).items()}
        if glove is not None:
            vectors = np.stack([glove.mean(t) for t in tokens])
            scores[GLOVE] = cosine(vectors[0::2], vectors[1::2])
        pairs_of_tokens = list(zip(tokens[0::2], tokens[1::2]))
        scores[BAG_OF_WORDS] = np.array([bag_of_words_cosine(a, b) for a, b in pairs_of_tokens])
        scores[TFIDF] = np.array([tfidf_cosine(a, b, idf) for a, b in pairs_of_tokens])
        result.add(split, {name: spearman(similarity, gold) for name, similarity in scores.items()})
        result.details[f"{split} pairs"] = len(pairs)
    return result
