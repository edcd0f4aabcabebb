"""Where the index lives and how the app looks, shared by ``python -m app`` and the pages so both always agree."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from encoder.files import checkout_root, shipped_data

CODE_ROOT = Path(__file__).resolve().parent.parent  # what holds the app package: a checkout, or site-packages
INDEX_ENV = "ELMO_SEARCH_INDEX"
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "elmo-search"
# build/ of a checkout; an installed copy must not write into site-packages, so it uses the user's cache folder
DEFAULT_INDEX_DIR = (checkout_root() / "build" if checkout_root() else _CACHE) / "demo-index"
DEMO_CORPUS_DIR = shipped_data() / "demo"
MAIN_SCRIPT = Path(__file__).resolve().parent / "main.py"
PRIMARY_COLOR = "#B42318"  # darker than Streamlit's red: text and selected pills in it pass WCAG AA contrast (4.5:1)


def configured_index_dir() -> Path:
    """The ``ELMO_SEARCH_INDEX`` setting, else the demo index (under ``build/`` of a checkout)."""
    value = os.environ.get(INDEX_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else DEFAULT_INDEX_DIR


def demo_corpus() -> list[Path]:
    """The shipped demo documents (JSONL), in a stable order so rebuilds give the same index."""
    return sorted(DEMO_CORPUS_DIR.glob("*.jsonl"))


def build_command(index_dir: str | Path) -> str:
    """The shell command that builds ``index_dir`` from the demo corpus (shown when an index is missing)."""
    target = Path(index_dir).resolve()
    if target == DEFAULT_INDEX_DIR:
        return "python -m app"
    return f"python -m app --index {shlex.quote(str(target))}"
