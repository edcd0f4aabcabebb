"""Linear probes on frozen vectors: a softmax classifier on one layer, or on a learned scalar mix of all.

One trainer serves POS tagging (one token per example) and WiC's logistic regression (a pair per example,
featurised as [u, v, u*v, |u-v|]); two-class softmax is logistic regression. Inputs are z-scored per layer
and feature with training statistics, so layers of different scales compete fairly inside the mix and
the learned weights can be compared. Training is seeded, so a run repeats exactly.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..mix import ScalarMix
from .embeddings import layer_views
from .results import GLOVE, MIX

SEED = 0
MAX_ITER = 300  # L-BFGS iterations (each one pass over the training set)
_SEEDING = threading.Lock()  # probes built in parallel threads must not interleave on the global RNG


def standardize(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """z-score stacks shaped (..., layers, D) per layer and feature, with the statistics of ``train``."""
    axes = tuple(range(train.ndim - 2))
    mean = train.mean(axis=axes, dtype=np.float64).astype(np.float32)
    std = train.std(axis=axes, dtype=np.float64).astype(np.float32)
    std[std == 0] = 1.0
    return [(x - mean) / std for x in (train, *others)]


@contextmanager
def one_thread() -> Iterator[None]:
    """Torch on one thread: measured faster for these probes, 20x so on small ones, where threads only spin."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class Probe(nn.Module):
    """Optional ``ScalarMix`` over a layer axis, optional pair features, then one linear layer."""

    def __init__(self, dim: int, n_classes: int, n_layers: int | None = None, pair: bool = False):
        super().__init__()
        self.mix = ScalarMix(n_layers) if n_layers else None
        self.pair = pair
        self.linear = nn.Linear(4 * dim if pair else dim, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (N, [2,] D), or (N, [2,] layers, D) with a mix -> logits (N, n_classes)."""
        if self.mix is not None:
            x = self.mix(x.movedim(-2, 0))
        if self.pair:
            u, v = x[:, 0], x[:, 1]
            x = torch.cat([u, v, u * v, (u - v).abs()], dim=-1)
        return self.linear(x)


def fit_predict(
    train_x: np.ndarray,
    train_y: np.ndarray,
    test_x: np.ndarray,
    n_classes: int,
    *,
    learn_mix: bool = False,
    pair: bool = False,
    max_iter: int = MAX_ITER,
) -> tuple[np.ndarray, list[float] | None]:
    """Train on (train_x, train_y) and label test_x; also the mix's normalized weights when one is learned.

    ``learn_mix`` means the inputs carry a layer axis (second to last) that the probe mixes. The objective is
    scikit-learn's default logistic regression (cross-entropy + |W|^2 / 2, C=1), divided by N; it is convex
    without a mix and smooth with one, so full-batch L-BFGS solves it with no learning rate to tune
    (minibatch Adam left POS probes well short of the optimum).
    """
    with _SEEDING, torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        probe = Probe(train_x.shape[-1], n_classes, train_x.shape[-2] if learn_mix else None, pair)
    x, y = torch.from_numpy(np.ascontiguousarray(train_x)), torch.from_numpy(np.asarray(train_y, dtype=np.int64))
    optimizer = torch.optim.LBFGS(probe.parameters(), max_iter=max_iter, history_size=20, line_search_fn="strong_wolfe")

    def objective() -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(probe(x), y) + probe.linear.weight.square().sum() / (2 * len(x))
        loss.backward()
        return loss

    with one_thread():
        optimizer.step(objective)
    with torch.no_grad():
        test = torch.from_numpy(np.ascontiguousarray(test_x))
        predictions = torch.cat([probe(chunk).argmax(-1) for chunk in test.split(65536)]).numpy()
    return predictions, (probe.mix.normalized_weights() if probe.mix is not None else None)


def probe_views(
    train: np.ndarray,
    train_y: np.ndarray,
    test: np.ndarray,
    test_y: np.ndarray,
    n_classes: int,
    *,
    glove: tuple[np.ndarray, np.ndarray] | None = None,
    pair: bool = False,
) -> tuple[dict[str, float], list[float]]:
    """Test accuracy (%) of a probe per layer view, on the learned mix, and on GloVe when given.

    ``train``/``test`` are ELMo stacks (N, [2,] L+1, D); ``glove`` the (train, test) GloVe arrays (N, [2,] d).
    Returns the scores by column and the learned mix's weights.
    """

    def accuracy(x_train: np.ndarray, x_test: np.ndarray, learn_mix: bool = False) -> tuple[float, list[float] | None]:
        predicted, weights = fit_predict(x_train, train_y, x_test, n_classes, learn_mix=learn_mix, pair=pair)
        return 100.0 * float(np.mean(predicted == test_y)), weights

    train, test = standardize(train, test)
    jobs = {MIX: (train, test, True)}  # the slowest first, so the other threads take the rest meanwhile
    jobs |= {
        name: (x, x_test, False) for (name, x), x_test in zip(layer_views(train).items(), layer_views(test).values())
    }
    if glove is not None:
        glove_train, glove_test = standardize(glove[0][..., None, :], glove[1][..., None, :])
        jobs[GLOVE] = (glove_train[..., 0, :], glove_test[..., 0, :], False)
    # Each probe runs on one torch thread (see one_thread); the probes themselves share the cores, one per thread.
    with ThreadPoolExecutor(max_workers=max(1, torch.get_num_threads())) as pool, one_thread():
        futures = {name: pool.submit(accuracy, *job) for name, job in jobs.items()}
        results = {name: future.result() for name, future in futures.items()}
    return {name: score for name, (score, _) in results.items()}, results[MIX][1]
