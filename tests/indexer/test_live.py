"""``live.LiveRows``: the one rule of which stored rows are live, checked against the rows written out by hand."""

from __future__ import annotations

import numpy as np

from indexer.live import LiveRows, removed_copies


def test_the_nth_removal_of_an_id_removes_its_nth_stored_copy():
    stored = ["a", "b", "a", "c", "a"]  # "a" added, removed, added again (a replace), then once more
    assert removed_copies(stored, []).tolist() == [False] * 5
    assert removed_copies(stored, ["a"]).tolist() == [True, False, False, False, False]
    assert removed_copies(stored, ["a", "c", "a"]).tolist() == [True, False, True, True, False]
    assert removed_copies(stored, ["z"]).tolist() == [False] * 5  # an id never stored removes nothing


def test_sentences_and_tokens_are_live_with_their_document():
    sentence_documents = np.array([0, 0, 1, 2, 2])  # document rows of five sentences
    token_sentences = np.array([0, 1, 1, 2, 3, 4, 4])
    live = LiveRows.of(["x", "y", "x"], ["x"], sentence_documents, token_sentences)  # x replaced by its new copy
    assert live.documents.tolist() == [False, True, True]
    assert live.sentences.tolist() == [False, False, True, True, True]
    assert live.tokens.tolist() == [False, False, False, True, True, True, True]
    assert live.removed("sentences").tolist() == [True, True, False, False, False]
    assert live.live_of("tokens", np.array([6, 0, 4])).tolist() == [6, 4]
    untouched = LiveRows.of(["x", "y"], [], np.array([0, 1]), np.array([0, 1]))
    assert untouched.removed("documents") is None


def test_an_index_without_tokens_has_an_empty_live_set():
    live = LiveRows.of(["x"], [], np.array([0]), np.array([], dtype=float))  # an empty table's column
    assert live.tokens.tolist() == []
