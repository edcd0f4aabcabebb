"""Word in context page: the nearest uses of one word of a sentence, by ELMo layer, beside GloVe's nearest words."""

from __future__ import annotations

import streamlit as st

from app import state
from app.examples import EXAMPLES
from app.render import errors_in_page, escape, notices, token_hits
from app.widgets import choose_word, layer_selector, token_picker

SIDES = ("a", "b")


def load_example(name: str) -> None:
    """Fill both sentences and their words, and turn the comparison and "Same word only" on."""
    for side, (sentence, word) in zip(SIDES, EXAMPLES[name]):
        st.session_state[f"ui.wic.sentence_{side}"] = sentence
        choose_word(f"ui.wic.word_{side}", word)
    st.session_state["ui.wic.compare"] = True
    st.session_state["ui.wic.same_word"] = True


index = state.current_index()
st.title("Word in context")
st.caption(
    "ELMo gives a word a different vector in every sentence. Pick a word and see the uses in the "
    "collection whose vectors are closest, and GloVe's nearest words, which are the same in any sentence."
)

if "ui.wic.sentence_a" not in st.session_state:
    load_example(next(iter(EXAMPLES)))
examples = st.columns(len(EXAMPLES) + 1)
examples[0].markdown("**Examples:**")
for column, name in zip(examples[1:], EXAMPLES):
    column.button(name, on_click=load_example, args=(name,), width="stretch")

compare = st.toggle("Compare with a second sentence", key="ui.wic.compare")
queries = []
for side in SIDES[: 2 if compare else 1]:
    sentence = st.text_input(f"Sentence {side.upper()}", key=f"ui.wic.sentence_{side}")
    if not sentence.strip():
        st.info("Type a sentence.")
        continue
    chosen = token_picker(f"Word of sentence {side.upper()}", sentence, f"ui.wic.word_{side}", index.elmo.text)
    if chosen is not None:
        queries.append((side, sentence, *chosen))

settings = st.columns([3, 1, 1], vertical_alignment="bottom")
with settings[0]:
    mix = layer_selector("ui.wic.layer", index.elmo.n_layers)
st.session_state.setdefault("ui.wic.k", 8)
k = settings[1].slider("Neighbours", 1, 30, key="ui.wic.k")
st.session_state.setdefault("ui.wic.same_word", True)
same_word = settings[2].toggle(
    "Same word only",
    key="ui.wic.same_word",
    help="Only uses of the same word: shows which of its senses each sentence gets. Off: the nearest uses of any word.",
)
if not queries:
    st.stop()

columns = st.columns(len(queries) + 1, gap="large")
glove_words: dict[str, tuple[list[tuple[str, float]], str | None]] = {}
for column, (side, sentence, word, position) in zip(columns, queries):
    with column, errors_in_page():
        st.subheader(f"ELMo · “{word}” in {side.upper()}")
        result = state.neighbors(index, sentence, word, position, k, same_word, mix)
        notices(result.notices)
        token_hits(result.hits)
        glove_words.setdefault(word.lower(), (result.glove, result.glove_note))
with columns[-1]:
    st.subheader("GloVe · nearest words")
    st.caption("One vector per word, whatever the sentence.")
    for word, (nearest, note) in glove_words.items():
        st.markdown(f"**{escape(word)}**")
        if note:
            st.info(note)
        st.dataframe(
            {"word": [w for w, _ in nearest], "similarity": [s for _, s in nearest]},
            hide_index=True,
            width="stretch",
            column_config={"similarity": st.column_config.NumberColumn(format="%.3f")},
        )
