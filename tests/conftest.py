"""Shared test fixtures: the reference fixture model in ../shared, a tiny random model of our own, and the small
indexes built once per session (their builders are in helpers.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import (
    FIXTURE_DIR,
    SETTINGS,
    SMALL_DOCUMENTS,
    TINY_CONFIG,
    TINY_LM_WORDS,
    corpus_documents,
    filler_documents,
    fixture_published_as,
    published_files,
    serving,
    write_corpus,
)

from encoder.model import BiLM, BiLMConfig
from encoder.weights import save_model


@pytest.fixture(scope="session")
def reference_fixture() -> Path:
    """The tiny reference biLM with the outputs the original implementation produced."""
    if not (FIXTURE_DIR / "lm_weights.hdf5").is_file():
        pytest.skip(f"reference fixture not found at {FIXTURE_DIR} (../shared is absent in this clone)")
    return FIXTURE_DIR


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A random tiny biLM saved in our own format: fast, needs nothing from ../shared."""
    model = BiLM(BiLMConfig(**TINY_CONFIG))
    model.reset_parameters(seed=0)
    directory = tmp_path_factory.mktemp("tiny-model")
    save_model(model, directory, extra_config={"name": "tiny"})
    return directory


@pytest.fixture(scope="session")
def tiny_lm_dir(tmp_path_factory) -> Path:
    """A tiny random biLM with an LM head (three clusters over ``TINY_LM_WORDS``) and its vocabulary: a model that
    predicts words, so that its indexes hold the context-prediction readout."""
    from encoder.lm_data import Vocabulary
    from encoder.lm_head import HEAD_FILE, LMHead

    model = BiLM(BiLMConfig(**TINY_CONFIG))
    model.reset_parameters(seed=0)
    directory = tmp_path_factory.mktemp("tiny-lm")
    save_model(model, directory, extra_config={"name": "tiny-lm"})
    head = LMHead(TINY_CONFIG["projection_dim"], len(TINY_LM_WORDS), cutoffs=[10, 30], div_value=2.0)
    head.reset_parameters(seed=1)
    vocabulary = Vocabulary(TINY_LM_WORDS)
    head.save(directory / HEAD_FILE, vocabulary)
    vocabulary.save(directory / "vocab.txt")
    return directory


@pytest.fixture(scope="session")
def small_index(tmp_path_factory, tiny_model_dir) -> Path:
    """Three documents (``SMALL_DOCUMENTS``) indexed with the tiny model: a real index, built in seconds, shared by
    every test that reads one; a test that changes an index copies it first."""
    from indexer import build_index

    folder = tmp_path_factory.mktemp("small-index")
    corpus = folder / "docs.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": i, "title": title, "text": t}) for i, title, t in SMALL_DOCUMENTS))
    build_index([corpus], folder / "index", model=tiny_model_dir, progress=False)
    return folder / "index"


@pytest.fixture(scope="session")
def calibrated_index(tmp_path_factory, tiny_model_dir) -> Path:
    """``corpus_documents()`` padded with ``filler_documents`` to ``ranking.MIN_CALIBRATED_DOCUMENTS``, indexed with
    the tiny model and ``SETTINGS``: the smallest collection whose hits have a relevance and a line."""
    from indexer import build_index
    from indexer.ranking import MIN_CALIBRATED_DOCUMENTS

    documents = corpus_documents()
    documents += filler_documents(MIN_CALIBRATED_DOCUMENTS - len(documents))
    folder = tmp_path_factory.mktemp("calibrated-index")
    (folder / "docs.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in documents), encoding="utf-8")
    build_index([folder / "docs.jsonl"], folder / "index", model=tiny_model_dir, settings=SETTINGS, progress=False)
    return folder / "index"


@pytest.fixture(scope="session")
def published_cache(reference_fixture, tmp_path_factory) -> Path:
    """A model cache holding the reference fixture downloaded as elmo-small (from a local server)."""
    from encoder import download_model
    from encoder.model_files import PUBLISHED

    cache = tmp_path_factory.mktemp("model-cache")
    with (
        serving(published_files(reference_fixture, PUBLISHED["elmo-small"])) as (url, _),
        fixture_published_as("elmo-small"),
    ):
        download_model("elmo-small", cache, url, progress=False)
    return cache


@pytest.fixture(scope="session")
def world(tmp_path_factory, tiny_model_dir, corpus_index):
    """What every bad-input case shares (tests/bad_input.py's ``World``): built once, never changed by a case."""
    from bad_input import make_world

    return make_world(tmp_path_factory.mktemp("bad-input"), tiny_model_dir, *corpus_index)


@pytest.fixture(scope="session")
def corpus_index(tmp_path_factory, tiny_model_dir) -> tuple[Path, Path]:
    """(corpus folder, index): ``write_corpus``'s documents indexed with the tiny model and ``SETTINGS``, built once
    for the indexer tests and the bad-input suite; they read it, and copy it to change it."""
    from indexer import build_index

    root = tmp_path_factory.mktemp("corpus-index")
    corpus = write_corpus(root / "corpus")
    build_index([corpus], root / "index", model=tiny_model_dir, settings=SETTINGS, progress=False)
    return corpus, root / "index"
