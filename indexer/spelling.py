"""Query words the index has never seen, matched to words it has by ELMo's character model.

The biLM's token layer reads a word's characters (the char-CNN), so a misspelled word ("vulcanos") gets a vector
like any other, and the index's words nearest to it there are its candidates ("volcanoes"). Looks alone also bring
words that merely share letters ("qwxzt" lands near "silver"), so a candidate must be a few edits away as well
(``max_edits``); the nearest such candidate replaces the word. Short words are left alone: with three letters
("frm") too many words are one edit away for looks to choose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from nltk.metrics.distance import edit_distance

from .vectors import normalize

MIN_LETTERS, MAX_LETTERS = 4, 30  # shorter words are never corrected, nor longer ones (no word is that long)
NEAREST = 20  # candidates read from the character model, nearest first


def max_edits(word: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) a correction may be from ``word``."""
    return 1 if len(word) <= 5 else 2


def correctable(word: str) -> bool:
    """Whether a word may be corrected: letters only (no numbers, codes or names with digits), of a word's length."""
    return word.isalpha() and MIN_LETTERS <= len(word) <= MAX_LETTERS


class Speller:
    """The index's words and their token-layer vectors; ``correct`` finds an unknown word's replacement."""

    def __init__(self, words: Sequence[str], vectors: np.ndarray, token_vectors: Callable[[list[str]], np.ndarray]):
        """``vectors``: the token-layer vectors of ``words``; ``token_vectors``: the model's, for new words."""
        self.words = list(words)
        self.vectors = normalize(np.asarray(vectors, np.float32))
        self.token_vectors = token_vectors

    def correct(self, word: str) -> str | None:
        """The index word nearest to ``word`` in the character model among those within ``max_edits`` edits of it,
        or None when there is none (or ``word`` is not ``correctable``)."""
        if not correctable(word) or not self.words:
            return None
        similarity = self.vectors @ normalize(self.token_vectors([word])[0])
        nearest = np.argsort(-similarity, kind="stable")[:NEAREST]
        limit = max_edits(word)
        return next(
            (self.words[i] for i in nearest if edit_distance(word, self.words[i], transpositions=True) <= limit), None
        )
