"""Which stored rows are live: the one rule every reader of an index uses (search, Word in context, Senses, stats,
export, the HTTP API, ``add``).

An index only appends: each ``add`` writes new shards, and ``delete`` and ``add --replace`` only record in the
manifest the ids they removed (``Manifest.deleted_doc_ids``, one entry per removal). So one id may be stored
more than once: a document deleted and added again, or replaced. The rule: **the n-th removal of an id removes
its n-th stored copy**, counted in the order the copies were added (row order). That is the copy of the oldest
generation still live, since an id is added again only once every copy of it is removed (``add --replace``
removes the old copy in the same commit that adds the new one). Sentences and token vectors are live with
their document.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


def removed_copies(doc_ids: Sequence[str], removals: Sequence[str]) -> np.ndarray:
    """Which stored documents (their ids, in row order) are removed: the n-th removal of an id removes its n-th
    stored copy."""
    removed = np.zeros(len(doc_ids), bool)
    if not removals:
        return removed
    remaining = Counter(removals)
    ids = pd.Series(doc_ids, dtype=object)
    for row in np.flatnonzero(ids.isin(set(remaining)).to_numpy()).tolist():
        if remaining[ids.iat[row]] > 0:
            remaining[ids.iat[row]] -= 1
            removed[row] = True
    return removed


@dataclass(frozen=True)
class LiveRows:
    """The live rows of each stored table, as boolean masks (True: live)."""

    documents: np.ndarray
    sentences: np.ndarray
    tokens: np.ndarray

    @classmethod
    def of(
        cls,
        doc_ids: Sequence[str],
        removals: Sequence[str],
        sentence_documents: np.ndarray,
        token_sentences: np.ndarray,
    ) -> LiveRows:
        """The live rows of an index whose documents are ``doc_ids`` (row order), after ``removals``
        (``Manifest.deleted_doc_ids``); ``sentence_documents``: each sentence's document row;
        ``token_sentences``: each token vector's sentence row."""
        documents = ~removed_copies(doc_ids, removals)
        sentences = documents[sentence_documents]
        return cls(documents, sentences, sentences[np.asarray(token_sentences, np.int64)])

    def removed(self, table: str) -> np.ndarray | None:
        """The removed rows of ``table`` ("documents", "sentences" or "tokens") as the searches take them: a mask
        (True: removed), or None when nothing was removed (searches then skip filtering)."""
        live = getattr(self, table)
        return None if live.all() else ~live

    def live_of(self, table: str, ids: np.ndarray) -> np.ndarray:
        """``ids`` (row numbers of ``table``) without the removed ones, in their order."""
        return ids[getattr(self, table)[ids]]
