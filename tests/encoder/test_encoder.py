"""Encoder behaviour that needs no reference data: mixing, statelessness, caching, formats, bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers import waits_for

from encoder import BiLMConfig, Elmo, LayerMix, ScalarMix
from encoder.model import BiLM
from encoder.weights import WeightsError, load_hdf5, load_model, save_hdf5, save_model

REPO = Path(__file__).resolve().parents[2]
SENTENCES = [
    "I sat on the bank of the river .".split(),
    "She deposited the cheque at the bank .".split(),
    "The play opened on Broadway last night to warm reviews .".split(),
    "Let 's play a game .".split(),
    ["A"],
    "Tokens like supercalifragilisticexpialidocious-and-then-some-more-characters survive .".split(),
    "서울 은 대한민국 의 수도 이다 .".split(),
]


@pytest.fixture(scope="module")
def tiny(tiny_model_dir) -> Elmo:
    return Elmo.load(tiny_model_dir)


def test_scalar_mix_matches_the_formula():
    torch.manual_seed(0)
    layers = [torch.randn(2, 5, 6) for _ in range(3)]
    mix = ScalarMix(3, initial_weights=[0.1, -0.4, 1.2])
    with torch.no_grad():
        mix.gamma.fill_(1.7)
    s = np.exp([0.1, -0.4, 1.2]) / np.exp([0.1, -0.4, 1.2]).sum()
    expected = 1.7 * sum(s_j * h.numpy() for s_j, h in zip(s, layers))
    assert np.allclose(mix(layers).detach().numpy(), expected, atol=1e-6)
    assert np.allclose(mix.normalized_weights(), s)


def test_scalar_mix_layer_norm_uses_one_masked_mean_and_variance_per_layer():
    torch.manual_seed(1)
    layers = [torch.randn(2, 4, 3) * (j + 1) + j for j in range(2)]
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=torch.bool)
    mix = ScalarMix(2, do_layer_norm=True)
    expected = 0.0
    for h in layers:  # by hand: statistics over the 5 unmasked positions x 3 features only
        values = h.numpy()[mask.numpy()]
        normalised = (h.numpy() - values.mean()) / np.sqrt(values.var() + 1e-13)
        expected = expected + 0.5 * normalised
    assert np.allclose(mix(layers, mask).detach().numpy(), expected, atol=1e-5)
    with pytest.raises(ValueError, match="mask"):
        mix(layers)


def test_layer_mix_presets_and_explicit_weights():
    """token/top/average pick or average the layers, explicit weights are normalised, bad mixes are refused."""
    layers = np.stack([np.full((2, 4), j, dtype=np.float32) for j in range(3)])
    assert np.allclose(LayerMix.parse("token", 3).apply(layers), 0)
    assert np.allclose(LayerMix.parse("top", 3).apply(layers), 2)
    assert np.allclose(LayerMix.parse("average", 3).apply(layers), 1)
    assert LayerMix.parse("1,1,2", 3).weights == (0.25, 0.25, 0.5)
    for bad in ("bogus", "1,2", "-1,1,1", "0,0,0", "nan,nan,nan", "1,inf,1", "1e308,1e308,1e308"):
        with pytest.raises(ValueError):
            LayerMix.parse(bad, 3)
    for bad in (5, None, ["a", "b", "c"], [[1, 2, 3]]):  # no bare TypeError from deep inside (len() of a number)
        with pytest.raises(ValueError, match=re.escape(f"give token, top, average or 3 weights; got {bad!r}")):
            LayerMix.parse(bad, 3)


def test_stateless_vectors_do_not_depend_on_batch_size_order_or_neighbours(tiny):
    alone = [tiny.embed([s])[0] for s in SENTENCES]
    together = tiny.embed(SENTENCES, batch_size=64)
    reversed_small = tiny.embed(SENTENCES[::-1], batch_size=2)[::-1]
    for a, b, c in zip(alone, together, reversed_small):
        assert np.allclose(a, b, atol=1e-6) and np.allclose(a, c, atol=1e-6)
    # and a second call gives the same answer (no hidden state)
    assert all(np.array_equal(a, b) for a, b in zip(together, tiny.embed(SENTENCES, batch_size=64)))


def test_stateful_mode_carries_state_and_reset_forgets_it(tiny_model_dir):
    elmo = Elmo.load(tiny_model_dir, stateful=True)
    first = elmo.embed(SENTENCES[:2])
    second = elmo.embed(SENTENCES[:2])
    assert not np.allclose(first[0][1], second[0][1])
    elmo.reset_state()
    assert np.allclose(first[0][1], elmo.embed(SENTENCES[:2])[0][1], atol=1e-6)


def test_token_cache_gives_the_same_vectors_as_the_char_cnn(tiny_model_dir):
    elmo = Elmo.load(tiny_model_dir)
    elmo.cache_vocabulary(["the", "bank", "play", "river"])
    elmo.token_cache.max_words = len(elmo.token_cache) + 5  # the rest overflows: computed per batch
    cached = elmo.embed(SENTENCES)
    assert len(elmo.token_cache) == elmo.token_cache.max_words
    uncached = elmo.embed(SENTENCES, use_cache=False)
    for a, b, c in zip(cached, uncached, elmo.embed(SENTENCES)):
        assert np.allclose(a, b, atol=1e-6) and np.allclose(a, c, atol=1e-6)


def test_shapes_strings_empty_sentences_and_mix(tiny):
    """``embed`` tokenizes a string, keeps an empty sentence as zero tokens, and mixes layers as asked."""
    layers = tiny.embed("The bank of the river.")[0]
    assert layers.shape == (3, 6, 16)  # nltk tokenization: The bank of the river .
    empty = tiny.embed([[]])[0]
    assert empty.shape == (3, 0, 16)
    mixed = tiny.embed(SENTENCES[:2], mix="average")
    assert mixed[0].shape == (len(SENTENCES[0]), 16)
    assert np.allclose(mixed[0], tiny.embed(SENTENCES[:1])[0].mean(axis=0), atol=1e-6)


def test_native_format_and_hdf5_round_trip(tiny, tmp_path):
    """A model saved as AllenNLP's hdf5, loaded, and saved in our format keeps every tensor and every vector."""
    save_hdf5(tiny.model, tmp_path / "options.json", tmp_path / "weights.hdf5")
    from_hdf5 = Elmo.load(tmp_path / "options.json", tmp_path / "weights.hdf5")
    from_hdf5.save(tmp_path / "native")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "config.json").write_text("a user's file")
    with pytest.raises(FileExistsError, match="mine is not empty: Elmo.save writes a model into a new or empty"):
        from_hdf5.save(tmp_path / "mine")  # it replaced the user's config.json
    assert (tmp_path / "mine" / "config.json").read_text() == "a user's file"
    again = load_model(tmp_path / "native")
    for name, tensor in tiny.model.state_dict().items():
        assert torch.equal(tensor, again.state_dict()[name]), name
    # without the token cache, so that both run the char CNN over the same words (``tiny``'s cache holds other
    # tests' words, and a word's vector may then differ in the last bit with the words it is convolved beside)
    native = Elmo.load(tmp_path / "native")
    assert np.array_equal(tiny.embed(SENTENCES, use_cache=False)[0], native.embed(SENTENCES, use_cache=False)[0])


def test_fp16_storage_is_restored_to_float32(tiny, tmp_path):
    save_model(tiny.model, tmp_path, storage="fp16")
    restored = load_model(tmp_path)
    assert all(t.dtype == torch.float32 for t in restored.state_dict().values())
    error = np.abs(Elmo(restored).embed(SENTENCES)[0] - tiny.embed(SENTENCES)[0]).max()
    assert 0 < error < 1e-2


def test_int8_storage_keeps_each_row_within_half_a_step(tiny, tmp_path):
    from encoder.weights import INT8_SCALE, restored_tensors, stored_tensors

    state = tiny.model.state_dict()
    stored = stored_tensors(state, "int8")
    matrices = [k for k, v in state.items() if v.dim() >= 2]
    assert matrices and all(stored[k].dtype == torch.int8 and k + INT8_SCALE in stored for k in matrices)
    assert all(stored[k].dtype == torch.float16 for k, v in state.items() if v.dim() < 2)
    restored = restored_tensors(stored)
    for name in matrices:
        rows = state[name].reshape(state[name].shape[0], -1)
        step = rows.abs().amax(dim=1, keepdim=True) / 127
        assert ((restored[name].reshape(rows.shape) - rows).abs() <= step / 2 + 1e-7).all(), name
    save_model(tiny.model, tmp_path / "int8", storage="int8")
    save_model(tiny.model, tmp_path / "fp32")
    size = {s: (tmp_path / s / "model.safetensors").stat().st_size for s in ("int8", "fp32")}
    assert size["int8"] < 0.4 * size["fp32"]
    reference = tiny.embed(SENTENCES)[0]
    error = np.abs(Elmo(load_model(tmp_path / "int8")).embed(SENTENCES)[0] - reference).max()
    assert 0 < error < 0.05 * np.abs(reference).max()


def test_models_without_skip_connections_and_with_tanh_are_honoured(tmp_path):
    config = BiLMConfig(
        char_embed_dim=4,
        filters=[[1, 4], [2, 8]],
        n_highway=1,
        projection_dim=8,
        lstm_dim=16,
        n_layers=2,
        use_skip_connections=False,
        activation="tanh",
    )
    model = BiLM(config)
    model.reset_parameters(seed=3)
    save_hdf5(model, tmp_path / "options.json", tmp_path / "w.hdf5")
    loaded = load_hdf5(tmp_path / "options.json", tmp_path / "w.hdf5")
    assert loaded.config.use_skip_connections is False and loaded.config.activation == "tanh"
    with_skip = BiLM(BiLMConfig(**{**config.to_dict(), "use_skip_connections": True}))
    with_skip.load_state_dict(model.state_dict())
    a = Elmo(loaded).embed(SENTENCES[:1])[0]
    b = Elmo(with_skip).embed(SENTENCES[:1])[0]
    assert np.allclose(a[:2], b[:2], atol=1e-6)  # token layer and layer 1 have no residual either way
    assert np.allclose(b[2], a[2] + b[1], atol=1e-5)  # the residual adds layer 2's input


def test_mismatched_weights_name_the_tensors(tiny, tmp_path):
    save_hdf5(tiny.model, tmp_path / "options.json", tmp_path / "w.hdf5")
    options = json.loads((tmp_path / "options.json").read_text())
    options["lstm"]["dim"] = 32
    (tmp_path / "bigger.json").write_text(json.dumps(options))
    with pytest.raises(WeightsError, match=r"RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/W_0 has shape"):
        load_hdf5(tmp_path / "bigger.json", tmp_path / "w.hdf5")
    with h5py.File(tmp_path / "w.hdf5", "a") as f:
        del f["CNN_high_0/W_carry"]
    with pytest.raises(WeightsError, match="missing CNN_high_0/W_carry"):
        load_hdf5(tmp_path / "options.json", tmp_path / "w.hdf5")
    save_model(tiny.model, tmp_path / "native")
    config = json.loads((tmp_path / "native" / "config.json").read_text())
    (tmp_path / "native" / "config.json").write_text(json.dumps({**config, "lstm_dim": 32}))
    with pytest.raises(WeightsError, match="lstm.layers.0.w_input has shape"):
        load_model(tmp_path / "native")


def _embed_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "encoder", "embed", "--quiet", *args], cwd=REPO, capture_output=True, text=True
    )


def test_embed_cli_writes_empty_lines_and_rejects_bad_utf8(tiny_model_dir, tmp_path):
    (tmp_path / "in.txt").write_text("the bank .\n\nplay it again\n", encoding="utf-8")
    done = _embed_cli(
        "--model", str(tiny_model_dir), "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "out.hdf5")
    )
    assert done.returncode == 0, done.stderr
    with h5py.File(tmp_path / "out.hdf5", "r") as out:
        assert [out[k].shape for k in ("0", "1", "2")] == [(3, 3, 16), (3, 0, 16), (3, 3, 16)]
    (tmp_path / "bad.txt").write_bytes(b"fine line\nbad \xff\xfe line\n")
    failed = _embed_cli(
        "--model", str(tiny_model_dir), "--input", str(tmp_path / "bad.txt"), "--output", str(tmp_path / "bad.hdf5")
    )
    assert failed.returncode == 2 and "line 2 is not valid UTF-8" in failed.stderr
    assert not (tmp_path / "bad.hdf5").exists()


def test_missing_default_or_directory_gives_a_clear_error(tmp_path):
    done = _embed_cli("--model", str(tmp_path / "nowhere"), "--input", __file__, "--output", str(tmp_path / "o.h5"))
    assert done.returncode == 2 and "there is no model at" in done.stderr and "options.json" in done.stderr


# ---------------------------------------------------------------------------------------------- fused LSTM, precision
UNCLIPPED = BiLMConfig(
    char_embed_dim=8,
    filters=[[1, 16], [2, 16]],
    n_highway=1,
    projection_dim=16,
    lstm_dim=32,
    cell_clip=None,
    proj_clip=None,
)


@pytest.mark.parametrize("ragged", [False, True])
def test_fused_lstm_equals_the_step_by_step_recurrence(ragged):
    """torch's LSTM(proj_size) path against the reference recurrence: outputs, final state and all gradients."""
    from encoder.model import LstmLayer

    torch.manual_seed(0)
    layer = LstmLayer(16, UNCLIPPED)
    layer.reset_parameters(torch.Generator().manual_seed(1))
    with torch.no_grad():
        layer.bias.normal_()
    x = torch.randn(2, 5, 9, 16, requires_grad=True)
    state = (torch.randn(2, 5, 16), torch.randn(2, 5, 32))
    lengths = torch.tensor([9, 3, 0, 6, 1]) if ragged else torch.full((5,), 9)
    mask = (torch.arange(9)[None] < lengths[:, None]).expand(2, -1, -1)
    assert layer.fused
    results = []
    for run in (layer._forward_fused, layer._forward_steps):
        out, (h, c) = run(x, mask if ragged or run == layer._forward_steps else None, state)
        loss = (out**2).sum() + (h * c[..., :16]).sum() + c.sum()
        grads = torch.autograd.grad(loss, [x, *layer.parameters()])
        results.append([out, h, c, *grads])
    for fused, steps in zip(*results):
        assert (fused - steps).abs().max() <= 1e-5 * max(1.0, steps.abs().max().item())


@pytest.mark.parametrize("clipped", [False, True])
def test_a_mask_of_the_wrong_shape_or_type_is_refused(clipped):
    """Every path of a layer reads its rows' lengths from the mask: one that does not fit the input is an error,
    not vectors cut at the wrong step (the in-place path had read a longer mask as full rows)."""
    from encoder.model import LstmLayer

    layer = LstmLayer(16, replace(UNCLIPPED, cell_clip=3.0, proj_clip=3.0) if clipped else UNCLIPPED)
    x, state = torch.zeros(2, 5, 9, 16), (torch.zeros(2, 5, 16), torch.zeros(2, 5, 32))
    for mask in (torch.ones(2, 5, 10, dtype=torch.bool), torch.ones(2, 5, 8, dtype=torch.bool),
                 torch.ones(5, 9, dtype=torch.bool), torch.ones(2, 5, 9)):  # fmt: skip
        with torch.inference_mode(), pytest.raises(ValueError, match="mask"):
            layer(x, mask, state)


def _repeating_rows(generator: torch.Generator) -> torch.Tensor:
    """(2, 5, 9, 16) LSTM input whose rows are 4 vectors over and over, as a first layer's token vectors are."""
    vectors = torch.randn(4, 16, generator=generator) * 3  # large enough to clip
    return vectors[torch.randint(0, 4, (2, 5, 9), generator=generator)]


@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("reads_tokens", [False, True])
@pytest.mark.parametrize("start", ["carried", "zero"])
def test_in_place_steps_equal_the_step_by_step_recurrence(ragged, reads_tokens, start, monkeypatch):
    """The inference path of a clipped LSTM (in place, tanh through sigmoid) against the reference recurrence:
    outputs and final state; the caller's state is left as it was, and inference takes this path. A first layer
    (``reads_tokens``) gets rows that repeat, whose input products it takes once per distinct row. From a zero
    state (stateless inference) the first step's recurrent product is skipped."""
    from encoder.model import LstmLayer

    layer = LstmLayer(16, replace(UNCLIPPED, cell_clip=0.5, proj_clip=0.3), reads_tokens=reads_tokens)
    layer.reset_parameters(torch.Generator().manual_seed(1))
    with torch.no_grad():
        layer.bias.normal_()
    generator = torch.Generator().manual_seed(2)
    x = _repeating_rows(generator) if reads_tokens else torch.randn(2, 5, 9, 16, generator=generator) * 3
    state = (torch.randn(2, 5, 16), torch.randn(2, 5, 32))
    if start == "zero":
        state = (torch.zeros(2, 5, 16), torch.zeros(2, 5, 32))
    kept = [s.clone() for s in state]
    lengths = torch.tensor([9, 3, 0, 6, 1]) if ragged else torch.full((5,), 9)
    mask = (torch.arange(9)[None] < lengths[:, None]).expand(2, -1, -1) if ragged else None
    with torch.inference_mode():
        expected = layer._forward_steps(x, mask, state)
        calls = []
        monkeypatch.setattr(
            layer, "_forward_steps_in_place", lambda *a: calls.append(1) or LstmLayer._forward_steps_in_place(layer, *a)
        )
        got = layer(x, mask, state)
    assert calls, "inference did not take the in-place path"
    out, (h, c) = expected
    assert out.abs().max() > 0.29 and c.abs().max() > 0.49  # the clips were reached
    for want, have in zip((out, h, c), (got[0], *got[1])):
        assert have.shape == want.shape
        assert (have - want).abs().max() <= 1e-6
    assert all(torch.equal(a, b) for a, b in zip(kept, state))


@pytest.mark.parametrize("reads_tokens", [False, True])
@pytest.mark.parametrize("rows_per_product", [1, 12, 512])
def test_input_halves_are_each_steps_input_product(reads_tokens, rows_per_product):
    """Each step's input half of the gates, x_t W_input + bias (with the +1 forget bias), whether the products
    are taken a few steps at a time (one step, two steps with a last block of one, all nine at once) or once per distinct
    row of a first layer; and every step gets its own."""
    from encoder.model import LstmLayer

    layer = LstmLayer(16, replace(UNCLIPPED, cell_clip=0.5, proj_clip=0.3), reads_tokens=reads_tokens)
    layer.reset_parameters(torch.Generator().manual_seed(1))
    with torch.no_grad():
        layer.bias.normal_()
    x = _repeating_rows(torch.Generator().manual_seed(2))
    with torch.inference_mode():
        halves = [z.clone() for z in layer._input_halves(x, rows_per_product)]
        expected = torch.baddbmm(layer._bias_with_forget(x.dtype)[:, None], x.flatten(1, 2), layer.w_input)
    assert len(halves) == 9
    for t, z in enumerate(halves):
        assert (z - expected.view(2, 5, 9, -1)[:, :, t]).abs().max() <= 1e-5


def test_char_cnn_inference_skips_the_padding_yet_gives_the_reference_vectors(monkeypatch):
    """Inference convolves each token only as far as its characters reach (the trailing padding's windows share
    one value per filter): the token vectors equal the reference's, over every window, to float rounding. Tokens
    of every length, sentence markers, cut words, words ending in a repeated letter and "no token" rows. Training's
    mode keeps the reference's path (a frozen char CNN's cache is checked bit for bit against it: test_train)."""
    from encoder.chars import MAX_CHARS, PAD_CHAR, word_to_ids
    from encoder.model import CharCNN

    cnn = CharCNN(replace(UNCLIPPED, filters=[[1, 8], [3, 16], [7, 24]]))
    cnn.reset_parameters(torch.Generator().manual_seed(3))
    with torch.no_grad():
        for conv in cnn.convs:  # biases start at zero
            conv.bias.normal_(generator=torch.Generator().manual_seed(4))
    cnn.eval()
    words = [
        "a",
        "an",
        "bank",
        "river",
        "<S>",
        "</S>",
        "zzzz",
        "x" * 47,
        "y" * 48,
        "w" * 60,
        "은행",
        "supercalifragilistic",
    ]
    ids = torch.from_numpy(np.stack([word_to_ids(w) for w in words]))
    ids = torch.cat([ids[:5], torch.zeros(2, MAX_CHARS, dtype=ids.dtype), ids[5:]]).reshape(2, 7, MAX_CHARS)
    with torch.enable_grad():
        expected = cnn(ids).detach()
        maxima = cnn._max_over_all_windows(ids.reshape(-1, MAX_CHARS))
    pad_windows = F.embedding(torch.full((1, 7), PAD_CHAR + 1), cnn.char_embed).transpose(1, 2)
    pad_value = cnn.convs[2](pad_windows)[0, :, 0]  # width 7: the value of every window of padding alone
    assert (maxima[:2, -24:] == pad_value).any(), "no maximum came from the padding: the check would be blind"
    calls = []
    monkeypatch.setattr(
        cnn, "_max_over_word_windows", lambda *a, **k: calls.append(1) or CharCNN._max_over_word_windows(cnn, *a, **k)
    )
    with torch.inference_mode():
        got = cnn(ids)
        chunked = CharCNN._max_over_word_windows(cnn, ids.reshape(-1, MAX_CHARS), rows_per_chunk=3)
    assert calls, "inference did not take the path that skips the padding"
    with torch.inference_mode():
        cnn.train()(ids)
    assert len(calls) == 1, "training's mode took the inference path"
    assert got.shape == expected.shape
    assert (got - expected).abs().max() <= 1e-6
    assert (chunked - maxima).abs().max() <= 1e-6


@pytest.mark.parametrize("clipped", [False, True])
def test_stateless_contextualize_over_whole_padded_rows_gives_the_same_layers(clipped):
    """Without a final state the LSTMs run over whole padded rows (no packing, no wait for the lengths): the
    layers equal the masked run's, padding included (zeros), for the fused and the step-by-step LSTM."""
    config = replace(UNCLIPPED, cell_clip=3.0, proj_clip=3.0) if clipped else UNCLIPPED
    model = BiLM(config)
    model.reset_parameters(0)
    lengths = torch.tensor([9, 3, 0, 6, 1])
    mask = torch.arange(9)[None] < lengths[:, None]
    tokens = torch.randn(5, 9, 16) * mask[..., None]
    masked, state = model.contextualize(tokens, mask)
    whole, no_state = model.contextualize(tokens, mask, final_state=False)
    assert state is not None and no_state is None
    for a, b in zip(masked, whole):
        assert (a - b).abs().max() <= 1e-6
        assert not b[~mask].any()


def test_far_ends_left_out_change_no_other_output():
    """``far_ends=False`` (``Elmo.embed_batch``, which drops BOS and EOS): a clipped LSTM on the CPU stops each
    direction one step early, so the forward half of a row's last position and the backward half of its first are
    zero in the LSTM layers; every other output, and the context states, are those of the whole run."""
    model = BiLM(replace(UNCLIPPED, cell_clip=3.0, proj_clip=3.0))
    model.reset_parameters(0)
    lengths = torch.tensor([9, 3, 0, 6, 1, 2])
    mask = torch.arange(9)[None] < lengths[:, None]
    tokens = torch.randn(6, 9, 16) * mask[..., None]
    with torch.inference_mode():
        whole, _ = model.contextualize(tokens, mask, final_state=False)
        ends, _ = model.contextualize(tokens, mask, final_state=False, far_ends=False)
    P, rows = UNCLIPPED.projection_dim, torch.arange(6)[lengths > 0]
    far = torch.zeros(6, 9, 2 * P, dtype=torch.bool)
    far[rows, lengths[rows] - 1, :P] = True  # forward: the last position
    far[rows, 0, P:] = True  # backward: the first
    assert torch.equal(ends[0], whole[0])  # the token layer
    for a, b in zip(whole[1:], ends[1:]):
        assert a[far].abs().min() > 0 and not b[far].any()  # left out, and not zero in the whole run
        assert (a - b)[~far].abs().max() <= 1e-6
        assert (model.context_states(a) - model.context_states(b))[mask].abs().max() <= 1e-6


def test_length_buckets_pad_batches_without_changing_vectors(tiny_model_dir):
    """A GPU pads every batch to a multiple of 8 steps (static shapes); the vectors and the batches' token
    budget stay those of unpadded batches, with or without the token cache."""
    exact, bucketed = Elmo.load(tiny_model_dir), Elmo.load(tiny_model_dir)
    bucketed.length_multiple = 8
    for use_cache in (True, False):
        for a, b in zip(exact.embed(SENTENCES, use_cache=use_cache), bucketed.embed(SENTENCES, use_cache=use_cache)):
            assert a.shape == b.shape and np.abs(a - b).max() <= 1e-6
    assert bucketed.token_vectors(["bank", "river"]).shape == (2, 8)
    assert bucketed._lookup_tokens([["a"] * 3, ["b"] * 9], use_cache=True).shape == (2, 16, 8)
    lists = [["w"] * n for n in (30, 29, 5, 3)]  # widths 32, 31, 7, 5: buckets 32, 32, 8, 8
    assert bucketed._batches(lists, batch_size=64, max_tokens=64) == [[0, 1], [2, 3]]
    assert exact._batches(lists, batch_size=64, max_tokens=64) == [[0, 1], [2, 3]]
    assert exact._batches(lists, batch_size=64, max_tokens=63) == [[0], [1, 2], [3]]


def test_training_step_on_full_windows_equals_the_masked_objective():
    """The training path (no mask: no data-dependent shapes) gives the masked evaluation path's loss and gradients."""
    from encoder.lm_data import Vocabulary, make_batch, paragraph_pairs, paragraph_sentences
    from encoder.lm_head import LanguageModel, LMHead
    from encoder.text import text_rules

    words = "the bank of the river flooded . the bank approved the loan .".split()
    vocab = Vocabulary(["<S>", "</S>", "<UNK>", *dict.fromkeys(words)])
    english = text_rules("en")
    inputs, targets = (
        paragraph_pairs(paragraph_sentences(" ".join(words), english)),
        paragraph_pairs(paragraph_sentences(" ".join(words), english), True),
    )
    batch = make_batch([[inputs[0][:8]] * 2, [targets[0][:8]] * 2], [[inputs[1][:8]] * 2, [targets[1][:8]] * 2], vocab)
    for config in (UNCLIPPED, BiLMConfig(char_embed_dim=8, filters=[[1, 16]], projection_dim=16, lstm_dim=32)):
        bilm = BiLM(config)
        bilm.reset_parameters(0)
        lm = LanguageModel(bilm, LMHead(16, len(vocab), cutoffs=[5]))
        lm.head.reset_parameters(0)
        state = bilm.lstm.zero_state(2)
        results = []
        for mask in (None, torch.ones(2, 2, 8, dtype=torch.bool)):
            nll, count, _ = lm(batch, state, mask)
            grads = torch.autograd.grad((nll / count).mean(), list(lm.parameters()))
            results.append([nll, *grads])
        for full, masked in zip(*results):
            assert torch.allclose(full, masked, atol=1e-6)


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_autocast_embeddings_stay_close_to_fp32(precision):
    """bf16 and fp16 autocast (on the CPU here; the README gives the figures measured on a GPU): every layer within
    0.05 abs and cosine >= 0.999 of fp32, float32 out."""
    model = BiLM(UNCLIPPED)
    model.reset_parameters(0)
    sentences = ["The bank of the river flooded .", "She paid the bank back .", "Play it again ."]
    exact = Elmo(model, precision="fp32").embed(sentences)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fast = Elmo(model, precision=precision).embed(sentences)
    assert any("slower" in str(w.message) for w in caught) == (precision == "fp16")  # fp16 is for GPUs
    for a, b in zip(exact, fast):
        assert b.dtype == np.float32 and a.shape == b.shape
        assert 0 < np.abs(a - b).max() < 0.05  # it did run in the lower precision
        cosine = (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
        assert cosine.min() >= 0.999
    with pytest.raises(ValueError, match="precision"):
        Elmo(model, precision="fp8")


def test_weights_over_the_file_limit_are_sharded_with_an_index(tiny, tmp_path):
    """Model folders travel and live in git: a save splits weights into files under the limit, named by an index;
    loading and the content hash cover every shard, and a smaller save removes the shards."""
    from encoder.model_files import model_hash
    from encoder.weights import WEIGHTS_INDEX, weight_files

    sizes = [t.numel() * 4 for t in tiny.model.state_dict().values()]
    limit = sum(sizes) // 4
    save_model(tiny.model, tmp_path, max_file_bytes=limit)
    files = weight_files(tmp_path)
    assert len(files) > 2 and (tmp_path / WEIGHTS_INDEX).is_file() and not (tmp_path / "model.safetensors").exists()
    assert all(f.stat().st_size <= max(limit, max(sizes)) + 4096 for f in files)  # + the safetensors header
    loaded = load_model(tmp_path)
    for key, value in tiny.model.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value)
    sharded_hash = model_hash(tmp_path)
    files[-1].write_bytes(files[-1].read_bytes()[:-1] + b"\0")
    assert model_hash(tmp_path) != sharded_hash
    save_model(tiny.model, tmp_path)
    assert weight_files(tmp_path) == [tmp_path / "model.safetensors"] and not (tmp_path / WEIGHTS_INDEX).exists()
    assert not list(tmp_path.glob("model-*-of-*.safetensors"))


def test_a_loaded_model_is_hashed_when_its_hash_is_first_asked_not_to_embed(tiny, tmp_path, monkeypatch):
    """Hashing reads every weight (a published file whole), and embedding never needs the hash: ``Elmo.load``
    leaves it to the first ask of ``model_hash``, which takes it once and gives the files' hash."""
    from encoder.model_files import ModelFiles, model_hash

    save_model(tiny.model, tmp_path)
    save_hdf5(tiny.model, tmp_path / "options.json", tmp_path / "weights.hdf5")
    hashed = []
    real_hash = ModelFiles.hash
    monkeypatch.setattr(ModelFiles, "hash", lambda files: hashed.append(files) or real_hash(files))
    for spec, weights in [(tmp_path, None), (tmp_path / "options.json", tmp_path / "weights.hdf5")]:
        hashed.clear()
        elmo = Elmo.load(spec, weights, device="cpu")
        elmo.embed(["the river bank"])
        assert hashed == []
        assert elmo.model_hash == elmo.model_hash == model_hash(spec, weights)
        assert len(hashed) == 2  # once for the Elmo, once for model_hash(...)


def test_a_shape_is_read_from_a_model_config_an_options_file_or_its_fields_and_nothing_else(tiny, tmp_path):
    """``train --config``: a model folder's config.json (its record besides the shape is left out), a published
    options.json, or the shape's own fields; a key that is none of them is refused (it trained the default shape)."""
    save_model(tiny.model, tmp_path / "model", extra_config={"name": "tiny", "language": "en"})
    assert BiLMConfig.from_json(tmp_path / "model" / "config.json") == tiny.config
    save_hdf5(tiny.model, tmp_path / "options.json", tmp_path / "weights.hdf5")
    assert BiLMConfig.from_json(tmp_path / "options.json") == tiny.config
    (tmp_path / "fields.json").write_text(json.dumps(tiny.config.to_dict()))
    assert BiLMConfig.from_json(tmp_path / "fields.json") == tiny.config
    (tmp_path / "typo.json").write_text(json.dumps({**tiny.config.to_dict(), "lstm_dims": 8, "name": "x"}))
    with pytest.raises(ValueError, match=r"typo.json: 'lstm_dims', 'name' are not a field of the model's shape"):
        BiLMConfig.from_json(tmp_path / "typo.json")


def test_the_model_identity_covers_config_and_weights_and_survives_a_resave(tiny, tmp_path):
    """An index is tied to what decides the vectors: the same model saved again (or sharded) keeps its hash;
    changing config.json's architecture (e.g. the cell clip) changes it, its name does not."""
    import json

    from encoder.model_files import model_hash

    save_model(tiny.model, tmp_path / "a", extra_config={"name": "a"})
    save_model(tiny.model, tmp_path / "b", extra_config={"name": "b"}, max_file_bytes=1_000)
    assert model_hash(tmp_path / "a") == model_hash(tmp_path / "b")
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    (tmp_path / "a" / "config.json").write_text(json.dumps({**config, "cell_clip": 1.0}))
    assert model_hash(tmp_path / "a") != model_hash(tmp_path / "b")


def test_threads_sharing_a_model_take_turns(tiny_model_dir):
    """The token cache and the carried state change under the model's own lock: while one thread is inside the
    model (held in its char CNN), another's embed waits, then both get their vectors."""
    elmo = Elmo.load(tiny_model_dir)
    alone = Elmo.load(tiny_model_dir).embed([["another", "word"]])[0]
    found = []
    assert waits_for(
        elmo,
        "_char_cnn",
        lambda: elmo.embed([["held", "word"]]),
        lambda: found.append(elmo.embed([["another", "word"]])),
    )
    np.testing.assert_allclose(found[0][0], alone, atol=1e-6)
