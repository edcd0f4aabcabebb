"""The compressed token index: product quantisation (IVF-PQ) with and without the exact token vectors.

A corpus of about 3,200 token vectors and the tiny random biLM; ``IVF64,PQ16x4np`` (64 lists, 16 four-bit
sub-quantisers: 8 bytes a 16-d vector; ``np``: no polysemous training, which is slow) trains on it without FAISS
warnings (39 vectors a centroid). FAISS runs on one thread here (its threads spin on a busy machine). The tiny
model's vectors are nearly collinear (mean cosine 0.93), so coarser codes (``IVF4,PQ8x4``: recall 0.45 after
re-ranking) cannot tell its neighbours apart. Neighbours re-ranked with the exact vectors are checked against an
exact (Flat) index of the same corpus.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import faiss
import numpy as np
import pytest

from indexer import Index, QueryError, Settings, add_documents, build_index
from indexer.__main__ import main
from indexer.factory import is_compressed, min_train_points, pq_subquantizers, token_factory
from indexer.layout import MANIFEST
from indexer.manifest import FORMAT_VERSION

PQ = "IVF64,PQ16x4np"
WORDS = (
    "river bank money loan stone water field horse market bread music garden forest winter summer train station "
    "letter window doctor teacher mountain valley island castle engine paper silver copper village harbour "
    "storm cloud candle mirror ladder basket feather lantern meadow orchard"
).split()
FILLER = "the a of to and in on with".split()
PQ_SETTINGS = Settings(shard_tokens=2_000, token_index_factory=PQ)  # GloVe: a small file (``glove_file``)


@pytest.fixture(scope="module", autouse=True)
def one_faiss_thread():
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(threads)


@pytest.fixture(scope="module")
def glove_file(tmp_path_factory) -> Path:
    """Random 8-d GloVe vectors of the corpus's words (training GloVe would take longer than the rest)."""
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("glove") / "glove.txt"
    lines = [" ".join([w, *(f"{x:.4f}" for x in rng.standard_normal(8))]) for w in WORDS + FILLER]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def settings(glove: Path, **changes) -> Settings:
    return Settings(**{**PQ_SETTINGS.__dict__, "glove": str(glove), **changes})


def documents(n: int, seed: int) -> list[dict]:
    """``n`` documents of random sentences over a small vocabulary (every word occurs many times)."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        sentences = [
            " ".join(rng.choice(WORDS) if rng.random() < 0.8 else rng.choice(FILLER) for _ in range(12)).capitalize()
            + "."
            for _ in range(3)
        ]
        docs.append({"id": f"d{seed}-{i}", "title": f"doc {i}", "text": " ".join(sentences)})
    return docs


def write_jsonl(path: Path, docs: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory, tiny_model_dir, glove_file) -> dict[str, Index]:
    """The same corpus (about 3,000 token vectors) as an exact index, PQ with exact vectors, and PQ alone."""
    root = tmp_path_factory.mktemp("pq")
    corpus = write_jsonl(root / "corpus" / "docs.jsonl", documents(110, seed=1))
    variants = {
        "exact": settings(glove_file, token_index_factory="Flat"),
        "reranked": settings(glove_file),
        "pq_only": settings(glove_file, keep_exact_tokens=False),
    }
    return {
        name: build_index([corpus], root / name, model=tiny_model_dir, settings=variant, progress=False)
        for name, variant in variants.items()
    }


def queries(index: Index, n: int = 25) -> list[tuple[str, str, int]]:
    """(sentence, word, position) of ``n`` stored token occurrences, seeded."""
    rows = np.random.default_rng(0).choice(len(index.tokens), n, replace=False)
    picked = []
    for row in rows.tolist():
        token = index.tokens.iloc[row]
        sentence = index.sentences.iloc[int(token["sentence_id"])]
        picked.append((sentence["text"], token["word"], int(token["position"])))
    return picked


def hit_ids(found) -> list[tuple[str, str, int]]:
    return [(h.doc_id, h.sentence, h.token_index) for h in found.hits]


def test_pq_index_is_recorded_and_smaller(built):
    exact, reranked, pq_only = built["exact"], built["reranked"], built["pq_only"]
    n = exact.manifest.counts.token_vectors
    assert n > 2_500
    for index in (reranked, pq_only):
        entry = index.manifest.indexes["tokens"]
        assert entry.factory == PQ and entry.ntotal == n
        assert index.manifest.format_version == FORMAT_VERSION
        assert index.stats()["token_vectors"]["compressed"]
    assert exact.manifest.indexes["tokens"].factory == "Flat" and not exact.stats()["token_vectors"]["compressed"]
    assert reranked.stats()["token_vectors"]["reranked"] and not pq_only.stats()["token_vectors"]["reranked"]
    # bytes per token: the FAISS file, and the whole index on disk (no token_layers.npy without exact vectors)
    per_token = {name: index.manifest.indexes["tokens"].size / n for name, index in built.items()}
    assert per_token["reranked"] < per_token["exact"] / 3
    assert pq_only.manifest.disk_bytes() < reranked.manifest.disk_bytes() < exact.manifest.disk_bytes() * 1.01
    on_disk = {p.name for p in (pq_only.path / "shards").rglob("*.npy")}
    assert "token_layers.npy" not in on_disk and "sentence_layers.npy" in on_disk
    assert all(f.file != "token_layers.npy" for s in pq_only.manifest.shards for f in s.files)
    Index.open(pq_only.path, verify=True)  # every file it lists is there, with its hash


def test_reranked_neighbours_match_exact_search(built):
    exact, reranked = built["exact"], built["reranked"]
    recalls = []
    for sentence, word, position in queries(exact):
        truth = exact.neighbors(sentence, word, position, k=10, representation="elmo")
        found = reranked.neighbors(sentence, word, position, k=10, representation="elmo")
        assert not found.notices
        recalls.append(len(set(hit_ids(truth)) & set(hit_ids(found))) / 10)
        # re-ranked scores are exact cosines: equal to the exact index's wherever the same occurrence is found
        exact_scores = {h: t.score for h, t in zip(hit_ids(truth), truth.hits)}
        for key, hit in zip(hit_ids(found), found.hits):
            if key in exact_scores:
                assert hit.score == pytest.approx(exact_scores[key], abs=1e-5)
        assert [h.score for h in found.hits] == sorted((h.score for h in found.hits), reverse=True)
        # same-word neighbours search the word's own occurrences exactly: the same as the exact index
        same_truth = exact.neighbors(sentence, word, position, k=10, same_word=True, representation="elmo")
        same = reranked.neighbors(sentence, word, position, k=10, same_word=True, representation="elmo")
        assert hit_ids(same) == hit_ids(same_truth)
    assert np.mean(recalls) >= 0.9


def test_pq_only_answers_approximately_and_says_so(built):
    exact, pq_only = built["exact"], built["pq_only"]
    recalls = []
    for sentence, word, position in queries(exact, 10):
        truth = exact.neighbors(sentence, word, position, k=10, same_word=True, representation="elmo")
        found = pq_only.neighbors(sentence, word, position, k=10, same_word=True, representation="elmo")
        assert len(found.hits) == 10 and all(h.word.lower() == word.lower() for h in found.hits)
        assert any("approximate" in n for n in found.notices)
        recalls.append(len(set(hit_ids(truth)) & set(hit_ids(found))) / 10)
        assert len(pq_only.neighbors(sentence, word, position, k=5, representation="elmo").hits) == 5
    assert np.mean(recalls) >= 0.3  # PQ alone: far from exact, far from chance (10 of a word's ~80 uses)
    senses = pq_only.senses("river", representation="elmo")
    assert senses.n_occurrences == len(exact.word_ids("river")) and any("approximate" in n for n in senses.notices)
    with pytest.raises(QueryError, match="no exact token vectors"):
        pq_only.neighbors(*queries(exact, 1)[0], layers="top", representation="elmo")
    with pytest.raises(QueryError, match="no exact token vectors"):
        pq_only.senses("river", layers="top", representation="elmo")
    assert exact.neighbors(
        *queries(exact, 1)[0], layers="top", representation="elmo"
    ).hits  # exact vectors kept: any mix works


def test_two_uses_are_compared_in_every_layer_without_exact_vectors(built):
    """Two uses are read when compared, not looked up: an index without exact token vectors compares them in each
    ELMo layer and the mix as the exact one does."""
    (a, word_a, position_a), (b, word_b, position_b) = queries(built["exact"], 2)
    exact, pq_only = (
        built[kind].compare(a, word_a, b, word_b, position_a, position_b) for kind in ("exact", "pq_only")
    )
    assert {"ELMo token layer", "ELMo layer 2", "ELMo layer mix (paper)"} <= set(exact.cosines)
    assert pq_only.cosines == pytest.approx(exact.cosines)


def test_add_to_a_pq_only_index(built, tmp_path, tiny_model_dir):
    """Documents added to a PQ-only index get compressed token vectors only, and the index verifies and answers."""
    path = tmp_path / "index"
    shutil.copytree(built["pq_only"].path, path)
    more = write_jsonl(tmp_path / "more" / "more.jsonl", documents(20, seed=2))
    index = add_documents(path, [more], model=tiny_model_dir, progress=False)
    assert index.manifest.indexes["tokens"].ntotal == index.manifest.counts.token_vectors
    assert not list((path / "shards").rglob("token_layers.npy"))
    Index.open(path, verify=True)
    doc = documents(20, seed=2)[0]
    sentence = doc["text"].split(".")[0] + "."
    word = next(w for w in sentence.rstrip(".").split() if w.lower() in WORDS)
    assert index.neighbors(sentence, word, k=3, representation="elmo").hits


def test_bad_token_factories_are_refused_before_encoding(tmp_path, tiny_model_dir, glove_file):
    corpus = write_jsonl(tmp_path / "corpus" / "docs.jsonl", documents(3, seed=3))  # about 80 token vectors
    cases = [
        ("Bogus42", r"FAISS cannot make an index from 'Bogus42'"),
        ("IVF4,PQ8", r"IVF4,PQ8.*at least 256 training vectors.*token vectors.*--token-index-factory"),
        ("IVF512,PQ8x4", r"IVF512,PQ8x4.*512 IVF lists.*token vectors"),
        ("OPQ4,IVF4,PQ4x4", r"at least 256 training vectors"),
    ]
    for factory, message in cases:
        out = tmp_path / factory.replace(",", "_")
        with pytest.raises(ValueError, match=message):
            build_index([corpus], out, model=tiny_model_dir, settings=settings(glove_file, token_index_factory=factory))
        assert not (out / "shards").exists() and not (out / "build-state.json").exists()
    with pytest.raises(ValueError, match="token_index_factory"):
        Settings(token_index_factory=" ").check()


def test_cli_builds_a_pq_only_index(tmp_path, tiny_model_dir, glove_file, capsys):
    """``build --no-exact-tokens`` records a PQ-only index whose neighbours say they are approximate; a bad factory is exit 2."""
    corpus = write_jsonl(tmp_path / "corpus" / "docs.jsonl", documents(40, seed=4))
    out = tmp_path / "index"
    common = ["--shard-tokens", "5000", "--glove", str(glove_file)]
    build = ["build", "--corpus", str(corpus), "--out", str(out), "--model", str(tiny_model_dir), "--quiet"]
    assert main([*build, *common, "--token-index-factory", "IVF2,PQ4x4np", "--no-exact-tokens"]) == 0
    assert "no exact vectors kept: approximate" in capsys.readouterr().out
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["settings"]["token_index_factory"] == "IVF2,PQ4x4np"
    assert manifest["settings"]["keep_exact_tokens"] is False
    sentence = documents(40, seed=4)[0]["text"].split(".")[0] + "."
    word = next(w for w in sentence.rstrip(".").split() if w.lower() in WORDS)
    assert (
        main(
            [
                "neighbors",
                "--index",
                str(out),
                "--sentence",
                sentence,
                "--word",
                word,
                "--k",
                "3",
                "--representation",
                "elmo",
            ]
        )
        == 0
    )
    assert "approximate" in capsys.readouterr().err
    bad = ["--token-index-factory", "Nope7"]
    assert main([*build[:4], str(tmp_path / "bad"), *build[5:], *common, *bad]) == 2
    assert "Nope7" in capsys.readouterr().err


def test_factory_rules():
    """The token factory grows from Flat to IVF to IVF-PQ with the index's size; compression and training needs are known."""
    assert token_factory(1_000, 256) == "Flat"
    assert token_factory(500_000, 256) == "IVF2048,Flat"  # 0.5 GiB of float32: not compressed yet
    assert token_factory(2_000_000, 256) == "IVF4096,PQ32np"  # beyond 1 GiB: 32 bytes a vector
    assert token_factory(10**9, 1024) == "IVF65536,PQ128np"
    assert pq_subquantizers(16) == 2 and pq_subquantizers(100) == 10 and pq_subquantizers(6) == 1
    indexes = {f: faiss.index_factory(16, f, faiss.METRIC_INNER_PRODUCT) for f in ("Flat", "IVF4,Flat", "HNSW8")}
    indexes |= {f: faiss.index_factory(16, f, faiss.METRIC_INNER_PRODUCT) for f in ("IVF4,PQ8x4", "OPQ4,PQ4", "SQ8")}
    assert [f for f, index in indexes.items() if is_compressed(index)] == ["IVF4,PQ8x4", "OPQ4,PQ4", "SQ8"]
    assert [min_train_points(index) for index in indexes.values()] == [0, 4, 0, 16, 256, 0]
