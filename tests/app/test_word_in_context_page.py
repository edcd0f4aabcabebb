"""The Word in context page, driven by ``streamlit.testing`` on a small index built from a tiny random
model: the nearest uses, what the model expects, layer by layer, the yardstick."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pages import (
    assert_clean,
    expectation_tables,
    labels_in_the_index,
    layer_tables,
    open_app,
    open_url,
    results,
    tables,
    texts,
)

from app.i18n import escape


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


@pytest.mark.parametrize(
    "value",
    [{"layer": "9"}, {"layer": "-1"}, {"layer": "9" * 5000}, {"rep": "elmo"}, {"rep": "3"}, {"k": "9" * 5000}],
)
def test_bad_word_in_context_url_values_fall_back(index_dir: Path, value: dict[str, str]) -> None:
    bad = {"a": "The bank was muddy.", "wa": "<b>otter</b>", "k": "0", "compare": "yes", "same": "2", **value}
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
    table = next(table for table in tables(at.get_by_key("wide-wic")) if "cosine" in table.columns)
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
    table = next(table for table in tables(at.get_by_key("wide-wic")) if "cosine" in table.columns)
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
    compared = next(table for table in tables(at.get_by_key("wide-wic")) if "cosine" in table.columns)
    assert "typical, same sense" not in compared.columns


def test_document_markup_shows_as_text_and_a_document_without_title_by_its_id(hostile_index_dir: Path) -> None:
    """The picker's labels are markdown: a word's underscores stay underscores (not italics); a neighbour from a
    document without a title is named by its id, as the Search page and the CLI name it (not an empty "**")."""
    from pages import HOSTILE_TITLE

    sentence = "The x_y_z and snake_case_word go."
    at = open_url(
        hostile_index_dir, {"a": sentence, "wa": "snake_case_word", "compare": "0"}, "views/word_in_context.py"
    )
    assert_clean(at)
    assert at.button_group[0].options == ["x\\_y\\_z", "snake\\_case\\_word", "go"]
    assert [line.split("  \n")[0].split(" · ")[1] for line in results(at)] == ["*\\<x\\>*"]
    at.text_input(key="ui.wic.sentence_a").set_value("The bank of the river").run()
    at.button_group[0].set_value(1).run()  # bank
    assert any(f"· *{escape(HOSTILE_TITLE)}*  \n" in line for line in results(at))


def test_glove_neighbours_show_their_direction_marks_written_out(index_dir: Path, monkeypatch) -> None:
    """GloVe's nearest words are shown as text in a data frame: a word holding a right-to-left override shows it
    written out (``visible_on_page``), as every page shows text from documents, where it reordered the cell."""
    from app import state

    monkeypatch.setattr(state, "glove_nearest", lambda index, word, k: [("\u202eknab", 0.9), ("river", 0.8)])
    at = open_app(index_dir, "views/word_in_context.py")
    assert_clean(at)
    glove = next(table.value for table in at.get_by_key("wide-wic").dataframe if "similarity" in table.value.columns)
    assert list(glove["word"]) == ["\\u202eknab", "river"]
