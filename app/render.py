"""How results and errors look: escaped markdown, highlighted words, hit lists, errors as page messages."""
from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import streamlit as st

from indexer.errors import IndexerError, QueryError
from indexer.results import SentenceHit, TokenHit

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
        parts.append(highlight(text[last:match.end()], match.start() - last, match.end() - last))
        last = match.end()
    return "".join(parts) + escape(text[last:])


def sentence_hits(hits: Sequence[SentenceHit]) -> None:
    """Ranked sentences with score and document title."""
    if not hits:
        st.info("No results.")
    for hit in hits:
        st.markdown(f"**{hit.rank}.** `{hit.score:.3f}` · *{escape(hit.title)}*  \n{escape(hit.sentence)}")


def token_hits(hits: Sequence[TokenHit]) -> None:
    """Ranked uses of a word in context, the word highlighted in its sentence."""
    if not hits:
        st.info("No other uses found.")
    for hit in hits:
        st.markdown(f"**{hit.rank}.** `{hit.score:.3f}` · *{escape(hit.title)}*  \n"
                    f"{highlight(hit.sentence, hit.char_start, hit.char_end)}")


def notices(messages: Sequence[str]) -> None:
    """What the indexer changed to answer a question (e.g. a truncated query)."""
    for message in messages:
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
