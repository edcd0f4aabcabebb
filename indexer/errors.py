"""Errors the indexer raises on purpose; each message tells the user what to do next.

The messages a question can end with (errors, notices) are made from ``MESSAGES`` by ``message``: English text
everywhere (CLI, JSON, logs, ``str(error)``) that keeps its key and values, so an interface can word it in its
own language (``app.i18n.indexer_text``).
"""

from __future__ import annotations

from typing import Any

MESSAGES = {
    # the query or sentence (Index.query_tokens)
    "query_empty": "the query is empty; type a few words",
    "sentence_empty": "the sentence is empty; type a few words",
    "query_not_text": "the query is of type {kind}, not text; give it as a string (str)",
    "sentence_not_text": "the sentence is of type {kind}, not text; give it as a string (str)",
    "query_too_long": "the query has {length:,} characters; only the first {limit:,} were used",
    "sentence_too_long": "the sentence has {length:,} characters; only the first {limit:,} were used",
    "query_no_words": "the query has no words",
    "sentence_no_words": "the sentence has no words",
    # search
    "no_match": "no document contains any of the query's words",
    "index_empty": "the index holds no documents: every one was deleted",
    "no_good_match": "no good match: the best document scores no better than random words typically do",
    "no_glove_vector": "none of the query's words has a GloVe vector",
    "relevance_uncalibrated": "relevance is not shown: {n} documents are too few to tell a good match from chance "
    "(the documents are ranked by score; at least 50 give relevance)",
    "searched_for": "searched for: {query} ({changes}: no indexed document has the word as typed)",
    # the word asked about (word in context, senses)
    "word_empty": "the word is empty",
    "word_of_sentence_empty": "the word is empty; give one word of the sentence",
    "word_not_in_sentence": "{word!r} is not a word of the sentence; its words are: {words}",
    "word_repeated": "{word!r} occurs {n} times (positions {positions}); used position {position}; "
    "give its position to choose another (--position on the command line)",
    "position_outside": "position {position!r} is outside the sentence (token positions 0 to {last})",
    "position_other_word": "token {position} of the sentence is {token!r}, not {word!r}",
    "position_other_word_elsewhere": "token {position} of the sentence is {token!r}, not {word!r}; "
    "{word!r} is at {positions}",
    "word_not_indexed": "{word!r} does not occur in the indexed documents; try another word",
    "word_in_units": "{word!r} is not one word unit of the index, which reads it as {units}: ask for one of those",
    "stopword_not_indexed": "{word!r} does not occur in the indexed documents (stopwords are not indexed); "
    "try another word",
    "punctuation_not_indexed": "{word!r} does not occur in the indexed documents (punctuation is not indexed); "
    "try another word",
    "word_not_in_glove": "{word!r} is not in the GloVe vocabulary ({size:,} words), so GloVe has no neighbours for it",
    "glove_none_named": "none of GloVe's {n:,} nearest words to {word!r} is a word that names something (the list "
    "leaves out stopwords and punctuation)",
    "senses_sampled": "{word!r} occurs {n:,} times; clustered a random sample of {sample:,}",
    "senses_capped": "asked for {k:,} senses, more than the uses of {word!r} clustered can hold (different uses: "
    "{n:,}): one sense for each",
    "senses_thin": "{k:,} senses of {n:,} uses leave some with fewer than {min} uses, too few to tell a sense by; "
    "k auto finds the number the uses support",
    # what the index keeps
    "no_token_vectors": "the index holds no token vectors (its documents have no content words)",
    "no_readout": "the index's sense readout needs the LM head of its model ({name}), which the model given has not; "
    "open the index with the model's folder, or ask for representation='elmo'",
    "no_exact_tokens": "this index keeps no exact token vectors (built without them), so word in context and senses "
    "use its layer mix only ({mix}); leave the layers out",
    "approximate_neighbors": "this index keeps only compressed token vectors ({factory}, no exact vectors), so "
    "neighbours and their scores are approximate; rebuild it with exact token vectors kept for exact ones",
    "approximate_senses": "this index keeps only compressed token vectors ({factory}, no exact vectors), so the "
    "clusters are approximate; rebuild it with exact token vectors kept for exact ones",
}
"""The messages a question can end with, by key; a separate key where English would need a word as a value."""


class Message(str):
    """A message of ``MESSAGES``: the English text itself, plus the ``key`` and ``values`` it was made from."""

    key: str
    values: dict[str, Any]


def message(key: str, **values: Any) -> Message:
    """``MESSAGES[key]`` filled in with ``values``; pickles (Streamlit's cache) with its key and values."""
    text = Message(MESSAGES[key].format(**values))
    text.key, text.values = key, values
    return text


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
