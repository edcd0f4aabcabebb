"""Each page's state in the URL, so a reload or a shared link shows the same page.

A page lists its ``Param``s. ``read`` gives the widgets the URL's values once, on the session's first run of the
page; ``write`` puts the page's current values into the URL on every run, leaving out the empty ones (a cleared
query leaves the URL). Values are parsed strictly: a value that is not one the widget could hold is ignored, and
the widget keeps its default, as it does for a name the URL gives twice (``i18n.url_value``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from encoder import LayerMix
from encoder.mix import PRESETS

from . import i18n, state

MAX_TEXT = 10_000  # the longest query or sentence a URL may carry (the text boxes' own limit)


@dataclass(frozen=True)
class Param:
    """One URL parameter: its ``name``; ``parse``, which turns the URL's text into a value (None: not a valid
    value); and ``apply``, which gives a valid value to the page's widgets."""

    name: str
    parse: Callable[[str], Any]
    apply: Callable[[Any], None]


def _set(key: str, value: Any) -> None:
    st.session_state[key] = value


def widget(name: str, key: str, parse: Callable[[str], Any]) -> Param:
    """The URL parameter ``name`` of the widget whose state is ``key``."""
    return Param(name, parse, functools.partial(_set, key))


def text(value: str) -> str | None:
    """Any non-blank text up to ``MAX_TEXT`` characters."""
    return value if value.strip() and len(value) <= MAX_TEXT else None


def choice(options: Sequence[Any]) -> Callable[[str], Any]:
    """One of ``options``, written as ``str(option)`` (so 2 is "2" and "auto" is "auto")."""
    by_text = {str(option): option for option in options}
    return by_text.get


def whole(low: int, high: int) -> Callable[[str], int | None]:
    """A whole number from ``low`` to ``high``, in plain digits (past leading zeros, no more of them than ``high``
    has: Python refuses to read a number of thousands of digits, and none is in range)."""

    def parse(value: str) -> int | None:
        digits = value.lstrip("0") or "0"
        if not (value.isascii() and value.isdigit()) or len(digits) > len(str(high)):
            return None
        return int(digits) if low <= int(digits) <= high else None

    return parse


def switch(value: str) -> bool | None:
    """On or off: "1" or "0"."""
    return {"1": True, "0": False}.get(value)


def show_switch(on: bool) -> str:
    return "1" if on else "0"


def layer_mix(n_layers: int) -> Callable[[str], LayerMix | None]:
    """A preset name, or one weight from 0 to 1 per layer, comma-separated, not all zero ("0.50,0.00,0.50")."""

    def parse(value: str) -> LayerMix | None:
        if value in PRESETS:
            return LayerMix.parse(value, n_layers)
        try:
            weights = [float(part) for part in value.split(",")]
        except ValueError:
            return None
        if len(weights) != n_layers or not all(math.isfinite(w) and 0 <= w <= 1 for w in weights) or not any(weights):
            return None
        return LayerMix(tuple(w / sum(weights) for w in weights))

    return parse


def show_mix(preset: str | None, mix: LayerMix) -> str:
    """A preset by its name, a custom mix by its weights (two decimals, as the sliders show them)."""
    return preset if preset in PRESETS else ",".join(f"{w:.2f}" for w in mix.weights)


def read(page: str, params: Sequence[Param]) -> None:
    """On the session's first run of ``page``, the URL's valid values go to the page's widgets; later runs leave
    the widgets to the user."""
    done = f"url.read.{page}"
    if st.session_state.get(done):
        return
    st.session_state[done] = True
    for param in params:
        value = i18n.url_value(param.name)
        parsed = None if value is None else param.parse(value)
        if parsed is not None:
            param.apply(parsed)


def write(values: dict[str, str | None]) -> None:
    """This run's page state as the URL: ``values`` that are not empty, the demo collection where it is not the one
    the app opens by itself (``state.url_params``), and the UI language where it is not the index's
    (``i18n.url_params``)."""
    shown = {name: value for name, value in values.items() if value}
    st.query_params.from_dict(shown | state.url_params() | i18n.url_params())
