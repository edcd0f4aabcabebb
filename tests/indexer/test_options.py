"""The options types of the questions (``indexer.options``): every field, given a value other than its default, comes
the same from the command line, a ``--queries`` line and the HTTP API's JSON; a value that breaks a field's rule is
refused by name wherever it comes from."""

from __future__ import annotations

import io
import json
from dataclasses import Field, asdict, fields

import pytest

from encoder.options import flag_of, given
from indexer import QueryError
from indexer.__main__ import make_parser
from indexer.api import NeighborsRequest, SearchRequest
from indexer.cli.search import QUERY_FIELDS, LineError, _query_lines
from indexer.options import NeighborsOptions, SearchOptions, SensesOptions


def other_value(spec: Field) -> object:
    """A value of the field that is not its default."""
    if isinstance(spec.default, bool):
        return not spec.default
    choices = spec.metadata["argparse"].get("choices")
    if choices:
        return next(choice for choice in choices if choice != spec.default)
    if spec.name == "layers":
        return "top"
    return 2 if spec.default in (None, "auto") else spec.default + 1


def changed(options: type) -> dict:
    return {spec.name: other_value(spec) for spec in fields(options)}


def from_command_line(command: list[str], options: type, values: dict) -> object:
    flags = []
    for spec in fields(options):
        value = values[spec.name]
        flags += [flag_of(spec)] if isinstance(value, bool) else [flag_of(spec), str(value)]
    args = make_parser().parse_args([*command, "--index", "x", *flags])
    return options(**given(args, options))


def test_every_search_option_comes_the_same_from_each_surface():
    values = changed(SearchOptions)
    expected = SearchOptions(**values)
    assert expected != SearchOptions() and all(asdict(expected)[name] == value for name, value in values.items())
    assert from_command_line(["search", "a query"], SearchOptions, values) == expected
    line = json.dumps({"query": "a query", "id": 7, **values}).encode()
    ((number, read),) = _query_lines(io.BytesIO(line), SearchOptions())
    assert read.query == "a query" and read.id == 7 and read.options == expected
    assert set(QUERY_FIELDS) == {"query", "id", *values}
    request = SearchRequest.model_validate_json(json.dumps({"queries": ["a query"], **values}))
    assert SearchOptions(**request.model_dump(exclude={"queries"})) == expected


def test_a_queries_line_takes_the_command_s_options_as_its_defaults():
    defaults = SearchOptions(k=3, method="keywords")
    lines = io.BytesIO(b'plain text\n{"query": "json", "k": 5}\n')
    (_, plain), (_, asked) = _query_lines(lines, defaults)
    assert plain.options == defaults and asked.options == SearchOptions(k=5, method="keywords")


def test_every_neighbors_option_comes_the_same_from_each_surface():
    values = changed(NeighborsOptions)
    expected = NeighborsOptions(**values)
    command = ["neighbors", "--sentence", "the bank", "--word", "bank"]
    assert from_command_line(command, NeighborsOptions, values) == expected
    request = NeighborsRequest.model_validate_json(json.dumps({"sentence": "the bank", "word": "bank", **values}))
    assert NeighborsOptions(**request.model_dump(exclude={"sentence", "word"})) == expected


def test_every_senses_option_comes_from_the_command_line():
    values = changed(SensesOptions)
    assert from_command_line(["senses", "--word", "bank"], SensesOptions, values) == SensesOptions(**values)


@pytest.mark.parametrize(
    "options, values, says",
    [
        (SearchOptions, {"k": 0}, "k must be a whole number from 1 to 1,000, not 0"),
        (SearchOptions, {"k": True}, "k must be a whole number"),
        (SearchOptions, {"k": 2.5}, "k must be a whole number"),
        (SearchOptions, {"method": "magic"}, "method must be one of hybrid, elmo, keywords, glove, not 'magic'"),
        (SearchOptions, {"sentences": 1}, "sentences must be true or false, not 1"),
        (SearchOptions, {"layers": 3}, "layers must be text"),
        (SearchOptions, {"layers": [0.5, True]}, "layers must be text"),
        (SearchOptions, {"k": None}, r"k cannot be null \(None\): leave it out for its default, 10$"),
        (SearchOptions, {"sentences": None}, "sentences cannot be null"),
        (  # not ranked by ELMo unsaid
            SearchOptions,
            {"sentences": True, "method": "keywords"},
            "sentences are ranked by ELMo cosine, not by method keywords",
        ),
        (NeighborsOptions, {"position": -1}, "position must be a whole number of at least 0"),
        (NeighborsOptions, {"representation": "bert"}, "representation must be one of readout, elmo"),
        (SensesOptions, {"k": "many"}, "k must be 'auto' or a whole number from 1 to 50"),
        (SensesOptions, {"max_occurrences": 0}, "max_occurrences must be a whole number"),
    ],
)
def test_a_value_that_breaks_a_rule_is_refused_by_name(options, values, says):
    with pytest.raises(QueryError, match=says):
        options(**values)


def test_a_queries_line_with_a_bad_value_says_why_as_the_options_do():
    ((_, problem),) = _query_lines(io.BytesIO(b'{"query": "q", "k": true, "id": 3}\n'), SearchOptions())
    assert problem == LineError("k must be a whole number from 1 to 1,000, not true", 3)  # the line's id kept


def test_a_queries_line_that_gives_a_field_twice_is_refused_not_read_as_its_last():
    ((_, problem),) = _query_lines(io.BytesIO(b'{"query": "bank", "k": 2, "query": "loan"}\n'), SearchOptions())
    assert problem == LineError("the key 'query' is given 2 times; give it once")


def test_a_queries_line_may_give_null_only_for_an_option_whose_default_is_none():
    lines = b'{"query": "q", "k": null}\n{"query": "q", "layers": null}\n'
    (_, problem), (_, line) = _query_lines(io.BytesIO(lines), SearchOptions())
    assert problem == LineError("k cannot be null (None): leave it out for its default, 10")
    assert line.options.layers is None
