"""Ranking documents: each method's scores, the hybrid fusion, and relevance, one 0-100 % scale for every method.

Methods (``METHODS``; ``Index.search`` runs them):

- ``elmo``: a document scores the best cosine between the query and one of its passages (a sentence or its
  title), each pooled from ELMo vectors with smooth-inverse-frequency weights under the search layer mix.
- ``keywords``: Okapi BM25 over whole documents (title and text), on stemmed words (``bm25.KeywordTerms``).
- ``hybrid`` (the default): ``HYBRID_ELMO_WEIGHT`` x the ELMo score + the rest x the BM25 score, each first
  measured in units of chance (``Null.z``), so that a cosine and a BM25 score can be added. Every document
  among the ``CANDIDATES`` best of either part (the k best, when k is larger) gets both parts' exact scores.
- ``glove``: the static baseline: cosine of the SIF-weighted mean GloVe vectors of query and whole document.

Relevance: queries of random words (``random_queries``, as many words as the user's) show what a method's best
document scores by chance: ``Null`` is the mean, spread and maximum of those best scores. A document's relevance
is Φ((score - mean) / spread - margin): the share of random queries it beats by a margin of so many spreads, under
a normal fit. The margin is there because a real query that is off the collection's topics still shares a rare
word with some document more often than random common words do ("tips for sleeping better" and "How much should
you tip?"). It is ``KNOWN_WORDS_MARGIN`` when the collection holds every content word of the query, and
``RELEVANCE_MARGIN`` when it lacks one (``relevance_margin``): a word no document has is a sign that the query is
about something else (most off-topic queries have one, few on-topic ones). Both were set on the off-topic dev
queries of ``bench/offtopic_en.jsonl`` (and checked on a second set, ``bench/offtopic_en_check.jsonl``). 100 %
(0.995 and over) is kept for a score above every random query's best by the margin; under it relevance stops at
``BELOW_THE_BEST``. Relevance never falls as the score the list is sorted by rises, so it falls down the list;
below ``RELEVANCE_LINE`` a document is not clearly better than chance ("no good match" when even the best one is).
Under ``MIN_CALIBRATED_DOCUMENTS`` documents the random queries' best documents are too few to say what chance
scores (``calibrated``): a hit then has no relevance and no line (None), and no "no good match" is said; the
documents are ranked by score all the same.

The weight, the search layer mix (``Settings.search_layers``) and the pooling were chosen on the 60 dev queries
of ``bench/queries_en.jsonl``; ``bench/search_quality.py`` measures every method and prints the weight grid.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtr

METHODS = ("hybrid", "elmo", "keywords", "glove")
HYBRID_ELMO_WEIGHT = 0.4
CANDIDATES = 100  # documents each part of the hybrid contributes
PASSAGE_CANDIDATES = 1_000  # nearest passages gathered for the ELMo document scores
NULL_QUERIES, NULL_QUERY_WORDS = 64, 4  # random queries (of 1 to 4 words) that show what chance scores look like
DRAWN_PER_DOCUMENT = 10  # a document's occurrences of a word that count in the random queries' draw, at most
RELEVANCE_LINE = 0.5  # relevance below this: no better than half of the random queries (by the margin)
RELEVANCE_MARGIN = 2.5  # spreads a score must beat a random query's best by, when the collection lacks a query word
KNOWN_WORDS_MARGIN = 1.75  # the same when it holds every content word (both set on bench/offtopic_en.jsonl)
BELOW_THE_BEST = 0.99  # relevance at most, unless the score beats every random query's best by the margin
MIN_CALIBRATED_DOCUMENTS = 50  # fewer documents: relevance is not calibrated (too few to show chance)
MIN_SPREAD = 1e-3  # a null spread never below this, so that identical chance scores do not divide by zero


def parts_of(method: str, elmo_weight: float = HYBRID_ELMO_WEIGHT) -> dict[str, float]:
    """The parts a method's score is made of, with their weights: the hybrid's two, else the method itself."""
    return {"elmo": elmo_weight, "keywords": 1 - elmo_weight} if method == "hybrid" else {method: 1.0}


@dataclass
class Ranking:
    """Candidate documents (rows of ``Index.docs``), best first: the method's scores, and each part's."""

    ids: np.ndarray
    scores: np.ndarray
    parts: dict[str, np.ndarray]

    @classmethod
    def of(cls, ids: np.ndarray, scores: np.ndarray, parts: Mapping[str, np.ndarray], depth: int) -> Ranking:
        """The ``depth`` best of the documents ``ids`` by ``scores`` (ties broken by row, so results are stable)."""
        ids, scores = np.asarray(ids, np.int64), np.asarray(scores, np.float64)
        order = np.lexsort((ids, -scores))[:depth]
        return cls(ids[order], scores[order], {part: np.asarray(s, np.float64)[order] for part, s in parts.items()})


def best_per_document(scores: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each document's best score among its passages (``owners[i]`` is passage i's document): (documents, best)."""
    documents, where = np.unique(owners, return_inverse=True)
    best = np.full(len(documents), -np.inf)
    np.maximum.at(best, where, scores)
    return documents, best


@dataclass(frozen=True)
class Null:
    """What a method's best document scores for random-word queries: their mean, spread (standard deviation) and
    the best of them."""

    mean: float
    spread: float
    best: float

    @classmethod
    def of(cls, best_scores: Iterable[float]) -> Null:
        """The null of the best scores of random queries (those that found nothing left out)."""
        scores = np.array([s for s in best_scores if np.isfinite(s)], np.float64)
        if not len(scores):
            return cls(0.0, 1.0, 0.0)
        return cls(float(scores.mean()), max(float(scores.std()), MIN_SPREAD), float(scores.max()))

    def z(self, scores: np.ndarray) -> np.ndarray:
        """Scores in units of chance: how many spreads above the random queries' mean best score."""
        return (np.asarray(scores, np.float64) - self.mean) / self.spread

    def relevance(self, scores: np.ndarray, margin: float) -> np.ndarray:
        """The share of random queries each score beats by ``margin`` spreads (normal fit; ``relevance_margin``),
        in [0, 1]; at most ``BELOW_THE_BEST`` unless it beats the best of them by the margin too."""
        scores = np.asarray(scores, np.float64)
        share = ndtr(self.z(scores) - margin)
        above_all = scores >= self.best + margin * self.spread
        return np.where(above_all, share, np.minimum(share, BELOW_THE_BEST))


def relevance_margin(content_terms: Collection[str], holds: Callable[[str], bool]) -> float:
    """The margin, in spreads, by which a query's documents must beat chance: ``KNOWN_WORDS_MARGIN`` when the
    collection's live documents hold every one of the query's ``content_terms`` (``holds``, e.g. ``BM25.holds``; it
    has at least one), else ``RELEVANCE_MARGIN``."""
    known = bool(content_terms) and all(holds(term) for term in content_terms)
    return KNOWN_WORDS_MARGIN if known else RELEVANCE_MARGIN


def calibrated(n_documents: int) -> bool:
    """Whether relevance means what it says in a collection of ``n_documents``: with fewer than
    ``MIN_CALIBRATED_DOCUMENTS`` the best documents of random queries are too few to show what chance scores."""
    return n_documents >= MIN_CALIBRATED_DOCUMENTS


def shows_relevance(best_above_line: bool | None) -> bool:
    """Whether a list of hits shows relevance (percentages, bars, the line where the weaker matches begin): only
    when its best hit is above the line (``best_above_line``). With no good match (False) its numbers would all be
    near 0 %, and without a relevance (None: too few documents) there are none: the hits are a plain ranked list."""
    return best_above_line is True


def fuse(parts: Mapping[str, np.ndarray], nulls: Mapping[str, Null], weights: Mapping[str, float]) -> np.ndarray:
    """The hybrid score: the weighted sum of the parts' scores in units of chance."""
    return sum(weight * nulls[part].z(parts[part]) for part, weight in weights.items())


def found_by_meaning(
    relevance: float | None,
    parts: Mapping[str, float],
    nulls: Mapping[str, Null],
    weights: Mapping[str, float],
    matched_words: Sequence[str],
    margin: float,
) -> bool:
    """Whether a document was found by meaning: it shares no keyword with the query (``matched_words``), so only
    the vectors can have brought it; or it is above the line (``relevance``), and of its ``parts`` ELMo's weighs
    most in its score and is itself above the line (by the query's ``margin``). Without a relevance (an
    uncalibrated collection) there is no line: only the first holds."""
    if not matched_words:
        return True
    if (
        relevance is None
        or relevance < RELEVANCE_LINE
        or "elmo" not in parts
        or nulls["elmo"].relevance(parts["elmo"], margin) < RELEVANCE_LINE
    ):
        return False
    shares = {part: weight * nulls[part].z(parts[part]) for part, weight in weights.items()}
    return max(shares, key=shares.get) == "elmo"


def random_queries(
    vocab: pd.DataFrame,
    stopwords: frozenset[str],
    n: int = NULL_QUERIES,
    words: int = NULL_QUERY_WORDS,
    seed: int = 0,
) -> list[list[str]]:
    """``n`` queries of ``words`` content words (not ``stopwords``) drawn as often as they occur in the indexed
    text, each document counting a word at most ``DRAWN_PER_DOCUMENT`` times (the vocabulary's ``drawn``), seeded.

    Drawn by occurrence, not uniformly over the vocabulary, so they are as common as a user's words: rare
    words alone would set the bar for keyword scores too high. Capped per document, so that one long document that
    repeats a few words (a log) cannot fill most random queries with them: chance then scored as high as any real
    match, and every search said "no good match". In the demo collections a few words reach the cap (2 English, 6
    Korean), and their random queries came out the same as without it: the figures of docs/search-quality.md stand.
    """
    content = vocab[[w not in stopwords and any(ch.isalpha() for ch in w) for w in vocab["word"]]]
    if content.empty:
        return []
    rng = np.random.default_rng(seed)
    weights = content["drawn"].to_numpy(np.float64)
    p = weights / weights.sum()
    return [content["word"].iloc[rng.choice(len(content), size=words, p=p)].tolist() for _ in range(n)]


def layers_name(weights: Sequence[float]) -> str:
    """What a layer mix uses, in words: "token layer (char-CNN, context-free)", "top layer", "all layers" or the
    weights themselves."""
    n = len(weights)
    named = {
        "token layer (char-CNN, context-free)": [1.0] + [0.0] * (n - 1),
        "top layer": [0.0] * (n - 1) + [1.0],
        "all layers": [1 / n] * n,
    }
    for name, preset in named.items():
        if np.allclose(weights, preset, atol=1e-6):
            return name
    return "layers " + " + ".join(f"{w:.2f}·h{j}" for j, w in enumerate(weights))


def method_name(method: str, weights: Sequence[float]) -> str:
    """A method as the command line names it, with the ELMo layers it uses (``layers_name``)."""
    return {
        "hybrid": f"keywords (BM25) + ELMo {layers_name(weights)}",
        "elmo": f"ELMo {layers_name(weights)}",
        "keywords": "keywords (BM25)",
        "glove": "GloVe (static baseline)",
    }[method]
