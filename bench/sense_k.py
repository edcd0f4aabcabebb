"""How many senses a word's uses fall into: rules that choose k for the Senses page, compared on labelled words.

    python -m bench.sense_k [--index indexes/demo-index] [--index-ko indexes/demo-index-ko] [--semcor-files 40]

Development data only: the demo corpora's labelled words (``data/demo*/labels.tsv``), read from the demo indexes as
the Senses page reads them (each use's sense readout around the word's mean use), and SemCor lemmas with two or
more senses of 8+ uses in the first ``--semcor-files`` files (``bench.sense_readout.semcor_uses``: up to 12 uses of
each of a lemma's 3 commonest senses), embedded with the default model and read out the same way. Never a test
split. The Senses page's words (``demo/examples.py``) have no labels: their k is printed, to check that none
collapses to one sense.

Each rule clusters a word's uses with k-means (as ``indexer.senses`` does) and picks k its own way. Columns, per
data set: the purity of the clusters against the labels (``demo.labels.purity``, mean over words) and the mean
|k - the number of labelled senses among the uses|. Prints; writes nothing.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.cluster import AgglomerativeClustering, KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score
from sklearn.mixture import GaussianMixture

from bench.sense_readout import embed, semcor_uses
from demo.examples import SENSE_WORDS, SENSE_WORDS_KO
from demo.labels import UseLabel, demo_labels, purity
from encoder import Elmo
from encoder.model_files import model_folder
from encoder.readout import Readout, centred
from indexer import Index
from indexer.senses import MAX_AUTO_K, MIN_CLUSTER, choose_clusters

SEED = 0


@dataclass
class Word:
    """One word's uses: their vectors (normalised) and labelled senses (None: unlabelled)."""

    name: str
    vectors: np.ndarray
    senses: list[str | None]

    @property
    def true_k(self) -> int:
        return len({s for s in self.senses if s is not None})


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def index_words(index: Index, words: list[str]) -> list[Word]:
    """The uses of ``words`` in ``index`` as its Senses page clusters them (``Index.senses``: the sense readout of
    every use, centred on the word's mean use), with their demo labels."""
    labels = demo_labels()
    found = []
    for word in words:
        ids = index.word_ids(word)
        vectors = index.use_vectors(word, representation="readout")[1]  # as Index.senses reads them
        rows = index.sentences.iloc[index.tokens["sentence_id"].to_numpy()[ids]]["text"].tolist()
        positions = index.tokens["position"].to_numpy()[ids].tolist()
        senses = [getattr(labels.get((s, p)), "sense", None) for s, p in zip(rows, positions)]
        found.append(Word(word, vectors, senses))
    return found


def semcor_words(files: int) -> list[Word]:
    """SemCor lemmas' uses, read out by the default model and centred on each lemma's mean use, as an index would
    (shrunk towards the sample's mean while a lemma has few uses)."""
    elmo = Elmo.load("default")
    readout = Readout.of_model(model_folder("default"), bilm=elmo.model)
    uses = semcor_uses(files)
    embed(elmo, uses)
    vectors = unit(readout.vectors(uses.features["context"]))
    overall = vectors.mean(0)
    found = []
    for lemma in sorted(set(uses.words.tolist())):
        rows = np.flatnonzero(uses.words == lemma)
        own = unit(centred(vectors[rows], vectors[rows].mean(0), len(rows), overall, readout.settings.shrinkage))
        found.append(Word(lemma, own, uses.senses[rows].tolist()))
    return found


# ---------------------------------------------------------------------------------------------------- the rules


def kmeans(vectors: np.ndarray, k: int) -> np.ndarray:
    return KMeans(k, n_init=4, random_state=SEED).fit_predict(vectors)


def silhouettes(vectors: np.ndarray, min_size: int = 1) -> dict[int, tuple[float, np.ndarray]]:
    """k -> (cosine silhouette, labels) of k-means for k = 2..8, only where every cluster has ``min_size`` uses."""
    found = {}
    for k in range(2, min(MAX_AUTO_K, len(vectors) - 1) + 1):
        labels = kmeans(vectors, k)
        if np.bincount(labels).min() >= min_size:
            found[k] = (float(silhouette_score(vectors, labels, metric="cosine")), labels)
    return found


def one(vectors: np.ndarray) -> np.ndarray:
    return np.zeros(len(vectors), dtype=np.int64)


def best_silhouette(min_size: int = 1, floor: float | None = None) -> Callable[[np.ndarray], np.ndarray]:
    def rule(vectors: np.ndarray) -> np.ndarray:
        found = silhouettes(vectors, min_size)
        if not found:
            return one(vectors)
        score, labels = max(found.values(), key=lambda s: s[0])
        return one(vectors) if floor is not None and score < floor else labels

    return rule


def gmm_bic(dims: int = 10) -> Callable[[np.ndarray], np.ndarray]:
    """k (1..8) of the lowest BIC of a diagonal Gaussian mixture on the uses' first ``dims`` principal components."""

    def rule(vectors: np.ndarray) -> np.ndarray:
        points = PCA(min(dims, len(vectors) - 1), random_state=SEED).fit_transform(vectors)
        fits = [
            GaussianMixture(k, covariance_type="diag", n_init=2, random_state=SEED).fit(points)
            for k in range(1, min(MAX_AUTO_K, len(vectors) // 2) + 1)
        ]
        best = min(fits, key=lambda g: g.bic(points))
        return kmeans(vectors, best.n_components) if best.n_components > 1 else one(vectors)

    return rule


def gap_statistic(references: int = 5) -> Callable[[np.ndarray], np.ndarray]:
    """Tibshirani et al. (2001): the smallest k whose gap (log inertia of uniform points in the uses' principal box
    minus the uses' own) is within one standard error of the next k's."""

    def rule(vectors: np.ndarray) -> np.ndarray:
        pca = PCA(min(10, len(vectors) - 1), random_state=SEED).fit(vectors)
        points = pca.transform(vectors)
        low, high = points.min(0), points.max(0)
        rng = np.random.default_rng(SEED)
        gaps, errors = [], []
        top = min(MAX_AUTO_K, len(vectors) - 1)
        for k in range(1, top + 1):
            own = np.log(KMeans(k, n_init=2, random_state=SEED).fit(points).inertia_)
            ref = [
                np.log(KMeans(k, n_init=1, random_state=SEED).fit(rng.uniform(low, high, points.shape)).inertia_)
                for _ in range(references)
            ]
            gaps.append(np.mean(ref) - own)
            errors.append(np.std(ref) * np.sqrt(1 + 1 / references))
        k = next((k for k in range(1, top) if gaps[k - 1] >= gaps[k] - errors[k]), top)
        return kmeans(vectors, k) if k > 1 else one(vectors)

    return rule


def agglomerative(threshold: float) -> Callable[[np.ndarray], np.ndarray]:
    """Average-linkage clusters of cosine distance under ``threshold``, at most 8 (the k-means of their number)."""

    def rule(vectors: np.ndarray) -> np.ndarray:
        tree = AgglomerativeClustering(None, metric="cosine", linkage="average", distance_threshold=threshold)
        k = min(len(set(tree.fit_predict(vectors).tolist())), MAX_AUTO_K)
        return kmeans(vectors, k) if k > 1 else one(vectors)

    return rule


def library(vectors: np.ndarray) -> np.ndarray:
    """The rule ``indexer.senses`` ships."""
    return choose_clusters(vectors, "auto", SEED)[0]


RULES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "silhouette >= 0.25, else 1 (before)": best_silhouette(floor=0.25),
    "silhouette, best k >= 2": best_silhouette(),
    "silhouette, clusters of >= 3 uses": best_silhouette(3),
    "silhouette, clusters of >= 5 uses, else 1": best_silhouette(5),
    "GMM BIC on 10 principal components": gmm_bic(),
    "gap statistic (5 references)": gap_statistic(),
    **{f"agglomerative, cosine distance {t}": agglomerative(t) for t in (0.9, 1.0, 1.1)},
    f"shipped: clusters of >= {MIN_CLUSTER} uses, else 2 (indexer.senses.auto_k)": library,
}


def score(rule: Callable[[np.ndarray], np.ndarray], words: list[Word]) -> tuple[float, float, list[int]]:
    """Mean purity, mean |k error| over ``words`` (labelled ones), and each word's k."""
    purities, errors, ks = [], [], []
    for word in words:
        labels = rule(word.vectors)
        k = int(labels.max()) + 1
        ks.append(k)
        if word.true_k:
            uses = [UseLabel(word.name, s, "") if s is not None else None for s in word.senses]
            purities.append(purity(labels.tolist(), uses))
            errors.append(abs(k - word.true_k))
    return (float(np.mean(purities)) if purities else float("nan"), float(np.mean(errors)) if errors else 0.0, ks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--index", type=Path, default=Path("indexes/demo-index"), help="English demo index (%(default)s)"
    )
    parser.add_argument("--index-ko", type=Path, default=Path("indexes/demo-index-ko"), help="Korean one (%(default)s)")
    parser.add_argument("--semcor-files", type=int, default=40, help="SemCor files read (default %(default)s)")
    args = parser.parse_args()
    started = time.perf_counter()
    english, korean = Index.open(args.index), Index.open(args.index_ko)
    sets = {
        "demo en": index_words(english, ["bank", "play"]),
        "demo ko": index_words(korean, ["배", "눈", "말", "다리", "밤"]),
        "SemCor": semcor_words(args.semcor_files),
    }
    pages = {
        "page en": index_words(english, [w for w in SENSE_WORDS if len(english.word_ids(w)) >= 2]),
        "page ko": index_words(korean, [w for w in SENSE_WORDS_KO if len(korean.word_ids(w)) >= 2]),
    }
    for name, words in {**sets, **pages}.items():
        print(f"{name}: " + ", ".join(f"{w.name} {len(w.vectors)} uses, {w.true_k} senses" for w in words[:12]))
    print()
    head = " | ".join(f"{s} purity | {s} k err" for s in sets)
    print(f"| rule | {head} | k: bank, play | k: 배 눈 말 다리 밤 | page words with k = 1 |")
    print("|---|" + "---:|" * (2 * len(sets)) + "---|---|---:|")
    for name, rule in RULES.items():
        cells, ks = [], {}
        for set_name, words in sets.items():
            p, e, ks[set_name] = score(rule, words)
            cells += [f"{p:.2f}", f"{e:.2f}"]
        page_ks = [k for words in pages.values() for k in score(rule, words)[2]]
        ones = sum(k == 1 for k in page_ks)
        en, ko = ks["demo en"], ks["demo ko"]
        print(f"| {name} | " + " | ".join(cells) + f" | {en} | {ko} | {ones} of {len(page_ks)} |")
    for name, words in pages.items():
        print(
            f"\n{name}, k by the shipped rule: "
            + ", ".join(f"{w.name} {k}" for w, k in zip(words, score(library, words)[2]))
        )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
