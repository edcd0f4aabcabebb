"""Indexer building blocks on planted data: GloVe, senses, vector search paths, BM25. No model needed."""

from __future__ import annotations

import warnings

import faiss
import numpy as np
import pytest

from encoder.text import ENGLISH_STOPWORDS
from indexer import vectors
from indexer.bm25 import BM25, KeywordTerms
from indexer.factory import build_faiss, choose_factory, tune_search_params
from indexer.glove import Glove, GloveVectors, cooccurrence, save_glove, train_glove
from indexer.senses import MIN_CLUSTER, auto_k, beside_mix, choose_clusters, describe_senses, different_uses
from indexer.vectors import ExactSearch, LayerStore, VectorSet, faiss_search, mix


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


# ------------------------------------------------------------------------------------------ GloVe
def test_cooccurrence_counts_with_inverse_distance():
    counts = cooccurrence([np.array([0, 1, 2]), np.array([2, 0])], vocab_size=3, window=2).toarray()
    expected = np.zeros((3, 3))
    for i, j, w in [(0, 1, 1.0), (1, 2, 1.0), (0, 2, 0.5), (2, 0, 1.0)]:  # pairs within each sentence only
        expected[i, j] += w
        expected[j, i] += w
    np.testing.assert_allclose(counts, expected)
    assert cooccurrence([np.array([0, 1, 2])], 3, window=1)[0, 2] == 0


def test_glove_training_is_seeded_and_nearest_words_rank_by_cosine():
    """Training repeats exactly; ``nearest`` ranks the other words by cosine, never the word itself.
    (Recovering planted topics is tests/indexer/test_glove.py's job, beside a sequential reference.)"""
    rng = np.random.default_rng(0)
    sentences = [rng.choice(np.arange(10) + 10 * (s % 2), size=8) for s in range(200)]
    words = [f"w{i}" for i in range(20)]
    first, again = (
        train_glove(cooccurrence(sentences, 20, window=5), words, dim=8, epochs=3, progress=False) for _ in "ab"
    )
    np.testing.assert_array_equal(first.matrix, again.matrix)
    angles = np.linspace(0, np.pi / 2, 6)  # w0 .. w5 at growing angles from w0, so the ranking is known
    planted = Glove([f"w{i}" for i in range(6)], np.stack([np.cos(angles), np.sin(angles)], 1).astype(np.float32) * 3)
    nearest = GloveVectors(planted).nearest("w0", k=3)
    assert [w for w, _ in nearest] == ["w1", "w2", "w3"]
    np.testing.assert_allclose([s for _, s in nearest], np.cos(angles[1:4]), atol=1e-6)
    assert GloveVectors(planted).nearest("W0", k=1)[0][0] == "w1"  # looked up lowercased, still not itself


def test_glove_text_format_round_trip(tmp_path):
    """GloVe vectors written as text load back equal; unknown words have no neighbours and a zero sentence vector."""
    glove = Glove(["river", "bank", "é"], np.arange(6, dtype=np.float32).reshape(3, 2) / 7)
    save_glove(tmp_path / "glove.txt", glove)
    lines = (tmp_path / "glove.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "river 0.000000 0.142857" and len(lines) == 3
    loaded = GloveVectors.load(tmp_path / "glove.txt")
    np.testing.assert_allclose(loaded.glove.matrix, glove.matrix, atol=1e-6)
    assert loaded.nearest("unknown") is None and not loaded.sentence_vector(["unknown"]).any()
    np.testing.assert_allclose(loaded.sentence_vector(["River", "bank"]), unit(glove.matrix[:2].mean(0)), atol=1e-6)


# ------------------------------------------------------------------------------------------ senses
def test_senses_of_planted_clusters():
    """Planted clusters come back as senses, labelled by a distinctive context word (never the word or a stopword)."""
    rng = np.random.default_rng(0)
    centres = unit(rng.normal(size=(2, 16)))
    labels = np.repeat([0, 1], [30, 20])
    vectors = unit(centres[labels] + 0.05 * rng.normal(size=(50, 16)))
    sentences = [f"{'river' if label == 0 else 'money'} sentence {i}" for i, label in enumerate(labels)]
    contexts = [dict.fromkeys([*s.split(), "bank"], 1.0) for s in sentences]
    senses = describe_senses("bank", vectors, sentences, contexts, ENGLISH_STOPWORDS, positions=list(range(50)))
    assert [c.size for c in senses.clusters] == [30, 20] and senses.silhouette > 0.5
    # its own word; "sentence", in every use of both, marks neither out; once-seen numbers are dropped
    assert [c.label for c in senses.clusters] == ["river", "money"]
    assert [p.cluster for p in senses.points] == labels.tolist() and len(senses.clusters[0].examples) == 5
    assert [p.token_index for p in senses.points] == list(range(50))
    # never the word itself (or an inflection of it), never a stopword or a special token; nothing distinctive: no label
    forms = [
        dict.fromkeys(["banks", "bank's", "the", "Bank", "<UNK>", "river" if label == 0 else "money"], 1.0)
        for label in labels
    ]
    relabelled = describe_senses("bank", vectors, sentences, forms, ENGLISH_STOPWORDS)
    assert [c.label for c in relabelled.clusters] == ["river", "money"]
    alike = describe_senses("bank", vectors, sentences, [{"banking": 1.0, "banks": 1.0}] * 50, ENGLISH_STOPWORDS)
    assert [c.label for c in alike.clusters] == ["", ""]  # "banking" is in both: distinctive of neither
    assert len(describe_senses("x", vectors[:1], sentences[:1], contexts[:1], ENGLISH_STOPWORDS).clusters) == 1


def test_auto_k_finds_two_and_three_planted_senses_as_they_were_planted():
    """The k rule on synthetic senses: two blobs of uneven size give k = 2, three give k = 3, each found again as
    planted (a rule that always took the smallest or the largest allowed k, or the least stable, fails one)."""
    rng = np.random.default_rng(3)
    centres = unit(rng.normal(size=(4, 16)))
    for sizes in ([14, 10], [12, 9, 15]):
        planted = np.repeat(np.arange(len(sizes)), sizes)
        uses = unit(centres[planted] + 0.15 * rng.normal(size=(len(planted), 16)))
        labels, silhouette = choose_clusters(uses)
        assert auto_k(uses) == len(sizes) and silhouette > 0.2
        assert len(set(zip(labels.tolist(), planted.tolist()))) == len(sizes)  # one cluster per planted sense


def test_auto_k_never_more_senses_than_the_uses_can_fill():
    """Never more senses than n // ``MIN_CLUSTER``, never a sense of fewer than ``MIN_CLUSTER`` uses where a
    clustering with none exists, at least 2 once the uses could fill two senses, 1 below."""
    rng = np.random.default_rng(3)
    centres = unit(rng.normal(size=(4, 16)))
    blob = unit(rng.normal(size=(40, 16)))  # no structure: any k the uses can fill
    assert 2 <= auto_k(blob) <= 40 // MIN_CLUSTER and auto_k(blob[: 2 * MIN_CLUSTER - 1]) == 1
    assert (choose_clusters(blob[: 2 * MIN_CLUSTER - 1])[0] == 0).all()
    four = np.repeat([0, 1, 2, 3], 3)  # 12 uses in four tight groups of 3: k = 4 would be the clearest
    tight = unit(centres[four] + 0.01 * rng.normal(size=(12, 16)))
    assert auto_k(tight) == 12 // MIN_CLUSTER == 2
    many = np.repeat(np.arange(4), [3, 3, 17, 17])  # two senses too small to show alone: never a cluster under 5
    uneven = unit(centres[many] + 0.01 * rng.normal(size=(40, 16)))
    assert auto_k(uneven) in (2, 3) and np.bincount(choose_clusters(uneven)[0]).min() >= MIN_CLUSTER


def test_senses_are_clustered_on_the_readout_beside_the_centred_mix():
    """``beside_mix``: unit rows, the readout's half as given, the mix's centred on the word's mean use; senses that
    only the ELMo mix tells apart (the readouts are noise) are found by the k rule on both together."""
    rng = np.random.default_rng(5)
    planted = np.repeat([0, 1], [12, 12])
    readouts = unit(rng.normal(size=(24, 16)))
    shared = 3 * unit(rng.normal(size=(1, 16)))  # every use's mix shares a large common part: centring removes it
    mix = shared + unit(rng.normal(size=(2, 16)))[planted] + 0.1 * rng.normal(size=(24, 16))
    both = beside_mix(readouts, mix)
    np.testing.assert_allclose(np.linalg.norm(both, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(both[:, :16] * np.sqrt(2), readouts, rtol=1e-5)
    np.testing.assert_allclose((both[:, 16:] * np.sqrt(2)).mean(0) @ unit(shared[0]), 0.0, atol=0.05)
    labels, _ = choose_clusters(both)
    assert auto_k(both) == 2 and len(set(zip(labels.tolist(), planted.tolist()))) == 2


def test_as_many_senses_as_uses_asked_of_a_word_with_two_uses():
    """k = 2 of two uses: two clusters of one use each, with no silhouette (it needs a cluster of two)."""
    two = np.eye(2, 4, dtype=np.float32)
    labels, silhouette = choose_clusters(two, k=2)
    assert sorted(labels.tolist()) == [0, 1] and silhouette is None
    assert choose_clusters(two, k=5)[0].max() == 1  # never more clusters than uses
    repeated = np.repeat(np.eye(3, 4, dtype=np.float32), 2, axis=0)  # a sentence twice: the same vector twice
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # k-means warns when asked for more clusters than different points
        labels, _ = choose_clusters(repeated, k=5)
    assert different_uses(repeated) == 3 and sorted(set(labels.tolist())) == [0, 1, 2]


def test_sense_labels_weigh_the_lms_likeliest_words_by_their_probability():
    """Substitutes as namers: a word likely in every use of a cluster and rare elsewhere names it first; one that is
    likely everywhere names nothing."""
    rng = np.random.default_rng(1)
    centres = unit(rng.normal(size=(2, 8)))
    labels = np.repeat([0, 1], [10, 10])
    vectors = unit(centres[labels] + 0.05 * rng.normal(size=(20, 8)))
    substitutes = [
        {"shore": 0.3, "side": 0.1, "city": 0.2} if label == 0 else {"account": 0.4, "office": 0.05, "city": 0.2}
        for label in labels
    ]
    senses = describe_senses("bank", vectors, [f"s{i}" for i in range(20)], substitutes, ENGLISH_STOPWORDS)
    assert [c.label for c in senses.clusters] == ["shore, side", "account, office"]
    asked = []
    nouns_only = describe_senses(  # the language's rule (Korean: nouns) narrows the names, asked of the best only
        "bank",
        vectors,
        [f"s{i}" for i in range(20)],
        substitutes,
        ENGLISH_STOPWORDS,
        may_name=lambda w: asked.append(w) or w != "shore",
    )
    assert [c.label for c in nouns_only.clusters] == ["side", "account, office"]
    assert sorted(asked) == ["account", "office", "shore", "side"]


# ------------------------------------------------------------------------------------------ vector search
def test_torch_exact_search_equals_faiss():
    rng = np.random.default_rng(0)
    vectors, query = unit(rng.normal(size=(500, 32))), unit(rng.normal(size=32))
    flat = faiss.IndexFlatIP(32)
    flat.add(vectors)
    f_scores, f_ids = flat.search(query[None], 10)
    t_scores, t_ids = ExactSearch(vectors).search(query, 10)
    np.testing.assert_array_equal(t_ids, f_ids[0])
    np.testing.assert_allclose(t_scores, f_scores[0], atol=1e-5)
    deleted = np.zeros(500, bool)
    deleted[f_ids[0][:3]] = True
    f_scores, f_ids = faiss_search(flat, query, 10, deleted)
    t_scores, t_ids = ExactSearch(vectors).search(query, 10, deleted)
    np.testing.assert_array_equal(t_ids, f_ids)
    assert not deleted[t_ids].any() and len(t_ids) == 10


@pytest.mark.parametrize("cache_bytes", [1 << 30, 0])  # 0: every exact query streams chunk by chunk
def test_vector_set_mixes_layers_like_numpy(monkeypatch, cache_bytes):
    monkeypatch.setattr(vectors, "EXACT_CACHE_BYTES", cache_bytes)
    monkeypatch.setattr(vectors, "SCORES_CACHE_BYTES", cache_bytes)  # scores() from the mixed matrix, or gathered
    monkeypatch.setattr(vectors, "CHUNK", 50)
    rng = np.random.default_rng(1)
    layers = rng.normal(size=(300, 3, 16)).astype(np.float16)
    store = LayerStore([layers[:120], layers[120:]])
    build = (1 / 3, 1 / 3, 1 / 3)
    index = build_faiss("Flat", 16, 300, lambda: store.mixed(build))
    vector_set = VectorSet(store, index, build)
    query = unit(rng.normal(size=16))
    deleted = np.zeros(300, bool)
    deleted[::7] = True
    for weights in (build, (0.0, 0.0, 1.0)):
        expected = unit((layers.astype(np.float32) * np.asarray(weights, np.float32)[None, :, None]).sum(1)) @ query
        scores, ids = vector_set.search(query, 5, weights)
        np.testing.assert_array_equal(ids, np.argsort(-expected)[:5])
        np.testing.assert_allclose(scores, np.sort(expected)[::-1][:5], atol=1e-4)
        scores, ids = vector_set.search(query, 5, weights, deleted)
        expected[deleted] = -np.inf
        np.testing.assert_array_equal(ids, np.argsort(-expected)[:5])
    subset = np.array([250, 3, 130, 77])
    scores, ids = vector_set.search(query, 2, build, subset=subset)
    expected = mix(layers[subset], build) @ query
    np.testing.assert_array_equal(ids, subset[np.argsort(-expected)[:2]])
    np.testing.assert_allclose(store.gather(subset, build), mix(layers[subset], build), atol=1e-6)
    for weights in (build, (0.0, 0.0, 1.0)):
        np.testing.assert_allclose(
            vector_set.scores(subset, query, weights), mix(layers[subset], weights) @ query, atol=1e-5
        )


@pytest.mark.parametrize("factory", ["IVF64,Flat", "HNSW16", "Flat"])
def test_tuned_search_params_reach_the_recall_target(factory):
    rng = np.random.default_rng(0)
    data = unit(rng.normal(size=(40, 32))[rng.integers(0, 40, 4000)] + 0.6 * rng.normal(size=(4000, 32)))

    def chunks():
        return (data[i : i + 1000] for i in range(0, 4000, 1000))

    index = build_faiss(factory, 32, 4000, chunks)
    params = tune_search_params(index, 4000, chunks)
    if factory == "Flat":
        assert params == ""
        return
    queries = unit(data[:300] + 0.05 * rng.normal(size=(300, 32)))
    truth = faiss.IndexFlatIP(32)
    truth.add(data)
    faiss.ParameterSpace().set_index_parameters(index, params)
    found, exact = index.search(queries, 10)[1], truth.search(queries, 10)[1]
    assert np.mean([len(set(f) & set(e)) / 10 for f, e in zip(found, exact)]) >= 0.9
    name, value = params.split("=")
    assert name == ("nprobe" if factory.startswith("IVF") else "efSearch") and int(value) < (
        64 if name == "nprobe" else 1024
    )


def test_choose_factory_by_size():
    """Flat up to 100,000 vectors, IVF beyond, compressed with SQ8 at ten million."""
    assert choose_factory(1_000) == "Flat" and choose_factory(100_000) == "Flat"
    assert choose_factory(1_000_000) == "IVF4096,Flat" and choose_factory(10_000_000).endswith(",SQ8")


# ------------------------------------------------------------------------------------------ BM25
def test_bm25_matches_stems_of_english_words_and_korean_morphemes_as_they_are():
    english = KeywordTerms("en")
    assert english(["Flooded", "rivers", "!", "flooding"]) == ["flood", "river", "flood"]
    assert KeywordTerms("ko")(["배를", "배", "."]) == ["배를", "배"]
    documents = [english(d) for d in (["the", "river", "bank"], ["a", "bank", "loan", "banks"], ["bread", "oven", "."])]
    bm25 = BM25(documents)
    scores, ids = bm25.search(english(["Banks", "loans", "!"]), k=5)
    assert ids.tolist() == [1, 0] and scores[0] > scores[1] > 0
    assert bm25.scores(english(["bread"])).tolist()[:2] == [0.0, 0.0] and bm25.scores(english(["bread"]))[2] > 0
    live = BM25(documents, live=np.array([False, True, True]))  # the first removed: scored as if never indexed
    assert live.search(english(["loan"]), 5)[1].tolist() == [1]
    assert live.search(english(["river"]), 5)[1].tolist() == []
    # what the relevance margin asks: a term only a removed document held is held no more, as in a fresh build
    assert bm25.holds("river") and not live.holds("river") and live.holds("loan") and not live.holds("zebra")
    np.testing.assert_allclose(
        live.scores(english(["bank", "oven"]))[1:], BM25(documents[1:]).scores(english(["bank", "oven"]))
    )
    assert bm25.search(english(["zebra"]), 5)[1].tolist() == []
