"""Word in context page: the answer first (each chosen use's nearest uses in the chosen representation, what the
language model expects at it, and GloVe's nearest words), then the two uses compared in every representation, then
the question itself (examples, sentences, words, representation), then the same word's neighbours in each
representation with how many share its part of speech and its sense where the demo labels them (Peters et al. 2018,
§5.3), each count beside its yardstick: what chance gives, the best possible and a verdict (``demo.yardstick``); an
example the model gets wrong says so and links the model card. Side by side on a wide screen, as tabs on a phone;
sentences, words and settings live in the URL."""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from app import model_choice, state, url
from app.i18n import Markdown, example_name, indexer_text, plain, t
from app.model_card import WEAKNESSES, model_dir, weaknesses_anchor
from app.render import errors_in_page, escape, expectations, highlight, notices, text_table, token_hits
from app.widgets import (
    by_width,
    choose_word,
    legacy_layer,
    representation_choice,
    representation_name,
    representation_options,
    token_picker,
)
from demo.examples import Pairs
from demo.labels import UseLabel, agreement, demo_labels
from demo.yardstick import Yardstick, labelled_senses, leaders, tied, yardstick
from encoder import LayerMix
from encoder.terminal import visible_on_page
from encoder.text import composed
from encoder.words import normalize
from indexer.representations import IndexMix, Representation, choices, comparison_order
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


def label_of_use(sentence: str, word: str, position: int) -> UseLabel | None:
    """The demo's label of the chosen use (None where it has none: a sentence it does not label, another word)."""
    label = demo_labels().get((sentence, position))
    return label if label is not None and label.word == word.lower() else None


def senses_in_collection(word: str) -> list[str | None]:
    """The labelled sense of each use of ``word`` in the index: where its nearest uses of the same word come from."""
    return labelled_senses(state.word_uses(index, word), demo_labels(), word)


def measured(query: UseLabel, found: list[UseLabel | None]) -> Yardstick | None:
    """The query's same-sense neighbours (of the same word) against chance and the best possible."""
    return yardstick(query, found, senses_in_collection(query.word))


def yardstick_line(query: UseLabel, stick: Yardstick) -> Markdown:
    """One line under a list: its uses of the query's sense, chance, the best possible and the verdict."""
    return t(
        "wic.yardstick",
        sense=query.sense,
        count=stick.same_sense,
        counted=stick.counted,
        chance=f"{stick.chance:.1f}",
        best=stick.best,
        verdict=plain(f"yardstick.{stick.verdict}"),
    )


def example_wrong(sentence: str, word: str, query: UseLabel, below: list[str]) -> None:
    """Where an example of the page finds fewer uses of its sense than chance, a plain line saying so, with a link to
    the model card's section on what the model still gets wrong (where its card has one)."""
    if not below or (sentence, word) not in {pair for pairs in examples.values() for pair in pairs}:
        return
    names = ", ".join(below)
    folder = model_dir(index.manifest)
    anchor = weaknesses_anchor(folder) if folder is not None else None
    if anchor is None:
        st.markdown(t("wic.example_wrong_plain", names=names, sense=query.sense, word=word))
    else:
        section, link = WEAKNESSES, Markdown(anchor)  # a slug of [a-z-]: safe in the link as it is
        st.markdown(t("wic.example_wrong", names=names, sense=query.sense, word=word, section=section, anchor=link))


def the_use(sentence: str, position: int) -> Markdown:
    """The asked sentence with its chosen word marked (the question, shown above its answer)."""
    _, start, end = index.elmo.text.text_tokens(sentence)[position]
    return highlight(sentence, start, end)


def answer(side: str, sentence: str, word: str, position: int) -> None:
    """One chosen use: its sentence, its nearest uses in the page's representation (each with the demo's label where
    it has one; for a labelled use, their count against its yardstick, and a line where the model gets an example of
    the page wrong), then what the language model expects at it."""
    st.markdown(the_use(sentence, position))
    with errors_in_page():
        result = state.neighbors(index, sentence, word, position, k, same_word, representation, explain=True)
        st.caption(t("wic.by", representation=chosen_name))
        notices(result.notices)
        token_hits(result.hits, labels_of(result))
        query = label_of_use(sentence, word, position)
        if query is not None:  # the list's count against its yardstick, and an example the model gets wrong
            answers = per_representation(sentence, word, position, query)
            stick = next((reading.stick for reading in answers if reading.name == chosen_name), None)
            if stick is not None and same_word:
                st.caption(yardstick_line(query, stick))
            example_wrong(sentence, word, query, [reading.name for reading in answers if below_chance(reading.stick)])
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
            {word_column: [visible_on_page(w) for w, _ in nearest], similarity_column: [s for _, s in nearest]},
            hide_index=True,
            width="stretch",
            column_config={similarity_column: st.column_config.NumberColumn(format="%.3f")},
        )


def representations() -> list[tuple[str, Representation]]:
    """Every representation by its name, as the page's choice offers them: context prediction, the index's mix,
    then each layer alone."""
    n_layers = index.elmo.n_layers
    return [
        (representation_name(representation.choice, n_layers, readout_kind), representation)
        for representation in choices(n_layers)
    ]


def comparison_rows(comparison: Comparison, word: str, senses: list[str | None]) -> list[dict[str, object]]:
    """The two uses' cosine in each representation the index can read (``Index.compare``), named as the choice
    names them, beside the typical cosines of ``word``'s same-sense and other-sense uses where ``senses`` labels some
    of its uses."""
    n_layers = index.elmo.n_layers
    rows = []
    for representation in comparison_order(n_layers):
        cosine = comparison.cosines.get(index.representation_name(representation))
        if cosine is None:
            continue  # one the index cannot read (the sense readout of a model without its LM head)
        row = {
            plain("wic.column_representation"): representation_name(representation.choice, n_layers, readout_kind),
            plain("wic.column_cosine"): f"{cosine:.3f}",
        }
        if any(senses):
            typical = state.typical(index, word, representation, tuple(senses))
            row[plain("wic.column_typical_same")] = shown(typical.same_sense)
            row[plain("wic.column_typical_other")] = shown(typical.other_sense)
        rows.append(row)
    return rows


def shown(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def compared() -> None:
    """The two chosen uses' cosine in every representation, and the mix's weights s_j and scale γ in words."""
    (_, sentence_a, word_a, position_a), (_, sentence_b, word_b, position_b) = queries
    with errors_in_page():
        comparison = state.compare(index, (sentence_a, word_a, position_a), (sentence_b, word_b, position_b))
        same_word_compared = normalize(word_a) == normalize(word_b)
        senses = senses_in_collection(word_a) if same_word_compared else []
        table, notes = st.columns(2, gap="large")
        text_table(comparison_rows(comparison, word_a, senses), table)
        notes.caption(t("wic.compared_caption", a=word_a, b=word_b))
        if any(senses):
            typical = state.typical(index, word_a, IndexMix(), tuple(senses))
            notes.caption(t("wic.typical_caption", word=word_a, same=typical.same_pairs, other=typical.other_pairs))
        elif same_word_compared:
            notes.caption(t("wic.no_typical", word=word_a))
        weights = ", ".join(f"s{j} = {w:.2f}" for j, w in enumerate(comparison.mix_weights))
        key = "wic.mix_is_average" if len(set(comparison.mix_weights)) == 1 else "wic.mix_weights"
        notes.caption(t(key, weights=weights, gamma=f"{comparison.mix_gamma:.2f}"))
        if same_word_compared:  # the readout compares them around the word's mean use
            notes.caption(t("wic.readout_centred", word=word_a))


class Answer(NamedTuple):
    """One representation's nearest uses of the same word: their labels, and their yardstick (None where nothing is
    labelled, or where they are ``tied``, so picked arbitrarily: no verdict)."""

    name: str
    found: list[UseLabel | None]
    stick: Yardstick | None
    tied: bool


def per_representation(sentence: str, word: str, position: int, query: UseLabel) -> list[Answer]:
    """The use's nearest uses of the same word in each representation, measured against the yardstick."""
    answers = []
    for name, representation in representations():
        result = state.neighbors(index, sentence, word, position, k, True, representation)
        found = labels_of(result)
        arbitrary = tied([hit.score for hit in result.hits])
        answers.append(Answer(name, found, None if arbitrary else measured(query, found), arbitrary))
    return answers


def below_chance(stick: Yardstick | None) -> bool:
    return stick is not None and stick.verdict == "below"


def verdict_cells(answer: Answer) -> dict[str, str]:
    """The chance, best possible and verdict columns of one representation's row ("—" where there is none)."""
    columns = [plain("wic.column_chance"), plain("wic.column_best"), plain("wic.column_verdict")]
    stick = answer.stick
    if stick is None:
        return dict(zip(columns, ("—", "—", plain("yardstick.tied") if answer.tied else "—")))
    return dict(zip(columns, (f"{stick.chance:.1f}", str(stick.best), plain(f"yardstick.{stick.verdict}"))))


def layer_by_layer(side: str, sentence: str, word: str, position: int) -> None:
    """The same word's nearest uses in each representation: how many share its part of speech and its sense, and
    their senses in rank order. Only for a use the demo labels (an example sentence as it is)."""
    query = label_of_use(sentence, word, position)
    if query is None:
        st.caption(t("wic.layers_unlabelled", side=side.upper(), word=word))
        return
    st.markdown(t("wic.layers_of", side=side.upper(), word=word, sense=query.sense, pos=query.pos))
    rows = []
    with errors_in_page():
        answers = per_representation(sentence, word, position, query)
        for answer in answers:
            counts = agreement(query, answer.found)
            rows.append(
                {
                    plain("wic.column_representation"): answer.name,
                    plain("wic.column_same_sense"): f"{counts.same_sense} / {counts.labelled}",
                    **verdict_cells(answer),
                    plain("wic.column_same_pos"): f"{counts.same_pos} / {counts.labelled}",
                    plain("wic.column_senses"): " · ".join(label.sense if label else "?" for label in answer.found),
                }
            )
        text_table(rows)
        verdicts(word, query, {answer.name: answer.stick for answer in answers if answer.stick is not None})


def verdicts(word: str, query: UseLabel, sticks: dict[str, Yardstick]) -> None:
    """Under a use's layer-by-layer table: what its chance rate is made of, which representations find the most
    uses of its sense, and which fall below chance."""
    if not sticks:
        return
    senses = [sense for sense in senses_in_collection(query.word) if sense is not None]
    in_sense = senses.count(query.sense)
    st.caption(t("wic.yardstick_caption", sense=query.sense, word=word, in_sense=in_sense, total=len(senses)))
    best = leaders(sticks)
    if best:
        top = sticks[best[0]]
        st.markdown(t("wic.leaders", names=", ".join(best), count=top.same_sense, counted=top.counted))
    below = [name for name, stick in sticks.items() if below_chance(stick)]
    if below:
        st.markdown(t("wic.below_chance", names=", ".join(below)))


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
    sentence = composed(  # as the library reads it, so that the picker's positions are its positions
        st.text_input(t("wic.sentence", side=side.upper()), key=f"ui.wic.sentence_{side}", max_chars=url.MAX_TEXT)
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

representation = representation_choice(REPRESENTATION_KEY, index.elmo.n_layers, readout_kind)
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
    model_choice.side_by_side(other, queries, k, same_word, representation, labels_of)
