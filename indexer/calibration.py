"""The random-word queries relevance is calibrated on (``ranking.Null``), with their ELMo vectors, made once per index.

Their words depend only on the index's word counts and their vectors only on the model, so both are made when a
generation is written (build, add) and stored beside it: a search then embeds its own query and nothing else,
and every method, layer mix and deletion is calibrated from them in memory (searching, not embedding).

INDEX_DIR/calibration.gG.parquet   the random queries' words (column ``words``)
INDEX_DIR/calibration.gG.npy       their vectors, pooled per layer as passages are: (queries, layers, dim) float32
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from encoder import Elmo
from encoder.mix import pool
from encoder.words import WordFrequencies

from . import layout, storage
from .ranking import NULL_QUERY_WORDS, random_queries


@dataclass
class NullQueries:
    """Random-word queries of 1 to ``NULL_QUERY_WORDS`` words and their per-layer pooled ELMo vectors."""

    words: list[list[str]]
    layers: np.ndarray  # (len(words), L+1, dim)

    @classmethod
    def make(
        cls, elmo: Elmo, vocab: pd.DataFrame, frequencies: WordFrequencies, pooling: str, seed: int
    ) -> NullQueries:
        """Draw the queries from the index's word counts (seeded) and embed them in batches."""
        words = [
            query
            for n in range(1, NULL_QUERY_WORDS + 1)
            for query in random_queries(vocab, elmo.text.stopwords, words=n, seed=seed)
        ]
        embedded = elmo.embed(words, batch_size=256) if words else []
        pooled = [pool(layers, pooling, frequencies.weights(query)) for layers, query in zip(embedded, words)]
        shape = (0, elmo.n_layers, elmo.dim)
        return cls(words, np.stack(pooled).astype(np.float32) if pooled else np.zeros(shape, np.float32))

    def of_length(self, n_words: int) -> tuple[list[list[str]], np.ndarray]:
        """The queries of ``n_words`` words and their vectors."""
        rows = [i for i, query in enumerate(self.words) if len(query) == n_words]
        return [self.words[i] for i in rows], self.layers[rows]

    def write(self, out: Path, generation: int) -> tuple[str, str]:
        """Write both files of generation ``generation``; returns their names (words, vectors)."""
        names = (
            layout.generation_file("calibration_words", generation),
            layout.generation_file("calibration_vectors", generation),
        )
        storage.write_parquet(out / names[0], pd.DataFrame({"words": self.words}))
        storage.write_npy(out / names[1], self.layers)
        return names

    @classmethod
    def read(cls, out: Path, names: tuple[str, str], dims: tuple[int, int]) -> NullQueries:
        """The queries written by ``write`` (their vectors checked against the model's ``dims``: layers, dim)."""
        words = [list(query) for query in storage.read_parquet(out / names[0])["words"]]
        return cls(words, np.asarray(storage.read_npy(out / names[1], (len(words), *dims))))
