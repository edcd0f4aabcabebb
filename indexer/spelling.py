"""Query words that are no word at all, matched to real ones: by edits, then by how often, then by looks.

A misspelled word ("monney") is replaced by a word within a few edits of it (``max_edits``: insert, delete,
substitute, swap two neighbours), as a noisy channel would with rare typos: the fewest edits first; among as many
edits the word the collection uses most ("money", 27 times, not "honey"); then, among words no document has, the
one the language uses most (the dictionary's order: "moviie" is "movie", one edit, where the collection only has
"move", two; ``IndexParts.speller`` gives English the model's vocabulary as the dictionary). ELMo's character
model breaks the remaining ties: the biLM's token layer reads a word's characters (the char-CNN), so a misspelled
word gets a vector like any other, and the candidate nearest to it there wins. Short words are left alone: with
three letters ("frm") too many words are one edit away for any rule to choose.

Korean is spelled in jamo: a syllable block is two or three letters (``typed_letters``: 벌레 is ㅂㅓㄹㄹㅔ), so a
slip of one key ("벌래", ㅔ -> ㅐ) is one edit, and lengths count letters, not blocks.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

import numpy as np
from nltk.metrics.distance import edit_distance

from .vectors import normalize

MIN_LETTERS, MAX_LETTERS = 4, 30  # shorter words are never corrected, nor longer ones (no word is that long)
LETTER_BUCKETS = 64  # letters counted modulo this for the quick filter (a lower bound on edits in any script)


def typed_letters(word: str) -> str:
    """``word`` as it is typed, letter by letter: in its compatibility form (Unicode's NFKC: full-width letters as
    the plain ones, a letter and a combining accent as the accented letter), then each Hangul syllable block as its
    jamo (the canonical decomposition), every other character as it is."""
    if word.isascii():
        return word
    word = unicodedata.normalize("NFKC", word)
    return "".join(unicodedata.normalize("NFD", c) if "가" <= c <= "힣" else c for c in word)


def max_edits(typed: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) a correction may be from a word of these letters
    (``typed_letters``)."""
    return 1 if len(typed) <= 5 else 2


def correctable(word: str) -> bool:
    """Whether a word may be corrected: letters only (no numbers, codes or names with digits), of a word's length."""
    typed = typed_letters(word)
    return typed.isalpha() and MIN_LETTERS <= len(typed) <= MAX_LETTERS


def letter_counts(words: Sequence[str]) -> np.ndarray:
    """Each word's letters counted in ``LETTER_BUCKETS`` buckets: (words, buckets). An edit changes the counts by
    at most 2 (a swap by 0), so words whose counts differ by more than 2 x edits are more edits apart."""
    codes = np.frombuffer("".join(words).encode("utf-32-le"), np.uint32) % LETTER_BUCKETS
    rows = np.repeat(np.arange(len(words)), [len(word) for word in words])
    cells = np.bincount(rows * LETTER_BUCKETS + codes, minlength=len(words) * LETTER_BUCKETS)
    return cells.reshape(len(words), LETTER_BUCKETS).astype(np.int16)


class Speller:
    """The words a query word may be respelled as: the collection's, with how often each occurs, and a dictionary of
    the language's, most frequent first; ``correct`` finds an unknown word's replacement."""

    def __init__(
        self,
        words: Sequence[str],
        counts: Sequence[int],
        dictionary: Sequence[str],
        token_vectors: Callable[[list[str]], np.ndarray],
    ):
        """``words``: the collection's words (lower case), ``counts``: how often each occurs in it; ``dictionary``:
        the language's words, most frequent first (those of letters only are candidates); ``token_vectors``: the
        character model's vectors of words."""
        used = dict(zip(words, counts))
        self.words = list(dict.fromkeys([*used, *(word for word in dictionary if word.isalpha())]))
        self.counts = np.array([used.get(word, 0) for word in self.words], np.int64)
        place: dict[str, int] = {}
        for i, word in enumerate(dictionary):
            place.setdefault(word, i)
        self.places = np.array([place.get(word, len(dictionary)) for word in self.words], np.int64)
        self.token_vectors = token_vectors
        self.typed = [typed_letters(word) for word in self.words]
        self.lengths = np.array([len(typed) for typed in self.typed], np.int64)
        self.letters = letter_counts(self.typed)

    def candidates(self, word: str) -> list[tuple[int, int]]:
        """The words within ``max_edits`` edits of ``word``'s ``typed_letters``: (row, edits). The lengths and letter
        counts rule most words out at once; the edits of the rest are counted."""
        typed = typed_letters(word)
        limit = max_edits(typed)
        rows = np.flatnonzero(np.abs(self.lengths - len(typed)) <= limit)
        rows = rows[np.abs(self.letters[rows] - letter_counts([typed])[0]).sum(axis=1) <= 2 * limit]
        found = [(row, edit_distance(typed, self.typed[row], transpositions=True)) for row in rows]
        return [(row, edits) for row, edits in found if edits <= limit]

    def correct(self, word: str) -> str | None:
        """The word that replaces ``word``: among those within ``max_edits`` edits, the fewest edits away, then the
        collection's most frequent, then the dictionary's first, then the nearest in the character model; None
        when there is none (or ``word`` is not ``correctable``)."""
        if not correctable(word) or not self.words:
            return None
        found = sorted((edits, -self.counts[row], self.places[row], row) for row, edits in self.candidates(word))
        if not found:
            return None
        best = found[0][:3]
        tied = [row for edits, count, place, row in found if (edits, count, place) == best]
        if len(tied) == 1:
            return self.words[tied[0]]
        similarity = normalize(self.token_vectors([self.words[row] for row in tied])) @ normalize(
            self.token_vectors([word])[0]
        )
        return self.words[tied[int(np.argmax(similarity))]]
