"""Word in context beside another model: the same uses of a word asked of an index of the same documents built with
another model, ours beside a published one (``python -m app --model elmo-small`` builds the demo's). Such an index
is found by its folder's name: FOLDER-MODEL beside the open FOLDER (``settings.variant_dir``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st

from encoder.model_files import MODEL_NAMES, PUBLISHED
from indexer import Index
from indexer.manifest import FolderInfo
from indexer.representations import IndexMix, Representation, choices
from indexer.results import Neighbors

from . import state
from .i18n import t
from .render import errors_in_page, notices, token_hits
from .settings import variant_dir

CHOICE_KEY = "ui.wic.other_model"


def variants(folder: Path) -> dict[str, Path]:
    """The indexes of the documents of ``folder`` by model name: the folder's own (its base: FOLDER when it is
    FOLDER-MODEL), and each FOLDER-MODEL that holds an index."""
    base = next(
        (folder.with_name(folder.name[: -len(m) - 1]) for m in PUBLISHED if folder.name.endswith(f"-{m}")), folder
    )
    found = {model_name(base): base} if FolderInfo.of(base).has_index else {}
    for model in PUBLISHED:
        if FolderInfo.of(variant_dir(base, model)).has_index:
            found[model] = variant_dir(base, model)
    return found


def model_name(folder: Path) -> str:
    """A model as the page names it: a shipped or published model by its name, another by its folder's."""
    source = FolderInfo.of(folder).model_source
    if isinstance(source, list):  # published weights by their files: [options, weights]
        return Path(source[-1]).stem
    return source if source in MODEL_NAMES else Path(str(source)).name


def other_model(index: Index) -> Index | None:
    """A choice of another model's index of the same documents, opened; None when there is no other or none is
    chosen. Without another, an English index gets the commands that build the demo with the paper's model."""
    others = {name: path for name, path in variants(index.path).items() if path != index.path}
    if not others:
        if index.elmo.text.language == "en":
            st.caption(t("wic.paper_model"))
        return None
    chosen = st.selectbox(
        t("wic.other_model"), list(others), index=None, key=CHOICE_KEY, help=t("wic.other_model_help")
    )
    if chosen is None:
        return None
    with errors_in_page():
        other = state.open_index_at(others[chosen])
        if other.elmo.text.language != index.elmo.text.language:
            st.warning(t("wic.other_language", model=chosen))
            return None
        return other
    return None


def side_by_side(
    other: Index,
    queries: Sequence[tuple[str, str, str, int]],
    k: int,
    same_word: bool,
    representation: Representation,
    labels_of: Callable[[Neighbors], list],
) -> None:
    """The nearest uses of each chosen word by the other model, in columns as the page's own lists, in the page's
    representation where the other model offers it (a layer it has), else in its index's layer mix."""
    other_representation = representation if representation in choices(other.elmo.n_layers) else IndexMix()
    st.subheader(t("wic.other_heading", model=model_name(other.path)))
    for column, (side, sentence, word, position) in zip(st.columns(len(queries), gap="large"), queries):
        with column, errors_in_page():
            st.markdown(t("wic.other_list", word=word, side=side.upper()))
            result = state.neighbors(other, sentence, word, position, k, same_word, other_representation)
            notices(result.notices)
            token_hits(result.hits, labels_of(result))
