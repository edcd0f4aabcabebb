"""The shipped demo collections: their documents, the model and GloVe baseline each index is built with, and where
that index lives."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from encoder.files import cache_root, checkout_root, shipped_data
from encoder.glove import BASELINES

# indexes/ of a checkout (not build/, which `pip install .` fills with its own files); an installed copy must not
# write into site-packages, so it uses the user's cache folder
_INDEXES = checkout_root() / "indexes" if checkout_root() else cache_root()


@dataclass(frozen=True)
class Demo:
    """A shipped demo collection: its documents, the model and GloVe baseline its index is built with, and where
    that index lives."""

    name: str  # as the sidebar shows it
    corpus_dir: Path
    model: str
    glove: str  # the language's baseline (encoder.glove.BASELINES)
    index_dir: Path


DEMOS = {
    "en": Demo("English", shipped_data() / "demo", "default", BASELINES["en"], _INDEXES / "demo-index"),
    "ko": Demo("한국어", shipped_data() / "demo-ko", "ko", BASELINES["ko"], _INDEXES / "demo-index-ko"),
}


def demo_corpus(demo: str = "en") -> list[Path]:
    """The shipped documents (JSONL) of a demo, in a stable order so rebuilds give the same index."""
    return sorted(DEMOS[demo].corpus_dir.glob("*.jsonl"))
