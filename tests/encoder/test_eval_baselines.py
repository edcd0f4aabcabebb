"""Baselines beside every table, and --limit capping test items only: planted data with known answers."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from encoder import Elmo
from encoder.eval import baselines, perplexity, pos, wic, wsd
from encoder.eval.embeddings import Embedder
from encoder.eval.results import cap
from encoder.glove import Glove
from encoder.text import text_rules


@pytest.fixture(scope="module")
def embedder(tiny_model_dir) -> Embedder:
    return Embedder(Elmo.load(tiny_model_dir))


def test_bag_of_context_is_the_mean_of_the_other_non_stopwords():
    glove = Glove(["bank", "river", "muddy", "the"], np.array([[9, 9], [1, 0], [0, 1], [5, 5]], dtype=np.float32))
    tokens = ["The", "muddy", "bank", "of", "the", "River"]
    assert baselines.context_words(tokens, 2, 3) == ["muddy", "river"]
    np.testing.assert_allclose(baselines.bag_of_context(glove, tokens, 2, 3), [0.5, 0.5])
    np.testing.assert_allclose(baselines.bag_of_context(glove, ["the", "bank"], 1, 2), [0, 0])  # nothing left


def test_majority_class_and_word_overlap_baselines():
    """The majority class, bag-of-words and tf-idf cosine baselines give their hand-computed values."""
    assert baselines.majority_accuracy(np.array([1, 1, 0]), np.array([1, 0, 0, 0])) == 25.0
    # counts {a: 2, b: 1} . {a: 1, c: 1} = 2; norms sqrt(5) and sqrt(2); punctuation and case ignored
    assert baselines.bag_of_words_cosine(["A", "a", "b", "."], ["a", "c", "!"]) == pytest.approx(2 / math.sqrt(10))
    idf = baselines.Idf.fit([["a", "b"], ["a"], ["c"]])  # df: a 2, b 1, c 1, of 3 documents
    assert idf("a") == pytest.approx(math.log(4 / 3) + 1) and idf("zebra") == pytest.approx(math.log(4) + 1)
    # only "a" is shared: cosine = idf(a)^2 / (|(idf a, idf b)| * |(idf a, idf c)|)
    expected = idf("a") ** 2 / (idf("a") ** 2 + idf("b") ** 2)
    assert baselines.tfidf_cosine(["a", "b"], ["a", "c"], idf) == pytest.approx(expected)


def test_cap_keeps_the_first_items_and_says_so():
    notes: list[str] = []
    assert cap([1, 2, 3], 2, "dev pairs", notes) == [1, 2]
    assert notes == ["--limit 2: scored the first 2 of 3 dev pairs"]
    assert cap([1, 2, 3], None, "dev pairs", notes) == [1, 2, 3] and len(notes) == 1


def test_wic_limit_caps_dev_and_never_train(embedder, tmp_path):
    rows = [("bank", 0, 0, "bank of a river", "bank of a river", True), ("bank", 0, 0, "bank x", "bank y", False)]
    for split, n in (("train", 5), ("dev", 4)):
        (tmp_path / f"{split}.data.txt").write_text(
            "".join(f"{t}\tN\t{i}-{j}\t{a}\t{b}\n" for t, i, j, a, b, _ in rows * n)
        )
        (tmp_path / f"{split}.gold.txt").write_text("".join("T\n" if same else "F\n" for *_, same in rows * n))
    result = wic.run(embedder, tmp_path, limit=3)
    assert result.details["train pairs"] == 10 and result.details["dev pairs"] == 3
    assert "--limit 3: scored the first 3 of 8 dev pairs (train: all)" in result.notes


def test_wsd_most_frequent_sense_prefers_semcor_counts_then_wordnet_order():
    candidates = [["x%1", "x%2", "x%3"], ["y%1", "y%2"], ["z%1"]]
    counts = {"x%2": 3, "x%3": 3, "y%1": 1}
    assert wsd.most_frequent_senses(candidates, counts) == ["x%2", "y%1", None]


def test_wsd_limit_keeps_the_first_sentences_of_every_part():
    sentences = [
        wsd.Sentence(["w"], [wsd.Target(f"{p}.s{k}.t0", "w", "n", 0, 1)], f"{p}.s{k}") for p in "ab" for k in range(3)
    ]
    notes: list[str] = []
    kept = wsd.first_of_each_part(sentences, 2, notes)
    assert [s.id for s in kept] == ["a.s0", "a.s1", "b.s0", "b.s1"]
    assert notes == ["--limit 2: scored the first 2 sentences of each part, 4 of 6 test instances (SemCor: all)"]


def test_pos_most_frequent_tag_baseline():
    """Each word gets its most frequent training tag; an unseen word gets the commonest tag."""
    train = [(["the", "run", "run"], ["DET", "NOUN", "VERB"]), (["run", "the"], ["VERB", "DET"])]
    assert pos.most_frequent_tags(train, ["run", "the", "zebra"]) == ["VERB", "DET", "DET"]  # zebra: commonest


def test_perplexity_reports_exp_mean_loss_bits_per_character_and_unk_rate(tmp_path, monkeypatch):
    (tmp_path / "vocab.txt").write_text("<S>\n</S>\n<UNK>\nthe\ncat\n")
    (tmp_path / "text.txt").write_text("The cat sat.\n\nthe cat\n")
    lines = perplexity.read_paragraphs(tmp_path / "text.txt", text_rules("en"))
    words = perplexity.target_words(lines, text_rules("en"))
    assert words == ["The", "cat", "sat", ".", "the", "cat"] and len(lines) == 2
    n = len(words) + 2  # plus one </S> per sentence
    monkeypatch.setattr(perplexity, "model_folder", lambda model: tmp_path)
    monkeypatch.setattr(perplexity, "resolve_model", lambda model: SimpleNamespace(text=lambda: text_rules("en")))
    monkeypatch.setattr(
        perplexity,
        "perplexity",
        lambda model, lines: {"forward": math.e**2, "backward": math.e**4, "tokens": n, "vocab_size": 5},
    )
    result = perplexity.run("planted", tmp_path / "text.txt")
    assert result.rows[perplexity.PERPLEXITY][perplexity.BOTH] == pytest.approx(math.e**3)  # not (e^2 + e^4) / 2
    characters = len("The cat sat.") + len("the cat")  # the paragraphs' own characters, line breaks not counted
    assert result.rows[perplexity.BPC][perplexity.BOTH] == pytest.approx(3 * n / math.log(2) / characters)
    # "The", "sat" and "." are not in the vocabulary (it is case-sensitive): 3 of n targets
    assert result.rows[perplexity.UNK][perplexity.FORWARD] == pytest.approx(100 * 3 / n)
    # spelled out: "The", "sat" and "." also pay -log2 of each character's share of the text's 16 non-space ones
    share = {"T": 1, "h": 2, "e": 2, "c": 2, "a": 3, "t": 4, "s": 1, ".": 1}
    spelled = sum(-math.log2(share[c] / 16) for c in "Thesat.")
    assert result.rows[perplexity.BPC_SPELLED][perplexity.BOTH] == pytest.approx(
        (3 * n / math.log(2) + spelled) / characters
    )
    limited = perplexity.run("planted", tmp_path / "text.txt", limit=1)
    assert limited.notes[0] == "--limit 1: the first 1 of 2 paragraphs" and limited.details["paragraphs"] == 1


def test_perplexity_without_an_lm_head_says_so(tiny_model_dir: Path, tmp_path):
    (tmp_path / "text.txt").write_text("The cat sat.\n")
    result = perplexity.run(tiny_model_dir, tmp_path / "text.txt")
    assert not result.rows and "not measured" in result.notes[0]
