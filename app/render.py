"""How results and errors look: escaped markdown, highlighted words, hit lists, what the language model expects, the
map of a word's senses, errors as page messages."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
from scipy.spatial import ConvexHull
from streamlit.delta_generator import DeltaGenerator

from demo.labels import UseLabel
from encoder.chars import BOS_TOKEN, EOS_TOKEN
from encoder.lm_data import UNK_TOKEN
from encoder.readout import Expectation
from encoder.terminal import visible_on_page
from encoder.text import TextRules
from encoder.words import normalize
from indexer.errors import IndexerError, QueryError
from indexer.ranking import shows_relevance
from indexer.results import DocumentHit, Senses, TokenHit

from .i18n import Markdown, escape, indexer_text, plain, t
from .settings import CHART_COLOURS

log = logging.getLogger(__name__)


def _is_hangul(char: str) -> bool:
    return "\uac00" <= char <= "\ud7a3"


def written_word(text: str, start: int, end: int) -> tuple[int, int]:
    """``text[start:end]`` widened to the Hangul letters around it: a Korean token is often part of a written word
    (배 in 배를), and a mark that splits the word draws a gap that reads as a space. Other scripts are unchanged."""
    while start > 0 and _is_hangul(text[start - 1]):
        start -= 1
    while end < len(text) and _is_hangul(text[end]):
        end += 1
    return start, end


def _marked(text: str, spans: Sequence[tuple[int, int]]) -> str:
    parts, last = [], 0
    for start, end in spans:
        parts.append(f"{escape(text[last:start])}:orange-background[**{escape(text[start:end])}**]")
        last = end
    return "".join(parts) + escape(text[last:])


def document_name(hit: DocumentHit | TokenHit) -> str:
    """The document a hit comes from as markdown: its title, or its id where it has none (a JSONL record without a
    title), as the CLI names it; without the blank space at its ends, inside which bold markup would not hold."""
    name = hit.title.strip() or hit.doc_id.strip()
    return escape(name or hit.doc_id)


def highlight(text: str, start: int, end: int) -> str:
    """``text`` as markdown with ``text[start:end]`` (its written word) marked."""
    return _marked(text, [written_word(text, start, end)])


def highlight_words(text: str, words: Sequence[str], rules: TextRules) -> str:
    """Mark every token of ``text`` that is one of ``words`` (any case), with the index's language ``rules``: the
    tokens the index counted, so "bank" is marked in "bank's" but never inside "riverbank", and 배 in 배를."""
    wanted = {normalize(w) for w in words}
    spans: list[tuple[int, int]] = []
    for token, start, end in rules.text_tokens(text) if wanted else ():
        if normalize(token) in wanted:
            start, end = written_word(text, start, end)
            if spans and start < spans[-1][1]:  # two tokens of one written word: one mark
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((start, end))
    return _marked(text, spans)


def highlight_word(text: str, word: str, rules: TextRules) -> str:
    """Mark every use of ``word`` in ``text``; for examples that come without offsets."""
    return highlight_words(text, [word], rules)


def document_hits(hits: Sequence[DocumentHit], rules: TextRules, layers: str) -> None:
    """Found documents, best first, all of them; a line where the weaker matches (under the relevance line, no better
    than chance) begin. ``layers`` names the ELMo layers the search compared, for the "why". Bars and the line only
    where the list shows relevance (``ranking.shows_relevance``): with no good match, or too few documents to tell,
    the documents are a plain ranked list."""
    graded = bool(hits) and shows_relevance(hits[0].above_line)
    for i, hit in enumerate(hits):
        if graded and not hit.above_line and hits[i - 1].above_line:  # relevance falls with rank: once
            st.caption(f":material/arrow_downward: {t('render.weaker_below')}")
        _document_hit(hit, rules, layers, graded)


def _document_hit(hit: DocumentHit, rules: TextRules, layers: str, graded: bool) -> None:
    """One document: title, its relevance as a bar (when the list is ``graded``), the best passage with matched
    words marked, and why it came up (the matched words, "found by meaning" when ELMo carried it), opening onto each
    part's score."""
    with st.container(border=True):
        st.markdown(f"**{hit.rank}. {document_name(hit)}**")
        if graded:
            st.progress(min(max(hit.relevance, 0.0), 1.0), text=t("render.relevance", value=f"{hit.relevance:.0%}"))
        if hit.passages:
            st.markdown(highlight_words(hit.passages[0].text, hit.matched_words, rules))
        why = [t("render.matched_words", words=", ".join(hit.matched_words))] if hit.matched_words else []
        why += [t("render.by_meaning")] if hit.by_meaning else []
        with st.expander(Markdown(" · ".join(why or [t("render.no_shared_words")]))):  # each part is Markdown
            rows = Markdown(
                "\n".join(
                    f"| {t(f'render.part.{name}', layers=layers)} | {part.score:.3f} | {part.above_chance:+.2f} | "
                    f"{'–' if part.relevance is None else f'{part.relevance:.0%}'} |"
                    for name, part in hit.parts.items()
                )
            )  # each cell is Markdown or a number
            st.markdown(t("render.why_parts", rows=rows))
            said = {"score": f"{hit.score:.3f}", "doc": escape(hit.doc_id)}
            if graded:
                st.caption(t("render.why_caption", relevance=f"{hit.relevance:.0%}", **said))
            else:
                st.caption(t("render.why_caption_ranked", **said))


def token_hits(hits: Sequence[TokenHit], labels: Sequence[UseLabel | None] = ()) -> None:
    """Ranked uses of a word in context, the word highlighted in its sentence, and what the demo's labels say of
    each use (its sense and part of speech) where they have it."""
    if not hits:
        st.info(t("render.no_uses"))
    for hit, label in itertools.zip_longest(hits, labels[: len(hits)]):
        labelled = f" · {escape(label.sense)} ({escape(label.pos)})" if label else ""
        st.markdown(
            f"**{hit.rank}.** `{hit.score:.3f}` · *{document_name(hit)}*{labelled}  \n"
            f"{highlight(hit.sentence, hit.char_start, hit.char_end)}"
        )


def text_table(rows: Sequence[Mapping[str, object]], where: DeltaGenerator | None = None) -> None:
    """Rows of text as a table (in ``where``, a column, or the page): ``st.table`` renders every cell and heading as
    markdown, so each is ``escape``d and shows as itself: a word the model expects ("#", "*", "-") is no heading or
    list, a corpus file's name no formula or link. A table wraps its cells: nothing is cut off on a phone."""
    (where or st).table([{escape(name): escape(value) for name, value in row.items()} for row in rows])


LM_CLASSES = {UNK_TOKEN: "expect.rare", BOS_TOKEN: "expect.start", EOS_TOKEN: "expect.end"}
"""The language model's classes that are no word, each shown as what it means."""


def expected_word(word: str) -> str:
    """A word the language model expects, as text: its own classes (a rare word, the sentence's start or end) in
    words."""
    return plain(LM_CLASSES[word]) if word in LM_CLASSES else word


def expectations(expected: Sequence[Expectation]) -> None:
    """What the language model expects at a use, as a table: each direction's likeliest words with their
    probabilities, the forward LM's (given the words before) beside the backward LM's (given the words after). A
    table wraps its cells, so it fits a narrow column and a phone. A direction with fewer words shown (Korean shows
    only nouns: ``TextRules.shown_expectations``) leaves its last cells empty."""
    columns = {plain(f"expect.{e.direction}"): [f"{expected_word(w)} · {p:.3f}" for w, p in e.words] for e in expected}
    text_table([dict(zip(columns, row)) for row in itertools.zip_longest(*columns.values(), fillvalue="")])
    st.caption(t("expect.caption"))


# A shape per sense beside its colour (CHART_COLOURS): a second cue for colour-blind readers.
SENSE_SHAPES = ["circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "triangle-left", "wedge"]
OUTLINE_COLOUR = "#555555"


def outline(points: np.ndarray) -> np.ndarray:
    """A cluster's outline in the map: the convex hull of its points (x, y), closed (its first corner again at the
    end); a cluster of one or two points is those points."""
    if len(points) < 3:
        return points
    corners = points[ConvexHull(points, qhull_options="QJ").vertices]  # joggled: points on one line are fine too
    return np.vstack([corners, corners[:1]])


def cluster_map(result: Senses, sense_of_use: list[str] | None) -> alt.LayerChart | alt.Chart:
    """Every use as a point. Without labels the colour (and shape) is the use's cluster; with labels it is the
    use's labelled sense, and each cluster is an outline with its number, so whether clusters follow senses shows.
    A point's tooltip shows its sentence as text (Vega escapes HTML), its direction marks written out
    (``visible_on_page``): a right-to-left override reordered what followed it."""
    cluster, name, sentence = (
        plain("senses.column_cluster"),
        plain("senses.column_name"),
        plain("senses.column_sentence"),
    )
    points = pd.DataFrame(
        {
            "x": [p.x for p in result.points],
            "y": [p.y for p in result.points],
            cluster: [plain("senses.card", n=p.cluster + 1) for p in result.points],
            name: [visible_on_page(result.clusters[p.cluster].label) for p in result.points],
            sentence: [visible_on_page(p.sentence) for p in result.points],  # a tooltip is text, not markdown
        }
    )
    colour_by, tooltip = cluster, [cluster, name, sentence]
    if sense_of_use is not None:
        colour_by = plain("senses.column_labelled")
        points[colour_by] = sense_of_use
        tooltip = [colour_by, *tooltip]
    domain = sorted(set(points[colour_by]), key=lambda s: (s == plain("senses.unlabelled"), s))
    legend = alt.Legend(orient="bottom", direction="horizontal", columns=4, labelLimit=160)
    x = alt.X("x", title="PCA 1", scale=alt.Scale(zero=False, padding=16))
    y = alt.Y("y", title="PCA 2", scale=alt.Scale(zero=False, padding=16))
    uses = (
        alt.Chart(points)
        .mark_point(size=80, filled=True, opacity=0.8)
        .encode(
            x=x,
            y=y,
            color=alt.Color(f"{colour_by}:N", scale=alt.Scale(domain=domain, range=list(CHART_COLOURS)), legend=legend),
            shape=alt.Shape(f"{colour_by}:N", scale=alt.Scale(domain=domain, range=SENSE_SHAPES), legend=legend),
            tooltip=tooltip,
        )
    )
    if sense_of_use is None:
        return uses.properties(padding={"left": 8, "right": 24, "top": 8, "bottom": 8}).interactive()
    corners, numbers = [], []
    xy = points[["x", "y"]].to_numpy()
    clusters = np.array([p.cluster for p in result.points])
    for c in range(len(result.clusters)):
        members = xy[clusters == c]
        for order, (cx, cy) in enumerate(outline(members)):
            corners.append({"x": cx, "y": cy, "cluster": c, "order": order})
        numbers.append({"x": members[:, 0].mean(), "y": members[:, 1].max(), "number": str(c + 1)})
    outlines = (
        alt.Chart(pd.DataFrame(corners))
        .mark_line(color=OUTLINE_COLOUR, strokeDash=[5, 3], strokeWidth=1.5)
        .encode(x=x, y=y, detail="cluster:N", order="order:Q")
    )
    labels = (
        alt.Chart(pd.DataFrame(numbers))
        .mark_text(dy=-14, fontSize=14, fontWeight="bold", color=OUTLINE_COLOUR)
        .encode(x=x, y=y, text="number:N")
    )
    return (
        alt.layer(outlines, uses, labels)
        .properties(padding={"left": 8, "right": 24, "top": 8, "bottom": 8})
        .interactive()
    )


@dataclass(frozen=True)
class AsTyped:
    """The way back to a respelled query as typed: the query, what searches it so (in this tab), the button's key."""

    query: str
    search: Callable[[], None]
    key: str


NOTICES = {"no_good_match": "render.no_good_match", "no_match": "render.no_match"}
"""Keys of the indexer's notices the page words itself, in every language, as warnings (the others: captions)."""


def notices(messages: Sequence[str], as_typed: AsTyped | None = None) -> None:
    """What the indexer changed or found out answering a question (the words it searched for instead, a truncated
    query; no good match). ``as_typed``: the button that searches the query as typed, shown with the respelled one."""
    for message in messages:
        key = getattr(message, "key", None)
        if key in NOTICES:
            st.warning(t(NOTICES[key]), icon=":material/search_off:")
        elif key == "searched_for":  # the query was changed: said where the results are, with the way back
            st.info(escape(indexer_text(message)), icon=":material/spellcheck:")
            if as_typed is not None:  # a button, not a link: a link would open a new tab
                st.button(
                    t("render.as_typed", query=as_typed.query),
                    key=as_typed.key,
                    on_click=as_typed.search,
                    type="tertiary",
                )
        else:
            st.caption(f":material/info: {indexer_text(message)}")


@contextmanager
def errors_in_page() -> Iterator[None]:
    """Show a failed question as a message in the page; a bug is logged on the server and shown briefly."""
    try:
        yield
    except QueryError as error:
        st.warning(indexer_text(error))
    except IndexerError as error:
        st.error(indexer_text(error))
    except Exception as error:  # noqa: BLE001 - the page must stay usable; the traceback goes to the log
        log.exception("unexpected error")
        st.error(t("render.unexpected", kind=type(error).__name__, error=error))


def layer_weights(layers: list[str], weights: dict[str, Sequence[float]], weight_title: str) -> alt.Chart:
    """Several sets of layer weights s_j as grouped bars, one group per layer (its name read across), the legend
    under the chart so that a narrow column keeps it whole."""
    rows = [
        {"layer": layer, "series": name, "weight": float(w)}
        for name, values in weights.items()
        for layer, w in zip(layers, values)
    ]
    legend = alt.Legend(orient="bottom", direction="vertical", title=None, labelLimit=200)
    return (
        alt.Chart(pd.DataFrame(rows))
        .mark_bar()
        .encode(
            x=alt.X("weight:Q", title=weight_title, scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("layer:N", title=None, sort=layers, axis=alt.Axis(labelLimit=200)),
            yOffset=alt.YOffset("series:N", sort=list(weights)),
            color=alt.Color(
                "series:N",
                sort=list(weights),
                scale=alt.Scale(domain=list(weights), range=list(CHART_COLOURS[: len(weights)])),
                legend=legend,
            ),
            tooltip=["layer", "series", alt.Tooltip("weight:Q", format=".2f")],
        )
        .properties(padding={"left": 8, "right": 16, "top": 8, "bottom": 8})
    )
