"""The respelling rule on a vocabulary made up here: fewest edits, then the collection's most frequent word, then
the dictionary's most frequent, then the character model's nearest (``indexer.spelling.Speller``)."""

from __future__ import annotations

import numpy as np

from indexer.spelling import Speller, correctable, letter_counts, typed_letters

WORDS = ["honey", "money", "mouse", "monday"]
LOOKS = {"honey": [1.0, 0.0], "money": [0.0, 1.0], "mouse": [0.6, 0.8], "monday": [0.8, 0.6]}


def looks(typed_looks: list[float]):
    """A character model that puts every word of ``LOOKS`` where it says, and any other word at ``typed_looks``."""
    return lambda words: np.array([LOOKS.get(w, typed_looks) for w in words], np.float32)


def speller(counts: dict[str, int], typed_looks: list[float], dictionary: tuple[str, ...] = ()) -> Speller:
    """A speller of ``WORDS`` with these ``counts``, whose character model puts every typed word at ``typed_looks``."""
    return Speller(WORDS, [counts[w] for w in WORDS], dictionary, looks(typed_looks))


def test_the_fewest_edits_win_whatever_the_counts_and_looks():
    """ "monney" is one edit from "money", two from "honey": money, however common honey is and however alike."""
    rare_money = speller({"honey": 1000, "money": 1, "mouse": 1, "monday": 1}, LOOKS["honey"])
    assert rare_money.correct("monney") == "money"


def test_among_as_many_edits_the_more_frequent_word_wins():
    """ "xoney" is one edit from both honey and money: the collection's more frequent one, even against the looks."""
    looks_like_honey = LOOKS["honey"]
    assert speller({"honey": 3, "money": 27, "mouse": 1, "monday": 1}, looks_like_honey).correct("xoney") == "money"
    assert speller({"honey": 27, "money": 3, "mouse": 1, "monday": 1}, LOOKS["money"]).correct("xoney") == "honey"


def test_the_character_model_breaks_ties_and_far_words_are_left_alone():
    even = {"honey": 5, "money": 5, "mouse": 1, "monday": 1}
    assert speller(even, LOOKS["honey"]).correct("xoney") == "honey"
    assert speller(even, LOOKS["money"]).correct("xoney") == "money"
    assert speller(even, LOOKS["money"]).correct("qwxzt") is None  # nothing within the edits allowed
    assert speller(even, LOOKS["money"]).correct("mny") is None  # too short to correct


def test_a_dictionary_word_fewer_edits_away_beats_the_collections_words():
    """ "moviie" is one edit from the dictionary's "movie" and two from the collection's "move": movie. Among as
    many edits a word the collection uses beats the dictionary's ("monney": money), and among the dictionary's the
    one it puts first (the more frequent) wins, even against the looks."""
    collection = Speller(["move", "money"], [40, 3], ("the", "movie", "honey", "mooney"), looks(LOOKS["honey"]))
    assert collection.correct("moviie") == "movie"
    assert collection.correct("monney") == "money"
    assert Speller(["money"], [3], ("the", "movie"), looks([1.0, 0.0])).correct("moviie") == "movie"
    first_honey = Speller(["move"], [1], ("honey", "money"), looks(LOOKS["money"]))
    first_money = Speller(["move"], [1], ("money", "honey"), looks(LOOKS["honey"]))
    assert first_honey.correct("xoney") == "honey" and first_money.correct("xoney") == "money"


def test_only_words_of_letters_are_candidates_and_letter_counts_are_per_word():
    """A dictionary entry with other characters ("<unk>", "mo-ney") is never what a word is respelled as; the
    quick filter's letter counts are each word's own (a word of letters in any script)."""
    assert Speller(["move"], [1], ("<unk>", "mo-ney"), looks([1.0, 0.0])).correct("moneyy") is None
    counts = letter_counts(["aab", "", typed_letters("벌레")])
    assert counts.shape == (3, 64) and counts[0].sum() == 3 and counts[0, ord("a") % 64] == 2
    assert counts[1].sum() == 0 and counts[2].sum() == 5


def test_korean_is_spelled_in_jamo_so_a_slipped_key_is_one_edit():
    """허벅자 is one jamo from 허벅지 (ㅏ for ㅣ) and two syllables' worth from 허리띠: one edit, whatever the counts;
    a two-syllable word (4+ jamo) is long enough to correct, a one-syllable one is not."""
    assert typed_letters("벌레") == "\u1107\u1165\u11af\u1105\u1166" and typed_letters("bank") == "bank"
    words = ["허벅지", "허리띠", "벌레"]
    korean = Speller(words, [1, 50, 5], (), lambda w: np.ones((len(w), 3), np.float32))
    assert korean.correct("허벅자") == "허벅지"
    assert korean.correct("벌래") == "벌레"
    assert korean.correct("배") is None and not correctable("배") and correctable("벌래")


def jamo_edits(typed: str, word: str) -> int | None:
    """The edits ``Speller`` counts from ``typed`` to ``word`` (None: more than ``max_edits`` allows)."""
    alone = Speller([word], [1], (), lambda w: np.ones((len(w), 2), np.float32))
    return next((edits for _, edits in alone.candidates(typed)), None)


def test_korean_edits_count_jamo_not_syllable_blocks():
    """One jamo is one edit, whichever part of a syllable it is: a vowel (허벅자), an initial (들찬), a final dropped
    (전서) or doubled (갖지), a compound vowel (괴 for 교) or final (닥 for 닭) as one letter. A dropped syllable is its
    two or three letters (바가지 is 2 from 가지), and a final moved to the next syllable (머거요 for 먹어요) is 2:
    Unicode's final ㄱ is another letter than its initial ㄱ."""
    one_jamo = [("허벅자", "허벅지"), ("들찬", "들판"), ("전서", "전선"), ("갖지", "가지"), ("괴향", "교향")]
    one_jamo += [("닥고기", "닭고기")]
    assert [jamo_edits(typed, word) for typed, word in one_jamo] == [1] * len(one_jamo)
    assert (
        jamo_edits("바가지", "가지") == 2
        and jamo_edits("세종댜왕", "세종왕") == 2
        and jamo_edits("머거요", "먹어요") == 2
    )
    assert jamo_edits("허리띠", "허벅지") is None and jamo_edits("가지", "바가지") is None  # 4 jamo: 1 edit at most


def test_full_width_letters_and_combining_accents_are_spelled_as_the_plain_word():
    """A word typed in full-width letters ("ｍｏｎｅｙ") or with a combining accent ("cafe" + U+0301) is the
    collection's word in its compatibility form (NFKC), so it is respelled as that word; a typo in full width
    ("ｍｏｎｎｅｙ") is one edit, as in plain letters."""
    collection = Speller(["money", "honey", "café"], [27, 3, 2], (), looks([1.0, 0.0]))
    assert correctable("cafe\u0301") and not "cafe\u0301".isalpha()
    assert collection.correct("ｍｏｎｅｙ") == "money"
    assert collection.correct("ｍｏｎｎｅｙ") == "money"
    assert collection.correct("cafe\u0301") == "café"
