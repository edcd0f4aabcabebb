"""ELMo search indexes: build them from a corpus, then search sentences, words in context and word senses.

from indexer import Index, build_index
idx = build_index(["data/demo"], "demo-index")        # or Index.open("demo-index")
hits = idx.search("how do volcanoes erupt", k=5)

The names below are imported on first use (``from indexer import Index`` works as ever): importing the package
itself is instant, so that ``python -m indexer`` answers Ctrl-C and SIGTERM with one line from its first moment
(``encoder.errors.interrupts_at_start``) rather than a traceback of torch's import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_EXPORTS = {
    "Index": ".index",
    "build_index": ".index",
    "add_documents": ".index",
    "delete_documents": ".build",
    "Settings": ".build",
    "SearchOptions": ".options",
    "NeighborsOptions": ".options",
    "SensesOptions": ".options",
    "Results": ".results",
    "DocumentHit": ".results",
    "SentenceHit": ".results",
    "TokenHit": ".results",
    "Neighbors": ".results",
    "Senses": ".results",
    "SenseCluster": ".results",
    "SensePoint": ".results",
    "QueryError": ".errors",
    "IndexMismatchError": ".errors",
    "CorruptIndexError": ".errors",
    "IndexFormatError": ".errors",
    "CorpusError": ".errors",
}
__all__ = [
    "Index",
    "build_index",
    "add_documents",
    "delete_documents",
    "Settings",
    "SearchOptions",
    "NeighborsOptions",
    "SensesOptions",
    "Results",
    "DocumentHit",
    "SentenceHit",
    "TokenHit",
    "Neighbors",
    "Senses",
    "SenseCluster",
    "SensePoint",
    "QueryError",
    "IndexMismatchError",
    "CorruptIndexError",
    "IndexFormatError",
    "CorpusError",
]

if TYPE_CHECKING:
    from .build import Settings, delete_documents
    from .errors import CorpusError, CorruptIndexError, IndexFormatError, IndexMismatchError, QueryError
    from .index import Index, add_documents, build_index
    from .options import NeighborsOptions, SearchOptions, SensesOptions
    from .results import DocumentHit, Neighbors, Results, SenseCluster, SensePoint, Senses, SentenceHit, TokenHit


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
