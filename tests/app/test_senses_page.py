"""The Senses page, driven by ``streamlit.testing`` on a small index built from a tiny random model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pages import assert_clean, card_labels, chart_data, open_app, open_url, texts


def test_senses_shows_cards_and_a_scatter_of_all_occurrences(index_dir: Path) -> None:
    at = open_app(index_dir, "views/senses.py")
    at.selectbox(key="ui.senses.k").set_value(2).run()
    assert_clean(at)
    assert [m.value for m in at.markdown if m.value.startswith("#### Sense")] == ["#### Sense 1", "#### Sense 2"]
    assert at.metric[0].value == "8"  # "bank" occurs 8 times
    chart = at.get("vega_lite_chart")
    assert len(chart) == 1
    spec = json.loads(chart[0].proto.spec)
    assert {"field": "sentence", "type": "nominal"} in spec["encoding"]["tooltip"]


def test_senses_suggestion_and_unknown_word(index_dir: Path) -> None:
    """A suggested word opens its senses; a word the index lacks is a warning, not an exception."""
    at = open_app(index_dir, "views/senses.py")
    at.button_group[0].set_value("play").run()
    assert at.text_input(key="ui.senses.word").value == "play"
    assert_clean(at)

    at.text_input(key="ui.senses.word").set_value("zebra").run()
    assert_clean(at)
    assert any("'zebra' does not occur" in text for text in texts(at.warning))


def test_senses_live_in_the_url(index_dir: Path) -> None:
    at = open_url(index_dir, {"word": "play", "k": "2"}, "views/senses.py")
    assert_clean(at)
    assert at.text_input(key="ui.senses.word").value == "play" and at.selectbox(key="ui.senses.k").value == 2
    assert [m.value for m in at.markdown if m.value.startswith("#### ")] == ["#### Sense 1", "#### Sense 2"]
    at.selectbox(key="ui.senses.k").set_value("auto").run()
    assert dict(at.query_params) == {"word": "play", "k": "auto", "rep": "readout"}
    at.text_input(key="ui.senses.word").set_value("").run()
    assert dict(at.query_params) == {"k": "auto", "rep": "readout"}

    at = open_url(index_dir, {"word": "x" * 10_001, "k": "99", "rep": "top"}, "views/senses.py")
    assert_clean(at)
    assert at.text_input(key="ui.senses.word").value == "bank" and at.selectbox(key="ui.senses.k").value == "auto"
    assert at.radio(key="ui.senses.representation").value == "readout"


@pytest.mark.parametrize(
    ("rep", "question", "name"),
    [
        ("readout", {}, "context prediction"),
        ("mix", {"representation": "elmo"}, "ELMo layer mix \\(paper\\)"),
        ("2", {"representation": "elmo", "layers": [0.0, 0.0, 1.0]}, "ELMo h2 · biLSTM 2 \\(top\\)"),
    ],
)
def test_senses_cluster_in_the_chosen_representation(index_dir: Path, rep: str, question: dict, name: str) -> None:
    """Context prediction by default; the representation choice (in the URL) asks the index for the others."""
    from app.render import escape
    from indexer import Index

    expected = Index.open(index_dir).senses("bank", k=2, **question)
    at = open_url(
        index_dir, {"word": "bank", "k": "2", **({"rep": rep} if rep != "readout" else {})}, "views/senses.py"
    )
    assert_clean(at)
    assert at.radio(key="ui.senses.representation").value == (int(rep) if rep.isdigit() else rep)
    assert card_labels(at) == [escape(cluster.label) for cluster in expected.clusters]
    assert f"Clustered by {name}." in texts(at.caption) and at.query_params["rep"] == rep


def test_labelled_uses_colour_the_map_clusters_are_outlined_and_purity_is_shown(
    index_dir: Path, labelled_banks: dict
) -> None:
    """Where the demo labels the uses, the map's colours are the labelled senses and each cluster is a dashed
    outline with its number; the purity shown is the share of labelled uses in their cluster's majority sense."""
    from demo.labels import purity
    from indexer import Index

    result = Index.open(index_dir).senses("bank", k=2)
    labels = [labelled_banks.get((p.sentence, p.token_index)) for p in result.points]
    assert all(labels)  # every use of "bank" here is labelled
    at = open_url(index_dir, {"word": "bank", "k": "2"}, "views/senses.py")
    assert_clean(at)
    metrics = {metric.label: metric.value for metric in at.metric}
    assert metrics["Purity"] == f"{purity([p.cluster for p in result.points], labels):.2f}"
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["line", "point", "text"]  # outlines, uses, cluster numbers
    outlines, uses, numbers = spec["layer"]
    assert uses["encoding"]["color"]["field"] == "labelled sense"
    assert outlines["encoding"]["detail"]["field"] == "cluster" and outlines["mark"]["strokeDash"]
    data = chart_data(at)
    uses_data = next(frame for frame in data if "labelled sense" in frame.columns)
    assert sorted(uses_data["labelled sense"]) == sorted(label.sense for label in labels)  # as each use is labelled
    assert sorted(next(frame for frame in data if "number" in frame.columns)["number"]) == ["1", "2"]
    corners = next(frame for frame in data if "order" in frame.columns)
    assert sorted(set(corners["cluster"])) == [0, 1]  # an outline for each cluster
    assert any("each dashed outline is one cluster" in caption for caption in texts(at.caption))


def test_without_labels_the_map_is_coloured_by_cluster_and_no_purity_is_shown(index_dir: Path) -> None:
    at = open_url(index_dir, {"word": "play", "k": "2"}, "views/senses.py")
    assert_clean(at)
    assert [metric.label for metric in at.metric] == ["Occurrences", "Senses", "Silhouette"]
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert "layer" not in spec and spec["encoding"]["color"]["field"] == "cluster"
    assert spec["encoding"]["color"]["legend"]["labelLimit"] <= 200  # short names: a phone shows them whole


def test_sense_labels_are_never_the_word_or_a_stopword(index_dir: Path) -> None:
    from encoder.text import ENGLISH_STOPWORDS

    at = open_app(index_dir, "views/senses.py")
    for k in (2, 3, 4):
        at.selectbox(key="ui.senses.k").set_value(k).run()
        labels = [m.value.split("**")[1] for m in at.markdown if m.value.startswith("**") and " · " in m.value]
        assert len(labels) == k
        words = {w for label in labels for w in label.split(", ")}
        assert not words & {"bank", "banks", *ENGLISH_STOPWORDS}, labels
