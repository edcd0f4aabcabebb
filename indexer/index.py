"""``Index``: open a built index and answer its questions.

    idx = Index.open("demo-index")
    idx.search("volcanic eruptions", k=5)                        # documents that answer it (hybrid ranking)
    idx.search_sentences("volcanic eruptions", k=5)              # sentences nearest in meaning
    idx.neighbors("I sat on the bank of the river", "bank")      # other uses of words in context
    idx.senses("bank")                                           # the word's uses, clustered

Queries longer than ``MAX_QUERY_CHARS`` are cut there, with a ``QueryNotice`` warning (``warnings``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from encoder import Elmo, LayerMix

from . import storage
from .bm25 import BM25, terms
from .errors import CorruptIndexError, QueryError, QueryNotice, message
from .glove import GloveVectors
from .manifest import SHARDS, Manifest, ModelSpec, open_glove, open_model, shard_layers
from .ranking import (
    CANDIDATES,
    HYBRID_ELMO_WEIGHT,
    METHODS,
    NO_GOOD_MATCH,
    NULL_QUERY_WORDS,
    PASSAGE_CANDIDATES,
    Chance,
    Ranking,
    best_per_document,
    fuse,
    random_queries,
)
from .results import DocumentHit, Neighbors, Passage, Senses, SentenceHit, TokenHit
from .senses import describe_senses
from .vectors import (
    RERANK,
    ExactSearch,
    VectorSet,
    apply_search_params,
    faiss_search,
    gpu_faiss_available,
    mix,
    pool,
)
from .words import WordFrequencies, is_word, normalize

MAX_QUERY_CHARS = 10_000
MAX_K = 1_000
PASSAGES = 2  # passages shown under each document found


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; anything but cpu, cuda[:N] or auto is refused."""
    if not isinstance(device, str) or device.split(":")[0] not in ("cpu", "cuda", "auto"):
        raise ValueError(f"unknown device {device!r}; use cpu, cuda (or cuda:N) or auto")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but torch sees no GPU; use --device cpu")
    return device


class Index:
    """A built index opened for search: metadata in memory, vectors memory-mapped, FAISS indexes loaded.

    ``docs``, ``sentences`` and ``tokens`` are the shards' tables (pandas; row number = id), deleted
    documents included (``manifest.deleted_doc_ids`` lists them).
    """

    def __init__(self, path: Path, manifest: Manifest, elmo: Elmo, device: str = "cpu"):
        self.path = path
        self.manifest = manifest
        self.elmo = elmo
        self.device = device
        self.layer_mix = LayerMix(manifest.layers.weights)  # word in context and senses
        self.search_mix = LayerMix(manifest.search_layers.weights)  # search
        shards = manifest.shards

        def read(name: str) -> pd.DataFrame:
            return pd.concat([storage.read_parquet(path / SHARDS / s.name / name) for s in shards], ignore_index=True)

        self.docs, self.sentences, self.tokens = read("docs.parquet"), read("sentences.parquet"), read("tokens.parquet")
        counts = manifest.counts
        if (
            len(self.docs) != counts.stored_documents
            or len(self.sentences) != counts.stored_sentences
            or len(self.tokens) != counts.stored_token_vectors
        ):
            raise CorruptIndexError(f"{path}: the shard metadata does not match the manifest counts; rebuild the index")
        deleted_docs = self.docs["doc_id"].isin(set(manifest.deleted_doc_ids)).to_numpy()
        self._deleted_docs = deleted_docs if deleted_docs.any() else None
        doc_rows = pd.Series(np.arange(len(self.docs)), index=self.docs["doc_id"])
        self._sentence_docs = doc_rows.loc[self.sentences["doc_id"]].to_numpy()  # document row of each sentence
        deleted = deleted_docs[self._sentence_docs]
        self._deleted_sentences = deleted if deleted.any() else None
        self._deleted_tokens = deleted[self.tokens["sentence_id"].to_numpy()] if deleted.any() else None
        dims = (elmo.n_layers, elmo.dim)
        faiss_indexes = {}
        for kind, entry in manifest.indexes.items():
            faiss_indexes[kind] = storage.read_faiss(path / entry.file, entry.ntotal, entry.dim)
            apply_search_params(faiss_indexes[kind], entry.search_params)
        self._sentence_vectors = VectorSet(
            shard_layers(path, shards, "sentence", dims), faiss_indexes["sentences"], self.search_mix.weights, device
        )
        self._title_vectors = VectorSet(shard_layers(path, shards, "title", dims), None, (), device)
        exact_tokens = shard_layers(path, shards, "token", dims) if manifest.settings.keep_exact_tokens else None
        self._token_vectors = VectorSet(
            exact_tokens, faiss_indexes["tokens"], self.layer_mix.weights, device, rerank=RERANK
        )
        self._glove_index = faiss_indexes["glove"]
        self._glove: GloveVectors | None = None
        self._frequencies: WordFrequencies | None = None
        self._document_terms: list[list[str]] | None = None
        self._bm25: BM25 | None = None
        self._glove_documents: ExactSearch | None = None
        self._chance: dict[tuple, Chance] = {}
        self._word_ids: dict[str, np.ndarray] | None = None

    @classmethod
    def open(cls, path: str | Path, model: ModelSpec | None = None, device: str = "cpu", verify: bool = True) -> Index:
        """Open the index at ``path``; ``model`` defaults to the one the manifest names.

        Raises IndexFormatError (not an index, interrupted build, newer format), CorruptIndexError
        (missing, truncated or - with ``verify`` - altered files) or IndexMismatchError (another model).
        """
        path = Path(path)
        manifest = Manifest.read(path)
        manifest.check_files(path, verify_hashes=verify)
        device = resolve_device(device)
        return cls(path, manifest, open_model(manifest.model, model, device), device)

    # ------------------------------------------------------------------------------ lazily built parts
    @property
    def glove(self) -> GloveVectors:
        if self._glove is None:
            self._glove = open_glove(self.path, self.manifest.glove_source)
        return self._glove

    @functools.cached_property
    def _vocab(self) -> pd.DataFrame:
        """Word counts of the indexed text (most frequent first), read once."""
        return storage.read_parquet(self.path / self.manifest.vocab.file)

    @property
    def frequencies(self) -> WordFrequencies:
        """Word counts of the indexed text: they weigh a query's words as the passages' were weighed."""
        if self._frequencies is None:
            self._frequencies = WordFrequencies(dict(zip(self._vocab["word"], self._vocab["count"].tolist())))
        return self._frequencies

    @property
    def document_terms(self) -> list[list[str]]:
        """Each document's BM25 terms: its title's, then its sentences'."""
        if self._document_terms is None:
            documents = [terms(t) for t in self.docs["title_tokens"]]
            for row, tokens in zip(self._sentence_docs.tolist(), self.sentences["tokens"]):
                documents[row].extend(terms(tokens))
            self._document_terms = documents
        return self._document_terms

    @property
    def bm25(self) -> BM25:
        """Okapi BM25 over whole documents."""
        if self._bm25 is None:
            self._bm25 = BM25(self.document_terms)
        return self._bm25

    @property
    def glove_documents(self) -> ExactSearch:
        """SIF-weighted mean GloVe vectors of whole documents, searched exactly."""
        if self._glove_documents is None:
            vectors = [self.glove.pooled(t, self.frequencies) for t in self.document_terms]
            self._glove_documents = ExactSearch(np.stack(vectors) if vectors else np.zeros((0, self.glove.dim)))
        return self._glove_documents

    def word_ids(self, word: str) -> np.ndarray:
        """Ids of the live token vectors of ``word`` (any case); QueryError if it has none."""
        if self._word_ids is None:
            self._word_ids = self.tokens.groupby(self.tokens["word"].str.lower()).indices
        ids = self._word_ids.get(normalize(word), np.zeros(0, np.int64))
        if self._deleted_tokens is not None:
            ids = ids[~self._deleted_tokens[ids]]
        if not len(ids):
            key = (
                "stopword_not_indexed"
                if normalize(word) in self.elmo.text.stopwords
                else "punctuation_not_indexed"
                if not is_word(word)
                else "word_not_indexed"
            )
            raise QueryError(message(key, word=word))
        return ids

    # ------------------------------------------------------------------------------ query helpers
    def query_tokens(self, text: Any, what: str = "query") -> list[str]:
        """The tokens of a query or sentence as every question uses them (QueryError when it has no words).

        ``what`` ("query" or "sentence") picks the messages: ``query_empty`` or ``sentence_empty``, and so on.
        """
        if not isinstance(text, str) or not text.strip():
            raise QueryError(message(f"{what}_empty"))
        if len(text) > MAX_QUERY_CHARS:
            warnings.warn(
                QueryNotice(message(f"{what}_too_long", length=len(text), limit=MAX_QUERY_CHARS)), stacklevel=3
            )
            text = text[:MAX_QUERY_CHARS]
        tokens = self.elmo.text.tokenize(text)  # the model's language rules, as the documents were tokenized
        if not tokens:
            raise QueryError(message(f"{what}_no_words"))
        return tokens

    def _weights(self, layers: str | Sequence[float] | LayerMix | None, default: LayerMix) -> tuple[float, ...]:
        if layers is None:
            return default.weights
        try:
            return LayerMix.parse(layers, self.elmo.n_layers).weights
        except ValueError as error:
            raise QueryError(f"bad layer mix: {error}") from None

    def _query_vector(self, tokens: list[str], weights: Sequence[float]) -> np.ndarray:
        """The query pooled as passages are (the index's pooling and word weights), then mixed."""
        layers = self.elmo.embed([tokens])[0]
        return mix(pool(layers, self.manifest.pooling, self.frequencies.weights(tokens)), weights)

    @staticmethod
    def _k(k: Any) -> int:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= MAX_K:
            raise QueryError(f"k must be a whole number from 1 to {MAX_K}, not {k!r}")
        return int(k)

    def _sentence_hit(self, rank: int, score: float, sentence_id: int) -> SentenceHit:
        row = self.sentences.iloc[int(sentence_id)]
        return SentenceHit(rank, float(score), row["doc_id"], row["title"], row["text"], int(sentence_id))

    # ------------------------------------------------------------------------------ queries
    def search(
        self, query: str, k: int = 10, method: str = "hybrid", layers: str | Sequence[float] | None = None
    ) -> list[DocumentHit]:
        """Documents that answer ``query``, best first, each with its best passages and the words it matched.

        ``method``: ``hybrid`` (ELMo + BM25 keywords, the default), ``elmo``, ``keywords`` or ``glove`` (the
        static baseline); see ``indexer.ranking``. ``layers``: the ELMo layer mix (default: the index's search
        mix). A ``QueryNotice`` says when even the best document scores like random words do.
        """
        k = self._k(k)
        if method not in METHODS:
            raise QueryError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
        tokens = self.query_tokens(query)
        weights = self._weights(layers, self.search_mix)
        rankings = self._rankings(tokens, method, weights, max(k, CANDIDATES))
        ranking = rankings[method]
        if not len(ranking.ids):
            warnings.warn(QueryNotice(message("no_match")), stacklevel=2)
            return []
        query_terms = list(dict.fromkeys(t for t in terms(tokens) if t not in self.elmo.text.stopwords))
        relevance = self._relevance(rankings, method, weights, len(query_terms))
        if relevance(int(ranking.ids[0])) < NO_GOOD_MATCH:
            warnings.warn(QueryNotice(message("no_good_match")), stacklevel=2)
        hits = []
        query_vector = (
            self.glove.pooled(tokens, self.frequencies) if method == "glove" else self._query_vector(tokens, weights)
        )
        for rank, (row, score) in enumerate(zip(ranking.ids[:k].tolist(), ranking.scores[:k].tolist()), start=1):
            document_terms = set(self.document_terms[row])
            matched = [t for t in query_terms if t in document_terms]
            doc = self.docs.iloc[row]
            passages = self._passages(row, query_vector, method, weights, matched)
            hits.append(DocumentHit(rank, score, relevance(row), doc["doc_id"], doc["title"], passages, matched))
        return hits

    def _rankings(self, tokens: list[str], method: str, weights: tuple[float, ...], depth: int) -> dict[str, Ranking]:
        """The ``depth`` best documents of ``method`` (fewer when fewer match), and for ``hybrid`` its parts."""
        if method == "keywords":
            scores, ids = self.bm25.search(tokens, depth, self._deleted_docs)
            return {method: Ranking(ids, scores)}
        if method == "glove":
            query_vector = self.glove.pooled(tokens, self.frequencies)
            if not query_vector.any():
                return {method: Ranking(np.zeros(0, np.int64), np.zeros(0, np.float32))}
            scores, ids = self.glove_documents.search(query_vector, depth, self._deleted_docs)
            return {method: Ranking(ids, scores)}
        query_vector = self._query_vector(tokens, weights)
        n_sentences = min(PASSAGE_CANDIDATES, len(self._sentence_vectors.layers))
        scores, ids = self._sentence_vectors.search(query_vector, n_sentences, weights, self._deleted_sentences)
        best = best_per_document(scores, self._sentence_docs[ids])
        n_titles = min(PASSAGE_CANDIDATES, len(self._title_vectors.layers))
        scores, ids = self._title_vectors.search(query_vector, n_titles, weights, self._deleted_docs)
        for row, score in zip(ids.tolist(), scores.tolist()):
            best[row] = max(score, best.get(row, -np.inf))
        rankings = {"elmo": Ranking.of(best, depth)}
        if method == "hybrid":
            rankings |= self._rankings(tokens, "keywords", weights, CANDIDATES)
            rankings["hybrid"] = fuse(rankings["elmo"], rankings["keywords"], depth)
        return rankings

    def _relevance(
        self, rankings: dict[str, Ranking], method: str, weights: tuple[float, ...], n_words: int
    ) -> Callable[[int], float]:
        """A found document's relevance (document row -> [0, 1]): where its score falls among the best scores of
        random queries of as many content words; for ``hybrid``, the weighted mean of its parts' relevance (0
        where absent), with the fusion's weights."""
        parts = (
            {"elmo": HYBRID_ELMO_WEIGHT, "keywords": 1 - HYBRID_ELMO_WEIGHT} if method == "hybrid" else {method: 1.0}
        )
        scores = {part: dict(zip(rankings[part].ids.tolist(), rankings[part].scores.tolist())) for part in parts}
        chances = {part: self._chance_of(part, weights, n_words) for part in parts}

        def relevance(row: int) -> float:
            return sum(
                share * chances[part].relevance(scores[part][row])
                for part, share in parts.items()
                if row in scores[part]
            )

        return relevance

    def _chance_of(self, method: str, weights: tuple[float, ...], n_words: int) -> Chance:
        """Best scores of seeded random queries of ``n_words`` (1 to NULL_QUERY_WORDS) content words under this
        method and mix (computed once, then kept)."""
        n_words = min(max(n_words, 1), NULL_QUERY_WORDS)
        key = (method, weights, n_words)
        if key not in self._chance:
            best = []
            for tokens in random_queries(
                self._vocab, self.elmo.text.stopwords, words=n_words, seed=self.manifest.settings.seed
            ):
                ranking = self._rankings(tokens, method, weights, 1)[method]
                best.append(float(ranking.scores[0]) if len(ranking.ids) else -np.inf)
            self._chance[key] = Chance(best)
        return self._chance[key]

    def _passages(
        self, row: int, query_vector: np.ndarray, method: str, weights: tuple[float, ...], matched: list[str]
    ) -> list[Passage]:
        """The document's sentences nearest the query: by cosine (GloVe's for ``glove``, else ELMo's); for
        keyword methods, sentences holding more of the matched words come first."""
        ids = self._document_sentences(row)
        if method == "glove":
            vectors = np.stack([self.glove.pooled(t, self.frequencies) for t in self.sentences["tokens"].iloc[ids]])
        else:
            vectors = self._sentence_vectors.layers.gather(ids, weights)
        cosines = vectors @ query_vector
        wanted = set(matched) if method in ("hybrid", "keywords") else set()
        hits = [len(wanted & set(terms(t))) for t in self.sentences["tokens"].iloc[ids]]
        order = sorted(range(len(ids)), key=lambda i: (-hits[i], -cosines[i]))[:PASSAGES]
        return [Passage(int(ids[i]), self.sentences["text"].iloc[ids[i]], float(cosines[i])) for i in order]

    def _document_sentences(self, row: int) -> np.ndarray:
        """Ids of a document's sentences (stored contiguously, in document order)."""
        start, end = np.searchsorted(self._sentence_docs, [row, row + 1])
        return np.arange(start, end)

    def search_sentences(
        self, query: str, k: int = 10, method: str = "elmo", layers: str | Sequence[float] | None = None
    ) -> list[SentenceHit]:
        """Single sentences nearest in meaning to ``query``: cosine of pooled ELMo vectors (``elmo``), or of
        mean GloVe vectors (``glove``; empty, with a notice, when no query word has one)."""
        k = self._k(k)
        if method not in ("elmo", "glove"):
            raise QueryError(f"sentence search method must be 'elmo' or 'glove', not {method!r}")
        tokens = self.query_tokens(query)
        if method == "glove":
            query_vector = self.glove.sentence_vector(tokens)
            if not query_vector.any():
                warnings.warn(QueryNotice(message("no_glove_vector")), stacklevel=2)
                return []
            scores, ids = faiss_search(self._glove_index, query_vector, k, self._deleted_sentences)
        else:
            weights = self._weights(layers, self.search_mix)
            scores, ids = self._sentence_vectors.search(
                self._query_vector(tokens, weights), k, weights, self._deleted_sentences
            )
        return [self._sentence_hit(rank, s, i) for rank, (s, i) in enumerate(zip(scores, ids), start=1)]

    def _token_weights(self, layers: str | Sequence[float] | None) -> tuple[float, ...]:
        """The token mix for a query (``_weights``); one other than the index's needs the exact token vectors."""
        weights = self._weights(layers, self.layer_mix)
        if not self._token_vectors.searchable(weights):
            raise QueryError(message("no_exact_tokens", mix=self.manifest.layers.description))
        return weights

    def _approximate_notice(self, key: str) -> list[str]:
        """Said when token vectors come from a compressed index alone (no exact vectors to re-rank with)."""
        if self._token_vectors.exact:
            return []
        return [message(key, factory=self.manifest.indexes["tokens"].factory)]

    def neighbors(
        self,
        sentence: str,
        word: str,
        position: int | None = None,
        k: int = 10,
        same_word: bool = False,
        layers: str | Sequence[float] | None = None,
    ) -> Neighbors:
        """Uses in context nearest to ``word`` as used in ``sentence`` (token ``position`` if it occurs twice).

        ``same_word`` keeps only occurrences of the same word (any case). GloVe's nearest words come along.
        """
        k = self._k(k)
        tokens = self.query_tokens(sentence, "sentence")
        if not isinstance(word, str) or not word.strip():
            raise QueryError(message("word_of_sentence_empty"))
        word = word.strip()
        matches = [i for i, t in enumerate(tokens) if t == word] or [
            i for i, t in enumerate(tokens) if normalize(t) == normalize(word)
        ]
        notices = []
        if position is None:
            if not matches:
                raise QueryError(message("word_not_in_sentence", word=word, words=" | ".join(tokens[:60])))
            position = matches[0]
            if len(matches) > 1:
                notices.append(
                    message("word_repeated", word=word, n=len(matches), positions=matches, position=position)
                )
        elif (
            isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not 0 <= position < len(tokens)
        ):
            raise QueryError(message("position_outside", position=position, last=len(tokens) - 1))
        elif position not in matches:
            key = "position_other_word_elsewhere" if matches else "position_other_word"
            raise QueryError(message(key, position=position, token=tokens[position], word=word, positions=matches))
        weights = self._token_weights(layers)
        subset = self.word_ids(word) if same_word else None
        if not len(self._token_vectors):
            raise QueryError(message("no_token_vectors"))
        query_vector = mix(self.elmo.embed([tokens])[0][:, position], weights)
        scores, ids = self._token_vectors.search(query_vector, k, weights, self._deleted_tokens, subset)
        notices += self._approximate_notice("approximate_neighbors")
        hits = []
        for rank, (score, token_id) in enumerate(zip(scores, ids), start=1):
            token = self.tokens.iloc[int(token_id)]
            row = self.sentences.iloc[int(token["sentence_id"])]
            hits.append(
                TokenHit(
                    rank,
                    float(score),
                    token["word"],
                    row["doc_id"],
                    row["title"],
                    row["text"],
                    int(token["position"]),
                    int(token["char_start"]),
                    int(token["char_end"]),
                )
            )
        nearest = self.glove.nearest(word, k)
        note = None if nearest is not None else message("word_not_in_glove", word=word, size=len(self.glove))
        return Neighbors(tokens, int(position), hits, nearest or [], note, notices)

    def senses(
        self, word: str, k: int | str = "auto", max_occurrences: int = 2000, layers: str | Sequence[float] | None = None
    ) -> Senses:
        """Cluster the occurrences of ``word`` (k by silhouette when "auto", at most 8) and place them in 2-D."""
        if not isinstance(word, str) or not word.strip():
            raise QueryError(message("word_empty"))
        if k != "auto" and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= 50):
            raise QueryError(f"k must be 'auto' or a whole number from 1 to 50, not {k!r}")
        if (
            isinstance(max_occurrences, bool)
            or not isinstance(max_occurrences, (int, np.integer))
            or max_occurrences < 1
        ):
            raise QueryError(f"max_occurrences must be a whole number of at least 1, not {max_occurrences!r}")
        weights = self._token_weights(layers)
        ids = self.word_ids(word.strip())
        notices = self._approximate_notice("approximate_senses")
        if len(ids) > max_occurrences:
            notices.append(message("senses_sampled", word=word, n=len(ids), sample=max_occurrences))
            ids = np.sort(np.random.default_rng(0).choice(ids, max_occurrences, replace=False))
        sentence_ids = self.tokens["sentence_id"].to_numpy()[ids]
        rows = self.sentences.iloc[sentence_ids]
        result = describe_senses(
            word.strip(),
            self._token_vectors.gather(ids, weights),
            rows["text"].tolist(),
            [self.elmo.text.label_words(text) for text in rows["text"]],
            self.elmo.text.stopwords,
            k,
        )
        result.notices = notices
        return result

    # ------------------------------------------------------------------------------ information
    @property
    def backend(self) -> str:
        """Where queries under the build-time mix run: faiss-cpu, faiss-gpu or torch-cuda (exact)."""
        if not self.device.startswith("cuda"):
            return "faiss-cpu"
        return "faiss-gpu" if gpu_faiss_available() else "torch-cuda"

    def stats(self) -> dict:
        """Counts, settings, index types and sizes, as shown by ``python -m indexer stats``."""
        m = self.manifest
        return {
            "path": str(self.path),
            "format_version": m.format_version,
            "created_at": m.created_at,
            "updated_at": m.updated_at,
            "model": asdict(m.model),
            "layers": asdict(m.layers),
            "search_layers": asdict(m.search_layers),
            "pooling": m.pooling,
            "counts": asdict(m.counts),
            "shards": len(m.shards),
            "indexes": {
                kind: {"factory": e.factory, "search_params": e.search_params, "ntotal": e.ntotal, "dim": e.dim}
                for kind, e in m.indexes.items()
            },
            "token_vectors": {
                "exact_kept": m.settings.keep_exact_tokens,
                "compressed": self._token_vectors.compressed,
                "reranked": self._token_vectors.rerank > 1,  # the compressed index's candidates re-scored exactly
                "index_bytes_per_vector": m.indexes["tokens"].size / max(m.indexes["tokens"].ntotal, 1),
            },
            "glove": m.glove,
            "corpus": [{"name": c.name, "size": c.size, "documents": c.documents} for c in m.corpus],
            "disk_bytes": m.disk_bytes(),
            "device": self.device,
            "backend": self.backend,
        }
