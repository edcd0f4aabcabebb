"""How a use of a word is read, one class per kind: the index's sense readout (``encoder.readout``), the index's ELMo
layer mix (the paper's way), or one ELMo layer. The registry (``KEYS``, ``choices``) is where the CLI's
``--representation`` choices, the HTTP API's enum and the app's options come from, so a new representation is one
class here plus the storage it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from encoder.readout import KINDS

ELMO_NAME = "ELMo layer mix (paper)"


@dataclass(frozen=True)
class Representation:
    """One way of reading a use. ``key`` is how a question spells it (``representation=``); ``choice`` how the app
    and its links spell this one among ``choices``."""

    key: ClassVar[str]

    @property
    def choice(self) -> str | int:
        return self.key

    def weights(self, index_weights: tuple[float, ...]) -> tuple[float, ...] | None:
        """The ELMo layer mix read (None: not the ELMo layers)."""
        return None

    def name(self, readout_kind: str, index_weights: tuple[float, ...]) -> str:
        """What results call it (English; the app translates ``i18n_key``)."""
        raise NotImplementedError

    def i18n_key(self, readout_kind: str) -> str:
        """The app's string for its name (``app.i18n``; a layer's takes ``layer=``)."""
        raise NotImplementedError


@dataclass(frozen=True)
class SenseReadout(Representation):
    """The index's sense readout: what the language model expects at the word (its kind: ``encoder.readout.KINDS``)."""

    key: ClassVar[str] = "readout"

    def name(self, readout_kind: str, index_weights: tuple[float, ...]) -> str:
        return KINDS[readout_kind]

    def i18n_key(self, readout_kind: str) -> str:
        return f"rep.{readout_kind}"


@dataclass(frozen=True)
class IndexMix(Representation):
    """The ELMo layers at the word, mixed as the index mixes them (the paper's way)."""

    key: ClassVar[str] = "elmo"

    @property
    def choice(self) -> str | int:
        return "mix"

    def weights(self, index_weights: tuple[float, ...]) -> tuple[float, ...] | None:
        return index_weights

    def name(self, readout_kind: str, index_weights: tuple[float, ...]) -> str:
        return ELMO_NAME

    def i18n_key(self, readout_kind: str) -> str:
        return "rep.mix"


@dataclass(frozen=True)
class OneLayer(IndexMix):
    """One ELMo layer at the word (0: the char-CNN token layer): a mix of one-hot weights, named as the layer."""

    layer: int = 0
    n_layers: int = 3

    @property
    def choice(self) -> str | int:
        return self.layer

    def weights(self, index_weights: tuple[float, ...]) -> tuple[float, ...] | None:
        return tuple(float(j == self.layer) for j in range(self.n_layers))

    def name(self, readout_kind: str, index_weights: tuple[float, ...]) -> str:
        return f"ELMo layer {self.layer}" if self.layer else "ELMo token layer"

    def i18n_key(self, readout_kind: str) -> str:
        return "rep.layer"


def choices(n_layers: int) -> list[Representation]:
    """Every representation of an index with ``n_layers`` ELMo layers, in the order pages and tables show them."""
    return [SenseReadout(), IndexMix(), *(OneLayer(j, n_layers) for j in range(n_layers))]


def by_choice(choice: str | int, n_layers: int) -> Representation:
    """The representation a page option or link value names (``Representation.choice``)."""
    for representation in choices(n_layers):
        if representation.choice == choice:
            return representation
    raise ValueError(f"no representation {choice!r}")


KEYS = tuple(dict.fromkeys(representation.key for representation in choices(1)))  # what ``representation=`` accepts
