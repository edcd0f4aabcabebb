"""Search page: ELMo sentence search with a live layer mix, beside the GloVe-mean baseline for the same query."""
from __future__ import annotations

import streamlit as st

from app import state
from app.render import errors_in_page, notices, sentence_hits
from app.widgets import layer_mix_control

index = state.current_index()
st.title("Search")
st.caption("Sentences ranked by the cosine similarity of their mean ELMo vector to the query's, "
           "next to the same search with context-free GloVe vectors.")

st.session_state.setdefault("ui.search.k", 10)
st.session_state.setdefault("ui.search.hybrid", False)
query = st.text_input("Query", key="ui.search.query", placeholder="e.g. animals that live by the river")
count, hybrid = st.columns([3, 1], vertical_alignment="bottom")
k = count.slider("Results", 1, 50, key="ui.search.k")
hybrid = hybrid.toggle("Hybrid keyword search", key="ui.search.hybrid",
                       help="Fuse the ELMo ranking with BM25 keyword matching (reciprocal rank fusion); "
                            "scores are then fusion scores, not cosines.")
with st.expander("Layer mix", expanded=True):
    mix = layer_mix_control("ui.search.mix", index.elmo.n_layers, index.layer_mix)

if not query.strip():
    st.info("Type a query to search the collection.")
    st.stop()

elmo_column, glove_column = st.columns(2, gap="large")
with elmo_column:
    st.subheader("ELMo" + (" + keywords" if hybrid else ""))
    if mix is not None:
        with errors_in_page():
            hits, messages = state.search(index, query, k, mix, hybrid)
            notices(messages)
            sentence_hits(hits)
with glove_column:
    st.subheader("GloVe mean")
    with errors_in_page():
        hits, messages = state.search_glove(index, query, k)
        notices(messages)
        sentence_hits(hits)
