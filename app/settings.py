"""Where the index lives, shared by ``python -m app`` and the pages so both always agree."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
INDEX_ENV = "ELMO_SEARCH_INDEX"
DEFAULT_INDEX_DIR = REPO_ROOT / "build" / "demo-index"
DEMO_CORPUS_DIR = REPO_ROOT / "data" / "demo"
MAIN_SCRIPT = Path(__file__).resolve().parent / "main.py"


def configured_index_dir() -> Path:
    """The ``ELMO_SEARCH_INDEX`` setting, else the demo index under ``build/``."""
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
