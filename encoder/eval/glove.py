"""The GloVe baseline: a reader for the standard GloVe text format ("word v1 v2 ...", optionally .gz/.xz).

The encoder may not import the indexer (which trains GloVe), so the few lines of reading live here.
Words are looked up as written, then lowercased; unknown words get no vector, and a mean over none is 0.
"""
from __future__ import annotations

import gzip
import lzma
from pathlib import Path
from typing import Iterable, TextIO

import numpy as np


def _open(path: Path) -> TextIO:
    opener = {".gz": gzip.open, ".xz": lzma.open}.get(path.suffix, open)
    return opener(path, "rt", encoding="utf-8", errors="replace")


class Glove:
    """Static word vectors: ``vector(word)``, and context-window means for tokens in a sentence."""

    def __init__(self, words: list[str], matrix: np.ndarray, path: Path | None = None):
        self.index = {w: i for i, w in enumerate(words)}
        self.matrix = matrix
        self.path = path

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    @classmethod
    def load(cls, path: str | Path, vocabulary: Iterable[str] | None = None) -> "Glove":
        """Read a GloVe text file, keeping only ``vocabulary`` (either case) when given, to save memory.

        A word2vec-style "count dim" first line is skipped; a word containing spaces (as in some
        published files) is everything before the last ``dim`` fields.
        """
        path = Path(path)
        keep = None if vocabulary is None else {v for w in vocabulary for v in (w, w.lower())}
        words, rows, dim = [], [], None
        with _open(path) as f:
            for number, line in enumerate(f, start=1):
                fields = line.rstrip("\n").rstrip(" ").split(" ")
                if dim is None:
                    if len(fields) == 2 and number == 1 and all(x.isdigit() for x in fields):
                        continue
                    dim = len(fields) - 1
                if len(fields) < dim + 1:
                    raise ValueError(f"{path}, line {number}: {len(fields) - 1} numbers, expected {dim}")
                word = " ".join(fields[:-dim])
                if keep is None or word in keep:
                    words.append(word)
                    rows.append(np.asarray(fields[-dim:], dtype=np.float32))
        if dim is None:
            raise ValueError(f"{path} holds no vectors")
        matrix = np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)
        return cls(words, matrix, path)

    def vector(self, word: str) -> np.ndarray | None:
        i = self.index.get(word)
        if i is None:
            i = self.index.get(word.lower())
        return None if i is None else self.matrix[i]

    def mean(self, words: Iterable[str]) -> np.ndarray:
        """Mean of the known words' vectors; zeros when none is known."""
        found = [v for v in map(self.vector, words) if v is not None]
        return np.mean(found, axis=0) if found else np.zeros(self.dim, dtype=np.float32)

    def in_context(self, tokens: list[str], start: int, end: int, window: int) -> np.ndarray:
        """A static stand-in for a contextual vector: the mean over tokens start-window .. end+window-1."""
        return self.mean(tokens[max(0, start - window) : end + window])
