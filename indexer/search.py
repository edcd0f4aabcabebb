"""Document search: the candidates each method finds, their exact scores, and how they compare with chance.

    query words respelled (``spelling``) -> the query's vector -> each method's candidates and scores
    -> relevance against the random-word queries (the nulls) -> hits with their passages and matched words

``ranking`` holds the rules (the methods, the hybrid's fusion, ``Null``); this module runs them on the parts of
an opened index (``Index``: its tables, vectors, BM25, GloVe and calibration queries), and ``Index.search`` is
its door.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .bm25 import terms
from .errors import message
from .ranking import (
    CANDIDATES,
    NULL_QUERY_WORDS,
    PASSAGE_CANDIDATES,
    RELEVANCE_LINE,
    Null,
    Ranking,
    best_per_document,
    found_by_meaning,
    fuse,
    parts_of,
)
from .results import DocumentHit, Evidence, Passage, Results
from .spelling import correctable
from .vectors import mix, pool
from .words import normalize

if TYPE_CHECKING:
    from .index import Index, Query

PASSAGES = 2  # passages shown under each document found


class DocumentSearch:
    """Document search over one opened index; what chance scores look like is computed once per method, layer mix
    and query length (``null``) and kept."""

    def __init__(self, index: Index):
        self.index = index
        self._nulls: dict[tuple, Null] = {}

    def search(
        self, query: Query, k: int, method: str, weights: tuple[float, ...], spelling: bool
    ) -> Results[DocumentHit]:
        """The ``k`` documents that answer ``query`` best by ``method`` under the layer mix ``weights`` (see
        ``Index.search``), with the query's notices and those of the search."""
        index = self.index
        notices = list(query.notices)
        tokens, searched_for = query.tokens, None
        if spelling:
            tokens, searched_for = self.respelled(query.text, tokens, notices)
        stems = list(
            dict.fromkeys(index.keyword_terms(t for t in tokens if normalize(t) not in index.elmo.text.stopwords))
        )
        n_words = min(max(len(stems), 1), NULL_QUERY_WORDS)
        query_vector = (
            index.glove.pooled(tokens, index.frequencies) if method == "glove" else self.query_vector(tokens, weights)
        )
        found = self.candidates(tokens, query_vector, method, weights, k, n_words)
        if not len(found.ids):
            return Results([], notices + [message("no_match")], searched_for)
        relevance = self.null(method, weights, n_words).relevance(found.scores)
        if relevance[0] < RELEVANCE_LINE:
            notices.append(message("no_good_match"))
        shares = parts_of(method)
        nulls = {part: self.null(part, weights, n_words) for part in shares}
        hits = []
        for i, row in enumerate(found.ids.tolist()):
            matched = self.matched_words(row, stems)
            scores = {part: float(found.parts[part][i]) for part in shares}
            doc = index.docs.iloc[row]
            hits.append(
                DocumentHit(
                    rank=i + 1,
                    score=float(found.scores[i]),
                    relevance=float(relevance[i]),
                    doc_id=doc["doc_id"],
                    title=doc["title"],
                    passages=self.passages(row, query_vector, method, weights, matched),
                    matched_words=matched,
                    parts={
                        part: Evidence(
                            score, float(nulls[part].z(score)), float(nulls[part].relevance(score)), shares[part]
                        )
                        for part, score in scores.items()
                    },
                    by_meaning=found_by_meaning(float(relevance[i]), scores, nulls, shares),
                )
            )
        return Results(hits, notices, searched_for)

    def query_vector(self, tokens: list[str], weights: Sequence[float]) -> np.ndarray:
        """The query pooled as passages are (the index's pooling and word weights), then mixed."""
        index = self.index
        layers = index.elmo.embed([tokens])[0]
        return mix(pool(layers, index.manifest.pooling, index.frequencies.weights(tokens)), weights)

    def respelled(self, text: str, tokens: list[str], notices: list[str]) -> tuple[list[str], str | None]:
        """``tokens`` with each word no document has (not even another form of it) replaced by the nearest indexed
        spelling, where there is one (``spelling.Speller``), and the query as searched (None: as typed); a
        ``searched_for`` notice in ``notices`` says what changed."""
        index = self.index
        fixes = {}
        for token in dict.fromkeys(tokens):
            word = normalize(token)
            if (
                correctable(word)
                and word not in index.elmo.text.stopwords
                and index.keyword_terms.term(word) not in index.bm25.vocab
            ):
                fix = index.speller.correct(word)
                if fix is not None:
                    fixes[token] = fix
        if not fixes:
            return tokens, None
        parts, last = [], 0
        for token, start, end in index.elmo.text.text_tokens(text):
            if token in fixes:
                parts += [text[last:start], fixes[token]]
                last = end
        searched = "".join(parts) + text[last:]
        changes = ", ".join(f"{typed} → {fix}" for typed, fix in fixes.items())
        notices.append(message("searched_for", query=searched, changes=changes, words=fixes))
        return [fixes.get(token, token) for token in tokens], searched

    def candidates(
        self,
        tokens: list[str],
        query_vector: np.ndarray,
        method: str,
        weights: tuple[float, ...],
        depth: int,
        n_words: int,
    ) -> Ranking:
        """The ``depth`` best documents of ``method`` (fewer when fewer match), with each part's scores.

        ``query_vector``: the query pooled as documents are for this method (GloVe's, else ELMo's under ``weights``);
        ``n_words``: the query's content words, the length of the random queries the hybrid's parts are measured by.
        """
        index = self.index
        if method == "glove":
            if not query_vector.any():
                return Ranking.of(np.zeros(0, np.int64), np.zeros(0), {method: np.zeros(0)}, depth)
            scores, ids = index.glove_documents.search(query_vector, depth, index.deleted_docs)
            return Ranking.of(ids, scores, {method: scores}, depth)
        if method == "keywords":
            scores, ids = index.bm25.search(index.keyword_terms(tokens), depth, index.deleted_docs)
            return Ranking.of(ids, scores, {method: scores}, depth)
        if method == "elmo":
            ids, scores = self.elmo_documents(query_vector, weights)
            return Ranking.of(ids, scores, {method: scores}, depth)
        keywords = index.bm25.scores(index.keyword_terms(tokens), index.deleted_docs)
        matching = np.flatnonzero(keywords > 0)
        matching = matching[np.argsort(-keywords[matching], kind="stable")[:CANDIDATES]]
        elmo_ids, elmo_scores = self.elmo_documents(query_vector, weights)
        ids = np.union1d(elmo_ids[np.argsort(-elmo_scores, kind="stable")[:CANDIDATES]], matching)
        parts = {"elmo": self.elmo_scores(ids, query_vector, weights), "keywords": keywords[ids]}
        nulls = {part: self.null(part, weights, n_words) for part in parts}
        return Ranking.of(ids, fuse(parts, nulls, parts_of(method)), parts, depth)

    def elmo_documents(self, query_vector: np.ndarray, weights: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Documents with a passage among the ``PASSAGE_CANDIDATES`` nearest (sentences and titles), each scored by
        its best passage: (document rows, scores)."""
        index = self.index
        n_sentences = min(PASSAGE_CANDIDATES, len(index.sentence_vectors.layers))
        sentence_scores, sentence_ids = index.sentence_vectors.search(
            query_vector, n_sentences, weights, index.deleted_sentences
        )
        n_titles = min(PASSAGE_CANDIDATES, len(index.title_vectors.layers))
        title_scores, title_rows = index.title_vectors.search(query_vector, n_titles, weights, index.deleted_docs)
        return best_per_document(
            np.concatenate([sentence_scores, title_scores]),
            np.concatenate([index.sentence_docs[sentence_ids], title_rows]),
        )

    def elmo_scores(self, rows: np.ndarray, query_vector: np.ndarray, weights: tuple[float, ...]) -> np.ndarray:
        """The ELMo score of the documents ``rows``, exactly: the best cosine of one of their passages."""
        index = self.index
        starts, ends = np.searchsorted(index.sentence_docs, rows), np.searchsorted(index.sentence_docs, rows + 1)
        best = index.title_vectors.scores(rows, query_vector, weights)
        sentence_ids = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends)] + [np.zeros(0, np.int64)])
        cosines = index.sentence_vectors.scores(sentence_ids, query_vector, weights)
        np.maximum.at(best, np.repeat(np.arange(len(rows)), ends - starts), cosines)
        return best

    def null(self, method: str, weights: tuple[float, ...], n_words: int) -> Null:
        """What ``method``'s best document scores for the random queries of ``n_words`` words
        (``Index.null_queries``), searched under the layer mix ``weights`` as the user's query is: computed once."""
        key = (method, weights if method in ("elmo", "hybrid") else (), n_words)
        if key not in self._nulls:
            index = self.index
            queries, layers = index.null_queries.of_length(n_words)
            best = []
            for query, pooled in zip(queries, layers):
                vector = index.glove.pooled(query, index.frequencies) if method == "glove" else mix(pooled, weights)
                found = self.candidates(query, vector, method, weights, 1, n_words)
                best.append(float(found.scores[0]) if len(found.ids) else -np.inf)
            self._nulls[key] = Null.of(best)
        return self._nulls[key]

    def matched_words(self, row: int, stems: Sequence[str]) -> list[str]:
        """The document's words whose keyword term is one of the query's (``stems``), in the query's order."""
        forms: dict[str, list[str]] = {}
        for word in dict.fromkeys(self.index.document_terms[row]):
            forms.setdefault(self.index.keyword_terms.term(word), []).append(word)
        return [word for stem in stems for word in forms.get(stem, [])]

    def passages(
        self, row: int, query_vector: np.ndarray, method: str, weights: tuple[float, ...], matched: list[str]
    ) -> list[Passage]:
        """The document's sentences nearest the query: by cosine (GloVe's for ``glove``, else ELMo's); for
        keyword methods, sentences holding more of the matched words come first."""
        index = self.index
        start, end = np.searchsorted(index.sentence_docs, [row, row + 1])  # a document's sentences are contiguous
        ids = np.arange(start, end)
        tokens = index.sentences["tokens"].iloc[ids]
        if method == "glove":
            cosines = np.stack([index.glove.pooled(t, index.frequencies) for t in tokens]) @ query_vector
        else:
            cosines = index.sentence_vectors.scores(ids, query_vector, weights)
        wanted = set(matched) if method in ("hybrid", "keywords") else set()
        hits = [len(wanted & set(terms(t))) for t in tokens]
        order = sorted(range(len(ids)), key=lambda i: (-hits[i], -cosines[i]))[:PASSAGES]
        return [Passage(int(ids[i]), index.sentences["text"].iloc[ids[i]], float(cosines[i])) for i in order]
