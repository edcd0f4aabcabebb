"""A query or sentence as every question reads it (``Query``), and a question's layer mix: the rules document search
and word questions share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from encoder import LayerMix
from encoder.text import TextRules, composed

from .errors import QueryError, message

MAX_QUERY_CHARS = 10_000


@dataclass
class Query:
    """A query or sentence as every question uses it: its text (``composed``, cut at ``MAX_QUERY_CHARS``), its
    tokens, and the notices of what was changed to make it answerable."""

    text: str
    tokens: list[str]
    notices: list[str] = field(default_factory=list)


def read_query(rules: TextRules, text: Any, what: str, documents: int) -> Query:
    """``text`` as a query, tokenized by the model's language ``rules`` as the documents were (QueryError when it has
    no words). ``what`` ("query" or "sentence") picks the messages: ``query_empty`` or ``sentence_empty``, and so on.
    ``documents``: the index's live documents; with none (every one deleted) a notice says so, as every answer of
    such an index is empty.
    """
    if text is not None and not isinstance(text, str):  # bytes, a number: no text to read, not an empty one
        raise QueryError(message(f"{what}_not_text", kind=type(text).__name__))
    if text is None or not text.strip():
        raise QueryError(message(f"{what}_empty"))
    notices, text = [], composed(text)
    if len(text) > MAX_QUERY_CHARS:
        notices.append(message(f"{what}_too_long", length=len(text), limit=MAX_QUERY_CHARS))
        text = text[:MAX_QUERY_CHARS]
    tokens = rules.tokenize(text)
    if not tokens:
        raise QueryError(message(f"{what}_no_words"))
    if not documents:
        notices.append(message("index_empty"))
    return Query(text, tokens, notices)


def layer_weights(
    layers: str | Sequence[float] | LayerMix | None, default: LayerMix, n_layers: int
) -> tuple[float, ...]:
    """The weights of a question's layer mix: ``layers`` parsed (QueryError when they are no mix of ``n_layers``),
    or the index's ``default``."""
    if layers is None:
        return default.weights
    try:
        return LayerMix.parse(layers, n_layers).weights
    except ValueError as error:
        raise QueryError(f"bad layer mix: {error}") from None
