"""The app's model choice: the same documents indexed with our model and with a published one (the reference fixture
downloaded as elmo-small), one click apart in the sidebar, and side by side in Word in context; ``python -m app
--model NAME`` of a model not downloaded is one error line giving the download command."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app.settings import MAIN_SCRIPT, variant_dir
from indexer import Index, Settings, build_index

SENTENCES = [
    ("river", "The river bank was muddy after the rain. We sat on the bank and watched the water."),
    ("money", "She paid the money into her bank account. The bank gave her a loan for the house."),
    ("boats", "The boat drifted to the bank of the lake. Fishermen pulled their boats onto the bank."),
]


@pytest.fixture(scope="module")
def indexes(tiny_model_dir, published_cache, tmp_path_factory) -> Path:
    """The documents indexed with the tiny model in FOLDER and with elmo-small in FOLDER-elmo-small."""
    root = tmp_path_factory.mktemp("models-app")
    corpus = root / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": i, "text": t}) + "\n" for i, t in SENTENCES))
    settings = Settings(glove="train", glove_dim=8, glove_epochs=1, glove_min_count=1)
    build_index([corpus], root / "index", model=tiny_model_dir, progress=False, settings=settings)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELMO_SEARCH_CACHE", str(published_cache))
        build_index(
            [corpus], variant_dir(root / "index", "elmo-small"), model="elmo-small", progress=False, settings=settings
        )
    return root / "index"


@pytest.fixture
def cache(published_cache, monkeypatch) -> Path:
    monkeypatch.setenv("ELMO_SEARCH_CACHE", str(published_cache))
    return published_cache


def word_in_context(index: Path) -> AppTest:
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
    at.session_state["index_dir"] = str(index)
    at.run()
    at.switch_page("views/word_in_context.py").run()
    at.toggle(key="ui.wic.compare").set_value(False)  # one sentence
    at.text_input(key="ui.wic.sentence_a").set_value("I sat on the bank of the river.").run()
    return at


def ranked(elements) -> list[str]:
    return [m.value for m in elements if re.match(r"\*\*\d+\.\*\* `", m.value)]


def test_word_in_context_shows_a_published_model_beside_ours(indexes, cache, tiny_model_dir):
    at = word_in_context(indexes)
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert at.sidebar.radio(key="model").options == [tiny_model_dir.name, "elmo-small"]
    at.selectbox(key="ui.wic.other_model").set_value("elmo-small").run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert r"The same words with elmo\-small" in [s.value for s in at.subheader]  # escaped markdown
    k = at.slider(key="ui.wic.k").value
    other = Index.open(variant_dir(indexes, "elmo-small"))
    for representation, question in (("readout", {}), (2, {"representation": "elmo", "layers": "top"})):
        # the page's representation: its sense readout (context states, for a model without an LM head), or the
        # page's layer where the other model has as many layers
        at.radio(key="ui.wic.representation").set_value(representation).run()
        expected = other.neighbors("I sat on the bank of the river.", "bank", k=k, same_word=True, **question).hits
        shown = ranked(at.markdown)  # the page's own list (in the wide and the narrow layout), then the other's
        assert len(shown) == 2 * len(ranked(at.get_by_key("wide-wic").markdown)) + len(expected)
        scores = [re.search(r"`(-?[\d.]+)`", m).group(1) for m in shown[-len(expected) :]]
        assert scores == [f"{h.score:.3f}" for h in expected]


def test_word_in_context_gives_the_papers_model_command_where_there_is_no_other_model(indexes, cache, tmp_path):
    """An English index alone gets the two commands that put the paper's model beside it; one with another model's
    index beside it gets the choice instead."""
    alone = tmp_path / "alone"
    shutil.copytree(indexes, alone)  # the same index with no FOLDER-MODEL beside it
    command = "python -m app --model elmo-original"
    for index, shown in ((alone, True), (indexes, False)):
        at = word_in_context(index)
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        assert any(command in c.value for c in at.caption) == shown
        assert any(box.key == "ui.wic.other_model" for box in at.selectbox) != shown


def test_the_sidebar_switches_to_the_published_models_index(indexes, cache):
    at = word_in_context(indexes)
    radio = at.sidebar.radio(key="model")
    assert radio.options[-1] == "elmo-small" and radio.value != "elmo-small"
    radio.set_value("elmo-small").run()
    assert at.session_state["index_dir"] == str(variant_dir(indexes, "elmo-small"))
    assert not at.exception and not at.error


def test_the_app_refuses_a_model_not_downloaded_with_the_command(tmp_path, monkeypatch, capsys):
    from app.__main__ import main

    monkeypatch.setenv("ELMO_SEARCH_CACHE", str(tmp_path))
    with pytest.raises(SystemExit) as ended:
        main(["--model", "elmo-original", "--index", str(tmp_path / "index")])
    assert ended.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("download it first: python -m encoder download elmo-original")
    assert not (tmp_path / "index").exists()
