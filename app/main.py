"""Streamlit entry point (``streamlit run app/main.py``): page setup, the UI language, the index setting, the four
pages."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app import i18n  # light: only the strings

ICON = str(Path(__file__).with_name("icon.png"))  # served by the app itself: a Material icon would be fetched online
st.set_page_config(page_title="ELMo Search", page_icon=ICON, layout="wide")
with st.spinner(i18n.LOADING):  # the first run imports torch and the index code (seconds on a cold start)
    from app.model_choice import variants
    from app.state import INDEX_DIR_KEY, index_dir, index_language, index_switched, open_linked_demo
    from app.widgets import STATE_PREFIX, WIDTH_CSS
    from demo.corpora import DEMOS
    from indexer.manifest import FolderInfo

t = i18n.t
VIEWS = Path(__file__).resolve().parent / "views"

# Streamlit forgets a widget's value when its page is not shown; re-setting the value keeps it.
for key in [k for k in st.session_state if str(k).startswith(STATE_PREFIX)]:
    st.session_state[key] = st.session_state[key]

PAGE_SLOT = "page.slot"
open_linked_demo()  # a link to the Korean demo opens it
index_dir()  # else the folder is seeded from the ELMO_SEARCH_INDEX setting
if index_switched():  # another index than the last run's: the old questions are forgotten, and the page moves
    st.session_state[PAGE_SLOT] = 1 - st.session_state.get(PAGE_SLOT, 0)
i18n.settle(index_language())  # the user's language, else the index's

page = st.navigation(
    [
        st.Page(VIEWS / "search.py", title=t("page.search"), icon=":material/search:", default=True),
        st.Page(VIEWS / "word_in_context.py", title=t("page.word_in_context"), icon=":material/text_fields:"),
        st.Page(VIEWS / "senses.py", title=t("page.senses"), icon=":material/scatter_plot:"),
        st.Page(VIEWS / "about.py", title=t("page.about"), icon=":material/info:"),
    ]
)
st.set_page_config(page_title=f"{page.title} · ELMo Search", page_icon=ICON)  # each page its own title; not its icon


def open_demo() -> None:
    st.session_state[INDEX_DIR_KEY] = str(DEMOS[st.session_state["demo"]].index_dir)


with st.sidebar:
    i18n.language_switch()
    built = [key for key, demo in DEMOS.items() if FolderInfo.of(demo.index_dir).has_index]
    if len(built) > 1:  # the English and the Korean demo: one click apart
        shown = next((key for key in built if str(DEMOS[key].index_dir) == str(index_dir())), None)
        st.radio(
            t("sidebar.demo"),
            built,
            index=built.index(shown) if shown else None,
            format_func=lambda key: DEMOS[key].name,
            key="demo",
            on_change=open_demo,
            horizontal=True,
        )
    models = variants(index_dir())  # the open documents indexed with other models too: one click apart
    if len(models) > 1:
        shown = next((name for name, path in models.items() if path == index_dir()), None)
        st.radio(
            t("sidebar.model"),
            list(models),
            index=list(models).index(shown) if shown else None,
            key="model",
            on_change=lambda: st.session_state.update({INDEX_DIR_KEY: str(models[st.session_state["model"]])}),
        )
    st.text_input(t("sidebar.index_dir"), key=INDEX_DIR_KEY, help=t("sidebar.index_dir_help"))

st.html(WIDTH_CSS)
# The page is drawn in one of two areas, the other one emptied, and moves to the other area when another index
# opens: the old index's results then leave the screen at once, not when the new index has opened (Streamlit keeps
# an area's old elements on screen until the run that replaces them ends).
slot = st.session_state.get(PAGE_SLOT, 0)
areas = [st.container() if area == slot else st.empty() for area in range(2)]
with areas[slot]:
    page.run()
