"""Senses page: a word's occurrences clustered into senses (by default on what the language model expects at each
use), as cards named by the words the model expects there, and as a 2-D map. Where the demo labels the uses, the
map is coloured by the labelled sense with each cluster drawn as an outline, and the purity of the clusters is
shown. The word, the number of senses and the representation live in the URL; a written form (배를) finds the token
the index knows (배)."""

from __future__ import annotations

import streamlit as st

from app import state, url
from app.i18n import Markdown, plain, t
from app.render import cluster_map, errors_in_page, escape, highlight_word, notices
from app.widgets import representation_choice, representation_name, representation_options, typed_word
from demo.labels import demo_labels, purity
from encoder.text import composed
from indexer.options import AUTO_SENSES, SensesOptions

CARDS_PER_ROW = 3
K_OPTIONS = [AUTO_SENSES, 2, 3, 4, 5, 6, 7, 8]
REPRESENTATION_KEY = "ui.senses.representation"


def suggest() -> None:
    """A clicked suggestion becomes the word."""
    st.session_state["ui.senses.word"] = st.session_state["senses.suggestion"]
    st.session_state["senses.suggestion"] = None


index = state.current_index()
n_layers, readout_kind = index.elmo.n_layers, index.manifest.readout.kind
suggestions = state.examples(index).sense_words
url_params = [
    url.widget("word", "ui.senses.word", url.text),
    url.widget("k", "ui.senses.k", url.choice(K_OPTIONS)),
    url.widget("rep", REPRESENTATION_KEY, url.choice(representation_options(n_layers))),
]
st.title(t("senses.title"))
st.caption(t("senses.caption"))

if state.first_visit("senses", index):
    st.session_state["ui.senses.word"] = suggestions[0] if suggestions else ""
url.read("senses", url_params)
st.session_state.setdefault("ui.senses.k", SensesOptions().k)  # the library's default: auto
word_column, k_column = st.columns([3, 2], vertical_alignment="bottom")
typed = word_column.text_input(t("senses.word"), key="ui.senses.word", max_chars=url.MAX_TEXT)
k = k_column.selectbox(
    t("senses.k"),
    K_OPTIONS,
    key="ui.senses.k",
    format_func=lambda n, auto=t("senses.auto"): auto if n == "auto" else str(n),  # the word now, as shown
    help=t("senses.k_help"),
)
st.pills(t("senses.try"), suggestions, key="senses.suggestion", on_change=suggest)
representation = representation_choice(REPRESENTATION_KEY, n_layers, readout_kind)
url.write({"word": typed.strip(), "k": str(k), "rep": str(st.session_state[REPRESENTATION_KEY])})

if not typed.strip():
    st.info(t("senses.type_word"))
    st.stop()
word, words = typed_word(typed, index.elmo.text, lambda w: state.uses(index, w) > 0)
if word is None:
    st.info(t("senses.several_words", typed=typed.strip(), words=Markdown(", ".join(map(escape, words)))))
    st.stop()
if word != composed(typed.strip()):  # a word typed as jamo is itself, read composed: nothing to say
    st.caption(t("senses.read_as", typed=typed.strip(), word=word))

with errors_in_page():
    result = state.senses(index, word, k, representation)
    notices(result.notices)
    labels = demo_labels()
    use_labels = [labels.get((p.sentence, p.token_index)) for p in result.points]
    labelled = any(use_labels)
    clusters_purity = purity([p.cluster for p in result.points], use_labels)
    silhouette = "—" if result.silhouette is None else f"{result.silhouette:.2f}"
    with st.container(horizontal=True, gap="large"):  # side by side, wrapping on a phone
        st.metric(t("senses.occurrences"), f"{result.n_occurrences:,}", width="content")
        st.metric(t("senses.senses"), len(result.clusters), width="content")
        st.metric(t("senses.silhouette"), silhouette, help=t("senses.silhouette_help"), width="content")
        if labelled:
            n_labelled = sum(label is not None for label in use_labels)
            help_text = t("senses.purity_help", n=n_labelled, word=word)
            st.metric(t("senses.purity"), f"{clusters_purity:.2f}", help=help_text, width="content")
    st.caption(
        t("senses.by", representation=representation_name(st.session_state[REPRESENTATION_KEY], n_layers, readout_kind))
    )

    for start in range(0, len(result.clusters), CARDS_PER_ROW):
        row = st.columns(CARDS_PER_ROW)
        for number, (column, cluster) in enumerate(zip(row, result.clusters[start:]), start=start + 1):
            with column.container(border=True):
                st.markdown(f"#### {t('senses.card', n=number)}")
                size = t("senses.size_one" if cluster.size == 1 else "senses.size_many", n=cluster.size)
                label = escape(cluster.label) if cluster.label else t("senses.no_label")
                st.markdown(f"**{label}** · {size}")
                for example in cluster.examples:
                    st.markdown(f"- {highlight_word(example, result.word, index.elmo.text)}")

    sense_of_use = None
    if labelled:
        unlabelled = plain("senses.unlabelled")
        sense_of_use = [label.sense if label is not None else unlabelled for label in use_labels]
    st.subheader(t("senses.all", n=len(result.points), word=result.word))
    st.caption(t("senses.read_points") + (" " + t("senses.read_outlines") if labelled else ""))
    st.altair_chart(cluster_map(result, sense_of_use), width="stretch")
