"""Search page: the query, example queries and a Search button first, then the documents found; the GloVe
baseline one tab away, and the method and layer mix under "Advanced". The query and options live in the URL
(``app.url``)."""

from __future__ import annotations

import streamlit as st

from app import state, url
from app.i18n import plain, t
from app.render import AsTyped, document_hits, errors_in_page, notices
from app.widgets import layer_mix_control, set_layer_mix
from demo.corpora import DEMOS
from encoder.mix import PRESETS
from indexer.options import SearchOptions
from indexer.ranking import METHODS

ELMO_METHODS = [m for m in METHODS if m != "glove"]  # the GloVe baseline has its own tab


def url_params(n_layers: int) -> list[url.Param]:
    return [
        url.widget("q", "ui.search.query", url.text),
        url.widget("method", "ui.search.method", url.choice(ELMO_METHODS)),
        url.widget("k", "ui.search.k", url.whole(1, 50)),
        url.widget("typed", "ui.search.as_typed", url.switch),
        url.Param("layers", url.layer_mix(n_layers), lambda mix: set_layer_mix("ui.search.mix", n_layers, mix)),
        url.widget("gamma", "ui.search.mix.gamma", url.choice([round(0.1 * g, 1) for g in range(1, 31)])),
    ]


def layers_label() -> str:
    """The layers the ELMo part compares, in words: the mix control's preset (before it has run: the index's)."""
    preset = st.session_state.get("ui.search.mix.preset", index.manifest.search_layers.spec)
    return t(f"layers.{preset}") if preset in PRESETS else t("layers.custom")


def search_as_typed() -> None:
    """The respelled query searched as typed, in this tab: the switch turned on (and so the URL's ``typed``), for
    this query only (``forget_as_typed``)."""
    st.session_state["ui.search.as_typed"] = True
    st.session_state["search.as_typed_for"] = st.session_state["ui.search.query"]


def forget_as_typed(query: str) -> None:
    """Turn the switch off again once another query is asked, where the button (not the user) turned it on: a
    later query's typos are respelled, as the first one's were, instead of a switch hidden under "Advanced"
    silently keeping them as typed."""
    asked_for = st.session_state.get("search.as_typed_for")
    if asked_for is not None and asked_for != query:
        st.session_state["ui.search.as_typed"] = False
        st.session_state["search.as_typed_for"] = None


def use_example() -> None:
    """A clicked example query becomes the query."""
    st.session_state["ui.search.query"] = st.session_state["search.example"]
    st.session_state["search.example"] = None


index = state.current_index()
n_layers = index.elmo.n_layers
examples = state.examples(index)
url.read("search", url_params(n_layers))
st.title(t("search.title"))

query_column, button_column = st.columns([5, 1], vertical_alignment="bottom")
query = query_column.text_input(
    t("search.query"),
    key="ui.search.query",
    placeholder=t("search.placeholder", example=examples.placeholder) if examples.placeholder else None,
    max_chars=10_000,
)
button_column.button(t("search.button"), type="primary", width="stretch", icon=":material/search:")
if examples.queries:
    st.pills(t("search.examples"), examples.queries, key="search.example", on_change=use_example)

forget_as_typed(query)
st.session_state.setdefault("ui.search.k", SearchOptions().k)  # the library's defaults
st.session_state.setdefault("ui.search.method", SearchOptions().method)
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
    as_typed = st.toggle(t("search.as_typed"), key="ui.search.as_typed")
    mix = layer_mix_control("ui.search.mix", n_layers, index.search_mix)

mix_text = url.show_mix(st.session_state.get("ui.search.mix.preset"), mix) if mix else None
gamma = st.session_state["ui.search.mix.gamma"]
params = {"q": query, "method": method, "k": str(k), "layers": mix_text, "gamma": None if gamma == 1 else str(gamma)}
url.write(params | {"typed": url.show_switch(True) if as_typed else None})
if not query.strip():
    st.info(t("search.type_query"))
    st.stop()
if mix is None:
    st.stop()
other_demo = state.other_demo(query, index.elmo.text.language)
if other_demo is not None:  # a Korean query on the English demo, or the other way round: one click away
    written, shown = (plain(f"language.{language}") for language in (other_demo, index.elmo.text.language))
    st.info(t("search.other_language", language=written, collection=shown), icon=":material/translate:")
    st.button(t("search.in_demo", demo=DEMOS[other_demo].name), on_click=state.search_in_demo, args=(other_demo, query))

st.caption(t("search.caption"), help=t("search.relevance_help"))
layers = layers_label()
elmo_tab, glove_tab = st.tabs([t(f"method.{method}", layers=layers), t("method.glove")])
with elmo_tab, errors_in_page():
    found = state.search(index, query, k, method, mix, not as_typed)
    notices(found.notices, AsTyped(query, search_as_typed, "search.as_typed.elmo"))
    document_hits(found.hits, index.elmo.text, layers)
with glove_tab, errors_in_page():
    st.caption(t("search.glove_caption"))
    found = state.search(index, query, k, "glove", mix, not as_typed)
    notices(found.notices, AsTyped(query, search_as_typed, "search.as_typed.glove"))
    document_hits(found.hits, index.elmo.text, layers)
