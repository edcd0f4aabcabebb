"""The yardstick of the Word in context counts (``demo.yardstick``): chance rate, best possible, verdict, and the
typical cosines of a word's same-sense and other-sense uses."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from demo.corpora import DEMOS
from demo.labels import LABELS_FILE, UseLabel, demo_labels
from demo.yardstick import AT_CHANCE, TIE, Yardstick, labelled_senses, leaders, tied, typical_cosines, yardstick


def corpus_rows(word: str) -> list[dict[str, str]]:
    """The rows of the English demo's labels.tsv for ``word``'s uses in the corpus (not the example sentences), read
    straight from the file."""
    with (DEMOS["en"].corpus_dir / LABELS_FILE).open(encoding="utf-8", newline="") as lines:
        rows = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [row for row in rows if row["word"] == word and row["doc_id"] != "example"]


@pytest.mark.parametrize(
    ("word", "sense"), [("bank", "money"), ("bank", "river"), ("play", "sport"), ("play", "stage")]
)
def test_the_chance_rate_is_the_senses_share_of_the_words_labelled_uses(word: str, sense: str) -> None:
    rows = corpus_rows(word)
    uses = [(row["sentence"], int(row["position"])) for row in rows]
    in_sense = sum(row["sense"] == sense for row in rows)
    query = UseLabel(word, sense, "NOUN")
    for k in (1, 5, 8):
        stick = yardstick(query, [query] * k, labelled_senses(uses, demo_labels(), word))
        assert stick is not None
        assert stick.chance == pytest.approx(k * in_sense / len(rows))
        assert stick.best == min(k, in_sense) and stick.counted == k and stick.same_sense == k


def test_the_money_bank_has_the_issues_chance_rate() -> None:
    """29 of the 53 "bank"s of the demo are money: 8 random uses hold 4.4 of them."""
    rows = corpus_rows("bank")
    uses = [(row["sentence"], int(row["position"])) for row in rows]
    stick = yardstick(UseLabel("bank", "money", "NOUN"), [None] * 8 + [UseLabel("bank", "money", "NOUN")] * 2, [])
    assert stick is None  # no labelled use to draw from: no chance rate
    money = UseLabel("bank", "money", "NOUN")
    stick = yardstick(
        money, [money] * 2 + [UseLabel("bank", "river", "NOUN")] * 6, labelled_senses(uses, demo_labels(), "bank")
    )
    assert (len(rows), sum(row["sense"] == "money" for row in rows)) == (53, 29)
    assert f"{stick.chance:.1f}" == "4.4" and stick.best == 8 and stick.verdict == "below"


def test_only_labelled_neighbours_and_labelled_uses_of_the_word_count() -> None:
    """An unlabelled neighbour is not counted; a use labelled for another word, or not at all, is not drawn from."""
    uses = [("a", 0), ("b", 1), ("c", 2), ("d", 3)]
    labels = {
        ("a", 0): UseLabel("bank", "money", "NOUN"),
        ("b", 1): UseLabel("bank", "river", "NOUN"),
        ("c", 2): UseLabel("play", "money", "NOUN"),  # another word's label
    }
    senses = labelled_senses(uses, labels, "bank")
    assert senses == ["money", "river", None, None]
    money = UseLabel("bank", "money", "NOUN")
    stick = yardstick(money, [money, None, UseLabel("bank", "river", "NOUN")], senses)
    assert stick == Yardstick(same_sense=1, counted=2, chance=1.0, best=1)


def test_the_verdict_flips_where_the_count_crosses_chance() -> None:
    money, river = UseLabel("bank", "money", "NOUN"), UseLabel("bank", "river", "NOUN")
    senses = ["money"] * 29 + ["river"] * 24  # chance for 8: 4.38
    verdicts = {}
    for count in range(9):
        stick = yardstick(money, [money] * count + [river] * (8 - count), senses)
        verdicts[count] = stick.verdict
        expected = (
            "below" if count < stick.chance - AT_CHANCE else "above" if count > stick.chance + AT_CHANCE else "at"
        )
        assert stick.verdict == expected
    assert verdicts == {
        0: "below",
        1: "below",
        2: "below",
        3: "below",
        4: "at",
        5: "above",
        6: "above",
        7: "above",
        8: "above",
    }


def test_leaders_are_the_representations_with_the_most_uses_of_the_sense() -> None:
    sticks = {name: Yardstick(count, 8, 4.4, 8) for name, count in (("h0", 1), ("h1", 3), ("h2", 3), ("mix", 2))}
    assert leaders(sticks) == ["h1", "h2"]
    assert leaders({"h1": Yardstick(3, 8, 4.4, 8), "h2": Yardstick(3, 8, 4.4, 8)}) == []  # a tie says nothing


def test_typical_cosines_are_the_medians_of_same_and_other_sense_pairs() -> None:
    angles = np.array([0.0, 0.1, 0.3, 1.5, 1.6, 0.2])
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    senses = ["river", "river", "river", "money", "money", None]  # the last use is not labelled: left out
    found = typical_cosines(vectors, senses)
    same = [np.cos(a - b) for a, b in ((0.0, 0.1), (0.0, 0.3), (0.1, 0.3), (1.5, 1.6))]
    other = [np.cos(a - b) for a in (0.0, 0.1, 0.3) for b in (1.5, 1.6)]
    assert (found.same_pairs, found.other_pairs) == (4, 6)
    assert found.same_sense == pytest.approx(np.median(same)) and found.other_sense == pytest.approx(np.median(other))
    assert typical_cosines(vectors, ["river"] * 6).other_sense is None  # one sense: no pair of two


def test_neighbours_that_all_score_alike_are_tied() -> None:
    assert tied([0.9, 0.9, 0.9]) and tied([1.0, 1.0 - TIE / 2])
    assert not tied([0.9, 0.8]) and not tied([0.9])  # one neighbour has nothing to tie with
