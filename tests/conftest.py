"""Shared test fixtures: the reference fixture model in ../shared and a tiny random model of our own."""

from __future__ import annotations

from pathlib import Path

import pytest

from encoder.model import BiLM, BiLMConfig
from encoder.weights import save_model

SHARED = Path(__file__).resolve().parents[2] / "shared"
FIXTURE_DIR = SHARED / "fixtures" / "elmo"


@pytest.fixture(scope="session")
def reference_fixture() -> Path:
    """The tiny reference biLM with the outputs the original implementation produced."""
    if not (FIXTURE_DIR / "lm_weights.hdf5").is_file():
        pytest.skip(f"reference fixture not found at {FIXTURE_DIR} (../shared is absent in this clone)")
    return FIXTURE_DIR


TINY_CONFIG = dict(char_embed_dim=4, filters=[[1, 4], [2, 8]], n_highway=1, projection_dim=8, lstm_dim=16, n_layers=2)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A random tiny biLM saved in our own format: fast, needs nothing from ../shared."""
    model = BiLM(BiLMConfig(**TINY_CONFIG))
    model.reset_parameters(seed=0)
    directory = tmp_path_factory.mktemp("tiny-model")
    save_model(model, directory, extra_config={"name": "tiny"})
    return directory


@pytest.fixture(scope="session")
def world(tmp_path_factory, tiny_model_dir):
    """What every bad-input case shares (tests/bad_input.py's ``World``): built once, never changed by a case."""
    from bad_input import make_world

    return make_world(tmp_path_factory.mktemp("bad-input"), tiny_model_dir)
