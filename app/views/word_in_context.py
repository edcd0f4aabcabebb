"""Word in context page: the answer first (each chosen use's nearest uses in the chosen representation, what the
language model expects at it, and GloVe's nearest words), then the two uses compared in every representation, then
the question itself (examples, sentences, words, representation), then the same word's neighbours in each
representation with how many share its part of speech and its sense where the demo labels them (Peters et al. 2018,
§5.3). Side by side on a wide screen, as tabs on a phone; sentences, words and settings live in the URL."""

from __future__ import annotations

import streamlit as st

from app import model_choice, state, url
from app.i18n import Markdown, example_name, indexer_text, plain, t
from app.render import errors_in_page, escape, expectations, highlight, notices, token_hits
from app.widgets import (
    by_width,
    choose_word,
    legacy_layer,
    representation_choice,
    representation_mix,
    representation_name,
    representation_options,
    token_picker,
)
from demo.examples import Pairs
from demo.labels import UseLabel, agreement, demo_labels
from encoder import LayerMix
from encoder.words import normalize
from indexer.results import Comparison, Neighbors

SIDES = ("a", "b")
REPRESENTATION_KEY = "ui.wic.representation"


def load_example(pairs: Pairs) -> None:
    """Fill both sentences and their words, and turn the comparison and "Same word only" on."""
    for side, (sentence, word) in zip(SIDES, pairs):
        st.session_state[f"ui.wic.sentence_{side}"] = sentence
        choose_word(f"ui.wic.word_{side}", word)
    st.session_state["ui.wic.compare"] = True
    st.session_state["ui.wic.same_word"] = True


def url_params(n_layers: int, index_mix: LayerMix) -> list[url.Param]:
    return [
        *(url.widget(side, f"ui.wic.sentence_{side}", url.text) for side in SIDES),
        *(url.widget(f"w{side}", f"ui.wic.word_{side}", url.text) for side in SIDES),
        url.widget("compare", "ui.wic.compare", url.switch),
        url.widget("layer", REPRESENTATION_KEY, legacy_layer(n_layers, index_mix)),  # links older than "rep"
        url.widget("rep", REPRESENTATION_KEY, url.choice(representation_options(n_layers))),
        url.widget("k", "ui.wic.k", url.whole(1, 30)),
        url.widget("same", "ui.wic.same_word", url.switch),
    ]


def labels_of(result: Neighbors) -> list[UseLabel | None]:
    """The demo's label of each neighbour (None where it has none)."""
    labels = demo_labels()
    return [labels.get((hit.sentence, hit.token_index)) for hit in result.hits]


def the_use(sentence: str, position: int) -> Markdown:
    """The asked sentence with its chosen word marked (the question, shown above its answer)."""
    _, start, end = index.elmo.text.text_tokens(sentence)[position]
    return highlight(sentence, start, end)


def answer(side: str, sentence: str, word: str, position: int) -> None:
    """One chosen use: its sentence, its nearest uses in the page's representation (each with the demo's label where
    it has one), then what the language model expects at it."""
    st.markdown(the_use(sentence, position))
    with errors_in_page():
        result = state.neighbors(index, sentence, word, position, k, same_word, mix, explain=True)
        st.caption(t("wic.by", representation=chosen_name))
        notices(result.notices)
        token_hits(result.hits, labels_of(result))
        glove_words.setdefault(word.lower(), result.glove_note)
        if result.expected:
            st.markdown(f"**{t('wic.expects_heading')}**")
            expectations(result.expected)


def glove_lists() -> None:
    st.caption(t("wic.glove_caption"))
    word_column, similarity_column = t("wic.column_word"), t("wic.column_similarity")
    for word, note in glove_words.items():
        st.markdown(f"**{escape(word)}**")
        if note:
            st.info(indexer_text(note))
        nearest = state.glove_nearest(index, word, k) or []
        st.dataframe(
            {word_column: [w for w, _ in nearest], similarity_column: [s for _, s in nearest]},
            hide_index=True,
            width="stretch",
            column_config={similarity_column: st.column_config.NumberColumn(format="%.3f")},
        )


def representations() -> list[tuple[str, LayerMix | None]]:
    """Every representation by its name, as the page's choice offers them: context prediction, the index's mix,
    then each layer alone (None: the sense readout)."""
    n_layers = index.elmo.n_layers
    return [
        (representation_name(option, n_layers, readout_kind), representation_mix(option, n_layers, index.layer_mix))
        for option in representation_options(n_layers)
    ]


def comparison_rows(comparison: Comparison) -> list[dict[str, object]]:
    """The two uses' cosine in each representation, named as the choice names them. ``Index.compare`` gives them in
    the order each layer, the index's mix, then the sense readout (where the index has one)."""
    n_layers = index.elmo.n_layers
    options = [*range(n_layers), "mix", "readout"][: len(comparison.cosines)]
    return [
        {
            plain("wic.column_representation"): representation_name(option, n_layers, readout_kind),
            plain("wic.column_cosine"): f"{cosine:.3f}",
        }
        for option, cosine in zip(options, comparison.cosines.values())
    ]


def compared() -> None:
    """The two chosen uses' cosine in every representation, and the mix's weights s_j and scale γ in words."""
    (_, sentence_a, word_a, position_a), (_, sentence_b, word_b, position_b) = queries
    with errors_in_page():
        comparison = state.compare(index, (sentence_a, word_a, position_a), (sentence_b, word_b, position_b))
        table, notes = st.columns(2, gap="large")
        table.table(comparison_rows(comparison))
        notes.caption(t("wic.compared_caption", a=word_a, b=word_b))
        weights = ", ".join(f"s{j} = {w:.2f}" for j, w in enumerate(comparison.mix_weights))
        key = "wic.mix_is_average" if len(set(comparison.mix_weights)) == 1 else "wic.mix_weights"
        notes.caption(t(key, weights=weights, gamma=f"{comparison.mix_gamma:.2f}"))
        if normalize(word_a) == normalize(word_b):  # the readout compares them around the word's mean use
            notes.caption(t("wic.readout_centred", word=word_a))


def layer_by_layer(side: str, sentence: str, word: str, position: int) -> None:
    """The same word's nearest uses in each representation: how many share its part of speech and its sense, and
    their senses in rank order. Only for a use the demo labels (an example sentence as it is)."""
    query = demo_labels().get((sentence, position))
    if query is None or query.word != word.lower():
        st.caption(t("wic.layers_unlabelled", side=side.upper(), word=word))
        return
    st.markdown(t("wic.layers_of", side=side.upper(), word=word, sense=query.sense, pos=query.pos))
    rows = []
    with errors_in_page():
        for name, layer_mix in representations():
            found = labels_of(state.neighbors(index, sentence, word, position, k, True, layer_mix))
            counts = agreement(query, found)
            rows.append(
                {
                    plain("wic.column_representation"): name,
                    plain("wic.column_same_sense"): f"{counts.same_sense} / {counts.labelled}",
                    plain("wic.column_same_pos"): f"{counts.same_pos} / {counts.labelled}",
                    plain("wic.column_senses"): " · ".join(label.sense if label else "?" for label in found),
                }
            )
        st.table(rows)  # a table wraps its cells: nothing is cut off on a phone


def layers_section() -> None:
    st.caption(t("wic.layers_caption", k=k, mix=index.layer_mix.describe()))
    for query in queries:
        layer_by_layer(*query)


index = state.current_index()
readout_kind = index.manifest.readout.kind
examples = state.examples(index).word_in_context
st.title(t("wic.title"))
st.caption(t("wic.caption"))

if state.first_visit("wic", index) and examples:
    load_example(next(iter(examples.values())))
url.read("word_in_context", url_params(index.elmo.n_layers, index.layer_mix))
if examples:
    with st.container(horizontal=True, vertical_alignment="center"):
        st.markdown(t("wic.examples"), width="content")
        for name, pairs in examples.items():
            st.button(example_name(name), key=f"wic.example.{name}", on_click=load_example, args=(pairs,))
results_area = st.container()  # the answer, above the question it answers (filled once the question is known)

st.subheader(t("wic.question_heading"))
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

mix = representation_choice(REPRESENTATION_KEY, index.elmo.n_layers, readout_kind, index.layer_mix)
chosen_name = representation_name(st.session_state[REPRESENTATION_KEY], index.elmo.n_layers, readout_kind)
settings = st.columns(2, vertical_alignment="bottom")
st.session_state.setdefault("ui.wic.k", 8)
k = settings[0].slider(t("wic.neighbours"), 1, 30, key="ui.wic.k")
st.session_state.setdefault("ui.wic.same_word", True)
same_word = settings[1].toggle(t("wic.same_word"), key="ui.wic.same_word", help=t("wic.same_word_help"))
other = model_choice.other_model(index)
url.write(
    {
        **{side: st.session_state.get(f"ui.wic.sentence_{side}", "") for side in SIDES[: 2 if compare else 1]},
        **{f"w{side}": word for side, _, word, _ in queries},
        "compare": url.show_switch(compare),
        "rep": str(st.session_state[REPRESENTATION_KEY]),
        "k": str(k),
        "same": url.show_switch(same_word),
    }
)
if not queries:
    st.stop()

glove_words: dict[str, str | None] = {}  # each chosen word, and why GloVe has no neighbours for it
with results_area:
    wide, narrow = by_width("wic")
    with wide:
        columns = st.columns(len(queries) + 1, gap="large")
        for column, query in zip(columns, queries):
            with column:
                st.subheader(t("wic.elmo_heading", word=query[2], side=query[0].upper()))
                answer(*query)
        with columns[-1]:
            st.subheader(t("wic.glove_heading"))
            glove_lists()
        if len(queries) == 2:
            st.subheader(t("wic.compared_heading"))
            compared()
    with narrow:  # a phone: one list at a time
        names = [t("wic.tab", word=word, side=side.upper()) for side, _, word, _ in queries]
        extra = [t("wic.glove_tab"), *([t("wic.compared_tab")] if len(queries) == 2 else [])]
        tabs = st.tabs([*names, *extra])
        for tab, query in zip(tabs, queries):
            with tab:
                answer(*query)
        with tabs[len(queries)]:
            glove_lists()
        if len(queries) == 2:
            with tabs[-1]:
                compared()
    st.divider()

st.subheader(t("wic.layers_heading"))
layers_section()
if other is not None:  # another model's lists, below: on a phone too
    model_choice.side_by_side(other, queries, k, same_word, mix, labels_of)
