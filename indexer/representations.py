"""How a use of a word is read, one class per kind: the index's sense readout (``encoder.readout``), the index's ELMo
layer mix (the paper's way), or one ELMo layer. Each class says how its vectors of a word's stored uses are read from
the index's parts (``uses``), how a use read now becomes a query (``queries``) and how its nearest uses are found
(``nearest``), so the word questions (``words``) and the app ask it rather than tell the kinds apart.

The registry (``register``, ``keys``, ``choices``) is where the CLI's ``--representation`` choices and help, the HTTP
API's enum and the app's options come from, so a new representation is one registered class here plus the storage
it reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, TypeVar

import numpy as np

from encoder import LayerMix
from encoder.readout import KINDS, centred

from .errors import QueryError, message
from .queries import layer_weights
from .senses import beside_mix
from .vectors import ExactSearch, mix
from .vectors import normalize as normalize_rows

if TYPE_CHECKING:
    from .parts import IndexParts

ELMO_NAME = "ELMo layer mix (paper)"
MEAN_USES = 10_000  # a word's mean readout (the centre its uses are compared around) is taken over this many at most

REGISTERED: list[type[Representation]] = []
"""The representation classes questions and pages offer, in the order pages and tables show them."""

Kind = TypeVar("Kind", bound="type[Representation]")


def register(representation: Kind) -> Kind:
    """Offer a representation class on every surface (a class decorator)."""
    REGISTERED.append(representation)
    return representation


@dataclass(frozen=True)
class Representation:
    """One way of reading a use. ``key`` is how a question spells it (``representation=``), ``help`` what that key
    means (the command's help); ``choice`` is how the app and its links spell this one among ``choices``."""

    key: ClassVar[str]
    help: ClassVar[str]

    @classmethod
    def offered(cls, n_layers: int) -> list[Representation]:
        """Those of this class an index with ``n_layers`` ELMo layers offers."""
        return [cls()]

    @classmethod
    def asked(cls, layers: str | Sequence[float] | None, parts: IndexParts) -> Representation:
        """The representation a question asks for by this class's key and ``layers``; QueryError where the index
        cannot answer in it."""
        if layers is not None:
            raise QueryError("layers choose an ELMo layer mix: give them with representation='elmo'")
        representation = cls()
        representation.check(parts)
        return representation

    def check(self, parts: IndexParts) -> None:
        """Raise QueryError where the index lacks what this representation reads."""

    def reads_new_uses(self, parts: IndexParts) -> bool:
        """Whether uses read now (``queries``) can be read in it with this index's model."""
        return True

    def question(self, index_weights: tuple[float, ...]) -> dict:
        """How a page asks the index for it (``Index.neighbors``'s ``representation=`` and ``layers=``)."""
        return {"representation": self.key}

    @property
    def choice(self) -> str | int:
        return self.key

    def name(self, readout_kind: str, index_weights: tuple[float, ...]) -> str:
        """What results call it (English; the app translates ``i18n_key``)."""
        raise NotImplementedError

    def i18n_key(self, readout_kind: str) -> str:
        """The app's string for its name (``app.i18n``; a layer's takes ``layer=``)."""
        raise NotImplementedError

    def approximate(self, parts: IndexParts) -> bool:
        """Whether its vectors come from a compressed index alone (no exact vectors to re-rank with)."""
        return False

    def uses(self, parts: IndexParts, ids: np.ndarray, every_use: np.ndarray) -> np.ndarray:
        """Unit vectors of the stored uses ``ids`` of one word, whose live uses are ``every_use``."""
        raise NotImplementedError

    def sense_vectors(self, parts: IndexParts, ids: np.ndarray, every_use: np.ndarray) -> np.ndarray:
        """What the senses of one word's uses ``ids`` are clustered on (``Index.senses``): their ``uses``."""
        return self.uses(parts, ids, every_use)

    def queries(
        self, parts: IndexParts, layers: np.ndarray, contexts: np.ndarray, word_uses: np.ndarray | None
    ) -> np.ndarray:
        """Unit vectors of uses read now, from their ELMo layers (n, L+1, dim) and context states (n, 2P): as the
        uses of one word are read when ``word_uses`` (its live uses) are given, else as any use."""
        raise NotImplementedError

    def nearest(
        self, parts: IndexParts, query: np.ndarray, k: int, subset: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` live uses nearest to ``query`` (among ``subset``, the live uses of one word, when given):
        their cosines and token ids."""
        raise NotImplementedError


@register
@dataclass(frozen=True)
class SenseReadout(Representation):
    """The index's sense readout: what the language model expects at the word (its kind: ``encoder.readout.KINDS``).
    A use of one word is compared around the word's mean use."""

    key: ClassVar[str] = "readout"
    help: ClassVar[str] = (
        "the index's sense readout (context prediction: the words the language model expects there; the default "
        "unless --layers is given)"
    )

    def check(self, parts: IndexParts) -> None:
        if not self.reads_new_uses(parts):
            raise QueryError(message("no_readout", name=parts.manifest.model.name))

    def reads_new_uses(self, parts: IndexParts) -> bool:
        return parts.readout is not None  # the model's LM head

    def name(self, readout_kind: str, index_weights: tuple[float, ...]) -> str:
        return KINDS[readout_kind]

    def i18n_key(self, readout_kind: str) -> str:
        return f"rep.{readout_kind}"

    def uses(self, parts: IndexParts, ids: np.ndarray, every_use: np.ndarray) -> np.ndarray:
        return self._centred(parts, every_use, parts.readouts.gather(ids, (1.0,)))

    def sense_vectors(self, parts: IndexParts, ids: np.ndarray, every_use: np.ndarray) -> np.ndarray:
        """The readout beside the index's ELMo mix (``senses.beside_mix``): what the LM expects there and what the
        word there is separate senses best together on the development words (docs/app.md, "Senses, how many")."""
        return beside_mix(self.uses(parts, ids, every_use), parts.token_vectors.gather(ids, parts.layer_mix.weights))

    def queries(
        self, parts: IndexParts, layers: np.ndarray, contexts: np.ndarray, word_uses: np.ndarray | None
    ) -> np.ndarray:
        readouts = normalize_rows(parts.readout.vectors(contexts))
        return readouts if word_uses is None else self._centred(parts, word_uses, readouts)

    def nearest(
        self, parts: IndexParts, query: np.ndarray, k: int, subset: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        if subset is None:
            return parts.readouts.search(query, k, (1.0,), parts.deleted_tokens)
        scores, rows = ExactSearch(self.uses(parts, subset, subset), parts.device).search(query, k)
        return scores, subset[rows]

    @staticmethod
    def _centred(parts: IndexParts, every_use: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """Readouts of uses of one word (normalised) centred on the mean of its uses ``every_use`` in the index,
        shrunk towards the collection's mean while they are few (``encoder.readout.centred``), normalised again."""
        sample = every_use
        if len(every_use) > MEAN_USES:
            sample = np.random.default_rng(0).choice(every_use, MEAN_USES, replace=False)
        mean = parts.readouts.gather(np.sort(sample), (1.0,)).mean(0)
        return normalize_rows(
            centred(vectors, mean, len(every_use), parts.collection_readout, parts.manifest.readout.shrinkage)
        )


@dataclass(frozen=True)
class ElmoLayers(Representation):
    """The ELMo layers at the word, mixed by ``weights``: read from the index's token vectors (its own mix from its
    vector index, any other from the exact per-layer vectors)."""

    def weights(self, index_weights: tuple[float, ...]) -> tuple[float, ...]:
        """The ELMo layer mix read, given the index's."""
        raise NotImplementedError

    def check(self, parts: IndexParts) -> None:
        if not parts.token_vectors.searchable(self.weights(parts.layer_mix.weights)):
            raise QueryError(message("no_exact_tokens", mix=parts.manifest.layers.description))

    def approximate(self, parts: IndexParts) -> bool:
        return not parts.token_vectors.exact

    def uses(self, parts: IndexParts, ids: np.ndarray, every_use: np.ndarray) -> np.ndarray:
        return parts.token_vectors.gather(ids, self.weights(parts.layer_mix.weights))

    def queries(
        self, parts: IndexParts, layers: np.ndarray, contexts: np.ndarray, word_uses: np.ndarray | None
    ) -> np.ndarray:
        return mix(layers, self.weights(parts.layer_mix.weights))

    def nearest(
        self, parts: IndexParts, query: np.ndarray, k: int, subset: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        weights = self.weights(parts.layer_mix.weights)
        return parts.token_vectors.search(query, k, weights, parts.deleted_tokens, subset)


@register
@dataclass(frozen=True)
class IndexMix(ElmoLayers):
    """The ELMo layers at the word, mixed as the index mixes them (the paper's way); asked with ``layers``, mixed as
    they say (``AskedMix``)."""

    key: ClassVar[str] = "elmo"
    help: ClassVar[str] = "the ELMo layers at the word mixed as --layers says (the paper's way)"

    @classmethod
    def asked(cls, layers: str | Sequence[float] | None, parts: IndexParts) -> Representation:
        weights = layer_weights(layers, parts.layer_mix, parts.elmo.n_layers)
        representation = cls() if weights == parts.layer_mix.weights else AskedMix(weights)
        representation.check(parts)
        return representation

    def question(self, index_weights: tuple[float, ...]) -> dict:
        return {"representation": self.key, "layers": list(self.weights(index_weights))}

    @property
    def choice(self) -> str | int:
        return "mix"

    def weights(self, index_weights: tuple[float, ...]) -> tuple[float, ...]:
        return index_weights

    def name(self, readout_kind: str, index_weights: tuple[float, ...]) -> str:
        return ELMO_NAME

    def i18n_key(self, readout_kind: str) -> str:
        return "rep.mix"


@register
@dataclass(frozen=True)
class OneLayer(IndexMix):
    """One ELMo layer at the word (0: the char-CNN token layer): a mix of one-hot weights, named as the layer."""

    layer: int = 0
    n_layers: int = 3

    @classmethod
    def offered(cls, n_layers: int) -> list[Representation]:
        return [cls(j, n_layers) for j in range(n_layers)]

    @property
    def choice(self) -> str | int:
        return self.layer

    def weights(self, index_weights: tuple[float, ...]) -> tuple[float, ...]:
        return tuple(float(j == self.layer) for j in range(self.n_layers))

    def name(self, readout_kind: str, index_weights: tuple[float, ...]) -> str:
        return f"ELMo layer {self.layer}" if self.layer else "ELMo token layer"

    def i18n_key(self, readout_kind: str) -> str:
        return "rep.layer"


@dataclass(frozen=True)
class AskedMix(IndexMix):
    """The ELMo layers mixed as a question's ``layers`` say, other than the index's mix: named by its formula. Not
    offered on pages: asked for as ``representation="elmo"`` with ``layers``."""

    mixed: tuple[float, ...] = ()

    def weights(self, index_weights: tuple[float, ...]) -> tuple[float, ...]:
        return self.mixed

    def name(self, readout_kind: str, index_weights: tuple[float, ...]) -> str:
        return LayerMix(self.mixed).describe()


def choices(n_layers: int) -> list[Representation]:
    """Every representation of an index with ``n_layers`` ELMo layers, in the order pages and tables show them."""
    return [representation for kind in REGISTERED for representation in kind.offered(n_layers)]


def comparison_order(n_layers: int) -> list[Representation]:
    """Every representation in the order two uses are compared in (``Index.compare``, the app's table): the
    registered classes last to first, so from each ELMo layer alone, through their mix, to the sense readout."""
    return [representation for kind in reversed(REGISTERED) for representation in kind.offered(n_layers)]


def by_choice(choice: str | int, n_layers: int) -> Representation:
    """The representation a page option or link value names (``Representation.choice``)."""
    for representation in choices(n_layers):
        if representation.choice == choice:
            return representation
    raise ValueError(f"no representation {choice!r}")


def keys() -> tuple[str, ...]:
    """What ``representation=`` accepts: each registered class's key (classes may share one)."""
    return tuple(dict.fromkeys(kind.key for kind in REGISTERED))


def keys_help() -> str:
    """What each key means, for the command's help."""
    return "; ".join(f"'{key}', {next(kind.help for kind in REGISTERED if kind.key == key)}" for key in keys())


def asked(key: str | None, layers: str | Sequence[float] | None, parts: IndexParts) -> Representation:
    """The representation a question asks for (``key`` None: the sense readout, or the ELMo layers when ``layers``
    are given); QueryError where the index cannot answer in it."""
    if key is None:
        key = SenseReadout.key if layers is None else IndexMix.key
    if key not in keys():
        raise QueryError(f"representation must be one of {', '.join(keys())}, not {key!r}")
    return next(kind for kind in REGISTERED if kind.key == key).asked(layers, parts)
