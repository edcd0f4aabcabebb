"""The one open index per session: loaded once with ``st.cache_resource``, queried through ``st.cache_data``.

Pages never call the index directly, so a rerun (every widget change) reuses the model, the index and
the answers to questions already asked, and a failure to open the index is shown in the page, with the
command that builds it, instead of a traceback.
"""

from __future__ import annotations

import shlex
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import streamlit as st

from encoder import LayerMix
from indexer import Index
from indexer.errors import IndexerError, QueryNotice
from indexer.manifest import FolderInfo
from indexer.results import DocumentHit, Neighbors, Senses

from .settings import build_command, configured_index_dir

INDEX_DIR_KEY = "index_dir"
T = TypeVar("T")
_ONE_QUESTION_AT_A_TIME = threading.Lock()


@st.cache_resource(max_entries=2, show_spinner="Loading the model and the index…")
def _open_index(path: str, stamp: int) -> Index:
    return Index.open(path)


def index_dir() -> Path:
    """The folder chosen in the sidebar (initially the ``ELMO_SEARCH_INDEX`` setting)."""
    st.session_state.setdefault(INDEX_DIR_KEY, str(configured_index_dir()))
    return Path(st.session_state[INDEX_DIR_KEY]).expanduser().resolve()


def current_index() -> Index:
    """The open index, or an error in the page (with the command that builds it) and a stopped run."""
    path = index_dir()
    found = FolderInfo.of(path)
    if not found.has_index:
        st.error(f"There is no index in `{path}` yet.")
        if found.interrupted:
            st.warning(
                "A build was started there and has not finished: it may still be running, "
                "or it was interrupted (running the command again resumes it)."
            )
        st.info("Build the demo index there (a few minutes on a CPU; only once), then reload this page:")
        st.code(build_command(path), language="bash")
        st.caption("Or index your own documents (.txt, .jsonl, .csv, .parquet files or folders):")
        st.code(f"python -m indexer build --corpus YOUR_FILES --out {shlex.quote(str(path))}", language="bash")
        st.stop()
    try:
        return _open_index(str(path), found.stamp)  # the stamp changes when the index is rebuilt in place
    except (IndexerError, OSError, ValueError) as error:
        st.error(f"The index in `{path}` cannot be opened: {error}")
        st.info("Rebuild it (this replaces it) with:")
        st.code(build_command(path) + " --rebuild", language="bash")
        st.stop()


def _key() -> str:
    """Cache key of the open index: its folder and build stamp (the Index object itself is not hashed)."""
    path = index_dir()
    return f"{path}@{FolderInfo.of(path).stamp}"


def _ask(question: Callable[[], T]) -> tuple[T, list[str]]:
    """The answer and the ``QueryNotice`` warnings it raised (e.g. "no query word has a GloVe vector").

    Streamlit serves each browser tab from its own thread, but the shared model (its growing token cache)
    and the recording of warnings are not thread-safe, so questions run one at a time.
    """
    with _ONE_QUESTION_AT_A_TIME, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", QueryNotice)
        answer = question()
    return answer, [str(w.message) for w in caught if issubclass(w.category, QueryNotice)]


@st.cache_data(max_entries=128, show_spinner="Searching…")
def _search(
    _index: Index, key: str, query: str, k: int, method: str, weights: tuple[float, ...]
) -> tuple[list[DocumentHit], list[str]]:
    return _ask(lambda: _index.search(query, k=k, method=method, layers=list(weights)))


def search(index: Index, query: str, k: int, method: str, mix: LayerMix) -> tuple[list[DocumentHit], list[str]]:
    """Document search and its notices (cached per question; γ does not change cosine rankings)."""
    return _search(index, _key(), query, k, method, mix.weights)


@st.cache_data(max_entries=128, show_spinner="Finding the nearest uses…")
def _neighbors(
    _index: Index,
    key: str,
    sentence: str,
    word: str,
    position: int,
    k: int,
    same_word: bool,
    weights: tuple[float, ...],
) -> Neighbors:
    result, messages = _ask(
        lambda: _index.neighbors(sentence, word, position=position, k=k, same_word=same_word, layers=list(weights))
    )
    result.notices.extend(messages)
    return result


def neighbors(
    index: Index, sentence: str, word: str, position: int, k: int, same_word: bool, mix: LayerMix
) -> Neighbors:
    """Nearest uses in context of one token of ``sentence`` (cached per question)."""
    return _neighbors(index, _key(), sentence, word, position, k, same_word, mix.weights)


@st.cache_data(max_entries=32, show_spinner="Clustering the word's occurrences…")
def _senses(_index: Index, key: str, word: str, k: int | str) -> Senses:
    result, messages = _ask(lambda: _index.senses(word, k=k))
    result.notices.extend(messages)
    return result


def senses(index: Index, word: str, k: int | str) -> Senses:
    """Sense clusters of ``word`` (cached per word, the slowest question the UI asks)."""
    return _senses(index, _key(), word, k)
