"""Search page: the query, example queries and a Search button first, then the documents found; the GloVe
baseline one tab away, and the method and layer mix under "Advanced". The query and options live in the URL."""

from __future__ import annotations

import streamlit as st

from app import state
from app.examples import QUERIES
from app.render import RELEVANCE_HELP, document_hits, errors_in_page, notices
from app.widgets import layer_mix_control
from encoder import LayerMix
from encoder.mix import PRESETS
from indexer.ranking import METHOD_NAMES, METHODS

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
    if params.get("k", "").isdigit():
        st.session_state["ui.search.k"] = min(max(int(params["k"]), 1), 50)
    if params.get("layers") in PRESETS:
        st.session_state["ui.search.mix.preset"] = params["layers"]
        for j, w in enumerate(LayerMix.parse(params["layers"], index_layers).weights):
            st.session_state[f"ui.search.mix.s{j}"] = round(w, 2)


def to_url(query: str, method: str, k: int, mix: LayerMix) -> None:
    """The page's query and options, so a reload keeps them and a search can be shared."""
    preset = st.session_state.get("ui.search.mix.preset")
    st.query_params.from_dict(
        {
            "q": query,
            "method": method,
            "k": str(k),
            "layers": preset if preset in PRESETS else ",".join(f"{w:.2f}" for w in mix.weights),
        }
    )


def use_example() -> None:
    """A clicked example query becomes the query."""
    st.session_state["ui.search.query"] = st.session_state["search.example"]
    st.session_state["search.example"] = None


index = state.current_index()
n_layers = index.elmo.n_layers
from_url(n_layers)
st.title("Search")

query_column, button_column = st.columns([5, 1], vertical_alignment="bottom")
query = query_column.text_input(
    "Query", key="ui.search.query", placeholder="e.g. animals that live by the river", max_chars=10_000
)
button_column.button("Search", type="primary", width="stretch", icon=":material/search:")
st.pills("Examples", QUERIES, key="search.example", on_change=use_example)

st.session_state.setdefault("ui.search.k", 10)
st.session_state.setdefault("ui.search.method", METHODS[0])
with st.expander("Advanced: method, number of results, layer mix"):
    method = st.radio(
        "Method",
        ELMO_METHODS,
        key="ui.search.method",
        format_func=METHOD_NAMES.get,
        horizontal=True,
        help="ELMo + keywords (the default) fuses ELMo passage similarity with BM25 keyword matching; "
        "it measured best on the demo's judged queries (see the README).",
    )
    k = st.slider("Results", 1, 50, key="ui.search.k")
    mix = layer_mix_control("ui.search.mix", n_layers, index.search_mix)

if not query.strip():
    st.info("Type a query, or pick an example, to search the collection.")
    st.stop()
if mix is None:
    st.stop()
to_url(query, method, k, mix)

st.caption("Documents ranked by how well they answer the query; under each, its best passage.", help=RELEVANCE_HELP)
elmo_tab, glove_tab = st.tabs([METHOD_NAMES[method], METHOD_NAMES["glove"]])
with elmo_tab, errors_in_page():
    hits, messages = state.search(index, query, k, method, mix)
    notices(messages)
    document_hits(hits)
with glove_tab, errors_in_page():
    st.caption("The same documents ranked by static GloVe vectors (one vector per word, whatever its context).")
    hits, messages = state.search(index, query, k, "glove", mix)
    notices(messages)
    document_hits(hits)
