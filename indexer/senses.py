"""Word senses: k-means over the ELMo vectors of a word's occurrences, k chosen by silhouette, PCA to 2-D."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score

from encoder.words import is_content_word, normalize

from .results import SenseCluster, SensePoint, Senses

MAX_AUTO_K = 8
MIN_SILHOUETTE = 0.25  # below this no split is convincing (Kaufman & Rousseeuw): report one sense
N_EXAMPLES = 5


def choose_clusters(vectors: np.ndarray, k: int | str = "auto", seed: int = 0) -> tuple[np.ndarray, float | None]:
    """Cluster labels (0 = largest cluster) and the silhouette of the chosen clustering (None for one cluster)."""
    n = len(vectors)
    if k == "auto":
        best: tuple[float, np.ndarray] | None = None
        for kk in range(2, min(MAX_AUTO_K, n - 1) + 1):
            labels = KMeans(kk, n_init=4, random_state=seed).fit_predict(vectors)
            score = float(silhouette_score(vectors, labels, metric="cosine"))
            if best is None or score > best[0]:
                best = (score, labels)
        if best is None or best[0] < MIN_SILHOUETTE:
            return np.zeros(n, dtype=np.int64), None
        silhouette, labels = best
    else:
        k = min(int(k), n)
        if k < 1:
            raise ValueError("k must be at least 1")
        if k == 1:
            return np.zeros(n, dtype=np.int64), None
        labels = KMeans(k, n_init=4, random_state=seed).fit_predict(vectors)
        silhouette = float(silhouette_score(vectors, labels, metric="cosine")) if len(set(labels)) > 1 else None
    by_size = {old: new for new, (old, _) in enumerate(Counter(labels.tolist()).most_common())}
    return np.array([by_size[c] for c in labels.tolist()], dtype=np.int64), silhouette


def label_score(count: int, size: int, clusters_with_word: int, n_clusters: int) -> float:
    """TF-IDF of a context word in a cluster against the other clusters: its share of the cluster's uses
    times log(1 + n_clusters / clusters using it); a word seen once in a large cluster says little."""
    if count < 2 <= size:
        return 0.0
    return count / size * np.log1p(n_clusters / clusters_with_word)


def is_form_of(token: str, word: str) -> bool:
    """``token`` is ``word`` itself or ``word`` with an English inflection (bank, banks, bank's; play, played,
    playing): never a label of the word's own senses."""
    return re.fullmatch(re.escape(normalize(word)) + r"(?:s|es|d|ed|ing|'s)?", normalize(token)) is not None


def describe_senses(
    word: str,
    vectors: np.ndarray,
    sentences: Sequence[str],
    contexts: Sequence[Sequence[str]],
    stopwords: frozenset[str],
    k: int | str = "auto",
    seed: int = 0,
) -> Senses:
    """Cluster the occurrences (normalised vectors, one per occurrence) of ``word`` into senses.

    Each cluster is labelled by its most distinctive context words (``label_score``): ``contexts`` holds the words
    of each occurrence's sentence that may name a topic (``TextRules.label_words``), never a stopword or a form of
    ``word`` itself; a cluster with no distinctive word has an empty label. Its examples are the sentences whose
    vectors lie closest to the cluster centre.
    """
    labels, silhouette = choose_clusters(vectors, k, seed)
    coords = PCA(2, random_state=seed).fit_transform(vectors) if len(vectors) > 2 else np.zeros((len(vectors), 2))
    context_sets = [
        {normalize(t) for t in c if is_content_word(t, stopwords) and not is_form_of(t, word)} for c in contexts
    ]
    n_clusters = int(labels.max()) + 1 if len(labels) else 0
    inside = [Counter(w for m in np.flatnonzero(labels == c) for w in context_sets[m]) for c in range(n_clusters)]
    in_clusters = Counter(w for counts in inside for w in counts)  # how many clusters use each word
    clusters = []
    for c in range(n_clusters):
        members = np.flatnonzero(labels == c)
        scores = {w: label_score(n, len(members), in_clusters[w], n_clusters) for w, n in inside[c].items()}
        distinct = sorted((w for w in scores if scores[w] > 0), key=lambda w: (-scores[w], w))
        centre = vectors[members].mean(axis=0)
        examples = list(dict.fromkeys(sentences[m] for m in members[np.argsort(-(vectors[members] @ centre))]))
        clusters.append(SenseCluster(label=", ".join(distinct[:3]), size=len(members), examples=examples[:N_EXAMPLES]))
    points = [SensePoint(float(x), float(y), int(c), s) for (x, y), c, s in zip(coords, labels, sentences)]
    return Senses(word=word, clusters=clusters, points=points, n_occurrences=len(vectors), silhouette=silhouette)
