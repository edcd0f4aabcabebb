"""How results and errors look: escaped markdown, highlighted words, hit lists, errors as page messages."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import streamlit as st

from indexer.errors import IndexerError, QueryError
from indexer.ranking import NO_GOOD_MATCH_NOTICE, NO_MATCH_NOTICE
from indexer.results import DocumentHit, TokenHit

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|$~<>:=])")
log = logging.getLogger(__name__)


def escape(text: str) -> str:
    """Corpus text shown as itself: no markdown, no LaTeX ($), no emoji shortcodes (:...:)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def highlight(text: str, start: int, end: int) -> str:
    """``text`` as markdown with ``text[start:end]`` marked."""
    return f"{escape(text[:start])}:orange-background[**{escape(text[start:end])}**]{escape(text[end:])}"


def highlight_word(text: str, word: str) -> str:
    """Mark every whole-word use of ``word`` (any case) in ``text``; for examples that come without offsets."""
    parts, last = [], 0
    for match in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", text, flags=re.IGNORECASE):
        parts.append(highlight(text[last : match.end()], match.start() - last, match.end() - last))
        last = match.end()
    return "".join(parts) + escape(text[last:])


RELEVANCE_HELP = (
    "Relevance, the same scale for every method: the share of random-word queries (as many words "
    "as yours) whose best document scores lower than this one. About 50 % is what chance gets; "
    "100 % beats every random query."
)


def highlight_words(text: str, words: Sequence[str]) -> str:
    """Mark every whole-word use of any of ``words`` (any case) in ``text``."""
    if not words:
        return escape(text)
    pattern = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    parts, last = [], 0
    for match in re.finditer(rf"(?<!\w)(?:{pattern})(?!\w)", text, flags=re.IGNORECASE):
        parts.append(highlight(text[last : match.end()], match.start() - last, match.end() - last))
        last = match.end()
    return "".join(parts) + escape(text[last:])


def document_hits(hits: Sequence[DocumentHit]) -> None:
    """Found documents: title, a relevance bar, the best passage with matched words marked, and why it came up."""
    for hit in hits:
        with st.container(border=True):
            st.markdown(f"**{hit.rank}. {escape(hit.title or hit.doc_id)}**")
            st.progress(min(max(hit.relevance, 0.0), 1.0), text=f"relevance {hit.relevance:.0%}")
            if hit.passages:
                st.markdown(highlight_words(hit.passages[0].text, hit.matched_words))
            why = (
                f"matched words: {', '.join(hit.matched_words)}"
                if hit.matched_words
                else "no shared words: found by meaning"
            )
            st.caption(f"{escape(why)} · best passage of {escape(hit.doc_id)} · score {hit.score:.3f}")


def token_hits(hits: Sequence[TokenHit]) -> None:
    """Ranked uses of a word in context, the word highlighted in its sentence."""
    if not hits:
        st.info("No other uses found.")
    for hit in hits:
        st.markdown(
            f"**{hit.rank}.** `{hit.score:.3f}` · *{escape(hit.title)}*  \n"
            f"{highlight(hit.sentence, hit.char_start, hit.char_end)}"
        )


def notices(messages: Sequence[str]) -> None:
    """What the indexer changed or found out answering a question (a truncated query; no good match)."""
    for message in messages:
        if message in (NO_GOOD_MATCH_NOTICE, NO_MATCH_NOTICE):
            st.warning(f"{message[0].upper()}{message[1:]}. Try other words.", icon=":material/search_off:")
        else:
            st.caption(f":material/info: {escape(message)}")


@contextmanager
def errors_in_page() -> Iterator[None]:
    """Show a failed question as a message in the page; a bug is logged on the server and shown briefly."""
    try:
        yield
    except QueryError as error:
        st.warning(str(error))
    except IndexerError as error:
        st.error(str(error))
    except Exception as error:  # noqa: BLE001 - the page must stay usable; the traceback goes to the log
        log.exception("unexpected error")
        st.error(f"Something went wrong ({type(error).__name__}: {error}). The details are in the server log.")
