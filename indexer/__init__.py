"""ELMo search indexes: build them from a corpus, then search sentences, words in context and word senses.

from indexer import Index, build_index
idx = build_index(["data/demo"], "demo-index")        # or Index.open("demo-index")
hits = idx.search("how do volcanoes erupt", k=5)
"""

from .build import Settings, add_documents, build_index, delete_documents
from .errors import CorpusError, CorruptIndexError, IndexFormatError, IndexMismatchError, QueryError
from .index import Index
from .options import NeighborsOptions, SearchOptions, SensesOptions
from .results import DocumentHit, Neighbors, Results, SenseCluster, SensePoint, Senses, SentenceHit, TokenHit

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
