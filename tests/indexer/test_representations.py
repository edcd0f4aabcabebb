"""The representation registry (indexer/representations.py) is where every surface takes its options from: the
CLI's --representation choices, the HTTP API's enum and the app's options."""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.widgets import representation_options
from indexer.api import NeighborsRequest
from indexer.cli import make_parser
from indexer.representations import IndexMix, OneLayer, SenseReadout, by_choice, choices, keys


def _cli_choices(command: str) -> tuple:
    commands = next(a for a in make_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return next(a.choices for a in commands.choices[command]._actions if a.dest == "representation")


def _api_enum(request: type) -> list:
    schema = request.model_json_schema()["properties"]["representation"]
    return next(kind["enum"] for kind in schema["anyOf"] if "enum" in kind)


@pytest.mark.parametrize("n_layers", [2, 3])
def test_every_representation_is_offered_by_every_surface(n_layers):
    registry = choices(n_layers)
    assert {representation.key for representation in registry} == set(keys())
    for command in ("neighbors", "senses"):
        assert list(_cli_choices(command)) == list(keys())
    assert _api_enum(NeighborsRequest) == list(keys())
    assert representation_options(n_layers) == [representation.choice for representation in registry]
    assert [by_choice(option, n_layers) for option in representation_options(n_layers)] == registry


def test_each_representation_reads_and_is_named_as_itself():
    index_weights = (0.2, 0.3, 0.5)
    readout, index_mix, token, top = SenseReadout(), IndexMix(), OneLayer(0, 3), OneLayer(2, 3)
    assert readout.key == "readout" and index_mix.key == top.key == "elmo"
    assert readout.name("prediction", index_weights) == "context prediction"
    assert readout.name("states", index_weights) == "context states"
    assert index_mix.weights(index_weights) == index_weights
    assert index_mix.name("prediction", index_weights) == "ELMo layer mix (paper)"
    assert token.weights(index_weights) == (1.0, 0.0, 0.0)
    assert top.weights(index_weights) == (0.0, 0.0, 1.0)
    assert [token.name("prediction", index_weights), top.name("prediction", index_weights)] == [
        "ELMo token layer",
        "ELMo layer 2",
    ]
    with pytest.raises(ValueError, match="no representation"):
        by_choice("bert", 3)


NEW_REPRESENTATION = '''
import argparse, json, sys
from dataclasses import dataclass

import numpy as np
from typing import ClassVar

from indexer.representations import ElmoLayers, register


@register
@dataclass(frozen=True)
class LstmAverage(ElmoLayers):
    """The biLSTM layers at the word averaged, the char-CNN token layer left out."""

    key: ClassVar[str] = "lstm"
    help: ClassVar[str] = "the biLSTM layers at the word, averaged"

    def weights(self, index_weights):
        return tuple(0.0 if j == 0 else 1 / (len(index_weights) - 1) for j in range(len(index_weights)))

    def name(self, readout_kind, index_weights):
        return "ELMo biLSTM average"

    def i18n_key(self, readout_kind):
        return "rep.mix"


from app.widgets import representation_options
from indexer import Index
from indexer.api import NeighborsRequest
from indexer.cli import make_parser

commands = next(a for a in make_parser()._actions if isinstance(a, argparse._SubParsersAction))
neighbors = commands.choices["neighbors"]
representation = next(a for a in neighbors._actions if a.dest == "representation")
schema = NeighborsRequest.model_json_schema()["properties"]["representation"]
index = Index.open(sys.argv[1])
found = index.neighbors("The bank of the river", "bank", k=3, same_word=True, representation="lstm")


def lstm_average(tokens, position):
    """The word's biLSTM layers averaged, straight from the model: a unit vector."""
    mean = index.elmo.embed([tokens], context=True)[0][1:-1, position].mean(0)
    return mean / np.linalg.norm(mean)


query = lstm_average(found.query_tokens, found.position)
cosines = []  # of every use of the word in the index
for token_id in index.word_ids("bank"):
    token = index.tokens.iloc[int(token_id)]
    tokens = list(index.sentences["tokens"].iloc[int(token["sentence_id"])])
    cosines.append(float(lstm_average(tokens, int(token["position"])) @ query))
print(json.dumps({
    "cli": list(representation.choices),
    "help": representation.help,
    "parsed": neighbors.parse_args(
        ["--sentence", "a bank", "--word", "bank", "--index", sys.argv[1], "--representation", "lstm"]
    ).representation,
    "api": next(kind["enum"] for kind in schema["anyOf"] if "enum" in kind),
    "app": representation_options(index.elmo.n_layers),
    "name": found.representation,
    "found": [hit.score for hit in found.hits],
    "nearest": sorted(cosines, reverse=True)[:3],
}))
'''


def test_a_new_representation_is_one_registered_class(small_index):
    """A representation defined in one class (here the biLSTM layers averaged, in a script of its own, registered
    before the surfaces are made) is offered by the CLI (choices and help), the HTTP API's enum and the app's options,
    and answers neighbours: the uses of the word nearest under its own layer weights, as the model's layers say."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    said = subprocess.run(
        [sys.executable, "-c", NEW_REPRESENTATION, str(small_index)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert said.returncode == 0, said.stderr
    found = json.loads(said.stdout)
    assert found["cli"] == found["api"] == ["readout", "elmo", "lstm"]
    assert "'lstm', the biLSTM layers at the word, averaged" in found["help"]
    assert found["parsed"] == "lstm"
    assert found["app"][-1] == "lstm" and found["app"][:-1] == representation_options(3)
    assert found["name"] == "ELMo biLSTM average"
    assert found["found"] == pytest.approx(found["nearest"], abs=2e-3)  # float16 on disk
