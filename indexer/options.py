"""What each question of an index may be asked with: one options type per question (``SearchOptions``,
``NeighborsOptions``, ``SensesOptions``), declared as ``Settings`` is.

A field's ``metadata`` (``encoder.options.option``) holds its command-line option's help, the rule of a number
(``encoder.numbers.Number``) and its choices. Making an options object checks every field (``QueryError`` naming
it), so each surface asks in the same words and is refused by the same rules: ``Index.search``, ``neighbors`` and
``senses`` make one from their arguments, the commands' options are made from the fields (``add_options``) and read
back into one (``given``), a line of ``search --queries`` holds its fields, and the HTTP API reads its JSON into
one. Adding a query option is adding a field here (and using it where the question is answered).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from encoder.numbers import Number, shown
from encoder.options import option

from .errors import QueryError
from .ranking import METHODS
from .representations import keys, keys_help

MAX_K = 1_000
K = Number(int, 1, MAX_K)  # results of a search or neighbours
SENSES_K = Number(int, 1, 50)  # senses asked for (else "auto")
OCCURRENCES = Number(int, 1)  # occurrences clustered at most
REPRESENTATIONS = keys()  # how Word in context and Senses read a use (``representations``)
RepresentationKey = Literal[REPRESENTATIONS]  # type: ignore[valid-type]  # the HTTP API's enum of them
AUTO_SENSES = "auto"  # SensesOptions.k: the number of senses chosen by silhouette

LAYERS_HELP = (
    "layer mix for this query: token, top, average or weights like 0.2,0.3,0.5 (default: the index's mix for this "
    "kind of question; other mixes search exactly)"
)
REPRESENTATION_HELP = f"how a use of the word is read: {keys_help()}"


def _layers() -> Any:
    return field(default=None, metadata=option(LAYERS_HELP))


def _representation() -> Any:
    return field(default=None, metadata=option(REPRESENTATION_HELP, choices=REPRESENTATIONS))


def _problem(name: str, value: Any, metadata: dict, default: Any) -> str | None:
    """Why a field's ``value`` breaks its rule (None: it keeps it): a flag is true or false, a number keeps its
    ``rule``, a choice is one of its ``choices``, a layer mix is text or numbers; None (JSON's null) stands only for
    a default of None."""
    if value is None:
        return None if default is None else f"{name} cannot be null (None): leave it out for its default, {default}"
    if isinstance(default, bool):
        return None if isinstance(value, bool) else f"{name} must be true or false, not {shown(value)}"
    if metadata.get("rule") is not None:
        problem = metadata["rule"].problem(value)
        return None if problem is None else f"{name} {problem}"
    choices = metadata["argparse"].get("choices")
    if choices is not None and value not in choices:
        return f"{name} must be one of {', '.join(choices)}, not {shown(value)}"
    if name == "layers" and not (
        isinstance(value, str)
        or (isinstance(value, Sequence) and all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in value))
    ):
        return f'layers must be text such as "top" or "0.2,0.3,0.5", or a list of weights, not {shown(value)}'
    return None


def check(options: Any) -> None:
    """Raise ``QueryError`` naming the first field of ``options`` that breaks its rule."""
    for spec in fields(options):
        problem = _problem(spec.name, getattr(options, spec.name), spec.metadata, spec.default)
        if problem is not None:
            raise QueryError(problem)


@dataclass(frozen=True)
class SearchOptions:
    """How a search is asked (``Index.search``, ``search``, a ``--queries`` line, ``/search``)."""

    k: int = field(default=10, metadata=option("number of results (default: 10)", rule=K))
    method: str = field(
        default=METHODS[0],
        metadata=option(
            "hybrid: BM25 keywords + ELMo passage similarity under the index's search layers, both measured against "
            "chance and added (default, the best measured; the demo's search layer is the token layer, ELMo's "
            "context-free char-CNN); elmo: ELMo passages only; keywords: BM25 over documents; glove: mean GloVe "
            "vectors (the static baseline)",
            choices=METHODS,
        ),
    )
    layers: str | Sequence[float] | None = _layers()
    sentences: bool = field(default=False, metadata=option("rank single sentences by ELMo cosine instead of documents"))
    baseline: bool = field(default=False, metadata=option("also list the GloVe baseline's results"))
    as_typed: bool = field(
        default=False,
        metadata=option("search the words as typed: no word is replaced by a nearest spelling (respelling off)"),
    )

    def __post_init__(self) -> None:
        check(self)
        if self.sentences and self.method not in ("hybrid", "elmo"):  # hybrid: the default, when not asked
            raise QueryError(
                f"sentences are ranked by ELMo cosine, not by method {self.method} (a method of documents); "
                "the baseline adds GloVe's sentences"
            )


@dataclass(frozen=True)
class NeighborsOptions:
    """How the nearest uses of a word are asked (``Index.neighbors``, ``neighbors``, ``/neighbors``)."""

    position: int | None = field(
        default=None, metadata=option("its token position (0-based) if it occurs more than once", rule=Number(int, 0))
    )
    k: int = field(default=10, metadata=option("number of uses to show (default: 10)", rule=K))
    same_word: bool = field(default=False, metadata=option("only uses of the same word"))
    explain: bool = field(
        default=False,
        metadata=option(
            "also print what the model expects at the word: the forward LM's 10 likeliest words given the words "
            "before it and the backward LM's given the words after it, with their probabilities (a Korean model: its "
            "10 likeliest nouns among its 100 likeliest words); our models only: a published model has no LM head, "
            "and nothing is printed"
        ),
    )
    layers: str | Sequence[float] | None = _layers()
    representation: RepresentationKey | None = _representation()

    def __post_init__(self) -> None:
        check(self)


def _senses_k(text: str) -> int | str:
    """``--k`` of senses: auto, or a number of senses (``SENSES_K``)."""
    if text == AUTO_SENSES:
        return text
    if SENSES_K.text_problem(text) is not None:
        raise argparse.ArgumentTypeError(f"must be auto or {SENSES_K.describe()}, not {text!r}")
    return SENSES_K(text)


@dataclass(frozen=True)
class SensesOptions:
    """How a word's senses are asked (``Index.senses``, ``senses``)."""

    k: int | str = field(
        default=AUTO_SENSES,
        metadata=option("number of senses, or auto (default: auto, at most 8)", type=_senses_k),
    )
    max_occurrences: int = field(
        default=2000,
        metadata=option("cluster a random sample of this many uses at most (default: %(default)s)", rule=OCCURRENCES),
    )
    layers: str | Sequence[float] | None = _layers()
    representation: RepresentationKey | None = _representation()

    def __post_init__(self) -> None:
        if self.k != AUTO_SENSES and SENSES_K.problem(self.k) is not None:
            raise QueryError(f"k must be {AUTO_SENSES!r} or {SENSES_K.describe()}, not {shown(self.k)}")
        check(self)
