"""Word in context page: the nearest uses of one word of a sentence, by ELMo layer, beside GloVe's nearest words;
then the same word's neighbours at every layer, with how many share its part of speech and its sense where the demo
labels them (Peters et al. 2018, §5.3). Side by side on a wide screen, as tabs on a phone; sentences, words and
settings live in the URL."""

from __future__ import annotations

import streamlit as st

from app import model_choice, state, url
from app.examples import Pairs
from app.i18n import example_name, indexer_text, t
from app.labels import UseLabel, agreement, demo_labels
from app.render import errors_in_page, escape, notices, token_hits
from app.widgets import by_width, choose_word, layer_name, layer_selector, token_picker
from encoder import LayerMix
from indexer.results import Neighbors

SIDES = ("a", "b")


def load_example(pairs: Pairs) -> None:
    """Fill both sentences and their words, and turn the comparison and "Same word only" on."""
    for side, (sentence, word) in zip(SIDES, pairs):
        st.session_state[f"ui.wic.sentence_{side}"] = sentence
        choose_word(f"ui.wic.word_{side}", word)
    st.session_state["ui.wic.compare"] = True
    st.session_state["ui.wic.same_word"] = True


def url_params(n_layers: int) -> list[url.Param]:
    return [
        *(url.widget(side, f"ui.wic.sentence_{side}", url.text) for side in SIDES),
        *(url.widget(f"w{side}", f"ui.wic.word_{side}", url.text) for side in SIDES),
        url.widget("compare", "ui.wic.compare", url.switch),
        url.widget("layer", "ui.wic.layer", url.choice([*range(n_layers), "average"])),
        url.widget("k", "ui.wic.k", url.whole(1, 30)),
        url.widget("same", "ui.wic.same_word", url.switch),
    ]


def labels_of(result: Neighbors) -> list[UseLabel | None]:
    """The demo's label of each neighbour (None where it has none)."""
    labels = demo_labels()
    return [labels.get((hit.sentence, hit.token_index)) for hit in result.hits]


def neighbour_list(side: str, sentence: str, word: str, position: int) -> None:
    """The nearest uses of one chosen word at the page's layer, each with the demo's label where it has one."""
    with errors_in_page():
        result = state.neighbors(index, sentence, word, position, k, same_word, mix)
        notices(result.notices)
        token_hits(result.hits, labels_of(result))
        glove_words.setdefault(word.lower(), (result.glove, result.glove_note))


def glove_lists() -> None:
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


def each_layer() -> list[tuple[str, LayerMix]]:
    """Every layer alone, then the index's own mix (the one the page starts with)."""
    n_layers = index.elmo.n_layers
    alone = [
        (layer_name(j, n_layers), LayerMix.parse([float(i == j) for i in range(n_layers)], n_layers))
        for j in range(n_layers)
    ]
    return [*alone, (t("wic.layer_mix"), index.layer_mix)]


def layer_by_layer(side: str, sentence: str, word: str, position: int) -> None:
    """The same word's nearest uses at each layer: how many share its part of speech and its sense, and their
    senses in rank order. Only for a use the demo labels (an example sentence as it is)."""
    query = demo_labels().get((sentence, position))
    if query is None or query.word != word.lower():
        st.caption(t("wic.layers_unlabelled", side=side.upper(), word=escape(word)))
        return
    st.markdown(t("wic.layers_of", side=side.upper(), word=escape(word), sense=escape(query.sense), pos=query.pos))
    rows = []
    with errors_in_page():
        for name, layer_mix in each_layer():
            found = labels_of(state.neighbors(index, sentence, word, position, k, True, layer_mix))
            counts = agreement(query, found)
            rows.append(
                {
                    t("wic.column_layer"): name,
                    t("wic.column_same_pos"): f"{counts.same_pos} / {counts.labelled}",
                    t("wic.column_same_sense"): f"{counts.same_sense} / {counts.labelled}",
                    t("wic.column_senses"): " · ".join(label.sense if label else "?" for label in found),
                }
            )
        st.dataframe(rows, hide_index=True, width="stretch")


def layers_section() -> None:
    st.caption(t("wic.layers_caption", k=k, mix=index.layer_mix.describe()))
    for query in queries:
        layer_by_layer(*query)


index = state.current_index()
examples = state.examples(index).word_in_context
st.title(t("wic.title"))
st.caption(t("wic.caption"))

if st.session_state.get("wic.examples") != str(index.path):  # a new session, or another index
    st.session_state["wic.examples"] = str(index.path)
    if examples:
        load_example(next(iter(examples.values())))
url.read("word_in_context", url_params(index.elmo.n_layers))
if examples:
    columns = st.columns(len(examples) + 1)
    columns[0].markdown(t("wic.examples"))
    for column, (name, pairs) in zip(columns[1:], examples.items()):
        column.button(
            example_name(name), key=f"wic.example.{name}", on_click=load_example, args=(pairs,), width="stretch"
        )

compare = st.toggle(t("wic.compare"), key="ui.wic.compare")
queries = []
for side in SIDES[: 2 if compare else 1]:
    sentence = st.text_input(
        t("wic.sentence", side=side.upper()), key=f"ui.wic.sentence_{side}", max_chars=url.MAX_TEXT
    )
    if not sentence.strip():
        st.info(t("wic.type_sentence"))
        continue
    chosen = token_picker(
        t("wic.word_of", side=side.upper()),
        sentence,
        f"ui.wic.word_{side}",
        index.elmo.text,
        lambda word: state.uses(index, word) > 0,
    )
    if chosen is not None:
        queries.append((side, sentence, *chosen))

settings = st.columns([3, 1, 1], vertical_alignment="bottom")
with settings[0]:
    mix = layer_selector("ui.wic.layer", index.elmo.n_layers)
st.session_state.setdefault("ui.wic.k", 8)
k = settings[1].slider(t("wic.neighbours"), 1, 30, key="ui.wic.k")
st.session_state.setdefault("ui.wic.same_word", True)
same_word = settings[2].toggle(t("wic.same_word"), key="ui.wic.same_word", help=t("wic.same_word_help"))
other = model_choice.other_model(index)
url.write(
    {
        **{side: st.session_state.get(f"ui.wic.sentence_{side}", "") for side in SIDES[: 2 if compare else 1]},
        **{f"w{side}": word for side, _, word, _ in queries},
        "compare": url.show_switch(compare),
        "layer": str(st.session_state["ui.wic.layer"]),
        "k": str(k),
        "same": url.show_switch(same_word),
    }
)
if not queries:
    st.stop()

glove_words: dict[str, tuple[list[tuple[str, float]], str | None]] = {}
wide, narrow = by_width("wic")
with wide:
    columns = st.columns(len(queries) + 1, gap="large")
    for column, query in zip(columns, queries):
        with column:
            st.subheader(t("wic.elmo_heading", word=query[2], side=query[0].upper()))
            neighbour_list(*query)
    with columns[-1]:
        st.subheader(t("wic.glove_heading"))
        glove_lists()
    st.subheader(t("wic.layers_heading"))
    layers_section()
with narrow:  # a phone: one list at a time
    names = [t("wic.tab", word=word, side=side.upper()) for side, _, word, _ in queries]
    tabs = st.tabs([*names, t("wic.glove_tab"), t("wic.layers_heading")])
    for tab, query in zip(tabs, queries):
        with tab:
            neighbour_list(*query)
    with tabs[-2]:
        glove_lists()
    with tabs[-1]:
        layers_section()
if other is not None:  # another model's lists, below: on a phone too
    model_choice.side_by_side(other, queries, k, same_word, mix, labels_of)
