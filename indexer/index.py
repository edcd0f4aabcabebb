"""``Index``: open a built index and answer its questions.

    idx = Index.open("demo-index")
    idx.search("volcanic eruptions", k=5)                        # sentences nearest in meaning
    idx.neighbors("I sat on the bank of the river", "bank")      # other uses of words in context
    idx.senses("bank")                                           # the word's uses, clustered

Queries longer than ``MAX_QUERY_CHARS`` are cut there, with a ``QueryNotice`` warning (``warnings``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from encoder import Elmo, LayerMix
from encoder.text import split_and_tokenize

from . import storage
from .bm25 import BM25, reciprocal_rank_fusion
from .errors import CorruptIndexError, QueryError, QueryNotice
from .glove import GloveVectors
from .manifest import SHARDS, ModelSpec, check_files, open_glove, open_model, read_manifest, shard_layers
from .results import Neighbors, Senses, SentenceHit, TokenHit
from .senses import describe_senses
from .vectors import VectorSet, apply_search_params, faiss_search, gpu_faiss_available, mix, pool
from .words import STOPWORDS, is_word, normalize

MAX_QUERY_CHARS = 10_000
HYBRID_DEPTH = 100  # each ranking contributes its top HYBRID_DEPTH (at least k) to the fusion
MAX_K = 1_000


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but torch sees no GPU; use --device cpu")
    return device


class Index:
    """A built index opened for search: metadata in memory, vectors memory-mapped, FAISS indexes loaded.

    ``docs``, ``sentences`` and ``tokens`` are the shards' tables (pandas; row number = id), deleted
    documents included (``manifest["deleted_doc_ids"]`` lists them).
    """

    def __init__(self, path: Path, manifest: dict, elmo: Elmo, device: str = "cpu"):
        self.path = path
        self.manifest = manifest
        self.elmo = elmo
        self.device = device
        self.layer_mix = LayerMix(tuple(manifest["layers"]["weights"]))
        shards = manifest["shards"]

        def read(name: str) -> pd.DataFrame:
            return pd.concat(
                [storage.read_parquet(path / SHARDS / s["name"] / name) for s in shards], ignore_index=True
            )

        self.docs, self.sentences, self.tokens = read("docs.parquet"), read("sentences.parquet"), read("tokens.parquet")
        counts = manifest["counts"]
        if len(self.sentences) != counts["stored_sentences"] or len(self.tokens) != counts["stored_token_vectors"]:
            raise CorruptIndexError(f"{path}: the shard metadata does not match the manifest counts; rebuild the index")
        deleted = self.sentences["doc_id"].isin(set(manifest["deleted_doc_ids"])).to_numpy()
        self._deleted_sentences = deleted if deleted.any() else None
        self._deleted_tokens = deleted[self.tokens["sentence_id"].to_numpy()] if deleted.any() else None
        dims = (elmo.n_layers, elmo.dim)
        faiss_indexes = {}
        for kind, entry in manifest["indexes"].items():
            faiss_indexes[kind] = storage.read_faiss(path / entry["file"], entry["ntotal"], entry["dim"])
            apply_search_params(faiss_indexes[kind], entry["search_params"])
        weights = self.layer_mix.weights
        self._sentence_vectors = VectorSet(
            shard_layers(path, shards, "sentence", dims), faiss_indexes["sentences"], weights, device
        )
        self._token_vectors = VectorSet(
            shard_layers(path, shards, "token", dims), faiss_indexes["tokens"], weights, device
        )
        self._glove_index = faiss_indexes["glove"]
        self._glove: GloveVectors | None = None
        self._bm25: BM25 | None = None
        self._word_ids: dict[str, np.ndarray] | None = None

    @classmethod
    def open(
        cls, path: str | Path, model: ModelSpec | None = None, device: str = "cpu", verify: bool = True
    ) -> "Index":
        """Open the index at ``path``; ``model`` defaults to the one the manifest names.

        Raises IndexFormatError (not an index, interrupted build, newer format), CorruptIndexError
        (missing, truncated or - with ``verify`` - altered files) or IndexMismatchError (another model).
        """
        path = Path(path)
        manifest = read_manifest(path)
        check_files(path, manifest, verify_hashes=verify)
        device = resolve_device(device)
        return cls(path, manifest, open_model(manifest, model, device), device)

    # ------------------------------------------------------------------------------ lazily built parts
    @property
    def glove(self) -> GloveVectors:
        if self._glove is None:
            self._glove = open_glove(self.path, self.manifest["files"]["glove"])
        return self._glove

    @property
    def bm25(self) -> BM25:
        if self._bm25 is None:
            self._bm25 = BM25(self.sentences["tokens"])
        return self._bm25

    def word_ids(self, word: str) -> np.ndarray:
        """Ids of the live token vectors of ``word`` (any case); QueryError if it has none."""
        if self._word_ids is None:
            self._word_ids = self.tokens.groupby(self.tokens["word"].str.lower()).indices
        ids = self._word_ids.get(normalize(word), np.zeros(0, np.int64))
        if self._deleted_tokens is not None:
            ids = ids[~self._deleted_tokens[ids]]
        if not len(ids):
            why = (
                " (stopwords are not indexed)"
                if normalize(word) in STOPWORDS
                else " (punctuation is not indexed)"
                if not is_word(word)
                else ""
            )
            raise QueryError(f"{word!r} does not occur in the indexed documents{why}; try another word")
        return ids

    # ------------------------------------------------------------------------------ query helpers
    @staticmethod
    def _tokens(text: Any, what: str = "query") -> list[str]:
        if not isinstance(text, str) or not text.strip():
            raise QueryError(f"the {what} is empty; type a few words")
        if len(text) > MAX_QUERY_CHARS:
            warnings.warn(
                QueryNotice(f"the {what} has {len(text):,} characters; only the first {MAX_QUERY_CHARS:,} were used"),
                stacklevel=3,
            )
            text = text[:MAX_QUERY_CHARS]
        tokens = [t for sentence in split_and_tokenize(text) for t in sentence.tokens]
        if not tokens:
            raise QueryError(f"the {what} has no words")
        return tokens

    def _weights(self, layers: str | Sequence[float] | LayerMix | None) -> tuple[float, ...]:
        if layers is None:
            return self.layer_mix.weights
        try:
            return LayerMix.parse(layers, self.elmo.n_layers).weights
        except ValueError as error:
            raise QueryError(f"bad layer mix: {error}") from None

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
        self, query: str, k: int = 10, layers: str | Sequence[float] | None = None, hybrid: bool = False
    ) -> list[SentenceHit]:
        """Sentences nearest in meaning to ``query`` (cosine of pooled ELMo vectors under the layer mix).

        ``hybrid`` fuses this ranking with BM25 keyword ranking by reciprocal rank fusion; scores are then
        RRF scores. ``layers`` other than the build-time mix are searched exactly.
        """
        k = self._k(k)
        tokens = self._tokens(query)
        weights = self._weights(layers)
        query_vector = mix(pool(self.elmo.embed([tokens])[0], self.manifest["pooling"]), weights)
        depth = max(HYBRID_DEPTH, k) if hybrid else k
        scores, ids = self._sentence_vectors.search(query_vector, depth, weights, self._deleted_sentences)
        if not hybrid:
            return [self._sentence_hit(rank, s, i) for rank, (s, i) in enumerate(zip(scores, ids), start=1)]
        _, keyword_ids = self.bm25.search(tokens, depth, self._deleted_sentences)
        fused = reciprocal_rank_fusion([ids, keyword_ids], k)
        return [self._sentence_hit(rank, s, i) for rank, (i, s) in enumerate(fused, start=1)]

    def search_glove(self, query: str, k: int = 10) -> list[SentenceHit]:
        """The GloVe baseline for ``search``: cosine of mean GloVe vectors (empty, with a notice, if no word is known)."""
        k = self._k(k)
        query_vector = self.glove.sentence_vector(self._tokens(query))
        if not query_vector.any():
            warnings.warn(QueryNotice("none of the query's words has a GloVe vector"), stacklevel=2)
            return []
        scores, ids = faiss_search(self._glove_index, query_vector, k, self._deleted_sentences)
        return [self._sentence_hit(rank, s, i) for rank, (s, i) in enumerate(zip(scores, ids), start=1)]

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
        tokens = self._tokens(sentence, "sentence")
        if not isinstance(word, str) or not word.strip():
            raise QueryError("the word is empty; give one word of the sentence")
        word = word.strip()
        matches = [i for i, t in enumerate(tokens) if t == word] or [
            i for i, t in enumerate(tokens) if normalize(t) == normalize(word)
        ]
        notices = []
        if position is None:
            if not matches:
                raise QueryError(f"{word!r} is not a word of the sentence; its words are: {' | '.join(tokens[:60])}")
            position = matches[0]
            if len(matches) > 1:
                notices.append(
                    f"{word!r} occurs {len(matches)} times (positions {matches}); used position "
                    f"{position}; pass position to choose another"
                )
        elif (
            isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not 0 <= position < len(tokens)
        ):
            raise QueryError(f"position {position!r} is outside the sentence (token positions 0 to {len(tokens) - 1})")
        elif position not in matches:
            raise QueryError(
                f"token {position} of the sentence is {tokens[position]!r}, not {word!r}"
                + (f"; {word!r} is at position(s) {matches}" if matches else "")
            )
        weights = self._weights(layers)
        subset = self.word_ids(word) if same_word else None
        if not len(self._token_vectors.layers):
            raise QueryError("the index holds no token vectors (its documents have no content words)")
        query_vector = mix(self.elmo.embed([tokens])[0][:, position], weights)
        scores, ids = self._token_vectors.search(query_vector, k, weights, self._deleted_tokens, subset)
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
        note = (
            None
            if nearest is not None
            else (
                f"{word!r} is not in the GloVe vocabulary ({len(self.glove):,} words), so GloVe has no neighbours for it"
            )
        )
        return Neighbors(tokens, int(position), hits, nearest or [], note, notices)

    def senses(
        self, word: str, k: int | str = "auto", max_occurrences: int = 2000, layers: str | Sequence[float] | None = None
    ) -> Senses:
        """Cluster the occurrences of ``word`` (k by silhouette when "auto", at most 8) and place them in 2-D."""
        if not isinstance(word, str) or not word.strip():
            raise QueryError("the word is empty")
        if k != "auto" and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= 50):
            raise QueryError(f"k must be 'auto' or a whole number from 1 to 50, not {k!r}")
        weights = self._weights(layers)
        ids = self.word_ids(word.strip())
        notices = []
        if len(ids) > max_occurrences:
            notices.append(f"{word!r} occurs {len(ids):,} times; clustered a random sample of {max_occurrences:,}")
            ids = np.sort(np.random.default_rng(0).choice(ids, max_occurrences, replace=False))
        sentence_ids = self.tokens["sentence_id"].to_numpy()[ids]
        rows = self.sentences.iloc[sentence_ids]
        result = describe_senses(
            word.strip(),
            self._token_vectors.layers.gather(ids, weights),
            rows["text"].tolist(),
            rows["tokens"].tolist(),
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
        files = [*m["files"].values(), *m["indexes"].values(), *[f for s in m["shards"] for f in s["files"].values()]]
        return {
            "path": str(self.path),
            "format_version": m["format_version"],
            "created_at": m["created_at"],
            "updated_at": m["updated_at"],
            "model": m["model"],
            "layers": m["layers"],
            "pooling": m["pooling"],
            "counts": m["counts"],
            "shards": len(m["shards"]),
            "indexes": {
                kind: {key: e[key] for key in ("factory", "search_params", "ntotal", "dim")}
                for kind, e in m["indexes"].items()
            },
            "glove": m["glove"],
            "corpus": [{key: c[key] for key in ("name", "size", "documents")} for c in m["corpus"]],
            "disk_bytes": sum(f["size"] for f in files if "file" in f),  # GloVe referred to lies outside
            "device": self.device,
            "backend": self.backend,
        }
