"""The sense readout in an index (format 5): what a build stores, and Word in context, Senses and two-use comparison
read through it, each checked against a direct computation from the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import SETTINGS, write_corpus

from encoder import Elmo
from encoder.readout import Readout, centred
from indexer import Index, QueryError, build_index
from indexer.__main__ import main


@pytest.fixture(scope="module")
def lm_index(tmp_path_factory, tiny_lm_dir) -> Index:
    root = tmp_path_factory.mktemp("readout-index")
    return build_index([write_corpus(root / "corpus")], root / "index", model=tiny_lm_dir, settings=SETTINGS)


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def context_of(index: Index, token_ids: np.ndarray) -> np.ndarray:
    """Each token vector's context states, from its sentence run through the model alone."""
    rows = []
    for token_id in token_ids:
        token = index.tokens.iloc[int(token_id)]
        tokens = list(index.sentences["tokens"].iloc[int(token["sentence_id"])])
        rows.append(index.elmo.embed([tokens], context=True)[0][-1, int(token["position"])])
    return np.stack(rows)


def test_a_build_stores_each_token_vectors_readout_and_substitutes(lm_index, tiny_lm_dir):
    assert lm_index.manifest.format_version == 5 and lm_index.manifest.readout.kind == "prediction"
    ids = np.arange(0, len(lm_index.tokens), 7)
    context = context_of(lm_index, ids)
    readout = Readout.of_model(tiny_lm_dir)
    stored = lm_index.parts.readouts.gather(ids, (1.0,))
    np.testing.assert_allclose(stored, unit(readout.vectors(context)), atol=2e-3)  # float16 on disk
    substitutes, probabilities = readout.substitutes(context, lm_index.manifest.readout.substitutes)
    shard_ids, shard_probs = lm_index.parts.substitutes
    np.testing.assert_array_equal(np.concatenate(shard_ids)[ids], substitutes)
    np.testing.assert_allclose(np.concatenate(shard_probs)[ids].astype(np.float32), probabilities, rtol=1e-3)


def test_same_word_neighbours_rank_uses_by_their_readouts_around_the_words_mean(lm_index):
    sentence = "Fish swim near the muddy river bank."
    found = lm_index.neighbors(sentence, "bank", k=5, same_word=True)
    assert found.representation == "context prediction"
    ids = lm_index.word_ids("bank")
    context = lm_index.elmo.embed([lm_index.query(sentence).tokens], context=True)[0][-1, 6]
    query = unit(Readout.of_model(lm_index.elmo.folder).vectors(context[None]))
    vectors = lm_index.parts.readouts.gather(ids, (1.0,))
    collection = lm_index.parts.readouts.gather(np.arange(len(lm_index.tokens)), (1.0,)).mean(0)
    shrinkage = lm_index.manifest.readout.shrinkage
    centre = (len(ids) * vectors.mean(0) + shrinkage * collection) / (len(ids) + shrinkage)
    scores = unit(vectors - centre) @ unit(query - centre)[0]
    order = np.argsort(-scores, kind="stable")[:5]
    got = [(h.sentence, h.token_index) for h in found.hits]
    want = [
        (
            lm_index.sentences["text"].iloc[int(lm_index.tokens["sentence_id"].iloc[i])],
            int(lm_index.tokens["position"].iloc[i]),
        )
        for i in ids[order]
    ]
    assert got == want
    np.testing.assert_allclose([h.score for h in found.hits], scores[order], atol=1e-4)
    np.testing.assert_allclose(
        unit(centred(vectors, vectors.mean(0), len(ids), collection, shrinkage)), unit(vectors - centre), atol=1e-4
    )


def test_other_words_neighbours_compare_plain_readouts_and_elmo_stays_one_argument_away(lm_index):
    sentence = "Fish swim near the muddy river bank."
    found = lm_index.neighbors(sentence, "bank", k=4)
    stored = lm_index.parts.readouts.gather(np.arange(len(lm_index.tokens)), (1.0,))
    context = lm_index.elmo.embed([lm_index.query(sentence).tokens], context=True)[0][-1, 6]
    query = unit(Readout.of_model(lm_index.elmo.folder).vectors(context[None]))[0]
    np.testing.assert_allclose([h.score for h in found.hits], np.sort(stored @ query)[::-1][:4], atol=1e-4)
    paper = lm_index.neighbors(sentence, "bank", k=4, representation="elmo")
    assert paper.representation == "ELMo layer mix (paper)"
    assert lm_index.neighbors(sentence, "bank", k=4, layers="top").representation.startswith("ELMo = ")
    with pytest.raises(QueryError, match="representation='elmo'"):
        lm_index.neighbors(sentence, "bank", representation="readout", layers="top")
    with pytest.raises(QueryError, match="representation must be one of"):
        lm_index.neighbors(sentence, "bank", representation="bert")


def test_explain_gives_what_each_direction_of_the_lm_expects(lm_index):
    sentence = "Fish swim near the muddy river bank."
    found = lm_index.neighbors(sentence, "bank", k=3, explain=True)
    context = lm_index.elmo.embed([lm_index.query(sentence).tokens], context=True)[0][-1, 6]
    expected = Readout.of_model(lm_index.elmo.folder).expectations(context, 10)
    assert [e.direction for e in found.expected] == ["forward", "backward"]
    assert found.expected == expected and len(expected[0].words) == 10
    assert lm_index.neighbors(sentence, "bank", k=3).expected == []


def test_two_uses_compared_in_every_representation(lm_index):
    a, b = "Fish swim near the muddy river bank.", "She paid the loan at the bank."
    comparison = lm_index.compare(a, "bank", b, "bank")
    layers = [lm_index.elmo.embed([lm_index.query(s).tokens])[0][:, i] for s, i in ((a, 6), (b, 6))]
    for j, name in enumerate(["ELMo token layer", "ELMo layer 1", "ELMo layer 2"]):
        assert comparison.cosines[name] == pytest.approx(float(unit(layers[0][j]) @ unit(layers[1][j])), abs=1e-5)
    average = [unit(x.mean(0)) for x in layers]
    assert comparison.cosines["ELMo layer mix (paper)"] == pytest.approx(float(average[0] @ average[1]), abs=1e-5)
    assert -1.0 <= comparison.cosines["context prediction"] <= 1.0
    assert comparison.mix_weights == pytest.approx([1 / 3] * 3) and comparison.mix_gamma == 1.0
    assert comparison.uses[0][1] == 6 and comparison.uses[1][0][6] == "bank"
    same = lm_index.compare(a, "bank", a, "bank").cosines  # float32 rounding can pass 1: a cosine does not
    assert all(-1.0 <= cosine <= 1.0 for cosine in same.values()) and same["ELMo token layer"] == pytest.approx(1.0)


def test_senses_cluster_readouts_and_are_named_by_substitutes(lm_index):
    senses = lm_index.senses("bank")
    assert senses.representation == "context prediction" and senses.n_occurrences == len(lm_index.word_ids("bank"))
    names = {word for cluster in senses.clusters for word in cluster.label.split(", ") if word}
    assert names and names <= set(lm_index.parts.readout.vocab.words) - {"<S>", "</S>", "<UNK>"}  # substitutes only
    for point in senses.points:
        assert lm_index.elmo.text.tokenize(point.sentence)[point.token_index].lower() == "bank"
    assert lm_index.senses("bank", representation="elmo").representation == "ELMo layer mix (paper)"


def test_an_index_opened_without_its_lm_head_answers_with_elmo_only(lm_index, tiny_lm_dir):
    bare = Elmo.load(tiny_lm_dir)
    bare.folder = None  # as a model given as an object, whose head is not known
    opened = Index.open(lm_index.path, model=bare)
    with pytest.raises(QueryError, match="LM head"):
        opened.neighbors("The muddy river bank.", "bank")
    assert opened.neighbors("The muddy river bank.", "bank", representation="elmo").hits


def test_neighbours_cli_explains_and_names_the_representation(lm_index, capsys):
    args = ["neighbors", "--index", str(lm_index.path), "--sentence", "The muddy river bank.", "--word", "bank"]
    assert main([*args, "--explain"]) == 0
    out = capsys.readouterr().out
    assert "the model expects here, from the words before:" in out and "by context prediction:" in out
    assert main([*args, "--representation", "elmo"]) == 0
    assert "by ELMo layer mix (paper):" in capsys.readouterr().out


@pytest.mark.parametrize("question", [{}, {"representation": "elmo"}, {"representation": "elmo", "layers": "top"}])
def test_use_vectors_are_the_vectors_neighbours_ranks_by(lm_index, question):
    """Every use of the word, named by its sentence and position, with the unit vector ``neighbors`` compares: a
    stored use asked as a query finds its uses at the cosines of these vectors with its own (float16 on disk, and the
    readout centred on the mean of its uses, which magnifies the rounding)."""
    uses, vectors = lm_index.use_vectors("bank", **question)
    assert len(uses) == len(vectors) == len(lm_index.word_ids("bank"))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    sentence, position = uses[0]
    assert lm_index.query(sentence).tokens[position].lower() == "bank"
    hits = lm_index.neighbors(sentence, "bank", position, k=len(uses), same_word=True, **question).hits
    expected = {use: float(vector @ vectors[0]) for use, vector in zip(uses, vectors)}
    for hit in hits:
        assert hit.score == pytest.approx(expected[(hit.sentence, hit.token_index)], abs=2e-2)  # centring amplifies
    with pytest.raises(QueryError, match="zebra"):
        lm_index.use_vectors("zebra")


def test_an_index_opens_only_with_the_lm_head_and_vocabulary_it_was_built_with(lm_index, tiny_lm_dir, tmp_path):
    """The biLM's hash does not cover the head and vocabulary, which name what the model expects: the index
    records their own hash, and a model folder whose vocabulary changed is refused with one clear error."""
    import shutil

    from indexer import IndexMismatchError

    model = Path(shutil.copytree(tiny_lm_dir, tmp_path / "model"))
    assert Index.open(lm_index.path, model=model).count() == lm_index.count()  # a copy of the same model: fine
    words = (model / "vocab.txt").read_text().splitlines()
    (model / "vocab.txt").write_text("\n".join([*words[:3], words[4], words[3], *words[5:]]) + "\n")  # two swapped
    with pytest.raises(IndexMismatchError, match="LM head or vocabulary"):
        Index.open(lm_index.path, model=model)
