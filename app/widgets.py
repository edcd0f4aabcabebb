"""Controls shared by several pages: the layer mix (presets, sliders, live formula), the representation choice of
Word in context and Senses, the token picker, and the rule that maps a word as typed to the token the index knows."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from encoder import LayerMix
from encoder.mix import PRESETS
from encoder.text import TextRules, composed
from encoder.words import is_content_word, normalize
from indexer.representations import IndexMix, OneLayer, Representation, SenseReadout, by_choice, choices

from . import url
from .i18n import Markdown, plain, t
from .render import escape

CUSTOM = "custom"
STATE_PREFIX = "ui."
"""Keys that start with this survive switching pages (``main.py`` keeps them alive)."""
NARROW_PX = 700
"""Narrower screens (phones) get ``by_width``'s narrow layout."""
WIDTH_CSS = (
    f"<style>@media (max-width: {NARROW_PX - 0.02}px) {{ [class*='st-key-wide-'] {{ display: none; }}"
    " .katex-display { font-size: 0.8em; } }"
    f"@media (min-width: {NARROW_PX}px) {{ [class*='st-key-narrow-'] {{ display: none; }} }}</style>"
)
"""Shows each ``by_width`` pair's container that fits the screen, and sets formulas smaller on a phone so that they
fit it; ``main.py`` puts it on every page, in one place, so it never leaves the page while a page reruns."""


def by_width(name: str) -> tuple[DeltaGenerator, DeltaGenerator]:
    """Two containers for the same content: one laid out for screens at least ``NARROW_PX`` wide, one for narrower
    ones (phones). ``WIDTH_CSS`` shows only the one that fits, so a desktop gets columns where a phone gets tabs
    (Streamlit tells the server nothing of the screen, and its own columns only stack under 640 px)."""
    return st.container(key=f"wide-{name}"), st.container(key=f"narrow-{name}")


def layer_name(j: int, n_layers: int) -> str:
    """h_0 is the char-CNN token layer, h_1..h_L the biLSTM layers (plain text: ``i18n.plain``)."""
    if j == 0:
        return plain("layer.token")
    return plain("layer.lstm", j=j) + (plain("layer.top") if j == n_layers - 1 else "")


def _preset_of(weights: Sequence[float], n_layers: int) -> str:
    for name in PRESETS:
        if all(abs(a - b) < 1e-3 for a, b in zip(LayerMix.parse(name, n_layers).weights, weights)):
            return name
    return CUSTOM


def _apply_preset(key: str, n_layers: int) -> None:
    preset = st.session_state[f"{key}.preset"]
    if preset != CUSTOM:
        for j, w in enumerate(LayerMix.parse(preset, n_layers).weights):
            st.session_state[f"{key}.s{j}"] = round(w, 2)


def _mark_custom(key: str, n_layers: int) -> None:
    weights = [st.session_state[f"{key}.s{j}"] for j in range(n_layers)]
    total = sum(weights)
    st.session_state[f"{key}.preset"] = _preset_of([w / total for w in weights], n_layers) if total else CUSTOM


def set_layer_mix(key: str, n_layers: int, mix: LayerMix) -> None:
    """Give the layer-mix control ``key`` the weights of ``mix`` (from a shared link, say): its sliders, and the
    preset they make (custom when none)."""
    for j, w in enumerate(mix.weights):
        st.session_state[f"{key}.s{j}"] = round(w, 2)
    st.session_state[f"{key}.preset"] = _preset_of(mix.weights, n_layers)


def formula(mix: LayerMix) -> str:
    """ELMo = γ Σ s_j h_j written out with the current numbers, as LaTeX on two lines (one would be wider than a
    phone's screen)."""
    terms = " + ".join(rf"{w:.2f}\,\mathbf{{h}}_{j}" for j, w in enumerate(mix.weights))
    return (
        rf"\begin{{aligned}}\mathrm{{ELMo}} &= \gamma \sum_{{j=0}}^{{{len(mix.weights) - 1}}} s_j\,\mathbf{{h}}_j"
        rf" \\ &= {mix.gamma:.2f} \times \left({terms}\right)\end{{aligned}}"
    )


def layer_mix_control(key: str, n_layers: int, initial: LayerMix) -> LayerMix | None:
    """Preset buttons + one slider per layer weight s_j + γ, with the formula updated live.

    Returns None (after saying why in the page) when every weight is zero.
    """
    st.session_state.setdefault(f"{key}.preset", _preset_of(initial.weights, n_layers))
    for j, w in enumerate(initial.weights):
        st.session_state.setdefault(f"{key}.s{j}", round(w, 2))
    st.session_state.setdefault(f"{key}.gamma", float(initial.gamma))

    st.radio(
        t("mix.preset"),
        [*PRESETS, CUSTOM],
        key=f"{key}.preset",
        horizontal=True,
        format_func={preset: t(f"preset.{preset}") for preset in [*PRESETS, CUSTOM]}.get,
        on_change=_apply_preset,
        args=(key, n_layers),
        help=t("mix.preset_help"),
    )
    columns = st.columns(n_layers + 1)
    for j, column in enumerate(columns[:-1]):
        column.slider(
            f"s{j}: {layer_name(j, n_layers)}",
            0.0,
            1.0,
            step=0.01,
            key=f"{key}.s{j}",
            on_change=_mark_custom,
            args=(key, n_layers),
        )
    columns[-1].slider(t("mix.gamma"), 0.1, 3.0, step=0.1, key=f"{key}.gamma", help=t("mix.gamma_help"))
    raw = [st.session_state[f"{key}.s{j}"] for j in range(n_layers)]
    if sum(raw) <= 0:
        st.warning(t("mix.all_zero"))
        return None
    mix = LayerMix(tuple(w / sum(raw) for w in raw), float(st.session_state[f"{key}.gamma"]))
    st.latex(formula(mix))
    st.caption(t("mix.caption"))
    return mix


def representation_options(n_layers: int) -> list[str | int]:
    """The representation choice's options as pages and links spell them (``indexer.representations.choices``)."""
    return [representation.choice for representation in choices(n_layers)]


def representation_name(option: str | int, n_layers: int, readout_kind: str) -> str:
    """An option as the page names it, for what it is ("context prediction", "ELMo layer mix (paper)", "ELMo h1 · …"),
    as plain text."""
    representation = by_choice(option, n_layers)
    layer = layer_name(representation.layer, n_layers) if isinstance(representation, OneLayer) else ""
    return plain(representation.i18n_key(readout_kind), layer=layer)


def legacy_layer(n_layers: int, index_mix: LayerMix) -> Callable[[str], str | int | None]:
    """Links made before the representation choice said ``layer=0|1|2|average``: a layer is that layer, and the
    average is the index's mix where that mix is the average."""
    average = LayerMix.parse("average", n_layers)
    layer = url.whole(0, n_layers - 1)

    def parse(value: str) -> str | int | None:
        if value == "average":
            return IndexMix().choice if index_mix.weights == average.weights else None
        return layer(value)

    return parse


def representation_choice(key: str, n_layers: int, readout_kind: str) -> Representation:
    """Which vectors a use is compared by (``indexer.representations.choices``): context prediction (the default),
    the index's ELMo layer mix, or one ELMo layer (to watch neighbours move from spelling to meaning)."""
    options = representation_options(n_layers)
    names = {option: escape(representation_name(option, n_layers, readout_kind)) for option in options}
    st.session_state.setdefault(key, SenseReadout().choice)
    choice = st.radio(t("rep.label"), options, key=key, horizontal=True, format_func=names.get, help=t("rep.help"))
    return by_choice(choice, n_layers)


def typed_word(typed: str, rules: TextRules, indexed: Callable[[str], bool]) -> tuple[str | None, list[str]]:
    """The token the index knows for a word as the user typed it, by the model's own rules: the word itself when
    the index has it, else the one content word it splits into (배를 -> 배 + 를: 배). When it splits into several
    content words, (None, those words), so the page can say which to use. It is read composed (``composed``), as
    the library reads sentences: a link's 배 typed as jamo is the sentence's 배."""
    typed = composed(typed.strip())
    if indexed(typed):
        return typed, []
    words = list(dict.fromkeys(t for t in rules.tokenize(typed) if is_content_word(t, rules.stopwords)))
    if len(words) > 1:
        return None, words
    return (words[0] if words else typed), []


def choose_word(key: str, word: str) -> None:
    """Make ``word`` the choice of the token picker ``key`` (e.g. when an example is loaded)."""
    st.session_state[key] = word
    for widget in [k for k in st.session_state if str(k).startswith(f"pick.{key}.")]:
        del st.session_state[widget]  # re-seeded from the word on the next run


def token_picker(
    label: str, sentence: str, key: str, rules: TextRules, indexed: Callable[[str], bool]
) -> tuple[str, int] | None:
    """Clickable tokens of ``sentence`` as the index's model tokenizes it (``rules``), so positions agree: the words
    the index holds (``indexed``) among the language's content words (``TextRules.content_positions``: never a
    stopword; in Korean nouns, never a particle, an ending or a verb's stem), and the content words it lacks as "not
    offered". The chosen word (``key``) carries over when the sentence is edited, matched as ``typed_word`` matches
    it (배를 finds 배)."""
    tokens = rules.tokenize(sentence)
    content = rules.content_positions(sentence)
    words = [i for i in content if indexed(tokens[i])]
    missing = list(dict.fromkeys(tokens[i] for i in content if i not in words))
    if missing:
        st.caption(t("picker.not_indexed", words=Markdown(", ".join(map(escape, missing)))))
    if not words:
        st.info(t("picker.no_words"))
        return None
    widget = f"pick.{key}.{sentence}"  # a new sentence gets a new widget, seeded from the remembered word
    remembered = st.session_state.get(key, "")
    if widget not in st.session_state:
        wanted = normalize(typed_word(remembered, rules, indexed)[0] or "") if remembered else None
        st.session_state[widget] = next((i for i in words if normalize(tokens[i]) == wanted), None)
    position = st.pills(label, words, format_func=lambda i: escape(tokens[i]), key=widget)  # labels are markdown
    if position is None:
        if remembered and normalize(remembered) not in {normalize(token) for token in tokens}:
            st.info(t("picker.not_in_sentence", word=escape(remembered)))
        else:
            st.info(t("picker.click"))
        return None
    st.session_state[key] = tokens[position]
    return tokens[position], position
