"""ELMo biLM encoder: exact reference reimplementation, weight formats, embedding API, training.

``Elmo``, ``LayerMix``, ``ScalarMix``, ``BiLM``, ``BiLMConfig``, ``PUBLISHED``, ``download_model`` and ``resolve_model``
are imported on first use (``from encoder import Elmo`` works as ever): importing the package itself is instant, so
that ``python -m encoder`` answers Ctrl-C with one line from its first moment (``errors.interrupts_at_start``) rather
than a traceback of torch's import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from . import cpu_use  # noqa: F401  (the thread rule's window on the machine's CPU time opens here)

_EXPORTS = {
    "Elmo": ".elmo",
    "LayerMix": ".mix",
    "ScalarMix": ".mix",
    "BiLM": ".model",
    "BiLMConfig": ".model",
    "PUBLISHED": ".model_files",
    "resolve_model": ".model_files",
    "download_model": ".download",
}
__all__ = ["Elmo", "LayerMix", "ScalarMix", "BiLM", "BiLMConfig", "PUBLISHED", "resolve_model", "download_model"]

if TYPE_CHECKING:
    from .download import download_model
    from .elmo import Elmo
    from .mix import LayerMix, ScalarMix
    from .model import BiLM, BiLMConfig
    from .model_files import PUBLISHED, resolve_model


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
