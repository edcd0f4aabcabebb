"""An index changed in place (``add``, ``upsert``, ``delete``, ``refresh``) answers from the same parts as the index
opened afresh from its folder: every part, the lazily built ones included, touched before the change so that a
part cached from the old generation would show."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import SETTINGS

from indexer import Index

TEXTS = [
    "The river bank was muddy after the rain. Fish swam near the bank.",
    "She paid the money into her bank account. The bank gave her a loan.",
    "Volcanoes form where magma rises through the crust and erupts.",
]
QUERY = ["bank", "magma", "bread", "oven"]


def every_part(index: Index) -> dict[str, object]:
    """Each part of ``index`` (the lazy ones built now) as plain values that compare with ``same``."""
    parts = index.parts
    everything = np.arange(len(parts.tokens))
    return {
        "docs": parts.docs,
        "sentences": parts.sentences,
        "tokens": parts.tokens,
        "sentence_docs": parts.sentence_docs,
        "live": (parts.live.documents, parts.live.sentences, parts.live.tokens),
        "sentence_vectors": parts.sentence_vectors.gather(np.arange(len(parts.sentences)), index.search_mix.weights),
        "title_vectors": parts.title_vectors.gather(np.arange(len(parts.docs)), index.search_mix.weights),
        "token_vectors": parts.token_vectors.gather(everything, index.layer_mix.weights),
        "faiss": {
            kind: vectors.index.ntotal for kind, vectors in (("s", parts.sentence_vectors), ("t", parts.token_vectors))
        },
        "glove_index": parts.glove_index.ntotal,
        "readouts": parts.readouts.gather(everything, (1.0,)),
        "substitutes": tuple(np.concatenate(arrays) for arrays in parts.substitutes),
        "readout": parts.readout.settings,
        "collection_readout": parts.collection_readout,
        "glove": (parts.glove.words, parts.glove.glove.matrix),
        "vocab": parts.vocab,
        "frequencies": parts.frequencies.counts,
        "document_terms": parts.document_terms,
        "bm25": parts.bm25.scores(parts.keyword_terms(QUERY)),
        "null_queries": parts.null_queries.of_length(2),
        "speller": (parts.speller.words, parts.speller.counts),
        "glove_documents": parts.glove_documents.search(parts.glove.sentence_vector(QUERY), len(parts.docs)),
        "word_ids": {word: parts.word_ids(word) for word in ("bank", "magma")},
        "senses": index.senses("bank"),
    }


def same(a: object, b: object) -> bool:
    if isinstance(a, pd.DataFrame):
        return a.equals(b)
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def assert_as_opened(index: Index) -> None:
    changed, opened = every_part(index), every_part(Index.open(index.path))
    assert [name for name in opened if not same(changed[name], opened[name])] == []


@pytest.fixture()
def index(tiny_lm_dir) -> Index:
    built = Index.from_texts(TEXTS, ids=["river", "money", "volcano"], model=tiny_lm_dir, settings=SETTINGS)
    every_part(built)  # every lazy part built from the first generation
    return built


def test_after_add_upsert_and_delete_every_part_is_the_one_a_fresh_open_reads(index):
    index.add(["Bake the bread in a hot oven. The bank of the oven was hot."], ids=["bread"])
    assert_as_opened(index)
    every_part(index)
    index.upsert(["The money bank raised its rates.", "An oven bakes bread."], ids=["money", "oven"])
    assert_as_opened(index)
    every_part(index)
    index.delete(["river"])
    assert_as_opened(index)
    assert [doc["doc_id"] for doc in index.documents()] == ["volcano", "bread", "money", "oven"]


def test_after_refresh_every_part_is_the_one_a_fresh_open_reads(index):
    other = Index.open(index.path)
    other.add(["Bake the bread in a hot oven near the bank."], ids=["bread"])
    assert index.refresh()
    assert_as_opened(index)
    assert [hit.doc_id for hit in index.search("oven bread", k=4, method="keywords")][0] == "bread"


def test_an_index_opened_before_another_add_answers_from_the_new_generation(tiny_lm_dir):
    """Another process's ``add`` (here: another ``Index`` of the folder) removes the generation an index opened
    before it reads its parts from: its next question said "vocab.gN.parquet cannot be read ...; the index is
    damaged, rebuild it". It is asked again of the index as it is now."""
    first = Index.from_texts(TEXTS, ids=["river", "money", "volcano"], model=tiny_lm_dir, settings=SETTINGS)
    opened = Index.open(first.path)  # no part read yet
    first.add(["Bake the bread in a hot oven near the bank."], ids=["bread"])
    assert [hit.doc_id for hit in opened.search("oven bread", k=4, method="keywords")][0] == "bread"
    assert_as_opened(opened)
