"""Errors the indexer raises on purpose; each message tells the user what to do next."""

from __future__ import annotations


class IndexerError(Exception):
    """Base class: the CLI prints these as one-line errors instead of tracebacks."""


class QueryError(IndexerError, ValueError):
    """A query the index cannot answer: empty text, a word missing from the sentence, an unknown word."""


class IndexMismatchError(IndexerError):
    """The index was built with another model than the one it is opened with (or that model is missing)."""


class CorruptIndexError(IndexerError):
    """A file of the index is missing, truncated or does not match the hash in the manifest."""


class IndexFormatError(IndexerError):
    """Not an index, an interrupted build, or a format newer than this code understands."""


class CorpusError(IndexerError, ValueError):
    """Bad input corpus: unreadable file, missing text column, duplicate document ids."""


class QueryNotice(UserWarning):
    """A query was changed to be answerable (e.g. truncated); results are still returned."""
