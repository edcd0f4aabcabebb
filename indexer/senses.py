"""Word senses: k-means over the vectors of a word's occurrences (its sense readout beside its ELMo layer mix, or
the mix alone), k the most stable under subsampling among the clusterings whose every sense has ``MIN_CLUSTER`` uses,
PCA to 2-D, each cluster named by the words that mark its uses out."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import adjusted_rand_score, silhouette_score

from encoder.lm_data import SPECIALS
from encoder.words import is_content_word, normalize

from .results import SenseCluster, SensePoint, Senses

MAX_AUTO_K = 8
MIN_CLUSTER = 5
"""Uses a sense needs at least for "auto" to report it: k is at most n // MIN_CLUSTER, and only clusterings whose
every cluster is this big are candidates."""
SUBSAMPLES = 5
SUBSAMPLE_SHARE = 0.8
MAX_SUBSAMPLE = 200
""""auto" clusters ``SUBSAMPLES`` seeded subsamples of this share of the uses (at most ``MAX_SUBSAMPLE``, which
bounds the cost for frequent words) at each candidate k. The rule (the most stable k, on the readout beside the ELMo
mix) was chosen by ``bench/sense_k.py`` on labelled development words (the demo's labels, SemCor): the best mean
adjusted Rand index over SemCor and the Korean demo words of the rules it compares, with no more k error on SemCor
than the silhouette rule before it and no Senses-page word left at one sense (docs/app.md, "Senses, how many")."""
N_EXAMPLES = 5


def beside_mix(readouts: np.ndarray, mix: np.ndarray) -> np.ndarray:
    """What a word's senses are clustered on: each use's sense readout (unit, already centred on the word) beside its
    ELMo layer mix centred on the word's mean use, each half of the cosine. The readout tells what the LM expects at
    the word, the mix what the word there is: together they separate senses best on the development words."""
    centred_mix = mix - mix.mean(0)
    centred_mix /= np.maximum(np.linalg.norm(centred_mix, axis=1, keepdims=True), 1e-12)
    return np.hstack([readouts, centred_mix]) / np.sqrt(2)


def stability(vectors: np.ndarray, k: int, labels: np.ndarray, seed: int = 0) -> float:
    """How much k-means at ``k`` finds the same senses in subsamples of the uses: the mean adjusted Rand index of
    each seeded subsample's clustering against ``labels`` (the whole set's) on the subsample's uses. Real senses
    come back whatever uses are left out; a split of one sense moves with the sample."""
    rng = np.random.default_rng(seed)
    n = len(vectors)
    agreement = []
    for i in range(SUBSAMPLES):
        sample = np.sort(rng.choice(n, min(int(SUBSAMPLE_SHARE * n), MAX_SUBSAMPLE), replace=False))
        again = KMeans(k, n_init=1, random_state=seed + 1 + i).fit_predict(vectors[sample])
        agreement.append(adjusted_rand_score(labels[sample], again))
    return float(np.mean(agreement))


def auto_k(vectors: np.ndarray, seed: int = 0) -> int:
    """The number of senses "auto" reports for these uses: of k = 2 .. min(8, n // MIN_CLUSTER), the k whose k-means
    has clusters of ``MIN_CLUSTER`` uses or more and comes back the most alike in subsamples (``stability``; the
    smallest such k on a tie); 2 where the uses can fill two senses yet no such clustering has clusters that big (a
    word is never collapsed to one sense while its uses could show two); 1 below 2 * ``MIN_CLUSTER`` uses, too few
    to tell senses apart."""
    n = len(vectors)
    best: tuple[float, int] | None = None
    for k in range(2, min(MAX_AUTO_K, n // MIN_CLUSTER) + 1):
        labels = KMeans(k, n_init=4, random_state=seed).fit_predict(vectors)
        if np.bincount(labels, minlength=k).min() >= MIN_CLUSTER:
            score = stability(vectors, k, labels, seed)
            if best is None or score > best[0]:
                best = (score, k)
    if best is not None:
        return best[1]
    return 2 if n >= 2 * MIN_CLUSTER else 1


def different_uses(vectors: np.ndarray) -> int:
    """How many of the uses' vectors differ: the most clusters k-means can make of them (a sentence repeated in the
    collection gives the same vector twice)."""
    return len(np.unique(vectors, axis=0))


def choose_clusters(vectors: np.ndarray, k: int | str = "auto", seed: int = 0) -> tuple[np.ndarray, float | None]:
    """Cluster labels (0 = largest cluster) and the silhouette of the chosen clustering (None for one cluster); k
    by ``auto_k`` when "auto", and never more than the ``different_uses``."""
    n = len(vectors)
    if k == "auto":
        k = auto_k(vectors, seed)
    k = min(int(k), different_uses(vectors))
    if k < 1:
        raise ValueError("k must be at least 1")
    if k == 1:
        return np.zeros(n, dtype=np.int64), None
    labels = KMeans(k, n_init=4, random_state=seed).fit_predict(vectors)
    defined = 1 < len(set(labels.tolist())) < n  # the silhouette needs two clusters, one of them with two uses
    silhouette = float(silhouette_score(vectors, labels, metric="cosine")) if defined else None
    by_size = {old: new for new, (old, _) in enumerate(Counter(labels.tolist()).most_common())}
    return np.array([by_size[c] for c in labels.tolist()], dtype=np.int64), silhouette


def label_score(inside: float, overall: float, n_clusters: int) -> float:
    """How well a word names a cluster: its mean weight over the cluster's uses, times how many times more it weighs
    there than over all the word's uses (log of the ratio; nothing when no more). One cluster: the mean weight."""
    if n_clusters == 1:
        return inside
    return inside * max(float(np.log(inside / overall)), 0.0) if inside > 0 else 0.0


def is_form_of(token: str, word: str) -> bool:
    """``token`` is ``word`` itself or ``word`` with an English inflection (bank, banks, bank's; play, played,
    playing): never a label of the word's own senses."""
    return re.fullmatch(re.escape(normalize(word)) + r"(?:s|es|d|ed|ing|'s)?", normalize(token)) is not None


def describe_senses(
    word: str,
    vectors: np.ndarray,
    sentences: Sequence[str],
    use_words: Sequence[Mapping[str, float]],
    stopwords: frozenset[str],
    k: int | str = "auto",
    seed: int = 0,
    positions: Sequence[int] | None = None,
    may_name: Callable[[str], bool] | None = None,
) -> Senses:
    """Cluster the occurrences (normalised vectors, one per occurrence) of ``word`` into senses.

    Each cluster is named by its most distinctive words (``label_score``): ``use_words`` holds, per occurrence, the
    words that may name it with their weights (the LM's likeliest words there and their probabilities, or the
    words of its sentence, 1 each); a word must mark two uses of a cluster or more, and is never a stopword,
    punctuation, a vocabulary's special token or a form of ``word`` itself. A cluster with no such word has an empty
    label. ``may_name`` narrows the names further by the language's rule (Korean: a noun, never a particle, an
    ending or a verb's stem; asked only of a cluster's best candidates). Its examples are the sentences whose vectors
    lie closest to the cluster centre. ``positions``: the word's token position in each sentence (kept in the
    points).
    """
    labels, silhouette = choose_clusters(vectors, k, seed)
    coords = PCA(2, random_state=seed).fit_transform(vectors) if len(vectors) > 2 else np.zeros((len(vectors), 2))
    namers = [
        {
            normalize(t): w
            for t, w in use.items()
            if w > 0 and is_content_word(t, stopwords) and t not in SPECIALS and not is_form_of(t, word)
        }
        for use in use_words
    ]
    n_clusters = int(labels.max()) + 1 if len(labels) else 0
    overall = Counter()
    for use in namers:
        overall.update(use)
    clusters = []
    for c in range(n_clusters):
        members = np.flatnonzero(labels == c)
        weights, support = Counter(), Counter()
        for m in members:
            weights.update(namers[m])
            support.update(namers[m].keys())
        scores = {
            w: label_score(total / len(members), overall[w] / len(namers), n_clusters)
            for w, total in weights.items()
            if support[w] >= min(2, len(members))
        }
        ranked = sorted((w for w in scores if scores[w] > 0), key=lambda w: (-scores[w], w))
        distinct = list(itertools.islice((w for w in ranked if may_name is None or may_name(w)), 3))
        centre = vectors[members].mean(axis=0)
        examples = list(dict.fromkeys(sentences[m] for m in members[np.argsort(-(vectors[members] @ centre))]))
        clusters.append(SenseCluster(label=", ".join(distinct), size=len(members), examples=examples[:N_EXAMPLES]))
    positions = positions if positions is not None else [-1] * len(sentences)
    points = [
        SensePoint(float(x), float(y), int(c), s, int(p))
        for (x, y), c, s, p in zip(coords, labels, sentences, positions)
    ]
    return Senses(word=word, clusters=clusters, points=points, n_occurrences=len(vectors), silhouette=silhouette)
