"""What every reader of an index says, in a form two indexes can be compared by: the live-state test's question
list (``tests/indexer/test_live_state.py``), also asked after the HTTP API's writes (``tests/indexer/test_serve.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from indexer import Index, Settings
from indexer.export import export

QUERIES = ["money in the bank", "a play on stage", "volcano magma"]
HITS = 20  # results asked of each ranked question
LIVE_COUNTS = ("documents", "sentences", "tokens", "token_vectors")  # the stored ones keep what was removed
SETTINGS = Settings(pooling="mean")
"""Mean pooling: pooled vectors under ``sif`` are weighed by the word counts of all the text an index has read,
which a fresh build of fewer documents does not have."""


def write_corpus(folder: Path, documents: list[tuple[str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "docs.jsonl"
    path.write_text("\n".join(json.dumps({"id": doc_id, "text": text}) for doc_id, text in documents))
    return path


def ranked(keys: list, scores: list[float], k: int) -> tuple[list, np.ndarray]:
    """A ranked list as two indexes can agree on it: hits of equal score (identical sentences) in any order, and
    of the hits tied with the last of a full list, only their scores (which of them make the cut is arbitrary)."""
    rounded = np.round(np.asarray(scores, np.float64), 4)
    cut = rounded[-1] if len(keys) == k else None
    return sorted((-r, repr(key)) for key, r in zip(keys, rounded) if r != cut), np.asarray(scores)


def answers(index: Index, export_to: Path) -> dict:
    """What each reader says, in comparable form: ids and texts exactly, scores and vectors as arrays."""
    counts = index.stats()["counts"]
    found: dict = {"documents": index.documents(), "counts": {key: counts[key] for key in LIVE_COUNTS}}
    for method in ("elmo", "keywords"):
        for query in QUERIES:
            hits = index.search(query, k=HITS, method=method).hits
            found[f"{method} {query}"] = ranked([h.doc_id for h in hits], [h.score for h in hits], HITS)
    for query in QUERIES:
        hits = index.search_sentences(query, k=HITS).hits
        found[f"sentences {query}"] = ranked([(h.doc_id, h.sentence) for h in hits], [h.score for h in hits], HITS)
    live_words = {t.lower() for t in index.tokens["word"][index.live.tokens]}
    for sentence, word in (("I sat on the bank of the river.", "bank"), ("We saw a play.", "play")):
        if word in live_words:
            result = index.neighbors(sentence, word, k=HITS, representation="elmo")
            found[f"neighbors {word}"] = ranked(
                [(h.doc_id, h.token_index) for h in result.hits], [h.score for h in result.hits], HITS
            )
            senses = index.senses(word, k=1, representation="elmo")
            found[f"senses {word}"] = ([(p.sentence, p.token_index) for p in senses.points], np.zeros(0))
    export(index, export_to, "npy", tokens=True)
    found["export"] = (
        np.load(export_to / "document_ids.npy").tolist() + np.load(export_to / "token_document_ids.npy").tolist(),
        np.concatenate([np.load(export_to / "documents.npy").ravel(), np.load(export_to / "tokens.npy").ravel()]),
    )
    return found
