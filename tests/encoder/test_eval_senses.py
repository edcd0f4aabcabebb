"""The word-sense probe: its hand-written data, its AUC and 1-NN scoring on planted vectors, and the CLI run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from encoder.eval import senses
from encoder.eval.embeddings import cosine
from encoder.glove import Glove
from encoder.text import text_rules, tokenize

WORDS = {
    "bank",
    "play",
    "bat",
    "spring",
    "match",
    "pitch",
    "light",
    "rock",
    "seal",
    "bark",
    "bass",
    "crane",
    "fair",
    "mole",
    "plant",
    "row",
}


def test_the_shipped_tsv_is_well_formed():
    lines = senses.DATA.read_text(encoding="utf-8").splitlines()
    assert lines[0] == senses.HEADER
    rows = [line.split("\t") for line in lines[1:]]
    assert len(rows) == 160 and all(len(r) == 3 for r in rows)
    per_sense = Counter((word, sense) for word, sense, _ in rows)
    assert {word for word, _ in per_sense} == WORDS
    assert Counter(word for word, _ in per_sense) == {word: 2 for word in WORDS}
    assert set(per_sense.values()) == {5}
    for word, _, sentence in rows:
        tokens = sentence.split(" ")
        assert tokens.count(word) == 1, sentence
        assert 8 <= len(tokens) <= 20, sentence
        assert tokenize(sentence) == tokens, sentence  # tokenized as NLTK's word tokenizer does
    assert len({sentence for *_, sentence in rows}) == 160
    items = senses.read_senses(senses.DATA, text_rules("en"))
    assert len(items) == 160 and all(s.tokens[s.index] == s.word for s in items)


def test_reader_rejects_a_word_written_twice_and_limits_words(tmp_path):
    path = tmp_path / "probe.tsv"
    rows = [
        "bank\triver\tthe bank of the river",
        "bank\triver\ta grassy bank",
        "bank\tfinance\tthe bank lends money",
        "bank\tfinance\tmy bank closed",
        "bat\tanimal\ta bat flew",
        "bat\tanimal\tthe bat sleeps",
        "bat\tsports\tswing the bat",
        "bat\tsports\ta wooden bat",
    ]
    path.write_text("\n".join([senses.HEADER, *rows]) + "\n")
    assert {s.word for s in senses.read_senses(path, text_rules("en"), limit=1)} == {"bank"}
    path.write_text("\n".join([senses.HEADER, *rows, "bat\tsports\tbat after bat"]) + "\n")
    with pytest.raises(ValueError, match="line 10"):
        senses.read_senses(path, text_rules("en"))


def test_the_target_is_the_token_equal_to_the_word_else_the_one_token_that_begins_with_it():
    assert senses.target_index(("the", "bank", "banks"), "bank") == 1  # equal wins over a longer token
    assert senses.target_index(("우리는", "배를", "탔다"), "배") == 1  # a coarser unit: the eojeol holding it
    assert senses.target_index(("배를", "배추를"), "배") is None  # two candidates: ambiguous
    assert senses.target_index(("bank", "bank"), "bank") is None
    assert senses.target_index(("a", "river"), "bank") is None


def test_auc_and_nearest_neighbour_on_hand_computed_vectors():
    # senses a, a, b, b; cosines: (0,1) = 1 and (2,3) = 1/sqrt2 are same-sense pairs,
    # (0,2) = (1,2) = 0 and (0,3) = (1,3) = 1/sqrt2 are different-sense pairs
    x = np.array([[1, 0], [1, 0], [0, 1], [1, 1]], dtype=np.float64)
    labels = np.array(["a", "a", "b", "b"])
    similarity = cosine(x[:, None], x[None, :])
    # 1 beats all four different pairs; 1/sqrt2 beats the two zeros and ties the two 1/sqrt2: (4 + 3) / 8
    assert senses.pair_auc(similarity, labels) == 0.875
    # item 3 is equally near all three others, one of which shares its sense
    assert senses.nearest_same(similarity, labels) == pytest.approx([1, 1, 1, 1 / 3])
    # all pairs tied (a context-free layer): 1/2, and each item's nearest are the 9 others, 4 of them same-sense
    ten = np.array(["a"] * 5 + ["b"] * 5)
    assert senses.pair_auc(np.ones((10, 10)), ten) == 0.5
    assert senses.nearest_same(np.ones((10, 10)), ten) == pytest.approx(np.full(10, 4 / 9))


def test_glove_context_is_the_mean_of_the_other_non_stopwords():
    glove = Glove(["the", "bank", "holds", "money"], np.array([[9, 9], [7, 7], [1, 0], [0, 1]], dtype=np.float32))
    item = senses.SenseSentence("bank", "finance", ("The", "bank", "holds", "Money", "."), 1)
    assert senses.glove_contexts(glove, [item]).tolist() == [[0.5, 0.5]]


def test_cli_runs_the_probe_end_to_end(tiny_model_dir: Path, tmp_path, capsys):
    """``encoder evaluate senses --json`` scores every layer and GloVe; the context-free token layer ties every pair."""
    from encoder.__main__ import main

    (tmp_path / "glove.txt").write_text("river 1 0\nmoney 0 1\nthe 0.5 0.5\n")
    main(["evaluate", "senses", "--model", str(tiny_model_dir), "--glove", str(tmp_path / "glove.txt"), "--json"])
    result = json.loads(capsys.readouterr().out)["results"]["senses"]
    columns = ["token", "layer 1", "layer 2", "average", "GloVe"]
    assert result["columns"] == columns
    assert list(result["rows"]) == [senses.AUC_ROW, senses.NN_ROW]
    assert all(list(row) == columns for row in result["rows"].values())
    assert all(0 <= v <= 100 for row in result["rows"].values() for v in row.values())
    assert result["details"]["words"] == 16 and result["details"]["sentences"] == 160
    # the token layer is context-free: the same vector for a word in all its sentences, so every pair ties
    assert result["rows"][senses.AUC_ROW]["token"] == 50.0
    assert result["rows"][senses.NN_ROW]["token"] == pytest.approx(100 * 4 / 9)
