"""ELMo vectors for the tasks: one embedding pass per distinct sentence in a run, and the per-layer views.

Tasks pass token lists (their data sets are tokenized already), so the vectors line up with the data's
indices. Every task reports the same views of the L+1 layers: the token layer, each biLSTM layer and their
plain average; tasks that train a classifier add a learned scalar mix on top.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from ..elmo import Elmo


def view_names(n_layers: int) -> list[str]:
    """``token``, ``layer 1`` .. ``layer L``, ``average`` for a model with ``n_layers`` = L+1."""
    return ["token", *(f"layer {j}" for j in range(1, n_layers)), "average"]


def layer_views(stack: np.ndarray) -> dict[str, np.ndarray]:
    """(..., L+1, D) -> {view name: (..., D)}, the layer axis being second to last."""
    n_layers = stack.shape[-2]
    views = {name: stack[..., j, :] for j, name in enumerate(view_names(n_layers)[:-1])}
    views["average"] = stack.mean(axis=-2)
    return views


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of (N, D) arrays; 0 where either row is all zeros (e.g. GloVe OOV)."""
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    dots = (a * b).sum(-1)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def span_vector(layers: np.ndarray, start: int, end: int) -> np.ndarray:
    """(L+1, n, D) -> (L+1, D): the mean over tokens start..end-1 (a multi-word target is several tokens)."""
    return layers[:, start:end].mean(axis=1)


class Embedder:
    """Wraps an ``Elmo`` and keeps each distinct sentence's layers for the rest of the run when asked to."""

    def __init__(self, elmo: Elmo, batch_size: int = 64):
        self.elmo = elmo
        self.batch_size = batch_size
        self._cache: dict[tuple[str, ...], np.ndarray] = {}

    @property
    def n_layers(self) -> int:
        return self.elmo.n_layers

    @property
    def views(self) -> list[str]:
        return view_names(self.n_layers)

    def layers(self, sentences: Sequence[Sequence[str]], cache: bool = True) -> list[np.ndarray]:
        """(L+1, n, D) float32 per non-empty token list; ``cache=False`` for one-off corpora too big to keep."""
        keys = [tuple(s) for s in sentences]
        if any(not k for k in keys):
            raise ValueError("cannot embed an empty sentence")
        todo = list(dict.fromkeys(k for k in keys if k not in self._cache))
        fresh = (
            dict(
                zip(
                    todo,
                    self.elmo.embed([list(k) for k in todo], batch_size=self.batch_size, progress=sys.stderr.isatty()),
                )
            )
            if todo
            else {}
        )
        if cache:
            self._cache.update(fresh)
        return [self._cache[k] if k in self._cache else fresh[k] for k in keys]

    def clear(self) -> None:
        """Forget the kept sentences (between tasks that share none)."""
        self._cache.clear()
