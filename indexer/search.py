"""Document search: the candidates each method finds, their exact scores, and how they compare with chance.

    query words respelled (``spelling``) -> the query's vector -> each method's candidates and scores
    -> relevance against the random-word queries (the nulls) -> hits with their passages and matched words

``ranking`` holds the rules (the methods, the hybrid's fusion, ``Null``); this module runs them on the parts of
an opened index (``IndexParts``: its tables, vectors, BM25, GloVe and calibration queries), and ``Index.search``
is its door.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from encoder.words import normalize

from .bm25 import terms
from .errors import QueryError, message
from .ranking import (
    CANDIDATES,
    NULL_QUERY_WORDS,
    PASSAGE_CANDIDATES,
    RELEVANCE_LINE,
    Null,
    Ranking,
    best_per_document,
    calibrated,
    found_by_meaning,
    fuse,
    parts_of,
    relevance_margin,
)
from .results import DocumentHit, Evidence, Passage, Results, SentenceHit
from .spelling import correctable
from .vectors import faiss_search, mix

if TYPE_CHECKING:
    from .parts import IndexParts
    from .queries import Query

PASSAGES = 2  # passages shown under each document found
MAX_RESPELLED = 32
"""The most distinct words of one query that are tried for a respelling (found or not), each some milliseconds of
edit distances: a query of a thousand typos (a 10,000-character one took seconds) is answered with the rest as
typed, as its ``searched_for`` notice shows."""


@dataclass
class Prepared:
    """A query ready to rank: its words as searched (respelled or as typed), its keyword terms (all of them, and
    those of its content words), the length of the random queries it is measured against, and its notices so far."""

    tokens: list[str]
    searched_for: str | None
    stems: list[str]
    content_stems: list[str]
    n_words: int
    notices: list[str]


def written_word(text: str, start: int, end: int) -> str:
    """The word as written that holds the token ``text[start:end]``: the run of non-space characters around it (in
    Korean the eojeol, a word with its particles, which Kiwi may split otherwise than when it reads it alone)."""
    return re.search(r"\S*$", text[:start]).group() + text[start:end] + re.match(r"\S*", text[end:]).group()


class DocumentSearch:
    """Document search over one opened index; what chance scores look like is computed once per method, layer mix
    and query length (``null``) and kept."""

    def __init__(self, parts: IndexParts):
        self.parts = parts
        self._nulls: dict[tuple, Null] = {}
        self._forms: dict[int, dict[str, list[str]]] = {}  # document row -> its words by keyword term
        self._words: dict[int, frozenset[str]] = {}  # sentence id -> its words

    def search(
        self, queries: Sequence[Query], k: int, method: str, weights: tuple[float, ...], spelling: bool
    ) -> list[Results[DocumentHit]]:
        """The ``k`` documents that answer each query best by ``method`` under the layer mix ``weights`` (see
        ``Index.search``), with the query's notices and those of the search. The queries are embedded in one
        batch and their passages searched in one FAISS search."""
        prepared = [self.prepare(query, spelling) for query in queries]
        vectors = self.query_vectors([p.tokens for p in prepared], method, weights)
        passages = self.elmo_documents(vectors, weights) if method in ("elmo", "hybrid") else [None] * len(prepared)
        return [
            self.results(
                p, vector, self.candidates(p.stems, vector, method, weights, k, p.n_words, found), method, weights
            )
            for p, vector, found in zip(prepared, vectors, passages)
        ]

    def sentences(
        self, query: Query, k: int, method: str, weights: tuple[float, ...], spelling: bool
    ) -> Results[SentenceHit]:
        """The ``k`` single sentences nearest in meaning to ``query`` (respelled as ``search`` respells): cosine of
        pooled ELMo vectors under ``weights`` (``elmo``), or of mean GloVe vectors (``glove``; empty, with a notice,
        when no query word has one)."""
        parts, prepared = self.parts, self.prepare(query, spelling)
        if method == "glove":
            query_vector = parts.glove.sentence_vector(prepared.tokens)
            if not query_vector.any():
                return Results([], [*prepared.notices, message("no_glove_vector")], prepared.searched_for)
            scores, ids = faiss_search(parts.glove_index, query_vector, k, parts.deleted_sentences)
        else:
            (query_vector,) = self.query_vectors([prepared.tokens], "elmo", weights)
            scores, ids = parts.sentence_vectors.search(query_vector, k, weights, parts.deleted_sentences)
        rows = parts.sentences.iloc[[int(i) for i in ids]]
        hits = [
            SentenceHit(rank, float(score), row.doc_id, row.title, row.text, int(sentence_id))
            for rank, score, sentence_id, row in zip(itertools.count(1), scores, ids, rows.itertuples())
        ]
        return Results(hits, prepared.notices, prepared.searched_for)

    def prepare(self, query: Query, spelling: bool) -> Prepared:
        """``query``'s words respelled (``spelling``) and its keyword terms."""
        if not isinstance(spelling, bool):  # "no" would be true: respelled when asked not to be
            raise QueryError(f"spelling must be True or False, not {spelling!r}")
        parts = self.parts
        notices = list(query.notices)
        tokens, searched_for = query.tokens, None
        if spelling:
            tokens, searched_for = self.respelled(query.text, tokens, notices)
        words = [word for token in tokens for word in self.keyword_words(token)]
        content = (word for word in words if normalize(word) not in parts.elmo.text.stopwords)
        content_stems = list(dict.fromkeys(parts.keyword_terms(content)))
        # every word ranks, function words too (leaving them out cost recall on the dev queries: docs/search-quality.md)
        stems = list(dict.fromkeys(parts.keyword_terms(words)))
        n_words = min(max(len(content_stems), 1), NULL_QUERY_WORDS)
        return Prepared(tokens, searched_for, stems, content_stems, n_words, notices)

    def keyword_words(self, token: str) -> list[str]:
        """The words a query token is matched by in keyword search: itself, or, for a compound no live document
        holds ("river-bank" where the documents write "river bank"), its pieces."""
        if "-" not in token or self.is_held(normalize(token)):
            return [token]
        return [piece for piece in token.split("-") if piece] or [token]

    def results(
        self, query: Prepared, vector: np.ndarray, found: Ranking, method: str, weights: tuple[float, ...]
    ) -> Results[DocumentHit]:
        """The hits of ``found`` with their relevance, evidence, passages and matched words."""
        parts, notices = self.parts, query.notices
        if not len(found.ids):
            glove_lacks_them = method == "glove" and not vector.any()  # the GloVe, not the documents, lacks the words
            said = message("no_glove_vector" if glove_lacks_them else "no_match")
            return Results([], [*notices, said], query.searched_for)
        chance = self.null(method, weights, query.n_words)
        n_documents = parts.manifest.counts.documents
        graded = calibrated(n_documents)  # else no relevance, no line, no verdict: the documents ranked by score
        margin = relevance_margin(query.content_stems, parts.bm25.holds)
        relevance = chance.relevance(found.scores, margin)
        if not graded:
            notices.append(message("relevance_uncalibrated", n=n_documents))
        elif relevance[0] < RELEVANCE_LINE:
            notices.append(message("no_good_match"))
        shares = parts_of(method)
        nulls = {part: self.null(part, weights, query.n_words) for part in shares}
        rows = found.ids.tolist()
        # the content words it shares; the function words only when it shares nothing else (it was ranked on them)
        matched = [self.matched_words(row, query.content_stems) or self.matched_words(row, query.stems) for row in rows]
        passages = self.passages(found.ids, vector, method, weights, matched)
        doc_ids, titles = (parts.docs[column].take(found.ids).tolist() for column in ("doc_id", "title"))
        hit_above_chance = chance.z(found.scores).tolist()
        above_chance = {part: nulls[part].z(found.parts[part]).tolist() for part in shares}
        part_relevance = {part: nulls[part].relevance(found.parts[part], margin).tolist() for part in shares}
        hits = []
        for i in range(len(rows)):
            scores = {part: float(found.parts[part][i]) for part in shares}
            hit_relevance = float(relevance[i]) if graded else None
            hits.append(
                DocumentHit(
                    rank=i + 1,
                    score=float(found.scores[i]),
                    relevance=hit_relevance,
                    above_chance=hit_above_chance[i],
                    doc_id=doc_ids[i],
                    title=titles[i],
                    passages=passages[i],
                    matched_words=matched[i],
                    parts={
                        part: Evidence(
                            score, above_chance[part][i], part_relevance[part][i] if graded else None, shares[part]
                        )
                        for part, score in scores.items()
                    },
                    by_meaning=found_by_meaning(hit_relevance, scores, nulls, shares, matched[i], margin),
                    above_line=bool(relevance[i] >= RELEVANCE_LINE) if graded else None,
                )
            )
        return Results(hits, notices, query.searched_for)

    def query_vectors(self, token_lists: list[list[str]], method: str, weights: Sequence[float]) -> np.ndarray:
        """The queries pooled as documents are for ``method``: GloVe's, else ELMo's (embedded in one batch, pooled
        as passages are, then mixed under ``weights``): (queries, dim)."""
        parts = self.parts
        if method == "glove":
            pooled = [parts.glove.pooled(tokens, parts.frequencies) for tokens in token_lists]
            return np.stack(pooled) if pooled else np.zeros((0, parts.glove.dim), np.float32)
        pooling, frequencies = parts.manifest.pooling, parts.frequencies
        return parts.elmo.encode(
            token_lists, normalize=True, mix=weights, pooling=pooling, word_weights=frequencies.weights
        )

    def respelled(self, text: str, tokens: list[str], notices: list[str]) -> tuple[list[str], str | None]:
        """``tokens`` with each word no document has (not even another form of it) replaced by the nearest word of
        the index's speller, where there is one (``spelling.Speller``: the collection's words and, in English, the
        model's vocabulary in lower case), and the query as searched (None: as typed); a
        ``searched_for`` notice in ``notices`` says what changed. Only what is no word at all is respelled
        (``is_no_word``): a real word the index lacks ("mice", "bold") is searched as it is, and so is a piece of
        one: a token whose word as written (``written_word``) is a word ("프레이야", which Kiwi reads alone as an
        unknown 프레 + 이 + 야). A compound the index does not know ("mountain-sprng") is respelled piece by piece."""
        fixes: dict[str, str] = {}
        spans: list[tuple[str, int, int]] = []  # the query's tokens where they stand: found once a word is no word
        asked = 0
        for token in dict.fromkeys(tokens):
            word = normalize(token)
            compound = "-" in word and not self.is_known(word)
            pieces, as_typed = (word.split("-"), token.split("-")) if compound else ([word], [token])
            fixed = list(as_typed)  # the pieces not respelled stay as typed ("NASA-teleskope": NASA-telescope)
            for n, piece in enumerate(pieces):
                if asked >= MAX_RESPELLED or not self.is_no_word(piece):
                    continue
                spans = spans or self.parts.elmo.text.text_tokens(text)
                whole = next((written_word(text, a, b) for t, a, b in spans if t == token), token)
                if whole != token and self.is_a_word(normalize(whole)):
                    break
                asked += 1
                fixed[n] = self.parts.speller.correct(piece) or as_typed[n]
            if fixed != as_typed:
                fixes[token] = "-".join(fixed)
        if not fixes:
            return tokens, None
        parts, last = [], 0
        for token, start, end in spans:
            if token in fixes:
                parts += [text[last:start], fixes[token]]
                last = end
        searched = "".join(parts) + text[last:]
        changes = ", ".join(f"{typed} → {fix}" for typed, fix in fixes.items())
        notices.append(message("searched_for", query=searched, changes=changes, words=fixes))
        return [fixes.get(token, token) for token in tokens], searched

    def is_no_word(self, word: str) -> bool:
        """Whether ``word`` (``normalize``d) is to be respelled: ``correctable``, no stopword, and neither held by a
        live document (in any of its forms) nor a word of the language (``is_known``)."""
        return correctable(word) and word not in self.parts.elmo.text.stopwords and not self.is_known(word)

    def is_known(self, word: str) -> bool:
        """Whether ``word`` (lower case) is ``is_held`` or is a word (``is_a_word``)."""
        return self.is_held(word) or self.is_a_word(word)

    def is_held(self, word: str) -> bool:
        """Whether a live document holds ``word`` (lower case) in one of its forms (its keyword term)."""
        return self.parts.bm25.holds(self.parts.keyword_terms.term(word))

    def is_a_word(self, word: str) -> bool:
        """Whether ``word`` (lower case) is in a large dictionary: the index's (``IndexParts.dictionary``) or its
        tokenizer's own (Korean: Kiwi's, ``TextRules.knows``)."""
        return word in self.parts.dictionary or self.parts.elmo.text.knows(word)

    def candidates(
        self,
        stems: list[str],
        query_vector: np.ndarray,
        method: str,
        weights: tuple[float, ...],
        depth: int,
        n_words: int,
        passages: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Ranking:
        """The ``depth`` best documents of ``method`` (fewer when fewer match), with each part's scores.

        ``stems``: the query's keyword terms (``Prepared.stems``); ``query_vector``: the query pooled as
        documents are for this method (GloVe's, else ELMo's under ``weights``);
        ``n_words``: the query's content words, the length of the random queries the hybrid's parts are measured by;
        ``passages``: the query's ``elmo_documents`` when they were searched already (with other queries').
        """
        if method == "glove":
            if not query_vector.any():
                return Ranking.of(np.zeros(0, np.int64), np.zeros(0), {method: np.zeros(0)}, depth)
            scores, ids = self.parts.glove_documents.search(query_vector, depth, self.parts.deleted_docs)
            return Ranking.of(ids, scores, {method: scores}, depth)
        if method == "keywords":
            scores, ids = self.parts.bm25.search(stems, depth)
            return Ranking.of(ids, scores, {method: scores}, depth)
        if passages is None and method in ("elmo", "hybrid"):
            (passages,) = self.elmo_documents(query_vector[None], weights)
        if method == "elmo":
            ids, scores = passages
            return Ranking.of(ids, scores, {method: scores}, depth)
        each = max(CANDIDATES, depth)  # documents each part contributes: at least the k asked for
        keywords = self.parts.bm25.scores(stems)
        matching = np.flatnonzero(keywords > 0)
        matching = matching[np.argsort(-keywords[matching], kind="stable")[:each]]
        elmo_ids, elmo_scores = passages
        ids = np.union1d(elmo_ids[np.argsort(-elmo_scores, kind="stable")[:each]], matching)
        parts = {"elmo": self.elmo_scores(ids, query_vector, weights), "keywords": keywords[ids]}
        nulls = {part: self.null(part, weights, n_words) for part in parts}
        return Ranking.of(ids, fuse(parts, nulls, parts_of(method)), parts, depth)

    def elmo_documents(
        self, query_vectors: np.ndarray, weights: tuple[float, ...]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each query: the documents with a passage among the ``PASSAGE_CANDIDATES`` nearest (sentences and
        titles), each scored by its best passage: (document rows, scores). One search of all queries at once."""
        parts = self.parts
        n_sentences = min(PASSAGE_CANDIDATES, len(parts.sentence_vectors))
        sentences = parts.sentence_vectors.search_many(query_vectors, n_sentences, weights, parts.deleted_sentences)
        n_titles = min(PASSAGE_CANDIDATES, len(parts.title_vectors))
        titles = parts.title_vectors.search_many(query_vectors, n_titles, weights, parts.deleted_docs)
        return [
            best_per_document(
                np.concatenate([sentence_scores, title_scores]),
                np.concatenate([parts.sentence_docs[sentence_ids], title_rows]),
            )
            for (sentence_scores, sentence_ids), (title_scores, title_rows) in zip(sentences, titles)
        ]

    def elmo_scores(self, rows: np.ndarray, query_vector: np.ndarray, weights: tuple[float, ...]) -> np.ndarray:
        """The ELMo score of the documents ``rows``, exactly: the best cosine of one of their passages."""
        parts = self.parts
        best = parts.title_vectors.scores(rows, query_vector, weights)
        sentence_ids, counts = self.sentences_of(rows)
        cosines = parts.sentence_vectors.scores(sentence_ids, query_vector, weights)
        having = counts > 0  # each document's sentences are one run of ``cosines``: the best of each run
        starts = (np.cumsum(counts) - counts)[having]
        best[having] = np.maximum(best[having], np.maximum.reduceat(cosines, starts) if len(starts) else [])
        return best

    def sentences_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sentence ids of the documents ``rows``, document after document, and how many each has (a
        document's sentences are stored together, in order)."""
        sentence_docs = self.parts.sentence_docs
        starts, ends = np.searchsorted(sentence_docs, rows), np.searchsorted(sentence_docs, rows + 1)
        counts = ends - starts
        # document i's run of ids starts at starts[i], at position offset[i] of the whole list
        offsets = np.cumsum(counts) - counts
        return np.arange(counts.sum(), dtype=np.int64) + np.repeat(starts - offsets, counts), counts

    def null(self, method: str, weights: tuple[float, ...], n_words: int) -> Null:
        """What ``method``'s best document scores for the random queries of ``n_words`` words
        (``IndexParts.null_queries``), searched under the layer mix ``weights`` as the user's query is: computed once."""
        key = (method, weights if method in ("elmo", "hybrid") else (), n_words)
        if key not in self._nulls:
            parts = self.parts
            queries, layers = parts.null_queries.of_length(n_words)
            if method == "glove":
                vectors = self.query_vectors(queries, method, weights)
            else:
                vectors = np.stack([mix(pooled, weights) for pooled in layers]) if len(queries) else np.zeros((0, 1))
            passages = self.elmo_documents(vectors, weights) if method in ("elmo", "hybrid") else [None] * len(queries)
            best = []
            for query, vector, found in zip(queries, vectors, passages):
                ranked = self.candidates(parts.keyword_terms(query), vector, method, weights, 1, n_words, found)
                best.append(float(ranked.scores[0]) if len(ranked.ids) else -np.inf)
            self._nulls[key] = Null.of(best)
        return self._nulls[key]

    def matched_words(self, row: int, stems: Sequence[str]) -> list[str]:
        """The document's words whose keyword term is one of the query's (``stems``), in the query's order."""
        forms = self._forms.get(row)
        if forms is None:  # the document's words by keyword term, made once per document asked about
            forms = self._forms[row] = {}
            for word in dict.fromkeys(self.parts.document_terms[row]):
                forms.setdefault(self.parts.keyword_terms.term(word), []).append(word)
        return [word for stem in stems for word in forms.get(stem, [])]

    def passages(
        self,
        rows: np.ndarray,
        query_vector: np.ndarray,
        method: str,
        weights: tuple[float, ...],
        matched: list[list[str]],
    ) -> list[list[Passage]]:
        """Each document's sentences nearest the query (``rows``: the documents; ``matched``: each one's matched
        words): by cosine (GloVe's for ``glove``, else ELMo's); for keyword methods, sentences holding more of the
        matched words come first. The sentences of all the documents are read and scored together."""
        parts = self.parts
        ids, counts = self.sentences_of(rows)
        keyword_method = method in ("hybrid", "keywords")
        if method == "glove":
            tokens = parts.sentences["tokens"].take(ids).tolist()
            pooled = [parts.glove.pooled(t, parts.frequencies) for t in tokens]
            cosines = np.stack(pooled) @ query_vector if pooled else np.zeros(0, np.float32)
        else:
            cosines = parts.sentence_vectors.scores(ids, query_vector, weights)
            if keyword_method:
                self._read_sentence_words(ids)
        chosen: list[list[int]] = []
        for (start, end), words in zip(itertools.pairwise([0, *np.cumsum(counts).tolist()]), matched):
            wanted = set(words) if keyword_method else set()
            hits = [len(wanted & self._words[i]) for i in ids[start:end].tolist()] if wanted else [0] * (end - start)
            chosen.append(sorted(range(start, end), key=lambda i: (-hits[i - start], -cosines[i]))[:PASSAGES])
        texts = iter(parts.sentences["text"].take(ids[[i for order in chosen for i in order]]).tolist())
        return [[Passage(int(ids[i]), next(texts), float(cosines[i])) for i in order] for order in chosen]

    def _read_sentence_words(self, sentence_ids: np.ndarray) -> None:
        """Each sentence's words (``bm25.terms``) into ``_words``: read once per sentence asked about, those not
        read yet in one read of the table."""
        new = [i for i in dict.fromkeys(sentence_ids.tolist()) if i not in self._words]
        if new:
            for i, tokens in zip(new, self.parts.sentences["tokens"].take(new).tolist()):
                self._words[i] = frozenset(terms(tokens))
