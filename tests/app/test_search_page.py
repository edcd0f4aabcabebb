"""The Search page, driven by ``streamlit.testing`` on a small index built from a tiny random model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pages import assert_clean, documents, notices, open_app, open_url, search_as_typed, texts


def test_search_asks_for_a_query_first(index_dir: Path) -> None:
    at = open_app(index_dir)
    assert_clean(at)
    assert any("Type a query" in text for text in texts(at.info))
    assert not documents(at)
    assert [b.label for b in at.button] == ["Search"] and not at.expander[0].proto.expanded  # advanced: collapsed


def test_search_lists_documents_with_passages_beside_glove(calibrated_index_dir: Path) -> None:
    at = open_app(calibrated_index_dir)
    at.text_input(key="ui.search.query").set_value("otters by the river")
    at.slider(key="ui.search.k").set_value(3)
    at.button[0].click().run()
    assert_clean(at)
    assert [t.label for t in at.tabs] == ["Keywords + ELMo token layer", "GloVe (static baseline)"]
    found = documents(at)
    assert len(found) == 6  # k documents in each tab, those under the line too
    assert [hit.split(".")[0] for hit in found] == ["**1", "**2", "**3"] * 2
    assert found[0] == "**1. Life by the river**"  # the words match; the tiny GloVe is not tested
    assert any(":orange-background[**otters**]" in m.value for m in at.markdown)  # matched words marked
    assert any(e.label.startswith("matched words") and "otters, river" in e.label for e in at.expander)
    bars = [p.value for p in at.get("progress")]
    assert len(bars) == 3 and bars == sorted(bars, reverse=True)  # one bar each, falling down the list
    assert all(0 <= value <= 100 for value in bars) and not at.tabs[0].warning
    # the tiny GloVe finds no good match: its list says so, without bars (the 3 bars are the hybrid's)
    assert [w.value.startswith("No good match") for w in at.tabs[1].warning] == [True]

    at.radio(key="ui.search.method").set_value("keywords").run()
    assert_clean(at)
    assert at.tabs[0].label == "Keywords (BM25)"
    assert dict(at.query_params) == {"q": "otters by the river", "method": "keywords", "k": "3", "layers": "token"}


def test_each_document_says_why_it_came_up(calibrated_index_dir: Path) -> None:
    """The relevance shown is the number the list is sorted by; the "why" under the matched words opens onto each
    part's score; the method's name says which layers it compares."""
    at = open_app(calibrated_index_dir)
    at.text_input(key="ui.search.query").set_value("a loan from the bank").run()
    assert_clean(at)
    why = next(e for e in at.expander if e.label.startswith("matched words"))
    table = next(m.value for m in why.markdown if m.value.startswith("| part |"))
    assert "ELMo cosine (token layer)" in table and "BM25 keywords" in table
    assert any(c.value.startswith("Relevance ") for c in why.caption)
    relevance = [int(re.search(r"(\d+)%", p.proto.text).group(1)) for p in at.get("progress")][:4]
    assert relevance == sorted(relevance, reverse=True)
    at.radio(key="ui.search.mix.preset").set_value("top").run()
    assert (
        at.tabs[0].label == "Keywords + ELMo top layer"
        and "ELMo top layer only" in at.radio(key="ui.search.method").options
    )


def test_a_misspelled_word_is_searched_as_the_index_spells_it(index_dir: Path) -> None:
    at = open_app(index_dir)
    at.text_input(key="ui.search.query").set_value("kingfishrs nest").run()
    assert_clean(at)
    assert any(text.startswith("searched for: kingfishers nest (kingfishrs → kingfishers") for text in notices(at))
    assert documents(at)[0] == "**1. Life by the river**"
    typed = open_url(index_dir, {"q": "kingfishrs nest", "typed": "1"})  # a shared link to the query as typed
    assert at.toggle(key="ui.search.as_typed").value is False and typed.toggle(key="ui.search.as_typed").value
    assert not any("searched for" in text for text in texts(typed.info))
    assert (
        at.button(key="search.as_typed.elmo").label.replace("\\", "") == "Search for kingfishrs nest as typed instead"
    )
    at.radio(key="ui.lang").set_value("ko").run()
    assert any(text.startswith("kingfishers nest(으)로 검색했습니다(kingfishrs → kingfishers") for text in notices(at))
    search_as_typed(at, "검색했습니다")
    assert documents(at)
    at.text_input(key="ui.search.query").set_value("kingfishrs by the rivr").run()  # the button was for one query
    assert at.toggle(key="ui.search.as_typed").value is False and "typed" not in at.query_params
    assert any("rivr → river" in text for text in notices(at))
    at.toggle(key="ui.search.as_typed").set_value(True).run()  # the user's own switch stays on
    at.text_input(key="ui.search.query").set_value("rivr").run()
    assert at.toggle(key="ui.search.as_typed").value and not any("rivr → river" in text for text in notices(at))


def test_a_shared_url_opens_its_search(index_dir: Path) -> None:
    at = open_url(index_dir, {"q": "a loan from the bank", "method": "elmo", "k": "2", "layers": "top"})
    assert_clean(at)
    assert at.text_input(key="ui.search.query").value == "a loan from the bank"
    assert at.radio(key="ui.search.method").value == "elmo" and at.slider(key="ui.search.k").value == 2
    assert at.radio(key="ui.search.mix.preset").value == "top" and len(documents(at)) == 4


def test_a_custom_layer_mix_and_gamma_survive_a_reload(index_dir: Path) -> None:
    at = open_app(index_dir)
    at.text_input(key="ui.search.query").set_value("river")
    at.slider(key="ui.search.mix.s1").set_value(0.5)
    at.slider(key="ui.search.mix.gamma").set_value(2.0).run()
    shared = dict(at.query_params)
    assert shared["layers"] == "0.67,0.33,0.00" and shared["gamma"] == "2.0"

    reloaded = open_url(index_dir, shared)
    assert_clean(reloaded)
    assert reloaded.radio(key="ui.search.mix.preset").value == "custom"
    assert [reloaded.slider(key=f"ui.search.mix.s{j}").value for j in range(3)] == [0.67, 0.33, 0.0]
    assert "= 2.00 \\times \\left(0.67\\,\\mathbf{h}_0 + 0.33" in reloaded.latex[0].value
    assert dict(reloaded.query_params) == shared


@pytest.mark.parametrize(
    "bad",
    [
        {"k": "abc"},
        {"k": "0"},
        {"k": "51"},
        {"k": "-3"},
        {"k": "9" * 5000},  # more digits than Python reads
        {"method": "glove"},  # its own tab, not a method of the first
        {"method": "<script>"},
        {"layers": "0.5,0.5"},  # three layers
        {"layers": "0,0,0"},
        {"layers": "nan,1,1"},
        {"layers": "2,0,0"},
        {"layers": "top,top"},
        {"gamma": "1e9"},
        {"q": "x" * 10_001},
        {"q": "   "},
        {"q": ["river", "money"], "k": ["3", "4"]},  # a name given twice: neither value
    ],
)
def test_bad_url_values_fall_back_to_the_defaults(index_dir: Path, bad: dict[str, str | list[str]]) -> None:
    at = open_url(index_dir, {"q": "river", **bad})
    assert_clean(at)
    assert at.slider(key="ui.search.k").value == 10 and at.radio(key="ui.search.method").value == "hybrid"
    assert at.radio(key="ui.search.mix.preset").value == "token" and at.slider(key="ui.search.mix.gamma").value == 1
    assert at.text_input(key="ui.search.query").value == ("river" if "q" not in bad else "")


def test_a_cleared_query_leaves_the_url(index_dir: Path) -> None:
    at = open_url(index_dir, {"q": "river", "k": "3"})
    assert at.query_params["q"] == "river"
    at.text_input(key="ui.search.query").set_value("").run()
    assert_clean(at)
    assert "q" not in at.query_params and at.query_params["k"] == "3"


def test_examples_are_those_the_open_index_can_answer(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's examples show only where the open index has their words: none on this small index; with
    examples of its own words, those (and not the others) are offered and fill the page."""
    at = open_app(index_dir)
    assert not at.button_group  # "animals that live by the river": 2 of its 3 words are here, so it stays
    assert at.text_input(key="ui.search.query").placeholder == "e.g. animals that live by the river"
    at.switch_page("views/senses.py").run()
    assert at.text_input(key="ui.senses.word").value == "bank"
    assert at.button_group[0].options == ["bank", "play"]  # the demo's words with two uses or more here

    from demo import examples

    pairs = {
        "bank": (("A den in the bank.", "bank"), ("A loan from the bank.", "bank")),
        "volcano": (("The volcano erupted.", "volcano"), ("A volcano of anger.", "volcano")),
    }
    mine = examples.Examples(pairs, ("otters by the river", "volcanoes and lava"), ("bank",), "money in the bank")
    monkeypatch.setitem(examples.BY_LANGUAGE, "en", mine)
    at = open_app(index_dir, "views/word_in_context.py")
    assert [b.label for b in at.button] == ["bank"]  # no "volcano" in this index
    at.switch_page("views/search.py").run()
    assert at.button_group[0].options == ["otters by the river"]
    assert at.text_input(key="ui.search.query").placeholder == "e.g. money in the bank"
    at.button_group[0].set_value("otters by the river").run()
    assert at.text_input(key="ui.search.query").value == "otters by the river" and documents(at)


def test_nonsense_gets_a_no_good_match_warning_and_the_nearest_documents(calibrated_index_dir: Path) -> None:
    """Nothing above the relevance line: the warning, and the nearest documents as a plain ranked list (no bars of
    0 %, no weaker-matches line), each saying why it came up."""
    at = open_app(calibrated_index_dir)
    at.text_input(key="ui.search.query").set_value("qwxzt blorft").run()
    assert_clean(at)
    assert any(text.startswith("No good match") for text in texts(at.warning))
    assert any("has a GloVe vector" in text for text in texts(at.caption))  # the GloVe lacks the words: it says so
    # they share no word with the query: each says it was found by meaning (the only way it could be)
    assert len(documents(at)) == 10 and sum("found by meaning" in e.label for e in at.expander) == 10
    assert [hit.split(".")[0] for hit in documents(at)] == [f"**{rank}" for rank in range(1, 11)]
    assert not at.get("progress") and not [c for c in at.caption if "Weaker matches below" in c.value]
    why = [c.value for e in at.expander if "found by meaning" in e.label for c in e.caption]
    assert len(why) == 10 and all(text.startswith("The list is ranked by score") for text in why)


def test_a_small_collection_ranks_without_relevance(index_dir: Path) -> None:
    """Under 50 documents chance cannot be told: a note says so, and the documents are a ranked list with their
    matched words, without bars, line or "no good match" verdict."""
    at = open_app(index_dir)
    at.text_input(key="ui.search.query").set_value("a loan from the bank").run()
    assert_clean(at)
    assert any(c.value.endswith("at least 50 give relevance)") for c in at.caption)
    assert documents(at)[0] == "**1. Saving money**" and not at.get("progress") and not texts(at.warning)
    assert not [c for c in at.caption if "Weaker matches below" in c.value]
    why = next(e for e in at.expander if e.label.startswith("matched words"))
    assert "loan, bank" in why.label and "| – |" in next(m.value for m in why.markdown if m.value.startswith("| part"))


def test_layer_mix_presets_and_sliders_update_the_formula(index_dir: Path) -> None:
    at = open_app(index_dir)
    assert "1.00\\,\\mathbf{h}_0 + 0.00\\,\\mathbf{h}_1 + 0.00\\,\\mathbf{h}_2" in at.latex[0].value  # search mix

    at.radio(key="ui.search.mix.preset").set_value("top").run()
    assert [at.slider(key=f"ui.search.mix.s{j}").value for j in range(3)] == [0.0, 0.0, 1.0]
    assert "0.00\\,\\mathbf{h}_0 + 0.00\\,\\mathbf{h}_1 + 1.00\\,\\mathbf{h}_2" in at.latex[0].value

    at.slider(key="ui.search.mix.s0").set_value(0.5).run()  # weights are normalised: 0.5 and 1 -> 1/3 and 2/3
    assert at.radio(key="ui.search.mix.preset").value == "custom"
    assert "0.33\\,\\mathbf{h}_0 + 0.00\\,\\mathbf{h}_1 + 0.67\\,\\mathbf{h}_2" in at.latex[0].value

    at.slider(key="ui.search.mix.gamma").set_value(2.0).run()
    assert "= 2.00 \\times" in at.latex[0].value
    assert_clean(at)


def test_a_mix_of_zero_weights_is_refused_in_the_page(index_dir: Path) -> None:
    at = open_app(index_dir)
    at.text_input(key="ui.search.query").set_value("river")
    for j in range(3):
        at.slider(key=f"ui.search.mix.s{j}").set_value(0.0)
    at.run()
    assert_clean(at)
    assert any("at least one layer" in text for text in texts(at.warning))
    assert not at.latex and not documents(at)


def test_search_settings_survive_a_visit_to_another_page(index_dir: Path) -> None:
    at = open_app(index_dir)
    at.text_input(key="ui.search.query").set_value("the river bank")
    at.radio(key="ui.search.mix.preset").set_value("average").run()
    at.switch_page("views/about.py").run()
    at.switch_page("views/search.py").run()
    assert at.text_input(key="ui.search.query").value == "the river bank"
    assert at.radio(key="ui.search.mix.preset").value == "average"
    assert len(documents(at)) == 8  # all 4 documents, in each tab


def test_document_markup_shows_as_text(hostile_index_dir: Path) -> None:
    """Titles and passages written as markup (HTML, a javascript: link, LaTeX, an emoji shortcode) are shown as the
    text they are; a document without a title is named by its id."""
    from pages import HOSTILE_TITLE

    from app.i18n import escape

    at = open_url(hostile_index_dir, {"q": "river bank"})
    assert_clean(at)
    found = documents(at)
    assert any(title.endswith(f". {escape(HOSTILE_TITLE)}**") for title in found)
    assert any(title.endswith(". \\<x\\>**") for title in found)
    passages = texts(at.markdown)
    assert any("\\[here\\]\\(javascript\\:alert\\(1\\)\\)" in passage for passage in passages)
    assert any("\\<b\\>:orange-background[**bank**]\\</b\\>" in passage for passage in passages)
