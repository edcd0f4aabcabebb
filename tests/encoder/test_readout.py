"""The sense readout (``encoder.readout``): each piece against a direct computation from the biLM and its LM head."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from helpers import TINY_CONFIG
from helpers import TINY_LM_WORDS as WORDS

from encoder import Elmo
from encoder.chars import BOS_TOKEN, EOS_TOKEN, batch_to_ids
from encoder.lm_data import Vocabulary
from encoder.lm_head import HEAD_FILE, LMHead
from encoder.model import BiLM, BiLMConfig
from encoder.readout import PREDICTION, READOUT_FILE, STATES, Readout, ReadoutSettings, centred
from encoder.weights import WeightsError

SENTENCES = [["w1", "w2", "w3", "w4"], ["w5", "w6"], ["w7", "w8", "w9", "w10", "w11", "w12", "w13"]]


@pytest.fixture(scope="module")
def model_dir(tiny_lm_dir):
    return tiny_lm_dir


@pytest.fixture(scope="module")
def elmo(model_dir):
    return Elmo.load(model_dir)


def framed_top_layer(elmo: Elmo, sentence: list[str]) -> torch.Tensor:
    """The top layer (T, 2P) of one sentence run alone through ``BiLM.forward``, BOS and EOS included."""
    ids = torch.from_numpy(batch_to_ids([[BOS_TOKEN, *sentence, EOS_TOKEN]]))
    with torch.no_grad():
        layers, _, _ = elmo.model(ids)
    return layers[-1][0]


def test_context_states_are_the_forward_state_before_and_the_backward_state_after(elmo):
    """Token k's context states: the forward LSTM's top output at k-1 and the backward one's at k+1 (BOS and EOS
    counted), whatever else is in the batch."""
    P = elmo.config.projection_dim
    outputs = elmo.embed(SENTENCES, context=True)
    for sentence, output in zip(SENTENCES, outputs):
        assert output.shape == (elmo.n_layers + 1, len(sentence), elmo.dim)
        top = framed_top_layer(elmo, sentence).numpy()
        for k in range(len(sentence)):  # token k sits at framed position k + 1
            np.testing.assert_allclose(output[-1, k, :P], top[k, :P], atol=1e-6)
            np.testing.assert_allclose(output[-1, k, P:], top[k + 2, P:], atol=1e-6)
        np.testing.assert_allclose(output[:-1], elmo.embed([sentence])[0], atol=1e-6)  # the layers are unchanged
    with pytest.raises(ValueError, match="mix or for context"):
        elmo.embed(SENTENCES, mix="average", context=True)


@pytest.mark.parametrize("words", [5, 10, 11, 30, 31, 48, None])
def test_log_probs_of_the_first_words_equal_the_adaptive_softmax(model_dir, words):
    head = LMHead.load(model_dir / HEAD_FILE)
    hidden = torch.randn(6, TINY_CONFIG["projection_dim"], generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = head.softmax.log_prob(hidden)[:, : words or len(WORDS)]
        assert torch.equal(head.log_probs(hidden, words), expected)
        powered = head.powered_probs(hidden, words or len(WORDS), 0.25)
        torch.testing.assert_close(powered, expected.exp() ** 0.25, rtol=1e-5, atol=1e-7)


def test_substitute_distributions_are_the_lm_heads_softmax_at_the_position(elmo, model_dir):
    """The forward distribution at token k gives token k the probability the training objective gives it from the
    state before it; the backward one likewise from the state after it."""
    readout = Readout.of_model(model_dir)
    head, vocab = LMHead.load(model_dir / HEAD_FILE), Vocabulary.load(model_dir / "vocab.txt")
    sentence = SENTENCES[2]
    context = elmo.embed([sentence], context=True)[0][-1]
    forward, backward = readout.distributions(context, None)
    top = framed_top_layer(elmo, sentence)
    P = elmo.config.projection_dim
    targets = torch.tensor(vocab.ids(sentence))
    with torch.no_grad():
        expected_forward = head(top[:-2, :P], targets).exp()  # state at k-1 predicts token k
        expected_backward = head(top[2:, P:], targets).exp()
    np.testing.assert_allclose(forward[torch.arange(len(sentence)), targets], expected_forward, rtol=1e-5)
    np.testing.assert_allclose(backward[torch.arange(len(sentence)), targets], expected_backward, rtol=1e-5)
    assert torch.allclose(forward.sum(1), torch.ones(len(sentence)))


@pytest.mark.parametrize("top", [0, 5, 29, 30, 31])
def test_readout_vectors_are_the_count_sketch_of_the_transformed_distributions(elmo, model_dir, top):
    """``top`` (0: every word) keeps each direction's ``top`` likeliest words before the power and the sketch."""
    settings = ReadoutSettings(vocabulary=30, power=0.25, dim=16, seed=3, top=top)
    readout = Readout.of_model(model_dir, settings)
    context = np.concatenate([out[-1] for out in elmo.embed(SENTENCES, context=True)])
    forward, backward = (p.numpy().astype(np.float64) for p in readout.distributions(context, 30))

    def unit(x):
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    def kept(p):
        if top == 0 or top >= p.shape[1]:
            return p
        below = np.sort(p, axis=1)[:, -top][:, None]  # each row's top-th largest
        return np.where(p >= below, p, 0.0)

    both = unit(kept(forward) ** 0.25) + unit(kept(backward) ** 0.25)
    rng = np.random.default_rng(3)
    coordinates, signs = rng.integers(0, 16, 30), rng.choice(np.array([-1.0, 1.0]), 30)
    sketch = np.zeros((30, 16))
    sketch[np.arange(30), coordinates] = signs
    np.testing.assert_allclose(readout.vectors(context), both @ sketch, atol=1e-5)
    assert readout.vectors(context[:0]).shape == (0, 16)


def test_substitutes_and_expectations_are_the_most_probable_words(elmo, model_dir):
    """Substitutes: the words that weigh most in the readout (both directions' normalised p ** power), in that order,
    with their probability averaged over the directions. Expectations: each direction's likeliest words."""
    readout = Readout.of_model(model_dir)
    context = elmo.embed([SENTENCES[0]], context=True)[0][-1]
    ids, probs = readout.substitutes(context, 4)
    forward, backward = (
        p.numpy().astype(np.float64) for p in readout.distributions(context, readout.settings.vocabulary)
    )
    power = readout.settings.power

    def unit(x):
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    weight = unit(forward**power) + unit(backward**power)
    np.testing.assert_array_equal(ids, np.argsort(-weight, axis=1)[:, :4])
    rows = np.arange(len(ids))[:, None]
    np.testing.assert_allclose(probs, (forward[rows, ids] + backward[rows, ids]) / 2, rtol=2e-3)
    expected = readout.expectations(context[2], k=5)
    assert [e.direction for e in expected] == ["forward", "backward"]
    whole = readout.distributions(context[2:3], None)
    for expectation, distribution in zip(expected, whole):
        best = distribution[0].topk(5)
        assert [w for w, _ in expectation.words] == [WORDS[i] for i in best.indices.tolist()]
        np.testing.assert_allclose([p for _, p in expectation.words], best.values.numpy(), rtol=1e-6)


def test_a_loaded_bilm_is_used_as_read_and_still_checked_against_the_head(model_dir, elmo):
    """An index opens the readout with the biLM its Elmo holds (not read from disk again): the same readout as one
    that reads it, and a biLM of another model is refused as the folder's own would be."""
    context = elmo.embed([SENTENCES[2]], context=True)[0][-1]
    given = Readout.of_model(model_dir, bilm=elmo.model)
    np.testing.assert_array_equal(given.vectors(context), Readout.of_model(model_dir).vectors(context))
    other = BiLM(BiLMConfig(**{**TINY_CONFIG, "projection_dim": 6}))
    with pytest.raises(WeightsError, match="reads 8-dimensional states, the biLM gives 6: they are not of one model"):
        Readout.of_model(model_dir, bilm=other)


def test_a_models_readout_json_sets_its_readout_over_the_defaults(model_dir, tiny_model_dir, elmo, tmp_path):
    """readout.json beside a model (the rule's pick for it, e.g. the Korean model's 512-wide sketch) is what its
    indexes are built with; a damaged one is an error naming it; a model without a head reads context states."""
    import shutil

    model = tmp_path / "model"
    shutil.copytree(model_dir, model)
    assert ReadoutSettings.of_folder(model) == ReadoutSettings()
    (model / READOUT_FILE).write_text(json.dumps({"dim": 64, "power": 0.5}))
    assert ReadoutSettings.of_folder(model) == ReadoutSettings(dim=64, power=0.5)
    context = elmo.embed([SENTENCES[1]], context=True)[0][-1]
    assert Readout.of_model(model).vectors(context).shape == (len(context), 64)
    damaged = {
        '{"dim": 0}': "dim must be",
        '{"width": 64}': "unknown key 'width'; its keys are kind, vocabulary",
        '{"top": 1, "top": 128}': "the key 'top' is given 2 times",  # not the last one, unsaid
        "[64]": "it is not a JSON object",
        "{dim": "Expecting",
    }
    for text, says in damaged.items():
        (model / READOUT_FILE).write_text(text)
        with pytest.raises(ValueError, match=rf"model/readout.json does not hold readout settings \({says}.*restore"):
            ReadoutSettings.of_folder(model)
    assert ReadoutSettings.of_folder(tiny_model_dir).kind == STATES


def test_a_model_without_a_head_reads_its_context_states(tiny_model_dir, elmo):
    readout = Readout.of_model(tiny_model_dir)
    assert readout.settings.kind == STATES
    context = elmo.embed([SENTENCES[0]], context=True)[0][-1]
    np.testing.assert_array_equal(readout.vectors(context), context)
    assert Readout.of_model(None).settings.kind == STATES  # a published model: its folder is not ours
    with pytest.raises(ValueError, match="LM head"):
        Readout(ReadoutSettings(kind=PREDICTION))


def test_centring_shrinks_a_rare_words_mean_towards_the_collections():
    uses = np.array([[1.0, 0.0], [0.0, 1.0]])
    collection = np.array([0.5, 0.0])
    alone = centred(uses, uses.mean(0), 2, collection, shrinkage=0.0)
    np.testing.assert_allclose(alone[0], -alone[1])  # two uses on their own mean point opposite ways
    shrunk = centred(uses, uses.mean(0), 2, collection, shrinkage=2.0)
    np.testing.assert_allclose(shrunk, uses - (2 * uses.mean(0) + 2 * collection) / 4)


@pytest.mark.parametrize(
    "change", [{"kind": "guess"}, {"power": 0.0}, {"power": float("nan")}, {"dim": 0}, {"vocabulary": 1}]
)
def test_bad_readout_settings_are_refused_by_name(change):
    with pytest.raises(ValueError, match=next(iter(change))):
        ReadoutSettings(**change)
