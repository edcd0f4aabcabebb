"""Senses page: a word's occurrences clustered into senses, as cards and as a 2-D map coloured by sense. The word and
the number of senses live in the URL; a written form (배를) finds the token the index knows (배)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from app import state, url
from app.i18n import Markdown, t
from app.render import errors_in_page, escape, highlight_word, notices
from app.settings import CHART_COLOURS
from app.widgets import typed_word

CARDS_PER_ROW = 3
K_OPTIONS = ["auto", 2, 3, 4, 5, 6, 7, 8]
# A shape per sense beside its colour (CHART_COLOURS): a second cue for colour-blind readers.
SENSE_SHAPES = ["circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "triangle-left", "wedge"]
URL_PARAMS = [url.widget("word", "ui.senses.word", url.text), url.widget("k", "ui.senses.k", url.choice(K_OPTIONS))]


def suggest() -> None:
    """A clicked suggestion becomes the word."""
    st.session_state["ui.senses.word"] = st.session_state["senses.suggestion"]
    st.session_state["senses.suggestion"] = None


index = state.current_index()
suggestions = state.examples(index).sense_words
st.title(t("senses.title"))
st.caption(t("senses.caption"))

if st.session_state.get("senses.examples") != str(index.path):  # a new session, or another index
    st.session_state["senses.examples"] = str(index.path)
    st.session_state["ui.senses.word"] = suggestions[0] if suggestions else ""
url.read("senses", URL_PARAMS)
st.session_state.setdefault("ui.senses.k", "auto")
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
url.write({"word": typed.strip(), "k": str(k)})

if not typed.strip():
    st.info(t("senses.type_word"))
    st.stop()
word, words = typed_word(typed, index.elmo.text, lambda w: state.uses(index, w) > 0)
if word is None:
    st.info(t("senses.several_words", typed=escape(typed.strip()), words=Markdown(", ".join(map(escape, words)))))
    st.stop()
if word != typed.strip():
    st.caption(t("senses.read_as", typed=escape(typed.strip()), word=escape(word)))

with errors_in_page():
    result = state.senses(index, word, k)
    notices(result.notices)
    silhouette = "—" if result.silhouette is None else f"{result.silhouette:.2f}"
    figures = st.columns(3)
    figures[0].metric(t("senses.occurrences"), f"{result.n_occurrences:,}")
    figures[1].metric(t("senses.senses"), len(result.clusters))
    figures[2].metric(t("senses.silhouette"), silhouette, help=t("senses.silhouette_help"))

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

    sense, sentence = t("senses.column_sense"), t("senses.column_sentence")  # named as the tooltip shows them
    points = pd.DataFrame(
        {
            "x": [p.x for p in result.points],
            "y": [p.y for p in result.points],
            sense: [f"{p.cluster + 1}: {result.clusters[p.cluster].label}".rstrip(": ") for p in result.points],
            sentence: [p.sentence for p in result.points],
        }
    )
    senses = sorted(set(points[sense]), key=lambda s: int(s.split(":")[0]))
    legend = alt.Legend(orient="bottom", columns=2, labelLimit=400)
    chart = (
        alt.Chart(points)
        .mark_point(size=80, filled=True, opacity=0.8)
        .encode(
            x=alt.X("x", title="PCA 1", scale=alt.Scale(zero=False, padding=16)),
            y=alt.Y("y", title="PCA 2", scale=alt.Scale(zero=False, padding=16)),
            color=alt.Color(
                f"{sense}:N", title=sense, scale=alt.Scale(domain=senses, range=list(CHART_COLOURS)), legend=legend
            ),
            shape=alt.Shape(
                f"{sense}:N", title=sense, scale=alt.Scale(domain=senses, range=SENSE_SHAPES), legend=legend
            ),
            tooltip=[sense, sentence],
        )
        .properties(padding={"left": 8, "right": 24, "top": 8, "bottom": 8})
        .interactive()
    )
    st.subheader(t("senses.all", n=len(points), word=result.word))
    st.caption(t("senses.read_points"))
    st.altair_chart(chart, width="stretch")
