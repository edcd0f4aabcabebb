"""The open index: spinners, switching indexes and demos, and indexes that cannot be opened."""

from __future__ import annotations

import inspect
import json
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
from pages import assert_clean, documents, open_app, open_url, texts
from streamlit.testing.v1 import AppTest

from app.settings import INDEX_ENV, MAIN_SCRIPT


def test_every_question_waits_under_a_spinner(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening the index and every question to it run inside ``st.spinner`` (which shows after 0.5 s)."""
    import streamlit

    from indexer import Index

    spinning: list[str] = []
    real_spinner = streamlit.spinner

    @contextmanager
    def spinner(text: str, **kwargs):
        spinning.append(text)
        try:
            with real_spinner(text, **kwargs):
                yield
        finally:
            spinning.pop()

    asked: list[tuple[str, list[str]]] = []
    for name in ("open", "search", "neighbors", "compare", "senses"):
        real = inspect.getattr_static(Index, name)
        is_classmethod = isinstance(real, classmethod)

        def recorded(*args, _name=name, _real=real.__func__ if is_classmethod else real, **kwargs):
            asked.append((_name, list(spinning)))
            return _real(*args, **kwargs)

        monkeypatch.setattr(Index, name, classmethod(recorded) if is_classmethod else recorded)
    monkeypatch.setattr(streamlit, "spinner", spinner)
    streamlit.cache_data.clear()
    streamlit.cache_resource.clear()
    at = open_app(index_dir)
    at.text_input(key="ui.search.query").set_value("otters by the river").run()
    at.switch_page("views/word_in_context.py").run()
    at.switch_page("views/senses.py").run()
    assert_clean(at)
    assert {name for name, _ in asked} == {"open", "search", "neighbors", "compare", "senses"}
    assert all(texts for _, texts in asked), [name for name, texts in asked if not texts]


def test_opening_another_index_forgets_the_old_questions(index_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(index_dir, other)
    at = open_url(index_dir, {"q": "otters by the river"})
    assert documents(at) and at.query_params["q"] == "otters by the river"
    at.text_input(key="index_dir").set_value(str(other)).run()
    assert_clean(at)
    assert at.text_input(key="ui.search.query").value == "" and not documents(at) and "q" not in at.query_params
    at.switch_page("views/word_in_context.py").run()  # the new index's examples, not the old sentences
    assert texts(at.subheader)[0] == "ELMo · “bank” in A"


def test_the_demo_collection_lives_in_the_url(
    index_dir: Path, index_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo collection other than the one the app opens by itself (the Korean one) is in the URL, on every
    page, so a reload or a shared link reopens it; a link without it, or with one that is not built, opens the
    default."""
    import dataclasses

    from app import settings, state
    from demo import corpora

    demos = {
        "en": dataclasses.replace(settings.DEMOS["en"], index_dir=index_dir),
        "ko": dataclasses.replace(settings.DEMOS["ko"], index_dir=index_copy),  # stands for the Korean demo
    }
    for module in (corpora, settings, state):  # each that looks the demos up
        monkeypatch.setattr(module, "DEMOS", demos)
    monkeypatch.delenv(INDEX_ENV, raising=False)

    def opened(params: dict[str, str], page: str | None = None) -> AppTest:
        at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
        if page is not None:
            at.switch_page(page)
        at.query_params.update(params)
        return at.run()

    at = opened({"demo": "ko", "word": "play"}, "views/senses.py")
    assert_clean(at)
    assert at.session_state["index_dir"] == str(index_copy) and at.radio(key="demo").value == "ko"
    assert at.query_params["demo"] == "ko" and at.text_input(key="ui.senses.word").value == "play"
    for page in ("views/search.py", "views/word_in_context.py", "views/about.py"):
        at.switch_page(page).run()
        assert_clean(at)
        assert at.query_params["demo"] == "ko", page

    for params in ({}, {"demo": "fr"}, {"demo": "../../etc"}):
        at = opened(params)
        assert_clean(at)
        assert at.session_state["index_dir"] == str(index_dir) and "demo" not in at.query_params
    at.radio(key="demo").set_value("ko").run()  # the sidebar's switch: into the URL
    assert at.session_state["index_dir"] == str(index_copy) and at.query_params["demo"] == "ko"


def test_a_query_in_the_other_language_is_one_click_from_the_other_demo(
    index_dir: Path, index_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Korean query on the English demo says so, with a button that searches the Korean demo for it; a query in
    the index's own language, or one on the demo it is meant for, gets no such line."""
    import dataclasses

    from app import settings, state
    from demo import corpora

    demos = {
        "en": dataclasses.replace(settings.DEMOS["en"], index_dir=index_dir),
        "ko": dataclasses.replace(settings.DEMOS["ko"], index_dir=index_copy),  # stands for the Korean demo
    }
    for module in (corpora, settings, state):
        monkeypatch.setattr(module, "DEMOS", demos)
    at = open_app(index_dir)
    at.text_input(key="ui.search.query").set_value("the river bank").run()
    assert_clean(at)
    assert not [b for b in at.button if b.label.startswith("Search the")]
    at.text_input(key="ui.search.query").set_value("배를 타고 강을 건넜다").run()
    assert_clean(at)
    assert "This query is written in Korean; this collection is in English." in texts(at.info)
    (button,) = [b for b in at.button if b.label == "Search the 한국어 demo"]
    button.click().run()
    assert_clean(at)
    assert at.session_state["index_dir"] == str(index_copy) and at.radio(key="demo").value == "ko"
    assert at.text_input(key="ui.search.query").value == "배를 타고 강을 건넜다"
    assert not [b for b in at.button if b.label.startswith("Search the")]  # on the demo it is meant for


def test_missing_index_shows_the_command_that_builds_it(tmp_path: Path) -> None:
    at = open_app(tmp_path / "no-index")
    assert not at.exception
    assert "There is no index" in at.error[0].value
    assert at.code[0].value == f"python -m app --index {tmp_path / 'no-index'} --build"
    assert at.code[1].value.startswith("python -m indexer build --corpus")


def test_index_of_another_model_is_reported_not_raised(index_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "index"
    shutil.copytree(index_dir, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["model"]["hash"] = "0" * 16
    (copy / "manifest.json").write_text(json.dumps(manifest))
    at = open_app(copy, "views/senses.py")
    assert not at.exception
    assert "cannot be opened" in at.error[0].value and "rebuild" in at.error[0].value
    # not a demo index the app built: the command that rebuilds it from its own corpus, never from the demo's
    assert at.code[0].value.startswith("python -m indexer build --corpus") and at.code[0].value.endswith("--overwrite")


def test_damaged_index_is_reported_not_raised(index_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "index"
    shutil.copytree(index_dir, copy)
    damaged = next(copy.glob("sentences.g*.faiss"))
    damaged.write_bytes(damaged.read_bytes()[:100])
    at = open_app(copy)
    assert not at.exception
    assert "cannot be opened" in at.error[0].value
