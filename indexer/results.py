"""What queries return: plain dataclasses, turned into JSON by ``as_dict``."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Generic, TypeVar

from encoder.readout import Expectation

Hit = TypeVar("Hit")


@dataclass
class Results(Generic[Hit]):
    """What a search returns: its hits, best first, and its notices (what it changed or found out: a query cut
    short, the words it searched for instead, "no good match"), as ``Neighbors`` and ``Senses`` carry theirs.

    ``searched_for`` is the query as searched when words were respelled (None: as typed). It reads as the list of
    its hits: ``len(results)``, ``results[0]``, ``for hit in results``.
    """

    hits: list[Hit]
    notices: list[str] = field(default_factory=list)
    searched_for: str | None = None

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __getitem__(self, i):
        return self.hits[i]


@dataclass
class SentenceHit:
    """A sentence found by ``Index.search_sentences``; score is the cosine (ELMo's or GloVe's)."""

    rank: int
    score: float
    doc_id: str
    title: str
    sentence: str
    sentence_id: int


@dataclass
class Passage:
    """A sentence of a found document, with its similarity to the query (the method's own measure)."""

    sentence_id: int
    text: str
    score: float


@dataclass
class Evidence:
    """One part of a document's score (ELMo's cosine, BM25's score or GloVe's cosine), on its own and against chance.

    ``above_chance`` is ``score`` in units of chance (spreads above the mean best score of random queries,
    ``ranking.Null.z``) and ``relevance`` the share of those queries it beats (None in a collection too small to
    tell, ``ranking.calibrated``); ``weight`` is the part's share of
    the method's score (1 for a method of one part): the hybrid's score is the sum of weight x above_chance.
    """

    score: float
    above_chance: float
    relevance: float | None
    weight: float


@dataclass
class DocumentHit:
    """A document found by ``Index.search``, with why it came up.

    ``score`` is what the list is sorted by: the method's own number (cosine, BM25), or for ``hybrid`` the weighted
    sum of its parts in units of chance. ``relevance`` is that score on one 0-1 scale for every method, rising with
    it (so falling down the list): the share of random-word queries whose best document it beats by a margin (see
    ``indexer.ranking``); below ``ranking.RELEVANCE_LINE`` the document is not clearly better than chance. In a
    collection too small to tell chance (``ranking.calibrated``) ``relevance`` and ``above_line`` are None: the
    hits are only ranked.
    ``passages`` are its sentences nearest the query, best first; ``matched_words`` the words of the document that
    match the query's (stemmed: "flooded" for "flooding"); ``parts`` each part's score (the "why");
    ``above_chance`` is ``score`` in units of chance (as ``Evidence.above_chance``: the number relevance is made of);
    ``by_meaning`` whether it was found by meaning: it shares no keyword with the query, or ELMo's part weighs most
    and is itself above the line; ``above_line``
    whether its relevance reaches the line (``ranking.RELEVANCE_LINE``): the hits under it are listed all the same,
    marked as weaker matches.
    """

    rank: int
    score: float
    relevance: float | None
    doc_id: str
    title: str
    passages: list[Passage]
    matched_words: list[str]
    parts: dict[str, Evidence] = field(default_factory=dict)
    above_chance: float = 0.0
    by_meaning: bool = False
    above_line: bool | None = False


@dataclass
class TokenHit:
    """One use of a word in context; ``char_start:char_end`` locate the word inside ``sentence``."""

    rank: int
    score: float
    word: str
    doc_id: str
    title: str
    sentence: str
    token_index: int
    char_start: int
    char_end: int


@dataclass
class Neighbors:
    """Nearest uses in context of ``query_tokens[position]`` in one ``representation`` (its name: "context
    prediction", or the ELMo mix), and GloVe's nearest words for contrast.

    ``glove`` is empty and ``glove_note`` says why when the word has no GloVe vector. ``expected`` (asked for with
    ``explain``) is what the LM expects at the position: each direction's likeliest words.
    """

    query_tokens: list[str]
    position: int
    hits: list[TokenHit]
    glove: list[tuple[str, float]]
    glove_note: str | None = None
    notices: list[str] = field(default_factory=list)
    representation: str = ""
    expected: list[Expectation] = field(default_factory=list)


@dataclass
class Comparison:
    """Two uses of words compared: the cosine of their vectors in each representation (each ELMo layer, the index's
    mix, the sense readout), and the mix's weights s_j and scale gamma (Peters et al. 2018, eq. 1)."""

    uses: list[tuple[list[str], int]]  # each use's tokens and the word's position among them
    cosines: dict[str, float]
    mix_weights: list[float]
    mix_gamma: float
    notices: list[str] = field(default_factory=list)


@dataclass
class SenseCluster:
    """One sense: a label of distinctive context words ("" when none stands out), its size and its most typical
    sentences."""

    label: str
    size: int
    examples: list[str]


@dataclass
class SensePoint:
    """One occurrence in 2-D (PCA of its vector) for plotting, with its cluster number; ``token_index`` is the word's
    position among the sentence's tokens (where labels of uses are looked up)."""

    x: float
    y: float
    cluster: int
    sentence: str
    token_index: int = -1


@dataclass
class Senses:
    """A word's uses clustered in one ``representation`` (its name), each cluster named by what marks it out."""

    word: str
    clusters: list[SenseCluster]
    points: list[SensePoint]
    n_occurrences: int = 0
    silhouette: float | None = None
    notices: list[str] = field(default_factory=list)
    representation: str = ""


def as_dict(value: Any) -> Any:
    """``dataclasses.asdict`` of a result (a hit, ``Neighbors``, ``Senses``): dataclasses as dicts, every list, tuple
    and dict made anew; without ``asdict``'s deep copy of each value, twice as fast (a batch of searches turns
    thousands of hits into JSON). The values left are numbers, text and None, which need no copy."""
    kind = type(value)
    if kind in _PLAIN:  # most of a hit's values: answered before any other check
        return value
    names = _field_names(kind)
    if names is not None:
        return {name: as_dict(getattr(value, name)) for name in names}
    if isinstance(value, (list, tuple)):
        return kind(as_dict(item) for item in value)
    if isinstance(value, dict):
        return {key: as_dict(item) for key, item in value.items()}
    return value


_PLAIN = frozenset({str, int, float, bool, type(None)})
"""The types ``as_dict`` returns as they are, checked first."""


@functools.cache
def _field_names(kind: type) -> tuple[str, ...] | None:
    """The fields of a dataclass type, None for any other type (asked once per type)."""
    return tuple(f.name for f in fields(kind)) if is_dataclass(kind) else None
