"""Perplexity on held-out text: forward, backward and mean, delegated to the training code's ``perplexity``.

It needs the model's LM head and vocabulary, which only models we trained ship; there are no layer views
and no GloVe column (GloVe is not a language model).
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path

from ..files import open_text
from ..lm_head import perplexity
from .results import TaskResult

DATA = Path("corpus-en") / "test.txt.xz"


def run(model: str | Path, data: Path, limit: int | None = None) -> TaskResult:
    """``model``: a model directory or ``default``; ``data``: a text file, one paragraph per line."""
    result = TaskResult("perplexity", "perplexity", ["forward", "backward", "mean"], details={"text": str(data)})
    try:
        with open_text(data) as f:
            scores = perplexity(model, islice(f, limit))
    except (FileNotFoundError, ValueError) as error:
        result.notes.append(f"not measured: {error}")
        return result
    result.add("held-out text", {k: scores[k] for k in result.columns})
    result.details.update(tokens=scores["tokens"], vocab_size=scores["vocab_size"])
    return result
