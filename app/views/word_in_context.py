"""Word in context page: the nearest uses of one word of a sentence, by ELMo layer, beside GloVe's nearest words."""

from __future__ import annotations

import streamlit as st

from app import state
from app.examples import Pairs, examples_for
from app.i18n import example_name, indexer_text, t
from app.render import errors_in_page, escape, notices, token_hits
from app.widgets import choose_word, layer_selector, token_picker

SIDES = ("a", "b")


def load_example(pairs: Pairs) -> None:
    """Fill both sentences and their words, and turn the comparison and "Same word only" on."""
    for side, (sentence, word) in zip(SIDES, pairs):
        st.session_state[f"ui.wic.sentence_{side}"] = sentence
        choose_word(f"ui.wic.word_{side}", word)
    st.session_state["ui.wic.compare"] = True
    st.session_state["ui.wic.same_word"] = True


index = state.current_index()
language = index.elmo.text.language
examples = examples_for(language).word_in_context
st.title(t("wic.title"))
st.caption(t("wic.caption"))

if st.session_state.get("wic.examples") != language:  # a new session, or an index of another language
    st.session_state["wic.examples"] = language
    load_example(next(iter(examples.values())))
columns = st.columns(len(examples) + 1)
columns[0].markdown(t("wic.examples"))
for column, (name, pairs) in zip(columns[1:], examples.items()):
    column.button(example_name(name), key=f"wic.example.{name}", on_click=load_example, args=(pairs,), width="stretch")

compare = st.toggle(t("wic.compare"), key="ui.wic.compare")
queries = []
for side in SIDES[: 2 if compare else 1]:
    sentence = st.text_input(t("wic.sentence", side=side.upper()), key=f"ui.wic.sentence_{side}")
    if not sentence.strip():
        st.info(t("wic.type_sentence"))
        continue
    chosen = token_picker(t("wic.word_of", side=side.upper()), sentence, f"ui.wic.word_{side}", index.elmo.text)
    if chosen is not None:
        queries.append((side, sentence, *chosen))

settings = st.columns([3, 1, 1], vertical_alignment="bottom")
with settings[0]:
    mix = layer_selector("ui.wic.layer", index.elmo.n_layers)
st.session_state.setdefault("ui.wic.k", 8)
k = settings[1].slider(t("wic.neighbours"), 1, 30, key="ui.wic.k")
st.session_state.setdefault("ui.wic.same_word", True)
same_word = settings[2].toggle(t("wic.same_word"), key="ui.wic.same_word", help=t("wic.same_word_help"))
if not queries:
    st.stop()

columns = st.columns(len(queries) + 1, gap="large")
glove_words: dict[str, tuple[list[tuple[str, float]], str | None]] = {}
for column, (side, sentence, word, position) in zip(columns, queries):
    with column, errors_in_page():
        st.subheader(t("wic.elmo_heading", word=word, side=side.upper()))
        result = state.neighbors(index, sentence, word, position, k, same_word, mix)
        notices(result.notices)
        token_hits(result.hits)
        glove_words.setdefault(word.lower(), (result.glove, result.glove_note))
with columns[-1]:
    st.subheader(t("wic.glove_heading"))
    st.caption(t("wic.glove_caption"))
    word_column, similarity_column = t("wic.column_word"), t("wic.column_similarity")
    for word, (nearest, note) in glove_words.items():
        st.markdown(f"**{escape(word)}**")
        if note:
            st.info(indexer_text(note))
        st.dataframe(
            {word_column: [w for w, _ in nearest], similarity_column: [s for _, s in nearest]},
            hide_index=True,
            width="stretch",
            column_config={similarity_column: st.column_config.NumberColumn(format="%.3f")},
        )
