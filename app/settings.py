"""Where the index lives and how the app looks, shared by ``python -m app`` and the pages so both always agree (the
demo collections themselves: ``demo.corpora``)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from demo.corpora import DEMOS, demo_corpus
from encoder.commands import program

CODE_ROOT = Path(__file__).resolve().parent.parent  # what holds the app package: a checkout, or site-packages
INDEX_ENV = "ELMO_SEARCH_INDEX"
MAIN_SCRIPT = Path(__file__).resolve().parent / "main.py"
PRIMARY_COLOR = "#B42318"  # darker than Streamlit's red: text and selected pills in it pass WCAG AA contrast (4.5:1)
TEXT_COLOR = "#111111"
"""Darker than Streamlit's: its captions are this colour at 60 % opacity, 3.9:1 on white with the default colour and
4.9:1 with this one (AA asks 4.5:1)."""
CHART_COLOURS = ("#0072B2", "#A85C00", "#007A5E", "#A8437E", "#C0392B", "#332288", "#000000", "#6B5E00")
"""Series colours of the app's charts: the hues of Okabe & Ito's colour-blind-safe palette, most distinct first,
darkened where needed so that each reads on white at AA's 4.5:1 (sky blue became indigo, yellow olive)."""


def configured_index_dir(demo: str = "en") -> Path:
    """The ``ELMO_SEARCH_INDEX`` setting, else the index of ``demo`` (under ``indexes/`` of a checkout)."""
    value = os.environ.get(INDEX_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else DEMOS[demo].index_dir


def variant_dir(folder: Path, model: str) -> Path:
    """Where the documents of the index in ``folder`` are indexed with another model (by name): FOLDER-MODEL beside
    it. ``python -m app --model NAME`` builds the demo's there; Word in context offers those it finds."""
    return folder.with_name(f"{folder.name}-{model}")


def build_command(index_dir: str | Path) -> str:
    """The shell command that builds ``index_dir`` from a demo corpus (shown when an index is missing): in a demo's
    own place the app builds it unasked, anywhere else it is asked to (``--build``)."""
    target = Path(index_dir).resolve()
    for key, demo in DEMOS.items():
        if target == demo.index_dir:
            return program("app") + ("" if key == "en" else f" --demo {key}")
    return f"{program('app')} --index {shlex.quote(str(target))} --build"


def demo_of(index_dir: str | Path, found: Any) -> str | None:
    """The demo whose index the app built in ``index_dir`` and nobody changed since (``found``: the folder's
    ``indexer.manifest.FolderInfo``), or None for any other index: marked so by the app's build, or, built before
    the app marked its indexes, one in a demo's own place whose corpus is exactly that demo's."""
    if found.demo is not None:
        return found.demo if found.demo in DEMOS else None
    target = Path(index_dir).resolve()
    for key, demo in DEMOS.items():
        if target == demo.index_dir and found.corpus == tuple(str(p) for p in demo_corpus(key)):
            return key
    return None


def rebuild_demo_command(index_dir: str | Path, demo: str) -> str:
    """The shell command that rebuilds the demo index of ``demo`` that the app built in ``index_dir``."""
    target = Path(index_dir).resolve()
    where = "" if target == DEMOS[demo].index_dir else f" --index {shlex.quote(str(target))}"
    return program("app") + ("" if demo == "en" else f" --demo {demo}") + where + " --rebuild"
