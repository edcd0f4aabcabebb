"""The app's building blocks without a page: URL parsing, the model card as shown, typed words, colour contrast,
the hand labels of the demo corpora (checked against the documents themselves), purity, clusters' outlines and the
LM's classes said in words."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from bad_input import ACTING
from pages import blend, contrast
from scipy.spatial import Delaunay

from app import url
from app.i18n import escape
from app.model_card import card_file, card_parts
from app.render import outline
from app.settings import CHART_COLOURS, PRIMARY_COLOR, TEXT_COLOR
from app.widgets import typed_word
from demo.corpora import DEMOS, demo_corpus
from demo.labels import COLUMNS, LABELS_FILE, UseLabel, agreement, purity, read_labels
from encoder import LayerMix
from encoder.model_files import resolve_model
from encoder.text import text_rules


# ------------------------------------------------------------------------------------------ URL values
def test_url_values_are_parsed_strictly() -> None:
    assert (
        url.whole(1, 50)("7") == 7 and [url.whole(1, 50)(v) for v in ("0", "51", "-1", "7.0", " 7", "٣")] == [None] * 6
    )
    assert url.choice(["auto", 2, 3])("2") == 2 and url.choice(["auto", 2, 3])("auto") == "auto"
    assert url.choice(["auto", 2, 3])("4") is None
    assert (url.switch("1"), url.switch("0"), url.switch("true")) == (True, False, None)
    assert url.text("a query") == "a query" and url.text(" ") is None and url.text("x" * 10_001) is None
    mix = url.layer_mix(3)
    assert mix("top") == LayerMix.parse("top", 3)
    assert mix("1,0,1").weights == (0.5, 0.0, 0.5)
    for bad in ("0,0,0", "1,1", "1,1,1,1", "nan,1,1", "inf,0,0", "-1,1,1", "1.5,0,0", "a,b,c", "", "top,"):
        assert mix(bad) is None, bad
    custom = LayerMix((0.25, 0.25, 0.5))
    assert url.show_mix("custom", custom) == "0.25,0.25,0.50" and mix(url.show_mix("custom", custom)) == custom
    assert url.show_mix("average", LayerMix.parse("average", 3)) == "average"


# ------------------------------------------------------------------------------------------ the model card
def test_the_card_is_shown_without_comments_or_machine_folders(tmp_path: Path) -> None:
    (tmp_path / "curve.png").write_bytes(b"png")
    card = (
        "# Model\n\nTrained on `../shared/data/corpus-en` (see `../shared/models/big`).\n"
        "<!-- training figures: written by `encoder ship` -->\n| a | b |\n<!-- end -->\n"
        "![learning curve](curve.png)\n\n## Training\n```bash\n# train it\npython -m encoder train --corpus /tmp/corpus "
        "--out /tmp/run/x\n```\n"
        "![gone](missing.png)\n![outside](../secret.png)\nKeep data/models/default and https://example.org/tmp/x.\n"
        "Examples: 5 → <!--figure wic.met-->9 of 10<!--/figure--> with 5 or more.\n"
    )
    parts = card_parts(card, tmp_path)
    assert parts[1] == tmp_path / "curve.png" and sum(isinstance(p, Path) for p in parts) == 1
    text = "".join(p for p in parts if isinstance(p, str))
    assert "<!--" not in text and "-->" not in text and "| a | b |" in text
    assert "`corpus-en`" in text and "`big`" in text and "--corpus corpus --out run/x" in text
    assert "data/models/default" in text and "https://example.org/tmp/x" in text  # not a machine's folder
    assert "missing.png" not in text and "secret" not in text
    assert text.startswith("### Model\n") and "\n#### Training\n" in text  # under the page's own headings
    assert "\n# train it\n" in text  # a code block's comment is no heading
    assert "Examples: 5 → 9 of 10 with 5 or more." in text  # a figure's marks go, the words around them stay apart


@pytest.mark.parametrize("model", ["default", "ko"])
def test_the_shipped_cards_show_no_comment_or_development_path(model: str) -> None:
    try:
        folder = resolve_model(model).folder
    except FileNotFoundError:
        pytest.skip(f"the {model!r} model is not installed")
    for language in ("en", "ko"):
        card = card_file(folder, language)
        parts = card_parts(card.read_text(encoding="utf-8"), folder)
        text = "".join(p for p in parts if isinstance(p, str))
        assert not any(marker in text for marker in ("<!--", "../shared", "/tmp/", "/work/")), (card, language)
        assert [p.name for p in parts if isinstance(p, Path)] == ["learning_curve.png"]
    assert card_file(folder, "en").name == "README.md"
    assert card_file(folder, "ko").name == ("README.ko.md" if model == "ko" else "README.md")


def test_the_korean_card_is_korean_and_keeps_the_figures_of_the_english_one() -> None:
    """The translation says the same: every number of the card appears in it."""
    folder = Path(__file__).resolve().parents[2] / "data" / "models" / "ko"
    english, korean = (folder / "README.md").read_text("utf-8"), (folder / "README.ko.md").read_text("utf-8")
    hangul = sum("\uac00" <= ch <= "\ud7a3" for ch in korean)
    letters = sum(ch.isalpha() for ch in korean)
    assert hangul > 0.5 * letters
    import re

    numbers = lambda text: set(re.findall(r"\d[\d,.]*\d|\d", text))  # noqa: E731
    assert numbers(english) <= numbers(korean), sorted(numbers(english) - numbers(korean))


# ------------------------------------------------------------------------------------------ typed words
def test_a_typed_korean_form_finds_the_token_the_index_knows() -> None:
    pytest.importorskip("kiwipiepy")
    korean = text_rules("ko")
    indexed = {"배", "강가"}.__contains__
    assert typed_word("배를", korean, indexed) == ("배", [])
    assert typed_word(" 배 ", korean, indexed) == ("배", [])
    assert typed_word("강가의 배", korean, indexed) == (None, ["강가", "배"])
    assert typed_word("기차를", korean, indexed) == ("기차", [])  # one word the index lacks: the index says so


def test_a_typed_english_word_is_itself_when_the_index_has_it() -> None:
    english = text_rules("en")
    indexed = {"bank"}.__contains__
    assert typed_word("bank", english, indexed) == ("bank", [])
    assert typed_word("bank.", english, indexed) == ("bank", [])
    assert typed_word("the", english, indexed) == ("the", [])  # a stopword: the index explains
    assert typed_word("river bank", english, indexed) == (None, ["river", "bank"])


# ------------------------------------------------------------------------------------------ contrast
def test_contrast_is_computed_as_wcag_does() -> None:
    assert contrast("#000000") == pytest.approx(21) and contrast("#ffffff") == pytest.approx(1)
    assert contrast("#767676") == pytest.approx(4.54, abs=0.01)  # the lightest grey that passes AA on white
    assert contrast("#F0E442") < 1.5  # a yellow too pale for a map on white


def test_chart_colours_text_and_captions_meet_aa_on_white() -> None:
    """Every series colour, the primary colour, and captions (the text colour at Streamlit's 60 % caption opacity)
    read at WCAG AA's 4.5:1; the browser tests check the caption as the page paints it."""
    assert len(CHART_COLOURS) == 8 and len(set(CHART_COLOURS)) == 8
    assert min(contrast(c) for c in CHART_COLOURS) >= 4.5, {c: round(contrast(c), 2) for c in CHART_COLOURS}
    assert contrast(PRIMARY_COLOR) >= 4.5 and contrast(blend(TEXT_COLOR, 0.6)) >= 4.5
    assert contrast(blend("#31333F", 0.6)) < 4.5  # Streamlit's own text colour would not do


# ------------------------------------------------------------------------------------------ hand labels
def demo_uses(demo: str, words: set[str]) -> dict[tuple[str, int], tuple[str, str]]:
    """Every use of ``words`` in a demo corpus, as the demo's model tokenizes it: (sentence, position) ->
    (document, word)."""
    rules = text_rules(resolve_model(DEMOS[demo].model).text().name)
    uses = {}
    for path in demo_corpus(demo):
        for line in path.read_text(encoding="utf-8").splitlines():
            document = json.loads(line)
            for sentence in rules.split_and_tokenize(document["text"]):
                for position, token in enumerate(sentence.tokens):
                    if token.lower() in words:
                        uses[(sentence.text, position)] = (document["id"], token.lower())
    return uses


@pytest.mark.parametrize("demo", ["en", "ko"])
def test_the_hand_labels_cover_every_use_of_the_example_words(demo: str) -> None:
    """labels.tsv names each use of the word-in-context examples' words in the demo (every one, none twice, at
    the right document and token) and each example sentence's use; senses and parts of speech are few."""
    from demo.examples import BY_LANGUAGE

    if demo == "ko":
        pytest.importorskip("kiwipiepy")
    path = DEMOS[demo].corpus_dir / LABELS_FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == COLUMNS and len(lines) - 1 == len(read_labels(path))  # no use twice
    labels = read_labels(path)
    examples = BY_LANGUAGE[resolve_model(DEMOS[demo].model).text().language].word_in_context
    words = {word for pairs in examples.values() for _, word in pairs}
    uses = demo_uses(demo, words)
    rows = [line.split("\t") for line in lines[1:]]
    in_corpus = {(sentence, int(position)) for doc, position, _, _, _, sentence in rows if doc != "example"}
    assert in_corpus == set(uses)
    for doc, position, word, sense, pos, sentence in rows:
        if doc == "example":
            assert any((sentence, word) in pairs for pairs in examples.values()), sentence
        else:
            assert uses[(sentence, int(position))] == (doc, word)
        assert sense and pos and sense == sense.strip()
    for pairs in examples.values():  # the two sentences of an example are two senses of the word
        rules = text_rules(resolve_model(DEMOS[demo].model).text().name)
        first, second = (labels[(s, rules.tokenize(s).index(w))] for s, w in pairs)
        assert first.sense != second.sense
    senses = {(word, sense) for _, _, word, sense, _, _ in rows}
    assert len(senses) <= 6 * len(words)


def test_agreement_counts_only_labelled_neighbours_of_the_same_word() -> None:
    query = UseLabel("play", "game", "VERB")
    found = [UseLabel("play", "game", "VERB"), None, UseLabel("play", "drama", "NOUN"), UseLabel("bat", "game", "VERB")]
    counts = agreement(query, found)
    assert (counts.same_sense, counts.same_pos, counts.labelled) == (1, 2, 3)
    assert math.isclose(agreement(query, []).labelled, 0)


def test_purity_is_the_share_of_labelled_uses_in_their_clusters_majority_sense() -> None:
    river, money = UseLabel("bank", "river", "NOUN"), UseLabel("bank", "money", "NOUN")
    # cluster 0: 3 river + 1 money; cluster 1: 2 money + 1 unlabelled; cluster 2: unlabelled only
    clusters = [0, 0, 0, 0, 1, 1, 1, 2]
    labels = [river, river, river, money, money, money, None, None]
    assert math.isclose(purity(clusters, labels), (3 + 2) / 6)
    assert purity([0, 1], [river, money]) == 1.0 and purity([0, 0], [river, money]) == 0.5
    assert purity([0, 1], [None, None]) is None


def test_a_clusters_outline_holds_its_points_and_is_closed() -> None:
    rng = np.random.default_rng(0)
    points = rng.normal(size=(30, 2))
    corners = outline(points)
    assert (corners[0] == corners[-1]).all() and len(corners) >= 4
    hull = Delaunay(corners[:-1])
    assert (hull.find_simplex(points, tol=1e-9) >= 0).all()  # every point inside or on the outline
    assert set(map(tuple, corners[:-1])) <= set(map(tuple, points))  # its corners are points of the cluster
    assert len(outline(points[:2])) == 2 and len(outline(points[:1])) == 1  # too few for a polygon: the points
    line = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])  # on one line: no error
    assert outline(line).shape[1] == 2


def test_the_lms_own_classes_are_said_in_words_in_each_language() -> None:
    from streamlit.testing.v1 import AppTest

    def words() -> None:
        import streamlit as st

        from app.render import expected_word

        st.session_state["ui.lang"] = st.session_state.get("want", "en")
        st.write(" | ".join(expected_word(w) for w in ("<UNK>", "<S>", "</S>", "river")))

    at = AppTest.from_function(words).run()
    assert at.markdown[0].value == "(a rare word) | (the sentence's start) | (the sentence's end) | river"
    at.session_state["want"] = "ko"
    assert at.run().markdown[0].value == "(드문 단어) | (문장의 시작) | (문장의 끝) | river"


def test_text_shown_on_a_page_is_itself() -> None:
    """``escape``: markdown, HTML entities and the characters that act instead of being read (a right-to-left
    override reorders what follows it on the page, C1 and C0 controls show nothing) come out as typed."""
    hostile = "invoice\u202efdp.exe &lt;b&gt; [x](http://evil.example/) \x1b[31m\x9b\nnext\tline"
    shown = escape(hostile)
    assert shown == (
        "invoice\\\\u202efdp\\.exe \\&lt;b\\&gt; \\[x\\]\\(http\\://evil\\.example/\\) \\\\x1b\\[31m\\\\x9b\nnext\tline"
    )
    assert not ACTING.search(shown)


def test_a_blank_line_in_text_does_not_end_its_bold() -> None:
    """A title or passage holding blank lines or carriage returns stays one paragraph: bold around it stays bold
    (a blank line had ended the paragraph, leaving "**" shown on the page)."""
    from markdown_it import MarkdownIt

    assert escape("a title\n\n\r\n  with\rbreaks \n") == "a title\nwith\nbreaks\n"
    from types import SimpleNamespace

    from app.render import document_name

    for title in ("a title\n\nwith a blank line", "River bank\r\n\r\n", "\n River bank "):
        name = document_name(SimpleNamespace(title=title, doc_id="d1"))
        html = MarkdownIt().render(f"**1. {name}**")
        assert html.count("<p>") == 1 and html.count("<strong>") == 1 and "**" not in html, html
    assert document_name(SimpleNamespace(title=" \n", doc_id="d1")) == "d1"


def test_a_tables_cells_show_as_the_text_they_are() -> None:
    """``st.table`` renders each cell as markdown: the words the model expects ("#" a heading, "*" and "-" a list,
    ">" a quote) and a name written as markup show as themselves (the markdown each cell holds renders to its text
    alone), and read back as they are."""
    from markdown_it import MarkdownIt
    from pages import HOSTILE_TITLE, as_read
    from streamlit.testing.v1 import AppTest

    def table() -> None:
        from pages import HOSTILE_TITLE

        from app.render import expectations
        from encoder.readout import Expectation

        words = [("#", 0.5), ("*", 0.25), ("-", 0.125), (">", 0.0625), (HOSTILE_TITLE, 0.03125)]
        expectations([Expectation("forward", words), Expectation("backward", words[::-1])])

    hostile = ["#", "*", "-", ">", HOSTILE_TITLE]
    at = AppTest.from_function(table).run()
    cells = at.table[0].value
    forward, backward = (list(cells[column]) for column in cells.columns)
    expected = [f"{word} · {p:.3f}" for word, p in zip(hostile, [0.5, 0.25, 0.125, 0.0625, 0.03125])]
    assert [as_read(cell) for cell in forward] == expected and [as_read(cell) for cell in backward] == expected[::-1]
    quoted = lambda text: text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")  # noqa: E731
    for cell, text in zip(forward, expected):
        assert MarkdownIt("commonmark").render(cell) == f"<p>{quoted(text)}</p>\n"


def test_a_maps_tooltips_show_a_sentence_and_a_name_as_text() -> None:
    """A point's tooltip (Vega-Lite escapes its HTML) shows the use's sentence and its cluster's name with their
    direction marks written out, as every page shows document text: a right-to-left override reordered the rest."""
    from app.render import cluster_map
    from indexer.results import SenseCluster, SensePoint, Senses

    hostile = "The \u202eknab\u202c <b>bank</b> [x](javascript:alert(1))."
    points = [SensePoint(0.0, 0.0, 0, hostile), SensePoint(1.0, 1.0, 0, "A bank."), SensePoint(0.0, 1.0, 0, "Banks.")]
    data = cluster_map(Senses("bank", [SenseCluster("\u202eriver", 3, [])], points), None).data
    assert list(data["sentence"]) == [
        "The \\u202eknab\\u202c <b>bank</b> [x](javascript:alert(1)).",
        "A bank.",
        "Banks.",
    ]
    assert set(data["named by"]) == {"\\u202eriver"}
