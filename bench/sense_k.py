"""How many senses a word's uses fall into, and what they are clustered on: rules for the Senses page compared on
labelled development words.

    python -m bench.sense_k [--index indexes/demo-index] [--index-ko indexes/demo-index-ko] [--semcor-files 40]
                            [--semcor-lemmas 100] [--views "readout + mix" ...]

Development data only: the demo corpora's labelled words (``data/demo*/labels.tsv``), read from the demo indexes as
the Senses page reads them, and SemCor lemmas with two or more senses of 8+ uses in the first ``--semcor-files``
files (``bench.sense_readout.semcor_uses``: up to 12 uses of each of a lemma's 3 commonest senses, ``--semcor-lemmas``
lemmas drawn with a fixed seed), embedded with the default model. Never a test split. The Senses page's words
(``demo/examples.py``) have no labels: their k is counted, to check that none collapses to one sense.

What is compared, each on every word:

- the vectors (``views``): the sense readout centred on the word's mean use (what the page clustered before), the
  ELMo layer mix the index stores (the paper's average of the layers) centred on the word's mean use, the two side
  by side (``indexer.senses.beside_mix``: what ``Index.senses`` clusters now), the same with the readout's half
  weighing half or twice the mix's, the readout beside the top ELMo layer alone (which holds senses more than parts
  of speech, docs/evaluation.md), and the readout PCA-whitened within the word's uses;
- the clustering and its k rule (``RULES``): k-means with the best cosine silhouette (the rule before), average-link
  agglomerative (cosine) with the best silhouette, spectral clustering of a 10-nearest-neighbour graph with k at
  the largest eigengap of its normalised Laplacian, k-means with the k most stable under subsampling
  (``indexer.senses.auto_k``, shipped), the same stability less that of the uses with each coordinate shuffled on
  its own, and the gap statistic; every rule takes k from 2 .. min(8, n // ``MIN_CLUSTER``) among
  clusterings whose every cluster holds ``MIN_CLUSTER`` uses, else 2 (1 below 2 x ``MIN_CLUSTER`` uses);
- "labelled k": k-means at the number of labelled senses, what the vectors allow when k is right (a ceiling, not a
  rule: it reads the labels).

Columns, per data set: the adjusted Rand index of the clusters against the labelled senses (0 for one cluster or a
chance split, so it does not rise with k), purity (``demo.labels.purity``: rises with k) and the mean |k - the number
of labelled senses among the uses|; means over words. Then the k of bank and play and of the Korean words, and the
page's words left at one sense; last, bank and play as shipped, with how many of their labelled senses have the
``MIN_CLUSTER`` uses a cluster needs. The rule set in advance (before the first run): a rule replaces the one before
only if its mean ARI over SemCor and the Korean demo words is higher, with no more SemCor k error and no page word
at one sense; bank and play, which the issue quotes, are reported as they come out, never chosen on. Prints; writes
nothing.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.sparse.csgraph import laplacian
from sklearn.cluster import AgglomerativeClustering, KMeans, SpectralClustering
from sklearn.decomposition import PCA
from sklearn.metrics import adjusted_rand_score, silhouette_score
from sklearn.neighbors import kneighbors_graph

from bench.figures import figure, figure_block
from bench.sense_readout import semcor_uses
from demo.examples import SENSE_WORDS, SENSE_WORDS_KO
from demo.labels import UseLabel, demo_labels, purity
from encoder import Elmo
from encoder.model_files import model_folder
from encoder.readout import Readout, centred
from indexer import Index
from indexer.senses import MAX_AUTO_K, MIN_CLUSTER, beside_mix, choose_clusters, stability

SEED = 0
NEIGHBOURS = 10


@dataclass
class Word:
    """One word's uses: their vectors in each view (normalised) and labelled senses (None: unlabelled)."""

    name: str
    views: dict[str, np.ndarray]
    senses: list[str | None]

    @property
    def true_k(self) -> int:
        return len({s for s in self.senses if s is not None})


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def views(readout: np.ndarray, mix: np.ndarray, top: np.ndarray) -> dict[str, np.ndarray]:
    """The vectors compared, from a word's centred readouts, its uses' ELMo mix and their top layer."""
    whitened = PCA(min(16, len(readout) - 1), whiten=True, random_state=SEED).fit_transform(readout)
    return {
        "readout": readout,
        "ELMo mix": unit(mix - mix.mean(0)),
        "readout + mix": beside_mix(readout, mix),  # what Index.senses clusters
        "readout + top layer": beside_mix(readout, top),  # the layer that holds senses more than parts of speech
        **{f"readout x{w:g} + mix": weighted(beside_mix(readout, mix), readout.shape[1], w) for w in (0.5, 2.0)},
        "readout whitened": unit(whitened),
    }


def weighted(beside: np.ndarray, width: int, weight: float) -> np.ndarray:
    """``beside_mix``'s vectors with the readout's half of the cosine ``weight`` times the mix's."""
    return unit(np.hstack([beside[:, :width] * np.sqrt(weight), beside[:, width:]]))


def index_words(index: Index, words: list[str]) -> list[Word]:
    """The uses of ``words`` in ``index`` as its Senses page reads them (``Index.senses``: the sense readout of every
    use, centred on the word's mean use; the index's ELMo mix), with their demo labels."""
    labels = demo_labels()
    found = []
    for word in words:
        ids = index.word_ids(word)
        readout = index.use_vectors(word, representation="readout")[1]  # as Index.senses reads them
        mix = index.use_vectors(word, representation="elmo")[1]
        top = index.use_vectors(word, [0.0] * (index.elmo.n_layers - 1) + [1.0], "elmo")[1]
        rows = index.sentences.iloc[index.tokens["sentence_id"].to_numpy()[ids]]["text"].tolist()
        positions = index.tokens["position"].to_numpy()[ids].tolist()
        senses = [getattr(labels.get((s, p)), "sense", None) for s, p in zip(rows, positions)]
        found.append(Word(word, views(readout, mix, top), senses))
    return found


def semcor_words(files: int, lemmas: int) -> list[Word]:
    """SemCor lemmas' uses, read out by the default model and centred on each lemma's mean use, as an index would
    (shrunk towards the sample's mean while a lemma has few uses), and their ELMo layers' average."""
    elmo = Elmo.load("default")
    readout = Readout.of_model(model_folder("default"), bilm=elmo.model)
    uses = semcor_uses(files, lemmas=lemmas)
    outputs = elmo.embed(uses.sentences, context=True)
    stacks = np.stack([out[:, position] for out, position in zip(outputs, uses.positions)])
    vectors = unit(readout.vectors(stacks[:, -1]))
    mixes, tops = unit(stacks[:, :-1].mean(1)), unit(stacks[:, -2])
    overall = vectors.mean(0)
    found = []
    for lemma in sorted(set(uses.words.tolist())):
        rows = np.flatnonzero(uses.words == lemma)
        own = unit(centred(vectors[rows], vectors[rows].mean(0), len(rows), overall, readout.settings.shrinkage))
        found.append(Word(lemma, views(own, mixes[rows], tops[rows]), uses.senses[rows].tolist()))
    return found


# ---------------------------------------------------------------------------------------------------- the rules


def candidate_ks(n: int) -> range:
    """The k a rule may pick, as ``indexer.senses.auto_k`` allows."""
    return range(2, min(MAX_AUTO_K, n // MIN_CLUSTER) + 1)


def fallback(n: int) -> int:
    return 2 if n >= 2 * MIN_CLUSTER else 1


def kmeans(vectors: np.ndarray, k: int, seed: int = SEED) -> np.ndarray:
    if k == 1:
        return np.zeros(len(vectors), dtype=np.int64)
    return KMeans(k, n_init=4, random_state=seed).fit_predict(vectors)


def average_link(vectors: np.ndarray, k: int) -> np.ndarray:
    if k == 1:
        return np.zeros(len(vectors), dtype=np.int64)
    return AgglomerativeClustering(k, metric="cosine", linkage="average").fit_predict(vectors)


def big_enough(labels: np.ndarray, k: int) -> bool:
    return np.bincount(labels, minlength=k).min() >= MIN_CLUSTER


def best_silhouette(cluster: Callable[[np.ndarray, int], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """k of the best cosine silhouette among clusterings with every cluster big enough."""

    def rule(vectors: np.ndarray) -> np.ndarray:
        best: tuple[float, np.ndarray] | None = None
        for k in candidate_ks(len(vectors)):
            labels = cluster(vectors, k)
            if big_enough(labels, k):
                score = float(silhouette_score(vectors, labels, metric="cosine"))
                if best is None or score > best[0]:
                    best = (score, labels)
        return best[1] if best is not None else cluster(vectors, fallback(len(vectors)))

    return rule


def eigengap(vectors: np.ndarray) -> np.ndarray:
    """Spectral clustering of the uses' kNN graph (cosine), k at the largest gap between consecutive eigenvalues of
    its normalised Laplacian among the k whose clusters are big enough."""
    n = len(vectors)
    graph = kneighbors_graph(vectors, min(NEIGHBOURS, n - 1), metric="cosine", include_self=False)
    graph = 0.5 * (graph + graph.T)
    values = np.sort(np.linalg.eigvalsh(laplacian(graph.toarray(), normed=True)))

    def spectral(k: int) -> np.ndarray:
        if k == 1:
            return np.zeros(n, dtype=np.int64)
        with warnings.catch_warnings():  # a graph of few neighbours may fall apart: its parts are then the clusters
            warnings.simplefilter("ignore", UserWarning)
            return SpectralClustering(k, affinity="precomputed", random_state=SEED).fit_predict(graph.toarray())

    for k in sorted(candidate_ks(n), key=lambda k: -(values[k] - values[k - 1])):
        labels = spectral(k)
        if big_enough(labels, k):
            return labels
    return spectral(fallback(n))


def stable_over_null(vectors: np.ndarray) -> np.ndarray:
    """k-means with the k whose stability (``indexer.senses.stability``) most exceeds the stability of the same k
    on a copy of the uses with each coordinate shuffled on its own (no clusters, the same spread): a small k is
    stable on any data, so stability alone leans to k = 2."""
    shuffled = np.random.default_rng(SEED).permuted(vectors, axis=0)
    best: tuple[float, np.ndarray] | None = None
    for k in candidate_ks(len(vectors)):
        labels = kmeans(vectors, k)
        if big_enough(labels, k):
            score = stability(vectors, k, labels, SEED) - stability(shuffled, k, kmeans(shuffled, k), SEED)
            if best is None or score > best[0]:
                best = (score, labels)
    return best[1] if best is not None else kmeans(vectors, fallback(len(vectors)))


def gap_statistic(vectors: np.ndarray, references: int = 5) -> np.ndarray:
    """k-means with k by the gap statistic (Tibshirani et al. 2001): the smallest k whose gap, the log within-cluster
    dispersion of shuffled copies (each coordinate on its own) minus the uses', is at least the next k's gap less
    its standard error, among clusterings whose every cluster is big enough."""
    rng = np.random.default_rng(SEED)
    copies = [rng.permuted(vectors, axis=0) for _ in range(references)]

    def dispersion(x: np.ndarray, k: int) -> float:
        return float(np.log(KMeans(k, n_init=2, random_state=SEED).fit(x).inertia_))

    ks = list(candidate_ks(len(vectors)))
    gaps, errors = {}, {}
    for k in ks:
        reference = np.array([dispersion(c, k) for c in copies])
        gaps[k] = reference.mean() - dispersion(vectors, k)
        errors[k] = reference.std() * np.sqrt(1 + 1 / references)
    for k in ks:
        labels = kmeans(vectors, k)
        if big_enough(labels, k) and (k + 1 not in gaps or gaps[k] >= gaps[k + 1] - errors[k + 1]):
            return labels
    return kmeans(vectors, fallback(len(vectors)))


def library(vectors: np.ndarray) -> np.ndarray:
    """The rule ``indexer.senses`` ships."""
    return choose_clusters(vectors, "auto", SEED)[0]


RULES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "k-means, best silhouette (before)": best_silhouette(kmeans),
    "average link, best silhouette": best_silhouette(average_link),
    "spectral kNN graph, eigengap": eigengap,
    "k-means, most stable k (shipped: indexer.senses.auto_k)": library,
    "k-means, most stable k over shuffled uses": stable_over_null,
    "k-means, gap statistic": gap_statistic,
}
LABELLED_K = "k-means at the labelled k (a ceiling)"


@dataclass
class Score:
    ari: float
    purity: float
    k_error: float
    ks: list[int]


def score(rule: Callable[[np.ndarray], np.ndarray] | None, view: str, words: list[Word]) -> Score:
    """Means over the labelled ``words`` and each word's k; ``rule`` None: k-means at the labelled k."""
    aris, purities, errors, ks = [], [], [], []
    for word in words:
        vectors = word.views[view]
        labels = rule(vectors) if rule is not None else kmeans(vectors, max(word.true_k, 1))
        k = int(labels.max()) + 1
        ks.append(k)
        known = [i for i, s in enumerate(word.senses) if s is not None]
        if known:
            uses = [UseLabel(word.name, s, "") if s is not None else None for s in word.senses]
            purities.append(purity(labels.tolist(), uses))
            aris.append(adjusted_rand_score([word.senses[i] for i in known], labels[known]))
            errors.append(abs(k - word.true_k))
    mean = lambda xs: float(np.mean(xs)) if xs else float("nan")  # noqa: E731
    return Score(mean(aris), mean(purities), mean(errors), ks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--index", type=Path, default=Path("indexes/demo-index"), help="English demo index (%(default)s)"
    )
    parser.add_argument("--index-ko", type=Path, default=Path("indexes/demo-index-ko"), help="Korean one (%(default)s)")
    parser.add_argument("--semcor-files", type=int, default=40, help="SemCor files read (default %(default)s)")
    parser.add_argument(
        "--semcor-lemmas", type=int, default=100, help="SemCor lemmas drawn, seeded (default %(default)s)"
    )
    parser.add_argument(
        "--views", nargs="+", metavar="VIEW", help="only these vectors (names as in the table; default: every one)"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"load at the start: {open('/proc/loadavg').read().split()[0]}")
    english, korean = Index.open(args.index), Index.open(args.index_ko)
    sets = {
        "SemCor": semcor_words(args.semcor_files, args.semcor_lemmas),
        "demo ko": index_words(korean, ["배", "눈", "말", "다리", "밤"]),
        "demo en": index_words(english, ["bank", "play"]),
    }
    pages = [
        *index_words(english, [w for w in SENSE_WORDS if len(english.word_ids(w)) >= 2]),
        *index_words(korean, [w for w in SENSE_WORDS_KO if len(korean.word_ids(w)) >= 2]),
    ]
    print(f"{len(sets['SemCor'])} SemCor lemmas, {sum(len(w.senses) for w in sets['SemCor'])} uses")
    for name, words in sets.items():
        print(f"{name}: " + ", ".join(f"{w.name} {len(w.senses)} uses, {w.true_k} senses" for w in words[:8]))
    print()
    head = " | ".join(f"{s} ARI | {s} purity | {s} k err" for s in sets)
    table = [f"| vectors | rule | {head} | k: bank, play | k: 배 눈 말 다리 밤 | page words at k = 1 |"]
    table.append("|---|---|" + "---:|" * (3 * len(sets)) + "---|---|---:|")
    for view in args.views or next(iter(sets.values()))[0].views:
        for name, rule in {**RULES, LABELLED_K: None}.items():
            cells, ks = [], {}
            for set_name, words in sets.items():
                found = score(rule, view, words)
                cells += [f"{found.ari:.2f}", f"{found.purity:.2f}", f"{found.k_error:.2f}"]
                ks[set_name] = found.ks
            ones = "-" if rule is None else f"{sum(k == 1 for k in score(rule, view, pages).ks)} of {len(pages)}"
            table.append(
                f"| {view} | {name} | " + " | ".join(cells) + f" | {ks['demo en']} | {ks['demo ko']} | {ones} |"
            )
    figure_block("sense_k.rules", table)
    shipped = RULES["k-means, most stable k (shipped: indexer.senses.auto_k)"]
    for word in sets["demo en"]:
        found = score(shipped, "readout + mix", [word])
        supported = sum(n >= MIN_CLUSTER for n in Counter(s for s in word.senses if s is not None).values())
        print(
            f"\n{word.name}, as shipped: ARI {found.ari:.2f}, purity {found.purity:.2f}, k {found.ks[0]} "
            f"({word.true_k} labelled senses, {supported} of them with {MIN_CLUSTER}+ uses)"
        )
        figure(f"sense_k.{word.name}.purity", f"{found.purity:.2f}")
        figure(f"sense_k.{word.name}.k", found.ks[0])
        figure(f"sense_k.{word.name}.labelled_senses", word.true_k)
    print(f"\n{time.perf_counter() - started:.0f} s, load at the end: {open('/proc/loadavg').read().split()[0]}")


if __name__ == "__main__":
    main()
