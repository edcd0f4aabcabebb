"""Parity with the reference ELMo implementation on the fixture in ../shared/fixtures/elmo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from encoder import Elmo
from encoder.chars import word_to_ids

REPO = Path(__file__).resolve().parents[2]


def _load_reference(fixture: Path, stateful: bool = False) -> Elmo:
    return Elmo.load(fixture / "options.json", fixture / "lm_weights.hdf5", stateful=stateful)


def _expected_top_layer(fixture: Path, row: int, batch: int) -> np.ndarray:
    with h5py.File(fixture / f"lm_embeddings_{row}.hdf5", "r") as f:
        forward_and_backward = f[str(batch)][...]
    return np.concatenate([forward_and_backward[0], forward_and_backward[1]], axis=-1)


def test_character_ids_match_the_reference_examples():
    assert word_to_ids("th").tolist() == [259, 117, 105, 260] + [261] * 46
    assert word_to_ids("<S>").tolist() == [259, 257, 260] + [261] * 47
    assert word_to_ids("</S>").tolist() == [259, 258, 260] + [261] * 47


def test_long_and_unicode_tokens_never_crash():
    ids = word_to_ids("가" * 40)  # 120 UTF-8 bytes, cut to the first 48
    assert ids.shape == (50,) and ids[0] == 259 and ids[49] == 260
    assert (ids[1:49] - 1).tolist() == list(("가" * 16).encode("utf-8"))
    split = word_to_ids("a" + "é" * 30)  # 61 bytes: the cut falls inside a two-byte character
    assert (split[1:49] - 1).tolist() == list(("a" + "é" * 30).encode("utf-8")[:48])


def test_stateful_batches_of_three_reproduce_lm_embeddings(reference_fixture):
    elmo = _load_reference(reference_fixture, stateful=True)
    sentences = json.loads((reference_fixture / "sentences.json").read_text())
    worst = 0.0
    for batch in range(10):
        rows = [sentences[k][batch].split() for k in range(3)]
        outputs = elmo.embed_batch(rows)
        for k in range(3):
            expected = _expected_top_layer(reference_fixture, k, batch)
            actual = outputs[k][2]
            assert actual.shape == expected.shape
            worst = max(worst, float(np.abs(actual - expected).max()))
    assert worst <= 1e-6, f"max abs error {worst:.2e}"


def test_state_carrying_is_what_makes_later_batches_match(reference_fixture):
    """Without the carried state batch 0 still matches, later batches do not (as the reference doc says)."""
    elmo = _load_reference(reference_fixture, stateful=False)
    sentences = json.loads((reference_fixture / "sentences.json").read_text())
    first = elmo.embed_batch([sentences[k][0].split() for k in range(3)])
    assert np.allclose(first[0][2], _expected_top_layer(reference_fixture, 0, 0), atol=1e-6)
    later = elmo.embed_batch([sentences[k][5].split() for k in range(3)])
    assert not np.allclose(later[0][2], _expected_top_layer(reference_fixture, 0, 5), atol=1e-3)


def test_token_layer_matches_elmo_token_embeddings(reference_fixture):
    words = (reference_fixture / "vocab_test.txt").read_text().strip().split("\n")
    with h5py.File(reference_fixture / "elmo_token_embeddings.hdf5", "r") as f:
        expected = f["embedding"][...]
    elmo = _load_reference(reference_fixture)
    rows = [words[i : i + 50] for i in range(0, len(words), 50)]
    outputs = elmo.embed(rows, batch_size=len(rows))
    token_layer = np.concatenate([layers[0, :, :16] for layers in outputs])
    assert np.abs(token_layer - expected).max() <= 1.5e-6
    # the token layer is the same vector twice (forward half, backward half)
    assert all(np.array_equal(layers[0, :, :16], layers[0, :, 16:]) for layers in outputs)


def test_embed_cli_stateful_reproduces_reference_file_by_file(reference_fixture, tmp_path):
    sentences = json.loads((reference_fixture / "sentences.json").read_text())
    lines = [sentences[k][i] for i in range(10) for k in range(3)]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "encoder",
            "embed",
            "--model",
            str(reference_fixture / "options.json"),
            "--weights",
            str(reference_fixture / "lm_weights.hdf5"),
            "--input",
            str(tmp_path / "in.txt"),
            "--output",
            str(tmp_path / "out.hdf5"),
            "--batch-size",
            "3",
            "--stateful",
            "--quiet",
        ],
        check=True,
        cwd=REPO,
    )
    with h5py.File(tmp_path / "out.hdf5", "r") as out:
        assert json.loads(out["sentence_to_index"][0])[lines[0]] == "0"
        for n, line in enumerate(lines):
            batch, row = divmod(n, 3)
            layers = out[str(n)][...]
            assert layers.shape == (3, len(line.split()), 32)
            assert np.allclose(layers[2], _expected_top_layer(reference_fixture, row, batch), atol=1e-6)


def test_one_rule_finds_a_model_in_every_form(reference_fixture, tiny_model_dir, tmp_path):
    """``resolve_model``: our folder; options.json + weights; the weights .hdf5 alone (options beside it);
    a folder of published weights (the .hdf5 named "weights" among several); clear errors otherwise."""
    from encoder.model_files import model_folder, model_hash, resolve_model

    options, weights = reference_fixture / "options.json", reference_fixture / "lm_weights.hdf5"
    assert resolve_model(tiny_model_dir).folder == tiny_model_dir
    published = resolve_model(options, weights)
    assert (published.options, published.weights) == (options, weights)
    assert resolve_model(weights) == published and resolve_model(reference_fixture) == published
    assert model_hash(reference_fixture) == model_hash(options, weights) == Elmo.load(weights).model_hash
    with pytest.raises(FileNotFoundError, match="give its weights too"):
        resolve_model(options)
    with pytest.raises(FileNotFoundError, match="there is no model at"):
        resolve_model(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="neither config.json"):
        resolve_model(tmp_path)
    with pytest.raises(ValueError, match="no LM head"):
        model_folder(reference_fixture)
