"""The one open index per session: loaded once with ``st.cache_resource``, queried through ``st.cache_data``.

Pages never call the index directly, so a rerun (every widget change) reuses the model, the index and
the answers to questions already asked, and a failure to open the index is shown in the page, with the
command that builds it, instead of a traceback.
"""

from __future__ import annotations

import dataclasses
import itertools
import shlex
from pathlib import Path

import streamlit as st

from demo.corpora import DEMOS
from demo.examples import Examples, answerable, examples_for
from demo.yardstick import TypicalCosines, Use, typical_cosines
from encoder import LayerMix
from encoder.commands import program
from encoder.model_files import resolve_model
from encoder.text import written_in
from encoder.words import is_content_word, normalize
from indexer import Index
from indexer.errors import IndexerError, QueryError
from indexer.manifest import FolderInfo, rebuild_command
from indexer.representations import Representation, by_choice
from indexer.results import Comparison, DocumentHit, Neighbors, Results, Senses

from .i18n import t, url_value
from .settings import build_command, configured_index_dir, demo_of, rebuild_demo_command

INDEX_DIR_KEY = "index_dir"
DEMO_PARAM = "demo"  # the URL's name for the open demo collection
DEMO_READ_KEY = "url.read.demo"
SHOWN_INDEX_KEY = "index.shown"  # the folder the last run showed: another one means the user switched
QUESTION_KEYS = (
    "ui.search.query",
    "ui.wic.sentence_a",
    "ui.wic.sentence_b",
    "ui.wic.word_a",
    "ui.wic.word_b",
    "ui.senses.word",
)
"""What the user asked the last index: emptied when another index opens (its pages then seed their own examples,
``SEEDED_KEYS`` saying for which language they last did)."""
SEEDED_KEYS = ("wic.examples", "senses.examples")
CARRIED_QUERY_KEY = "search.carried_query"  # a query taken along to the other demo (``search_in_demo``)
N_SUGGESTED_WORDS = 10


@st.cache_resource(max_entries=3, show_spinner=False)  # the spinner is the caller's, in the UI's language
def _open_index(path: str, stamp: int) -> Index:
    return Index.open(path)


def open_index_at(path: Path) -> Index:
    """Another index than the chosen one (another model's of the same documents), opened once per build."""
    with st.spinner(t("spinner.open")):
        return _open_index(str(path), FolderInfo.of(path).stamp)


def index_dir() -> Path:
    """The folder chosen in the sidebar (initially the ``ELMO_SEARCH_INDEX`` setting)."""
    st.session_state.setdefault(INDEX_DIR_KEY, str(configured_index_dir()))
    return Path(st.session_state[INDEX_DIR_KEY]).expanduser().resolve()


def open_linked_demo() -> None:
    """On the session's first run, a link's ``demo`` parameter (``?demo=ko``) opens that demo collection where it is
    built, so a reload or a shared link shows the collection it was made on."""
    if st.session_state.get(DEMO_READ_KEY):
        return
    st.session_state[DEMO_READ_KEY] = True
    demo = DEMOS.get(url_value(DEMO_PARAM) or "")
    if demo is not None and FolderInfo.of(demo.index_dir).has_index:
        st.session_state[INDEX_DIR_KEY] = str(demo.index_dir)


def url_params() -> dict[str, str]:
    """What the URL says about the open collection: ``demo`` where it is a demo other than the one the app opens
    by itself (``configured_index_dir``)."""
    shown = index_dir()
    if shown == configured_index_dir():
        return {}
    return next(({DEMO_PARAM: key} for key, demo in DEMOS.items() if shown == demo.index_dir.resolve()), {})


def other_demo(query: str, language: str) -> str | None:
    """The demo collection (its key) that a query written in another language than the open index's is meant for,
    where that demo is built and not the one open (``encoder.text.written_in`` tells the query's language)."""
    written = written_in(query)
    demo = DEMOS.get(written) if written not in (None, language) else None
    if demo is None or demo.index_dir.resolve() == index_dir() or not FolderInfo.of(demo.index_dir).has_index:
        return None
    return written


def search_in_demo(demo: str, query: str) -> None:
    """Open the demo collection ``demo`` and search it for ``query`` (a button's callback: before the next run)."""
    st.session_state[INDEX_DIR_KEY] = str(DEMOS[demo].index_dir)
    st.session_state["demo"] = demo  # the sidebar's switch says so too
    st.session_state[CARRIED_QUERY_KEY] = query


def index_switched() -> bool:
    """Whether this run shows another index than the last run (never on a session's first run). On a switch the
    old questions are forgotten, so no page asks the new index what was asked of the old one."""
    shown, last = str(index_dir()), st.session_state.get(SHOWN_INDEX_KEY)
    st.session_state[SHOWN_INDEX_KEY] = shown
    if last is None or last == shown:
        return False
    for key in QUESTION_KEYS:
        st.session_state[key] = ""  # set, not deleted: a text box shows a value set here, and keeps a deleted one
    st.session_state["ui.search.query"] = st.session_state.pop(CARRIED_QUERY_KEY, "")
    for key in [k for k in st.session_state if k in SEEDED_KEYS or str(k).startswith("pick.")]:
        del st.session_state[key]
    return True


def index_language() -> str | None:
    """The language of the index in the chosen folder: its model's config's, the rule ``Elmo.load`` follows
    (``index.elmo.text.language`` once open), read without loading the model. None when the folder holds no
    index, or its model cannot be found (the page then says why)."""
    try:
        source = FolderInfo.of(index_dir()).model_source
        if source is None:
            return None
        found = resolve_model(*source) if isinstance(source, list) else resolve_model(source)
        return found.text().language
    except (IndexerError, OSError, ValueError, TypeError):
        return None


def current_index() -> Index:
    """The open index, or an error in the page (with the command that builds it) and a stopped run."""
    path = index_dir()
    found = FolderInfo.of(path)
    if not found.has_index:
        st.error(t("index.missing", path=path))
        if found.interrupted:
            st.warning(t("index.interrupted"))
        st.info(t("index.build_demo"))
        st.code(build_command(path), language="bash")
        st.caption(t("index.own_documents"))
        st.code(f"{program('indexer')} build --corpus YOUR_FILES --out {shlex.quote(str(path))}", language="bash")
        st.stop()
    try:
        with st.spinner(t("spinner.open")):
            index = _open_index(str(path), found.stamp)  # the stamp changes when the index is rebuilt in place
            index.elmo.text.tokenize(
                "Warm up."
            )  # the first tokenization loads its tokenizer (seconds): here, not later
            return index
    except (IndexerError, OSError, ValueError) as error:
        st.error(t("index.cannot_open", path=path, error=error))
        st.info(t("index.rebuild"))
        demo = demo_of(path, found)
        st.code(rebuild_demo_command(path, demo) if demo else rebuild_command(path), language="bash")
        st.stop()


def first_visit(page: str, index: Index) -> bool:
    """True once per session and index for ``page`` (a new session, or another index opened): the moment a page fills
    its question with its first example. Later runs keep what the user typed."""
    seen = f"{page}.examples"
    if st.session_state.get(seen) == str(index.path):
        return False
    st.session_state[seen] = str(index.path)
    return True


def _key(index: Index) -> str:
    """Cache key of an open index: its folder and build stamp (the Index object itself is not hashed)."""
    return f"{index.path}@{FolderInfo.of(index.path).stamp}"


@st.cache_data(max_entries=128, show_spinner=False)
def _search(
    _index: Index, key: str, query: str, k: int, method: str, weights: tuple[float, ...], spelling: bool
) -> Results[DocumentHit]:
    return _index.search(query, k=k, method=method, layers=list(weights), spelling=spelling)


def search(index: Index, query: str, k: int, method: str, mix: LayerMix, spelling: bool = True) -> Results[DocumentHit]:
    """Document search, with its notices (cached per question; γ does not change cosine rankings); ``spelling``:
    non-words respelled."""
    with st.spinner(t("spinner.search")):
        return _search(index, _key(index), query, k, method, mix.weights, spelling)


def _asked(index: Index, choice: str | int) -> dict:
    """How a question names a page's representation (its ``choice``: what caches key on) to the index
    (``Representation.question``)."""
    return by_choice(choice, index.elmo.n_layers).question(index.layer_mix.weights)


@st.cache_data(max_entries=128, show_spinner=False)
def _neighbors(
    _index: Index,
    key: str,
    sentence: str,
    word: str,
    position: int,
    k: int,
    same_word: bool,
    choice: str | int,
    explain: bool,
) -> Neighbors:
    return _index.neighbors(
        sentence, word, position=position, k=k, same_word=same_word, explain=explain, **_asked(_index, choice)
    )


def neighbors(
    index: Index,
    sentence: str,
    word: str,
    position: int,
    k: int,
    same_word: bool,
    representation: Representation,
    explain: bool = False,
) -> Neighbors:
    """Nearest uses in context of one token of ``sentence`` in one of the index's representations (cached per
    question). ``explain`` adds what the language model expects at the token (``Neighbors.expected``)."""
    with st.spinner(t("spinner.neighbors")):
        return _neighbors(index, _key(index), sentence, word, position, k, same_word, representation.choice, explain)


@st.cache_data(max_entries=64, show_spinner=False)
def _compare(_index: Index, key: str, use_a: tuple[str, str, int], use_b: tuple[str, str, int]) -> Comparison:
    (sentence_a, word_a, position_a), (sentence_b, word_b, position_b) = use_a, use_b
    return _index.compare(sentence_a, word_a, sentence_b, word_b, position_a, position_b)


def compare(index: Index, use_a: tuple[str, str, int], use_b: tuple[str, str, int]) -> Comparison:
    """Two uses (sentence, word, position) compared in every representation (cached per pair)."""
    with st.spinner(t("spinner.compare")):
        return _compare(index, _key(index), use_a, use_b)


@st.cache_data(max_entries=32, show_spinner=False)
def _word_uses(_index: Index, key: str, word: str) -> list[Use]:
    return _index.use_vectors(word, representation="elmo")[0]


def word_uses(index: Index, word: str) -> list[Use]:
    """Every use of ``word`` in the index, its sentence and token position: where its nearest uses of the same word
    come from (cached per word)."""
    return _word_uses(index, _key(index), word)


@st.cache_data(max_entries=64, show_spinner=False)
def _typical(_index: Index, key: str, word: str, choice: str | int, senses: tuple[str | None, ...]) -> TypicalCosines:
    _, vectors = _index.use_vectors(word, **_asked(_index, choice))
    return typical_cosines(vectors, senses)


def typical(index: Index, word: str, representation: Representation, senses: tuple[str | None, ...]) -> TypicalCosines:
    """The median cosines of ``word``'s same-sense and other-sense uses in a representation, ``senses`` labelling
    its uses in ``word_uses`` order (cached per word, representation and labels)."""
    with st.spinner(t("spinner.compare")):
        return _typical(index, _key(index), word, representation.choice, senses)


@st.cache_data(max_entries=32, show_spinner=False)
def _senses(_index: Index, key: str, word: str, k: int | str, choice: str | int) -> Senses:
    return _index.senses(word, k=k, **_asked(_index, choice))


def senses(index: Index, word: str, k: int | str, representation: Representation) -> Senses:
    """Sense clusters of ``word`` in one of the index's representations (cached per word, the slowest question the
    UI asks)."""
    with st.spinner(t("spinner.senses")):
        return _senses(index, _key(index), word, k, representation.choice)


@st.cache_data(max_entries=128, show_spinner=False)
def _glove_nearest(_index: Index, key: str, word: str, k: int) -> list[tuple[str, float]] | None:
    return _index.glove_nearest(word, k)


def glove_nearest(index: Index, word: str, k: int) -> list[tuple[str, float]] | None:
    """GloVe's ``k`` nearest words to ``word`` that may name something (``Index.glove_nearest``); None when ``word``
    has no GloVe vector."""
    return _glove_nearest(index, _key(index), word, k)


def uses(index: Index, word: str) -> int:
    """How many uses of ``word`` (any case) the index holds vectors of: 0 for a stopword or a word it lacks."""
    try:
        return len(index.word_ids(word))
    except QueryError:
        return 0


def examples(index: Index) -> Examples:
    """The examples of the index's language that this index can answer (``examples.answerable``); when none of the
    demo's words is in it (one's own index), the Senses page suggests the index's most frequent content words."""
    rules = index.elmo.text
    found = answerable(
        examples_for(rules.language),
        rules,
        in_text=lambda word: normalize(word) in index.parts.frequencies.counts,
        uses=lambda word: uses(index, word),
    )
    if found.sense_words:
        return found
    frequent = sorted(index.parts.frequencies.counts, key=lambda word: -index.parts.frequencies.counts[word])
    words = (w for w in frequent if is_content_word(w, rules.stopwords) and any(c.isalpha() for c in w))
    suggested = tuple(itertools.islice((w for w in words if uses(index, w) >= 2), N_SUGGESTED_WORDS))
    return dataclasses.replace(found, sense_words=suggested)
