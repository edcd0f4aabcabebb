"""Query words the index has never seen, matched to words it has: by edits, then by how often, then by looks.

A misspelled word ("monney") is replaced by an index word within a few edits of it (``max_edits``: insert,
delete, substitute, swap two neighbours): the fewest edits first, and among as many edits the word the
collection uses most ("money", 27 times, not "honey"), as a noisy channel would with rare typos. ELMo's character
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
    """``word`` as it is typed, letter by letter: each Hangul syllable block as its jamo (Unicode's canonical
    decomposition), every other character as it is."""
    return "".join(unicodedata.normalize("NFD", c) if "가" <= c <= "힣" else c for c in word)


def max_edits(typed: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) a correction may be from a word of these letters
    (``typed_letters``)."""
    return 1 if len(typed) <= 5 else 2


def correctable(word: str) -> bool:
    """Whether a word may be corrected: letters only (no numbers, codes or names with digits), of a word's length."""
    return word.isalpha() and MIN_LETTERS <= len(typed_letters(word)) <= MAX_LETTERS


def letter_counts(words: Sequence[str]) -> np.ndarray:
    """Each word's letters counted in ``LETTER_BUCKETS`` buckets: (words, buckets). An edit changes the counts by
    at most 2 (a swap by 0), so words whose counts differ by more than 2 x edits are more edits apart."""
    counts = np.zeros((len(words), LETTER_BUCKETS), np.int16)
    for row, word in enumerate(words):
        for letter in word:
            counts[row, ord(letter) % LETTER_BUCKETS] += 1
    return counts


class Speller:
    """The index's words, how often each occurs and their token-layer vectors; ``correct`` finds an unknown word's
    replacement."""

    def __init__(
        self,
        words: Sequence[str],
        vectors: np.ndarray,
        token_vectors: Callable[[list[str]], np.ndarray],
        counts: Sequence[int],
    ):
        """``vectors``: the token-layer vectors of ``words``; ``token_vectors``: the model's, for new words;
        ``counts``: how often each word occurs in the collection."""
        self.words = list(words)
        self.vectors = normalize(np.asarray(vectors, np.float32))
        self.token_vectors = token_vectors
        self.counts = np.asarray(counts, np.int64)
        self.typed = [typed_letters(w) for w in self.words]
        self.lengths = np.array([len(w) for w in self.typed], np.int64)
        self.letters = letter_counts(self.typed)

    def candidates(self, word: str) -> list[tuple[int, int]]:
        """The index words within ``max_edits`` edits of ``word``'s ``typed_letters``: (row, edits). The lengths
        and letter counts rule most words out at once; the edits of the rest are counted."""
        typed = typed_letters(word)
        limit = max_edits(typed)
        near = (np.abs(self.lengths - len(typed)) <= limit) & (
            np.abs(self.letters - letter_counts([typed])[0]).sum(axis=1) <= 2 * limit
        )
        found = [(row, edit_distance(typed, self.typed[row], transpositions=True)) for row in np.flatnonzero(near)]
        return [(row, edits) for row, edits in found if edits <= limit]

    def correct(self, word: str) -> str | None:
        """The index word that replaces ``word``: among those within ``max_edits`` edits, the fewest edits away,
        then the most frequent, then the nearest in the character model; None when there is none (or ``word`` is
        not ``correctable``)."""
        if not correctable(word) or not self.words:
            return None
        found = self.candidates(word)
        if not found:
            return None
        rows = np.array([row for row, _ in found])
        similarity = self.vectors[rows] @ normalize(self.token_vectors([word])[0])
        best = min(range(len(found)), key=lambda i: (found[i][1], -self.counts[rows[i]], -similarity[i], rows[i]))
        return self.words[rows[best]]
