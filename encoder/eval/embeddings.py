"""ELMo vectors for the tasks: one embedding pass per distinct sentence in a run, and the per-layer views.

Tasks pass token lists (their data sets are tokenized already), so the vectors line up with the data's
indices. Every task reports the same views of the L+1 layers: the token layer, each biLSTM layer and their
plain average; tasks that train a classifier add a learned scalar mix on top.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from tqdm.auto import tqdm

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
    """Wraps an ``Elmo``, keeps each distinct sentence's layers for the rest of the run when asked to, and
    shows one progress bar per task (``progress``) counting the tokens it embeds."""

    GROUP = 512  # sentences per ``Elmo.embed`` call, so the bar moves while a big corpus is embedded

    def __init__(self, elmo: Elmo, batch_size: int = 64):
        self.elmo = elmo
        self.batch_size = batch_size
        self._cache: dict[tuple[str, ...], np.ndarray] = {}
        self._bar: tqdm | None = None
        self._announced = 0

    @property
    def n_layers(self) -> int:
        return self.elmo.n_layers

    @property
    def views(self) -> list[str]:
        return view_names(self.n_layers)

    @contextmanager
    def progress(self, task: str, show: bool = True) -> Iterator[None]:
        """A bar for one task; its total grows as the task asks for sentences (or ``announce``s them)."""
        self._bar = tqdm(total=0, unit="tok", unit_scale=True, desc=task, disable=not show, file=sys.stderr)
        self._announced = 0
        try:
            yield
        finally:
            self._bar.close()
            self._bar = None

    def announce(self, sentences: Sequence[Sequence[str]]) -> None:
        """Tell the bar up front about sentences a task will embed a chunk at a time, so its total is right."""
        n = sum(map(len, sentences))
        self._announced += n
        self._grow(n)

    def _grow(self, n_tokens: int) -> None:
        if self._bar is not None:
            self._bar.total += n_tokens
            self._bar.refresh()

    def layers(self, sentences: Sequence[Sequence[str]], cache: bool = True) -> list[np.ndarray]:
        """(L+1, n, D) float32 per non-empty token list; ``cache=False`` for one-off corpora too big to keep."""
        keys = [tuple(s) for s in sentences]
        if any(not k for k in keys):
            raise ValueError("cannot embed an empty sentence")
        todo = sorted(dict.fromkeys(k for k in keys if k not in self._cache), key=len, reverse=True)
        n_tokens = sum(map(len, todo))
        self._grow(max(0, n_tokens - self._announced))  # announced tokens are in the total already
        self._announced = max(0, self._announced - n_tokens)
        fresh = {}
        for start in range(0, len(todo), self.GROUP):  # longest first, as Elmo.embed batches them anyway
            group = todo[start : start + self.GROUP]
            fresh.update(zip(group, self.elmo.embed([list(k) for k in group], batch_size=self.batch_size)))
            if self._bar is not None:
                self._bar.update(sum(map(len, group)))
        if cache:
            self._cache.update(fresh)
        return [self._cache[k] if k in self._cache else fresh[k] for k in keys]

    def clear(self) -> None:
        """Forget the kept sentences (between tasks that share none)."""
        self._cache.clear()
