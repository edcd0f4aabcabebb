"""Scalar mix: ELMo = gamma * sum_j s_j * h_j with s = softmax(w) over the L+1 layers.

``ScalarMix`` is the trainable module of the paper (optionally with the reference's layer norm: one
scalar mean and variance per layer over all unmasked positions and features). ``LayerMix`` is a fixed
mix named by a preset (``token``, ``top``, ``average``) or explicit weights, used by search and the UI.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

PRESETS = ("token", "top", "average")


def masked_layer_norm(h: Tensor, mask: Tensor, eps: float = 1e-13) -> Tensor:
    """Normalise one layer (B, T, dim) by a single scalar mean and variance over its unmasked entries."""
    m = mask.to(h.dtype)[..., None]
    n = m.sum() * h.shape[-1]
    mean = (h * m).sum() / n
    variance = (((h * m - mean) * m) ** 2).sum() / n
    return (h - mean) / torch.sqrt(variance + eps)


class ScalarMix(nn.Module):
    """Trainable softmax-normalised layer weights and scale gamma (Peters et al. 2018, eq. 1)."""

    def __init__(
        self,
        n_layers: int,
        do_layer_norm: bool = False,
        initial_weights: list[float] | None = None,
        trainable: bool = True,
    ):
        super().__init__()
        w = torch.tensor(initial_weights if initial_weights is not None else [0.0] * n_layers, dtype=torch.float32)
        if w.numel() != n_layers:
            raise ValueError(f"{n_layers} layers but {w.numel()} initial weights")
        self.weights = nn.Parameter(w, requires_grad=trainable)
        self.gamma = nn.Parameter(torch.ones(1), requires_grad=trainable)
        self.do_layer_norm = do_layer_norm

    def forward(self, layers: list[Tensor] | Tensor, mask: Tensor | None = None) -> Tensor:
        """Mix L+1 tensors (B, T, dim); ``mask`` (B, T) is needed only for layer norm."""
        if len(layers) != self.weights.numel():
            raise ValueError(f"expected {self.weights.numel()} layers, got {len(layers)}")
        s = torch.softmax(self.weights, dim=0)
        if self.do_layer_norm:
            if mask is None:
                raise ValueError("layer norm needs the mask")
            layers = [masked_layer_norm(h, mask) for h in layers]
        return self.gamma * sum(s_j * h for s_j, h in zip(s, layers))

    def normalized_weights(self) -> list[float]:
        return torch.softmax(self.weights.detach(), dim=0).tolist()


@dataclass(frozen=True)
class LayerMix:
    """A fixed mix: normalised weights s_j (non-negative, summing to 1) and scale gamma."""

    weights: tuple[float, ...]
    gamma: float = 1.0

    @classmethod
    def parse(cls, spec: str | LayerMix | list[float] | tuple[float, ...], n_layers: int) -> LayerMix:
        """``token`` | ``top`` | ``average`` | ``"w0,w1,w2"`` | a list of weights -> a mix over n_layers layers.

        Explicit weights are made non-negative and normalised to sum to 1, so "1,1,1" means the average.
        """
        if isinstance(spec, LayerMix):
            if len(spec.weights) != n_layers:
                raise ValueError(f"mix has {len(spec.weights)} weights but the model has {n_layers} layers")
            return spec
        if isinstance(spec, str):
            name = spec.strip().lower()
            if name == "token":
                return cls(tuple([1.0] + [0.0] * (n_layers - 1)))
            if name == "top":
                return cls(tuple([0.0] * (n_layers - 1) + [1.0]))
            if name == "average":
                return cls(tuple([1.0 / n_layers] * n_layers))
            try:
                spec = [float(x) for x in name.split(",")]
            except ValueError:
                raise ValueError(
                    f"layer mix {spec!r} is not one of {', '.join(PRESETS)} or comma-separated weights"
                ) from None
        try:
            weights = np.asarray(spec, dtype=np.float64)
        except (TypeError, ValueError):
            weights = np.zeros(())  # not numbers: said below
        if weights.shape != (n_layers,):
            got = f"{len(weights)} weights" if weights.ndim == 1 else repr(spec)
            raise ValueError(
                f"the model has {n_layers} layers (token, 1..{n_layers - 1}): give {', '.join(PRESETS)} or "
                f"{n_layers} weights; got {got}"
            )
        with np.errstate(over="ignore"):
            total = weights.sum()
        if not np.isfinite(weights).all() or (weights < 0).any() or not 0 < total < np.inf:
            raise ValueError(f"layer weights must be finite, non-negative and not all zero; got {spec!r}")
        return cls(tuple((weights / total).tolist()))

    def apply(self, layers: np.ndarray) -> np.ndarray:
        """(L+1, n, dim) -> (n, dim)."""
        w = np.asarray(self.weights, dtype=layers.dtype)
        return (self.gamma * np.tensordot(w, layers, axes=1)).astype(layers.dtype, copy=False)

    def describe(self) -> str:
        return f"ELMo = {self.gamma:.2f} · (" + " + ".join(f"{w:.2f}·h{j}" for j, w in enumerate(self.weights)) + ")"


POOLINGS = ("sif", "mean", "max")


def pool(layers: np.ndarray, pooling: str, weights: np.ndarray | None = None) -> np.ndarray:
    """(L+1, n, dim) -> (L+1, dim), per layer so mixing stays linear afterwards.

    ``sif``: the average weighted by ``weights`` (one per token: an index's are ``words.WordFrequencies``'
    smooth-inverse-frequency weights); ``mean``;
    ``max``: the largest value of each feature.
    """
    if pooling == "sif":
        return np.einsum("lnd,n->ld", layers, weights / weights.sum())
    return layers.mean(axis=1) if pooling == "mean" else layers.max(axis=1)
