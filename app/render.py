"""How results and errors look: escaped markdown, highlighted words, hit lists, errors as page messages."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import streamlit as st

from encoder.text import TextRules
from encoder.words import normalize
from indexer.errors import IndexerError, QueryError
from indexer.results import DocumentHit, TokenHit

from .i18n import Markdown, escape, indexer_text, t
from .labels import UseLabel

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
    than chance) begin. ``layers`` names the ELMo layers the search compared, for the "why"."""
    for i, hit in enumerate(hits):
        if not hit.above_line and (i == 0 or hits[i - 1].above_line):  # relevance falls with rank: once
            st.caption(f":material/arrow_downward: {t('render.weaker_below')}")
        _document_hit(hit, rules, layers)


def _document_hit(hit: DocumentHit, rules: TextRules, layers: str) -> None:
    """One document: title, its relevance as a bar, the best passage with matched words marked, and why it came up
    (the matched words, "found by meaning" when ELMo carried it), opening onto each part's score."""
    with st.container(border=True):
        st.markdown(f"**{hit.rank}. {escape(hit.title or hit.doc_id)}**")
        st.progress(min(max(hit.relevance, 0.0), 1.0), text=t("render.relevance", value=f"{hit.relevance:.0%}"))
        if hit.passages:
            st.markdown(highlight_words(hit.passages[0].text, hit.matched_words, rules))
        why = [t("render.matched_words", words=", ".join(hit.matched_words))] if hit.matched_words else []
        why += [t("render.by_meaning")] if hit.by_meaning else []
        with st.expander(Markdown(" · ".join(why or [t("render.no_shared_words")]))):  # each part is Markdown
            rows = Markdown(
                "\n".join(
                    f"| {t(f'render.part.{name}', layers=layers)} | {part.score:.3f} | {part.above_chance:+.2f} | "
                    f"{part.relevance:.0%} |"
                    for name, part in hit.parts.items()
                )
            )  # each cell is Markdown or a number
            st.markdown(t("render.why_parts", rows=rows))
            st.caption(
                t(
                    "render.why_caption",
                    relevance=f"{hit.relevance:.0%}",
                    score=f"{hit.score:.3f}",
                    doc=escape(hit.doc_id),
                )
            )


def token_hits(hits: Sequence[TokenHit], labels: Sequence[UseLabel | None] = ()) -> None:
    """Ranked uses of a word in context, the word highlighted in its sentence, and what the demo's labels say of
    each use (its sense and part of speech) where they have it."""
    if not hits:
        st.info(t("render.no_uses"))
    for hit, label in itertools.zip_longest(hits, labels[: len(hits)]):
        labelled = f" · {escape(label.sense)} ({escape(label.pos)})" if label else ""
        st.markdown(
            f"**{hit.rank}.** `{hit.score:.3f}` · *{escape(hit.title)}*{labelled}  \n"
            f"{highlight(hit.sentence, hit.char_start, hit.char_end)}"
        )


NOTICES = {"no_good_match": "render.no_good_match", "no_match": "render.no_match"}
"""Keys of the indexer's notices the page words itself, in every language, as warnings (the others: captions)."""


def notices(messages: Sequence[str], as_typed: tuple[str, str] | None = None) -> None:
    """What the indexer changed or found out answering a question (the words it searched for instead, a truncated
    query; no good match). ``as_typed``: the query and the link that searches it as typed, said with the respelled
    one."""
    for message in messages:
        key = getattr(message, "key", None)
        if key in NOTICES:
            st.warning(t(NOTICES[key]), icon=":material/search_off:")
        elif key == "searched_for":  # the query was changed: said where the results are, with the way back
            typed = f" — {t('render.as_typed', query=as_typed[0], link=Markdown(as_typed[1]))}" if as_typed else ""
            st.info(escape(indexer_text(message)) + typed, icon=":material/spellcheck:")
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
