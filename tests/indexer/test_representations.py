"""The representation registry (indexer/representations.py) is where every surface takes its options from: the
CLI's --representation choices, the HTTP API's enum and the app's options."""

import argparse

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
