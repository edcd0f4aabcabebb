"""Search page: the query, example queries and a Search button first, then the documents found; the GloVe
baseline one tab away, and the method and layer mix under "Advanced". The query and options live in the URL."""

from __future__ import annotations

import streamlit as st

from app import i18n, state
from app.examples import examples_for
from app.i18n import t
from app.render import document_hits, errors_in_page, notices
from app.widgets import layer_mix_control
from encoder import LayerMix
from encoder.mix import PRESETS
from encoder.numbers import Number
from indexer.ranking import METHODS

ELMO_METHODS = [m for m in METHODS if m != "glove"]  # the GloVe baseline has its own tab
URL_KEYS = {"q": "ui.search.query", "method": "ui.search.method", "k": "ui.search.k"}


def from_url(index_layers: int) -> None:
    """On a session's first visit, the query and options of a shared or reloaded URL become the page's."""
    if st.session_state.get("search.url_read"):
        return
    st.session_state["search.url_read"] = True
    params = st.query_params
    if params.get("q"):
        st.session_state["ui.search.query"] = params["q"][:10_000]
    if params.get("method") in ELMO_METHODS:
        st.session_state["ui.search.method"] = params["method"]
    k = Number(int, 1).parse(params.get("k", ""))  # strictly: "²" or "1e999" leave the default
    if k is not None:
        st.session_state["ui.search.k"] = min(k, 50)
    if params.get("layers") in PRESETS:
        st.session_state["ui.search.mix.preset"] = params["layers"]
        for j, w in enumerate(LayerMix.parse(params["layers"], index_layers).weights):
            st.session_state[f"ui.search.mix.s{j}"] = round(w, 2)


def to_url(query: str, method: str, k: int, mix: LayerMix) -> None:
    """The page's query and options (and the UI language when it is not the index's), so a reload keeps them and
    a search can be shared."""
    preset = st.session_state.get("ui.search.mix.preset")
    st.query_params.from_dict(
        {
            "q": query,
            "method": method,
            "k": str(k),
            "layers": preset if preset in PRESETS else ",".join(f"{w:.2f}" for w in mix.weights),
            **i18n.url_params(),
        }
    )


def layers_label() -> str:
    """The layers the ELMo part compares, in words: the mix control's preset (before it has run: the index's)."""
    preset = st.session_state.get("ui.search.mix.preset", index.manifest.search_layers.spec)
    return t(f"layers.{preset}") if preset in PRESETS else t("layers.custom")


def use_example() -> None:
    """A clicked example query becomes the query."""
    st.session_state["ui.search.query"] = st.session_state["search.example"]
    st.session_state["search.example"] = None


index = state.current_index()
n_layers = index.elmo.n_layers
examples = examples_for(index.elmo.text.language)
from_url(n_layers)
st.title(t("search.title"))

query_column, button_column = st.columns([5, 1], vertical_alignment="bottom")
query = query_column.text_input(
    t("search.query"),
    key="ui.search.query",
    placeholder=t("search.placeholder", example=examples.placeholder),
    max_chars=10_000,
)
button_column.button(t("search.button"), type="primary", width="stretch", icon=":material/search:")
st.pills(t("search.examples"), examples.queries, key="search.example", on_change=use_example)

st.session_state.setdefault("ui.search.k", 10)
st.session_state.setdefault("ui.search.method", METHODS[0])
with st.expander(t("search.advanced")):
    method = st.radio(
        t("search.method"),
        ELMO_METHODS,
        key="ui.search.method",
        format_func={m: t(f"method.{m}", layers=layers_label()) for m in ELMO_METHODS}.get,  # this run's
        horizontal=True,
        help=t("search.method_help"),
    )
    k = st.slider(t("search.results"), 1, 50, key="ui.search.k")
    mix = layer_mix_control("ui.search.mix", n_layers, index.search_mix)

if not query.strip():
    st.info(t("search.type_query"))
    st.stop()
if mix is None:
    st.stop()
to_url(query, method, k, mix)

st.caption(t("search.caption"), help=t("search.relevance_help"))
layers = layers_label()
elmo_tab, glove_tab = st.tabs([t(f"method.{method}", layers=layers), t("method.glove")])
with elmo_tab, errors_in_page():
    hits, messages = state.search(index, query, k, method, mix)
    notices(messages)
    document_hits(hits, index.elmo.text, layers, key="search.weaker")
with glove_tab, errors_in_page():
    st.caption(t("search.glove_caption"))
    hits, messages = state.search(index, query, k, "glove", mix)
    notices(messages)
    document_hits(hits, index.elmo.text, layers, key="search.weaker_glove")
