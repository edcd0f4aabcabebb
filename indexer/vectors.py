"""Vector search: per-layer vector stores, FAISS searches over them, and exact torch search.

Stored vectors keep every ELMo layer (float16). Pooling is linear per layer, so any layer mix at query
time is ``normalize(sum_j s_j * v_j)``: the FAISS index answers queries under the build-time mix, and an
exact torch matmul answers any other mix (and serves as the GPU path when faiss-gpu is missing).

A compressed FAISS index (product quantisation, ``IVF…,PQ…``; see ``factory.token_factory``) answers with
approximate scores: when the exact layers are kept, ``VectorSet`` fetches ``RERANK`` times more candidates
from it and re-scores them exactly; without them (``layers=None``) its answers are the index's own.
Which FAISS index a build makes, and its training and tuning, is ``factory.py``'s.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import faiss
import numpy as np
import torch

from encoder.threads import faiss_threads_here

from .factory import is_compressed

RERANK = 10  # a compressed index with exact vectors kept: candidates fetched per result, then re-scored exactly
CHUNK = 65_536  # vectors mixed (and searched exactly) per step
EXACT_CACHE_BYTES = 1 << 30  # keep a query-time mix's matrix in memory up to this size
SCORES_CACHE_BYTES = 1 << 26  # VectorSet.scores mixes the whole matrix once up to this size, else gathers rows


def normalize(x: np.ndarray) -> np.ndarray:
    """L2-normalise the last axis; zero vectors stay zero (they match nothing)."""
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def mix(layers: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """(..., L+1, dim) per-layer vectors -> (..., dim) normalised mixed vectors."""
    w = np.asarray(weights, dtype=np.float32)
    return normalize(np.einsum("...ld,l->...d", np.asarray(layers, dtype=np.float32), w))


def faiss_search(
    index: faiss.Index, query: np.ndarray, k: int, deleted: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k live hits of one query (``faiss_search_many``)."""
    return faiss_search_many(index, query[None], k, deleted)[0]


def faiss_search_many(
    index: faiss.Index, queries: np.ndarray, k: int, deleted: np.ndarray | None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Top-k live hits (scores, ids) of each query (rows of ``queries``), in one FAISS search; the queries whose top
    is crowded by deleted entries are searched again, fetching more."""
    faiss_threads_here()  # the thread rule's count, in a server's or the app's worker thread too
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    n_deleted = int(deleted.sum()) if deleted is not None else 0
    fetch = min(index.ntotal, k + min(n_deleted, 4 * k + 64))
    found: list = [None] * len(queries)
    todo = np.arange(len(queries))
    while len(todo):
        all_scores, all_ids = index.search(queries[todo], max(fetch, 1))
        short = []
        for row, scores, ids in zip(todo.tolist(), all_scores, all_ids):
            keep = ids >= 0
            if deleted is not None:
                keep &= ~deleted[np.maximum(ids, 0)]
            if keep.sum() >= k or fetch >= index.ntotal:
                found[row] = scores[keep][:k], ids[keep][:k]
            else:
                short.append(row)
        todo, fetch = np.array(short, dtype=np.int64), min(index.ntotal, fetch * 4)
    return found


class ExactSearch:
    """Exact inner-product top-k with torch (CPU or GPU) over a fixed matrix of normalised vectors."""

    def __init__(self, vectors: np.ndarray, device: str | torch.device = "cpu"):
        self.vectors = torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32)).to(device)

    def search(self, query: np.ndarray, k: int, deleted: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, ids) of one query (``search_many``)."""
        return self.search_many(np.asarray(query)[None], k, deleted)[0]

    @torch.inference_mode()
    def search_many(
        self, queries: np.ndarray, k: int, deleted: np.ndarray | None = None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Top-k (scores, ids) of each query (rows of ``queries``): one matrix product per block of queries."""
        n_live = len(self.vectors) - (int(deleted.sum()) if deleted is not None else 0)
        rows = max(1, SCORES_CACHE_BYTES // max(4 * len(self.vectors), 1))  # queries scored at once: bounded memory
        found = []
        for start in range(0, len(queries), rows):
            block = torch.from_numpy(np.asarray(queries[start : start + rows], dtype=np.float32))
            scores = block.to(self.vectors.device) @ self.vectors.T
            if deleted is not None:
                scores[:, torch.tensor(deleted, device=scores.device)] = -torch.inf
            top = torch.topk(scores, min(k, n_live), dim=1)
            found += list(zip(top.values.cpu().numpy(), top.indices.cpu().numpy()))
        return found


class LayerStore:
    """Per-layer vectors (n, L+1, dim), float16, as one (memory-mapped) array per shard."""

    def __init__(self, arrays: list[np.ndarray]):
        self.arrays = arrays
        self.offsets = np.cumsum([0] + [len(a) for a in arrays])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def mixed(self, weights: Sequence[float]) -> Iterator[np.ndarray]:
        """Normalised mixed vectors in chunks, in id order."""
        for array in self.arrays:
            for start in range(0, len(array), CHUNK):
                yield mix(array[start : start + CHUNK], weights)

    def gather(self, ids: np.ndarray, weights: Sequence[float]) -> np.ndarray:
        """Normalised mixed vectors of the given ids (any order)."""
        ids = np.asarray(ids, dtype=np.int64)
        shard = np.searchsorted(self.offsets, ids, side="right") - 1
        dim = self.arrays[0].shape[-1] if self.arrays else 0
        out = np.zeros((len(ids), dim), np.float32)
        for s in np.unique(shard):
            where = np.flatnonzero(shard == s)
            local = ids[where] - self.offsets[s]
            order = np.argsort(local)  # memory maps read fastest in order
            out[where[order]] = mix(self.arrays[s][local[order]], weights)
        return out


def gpu_faiss_available() -> bool:
    return hasattr(faiss, "index_cpu_to_all_gpus") and faiss.get_num_gpus() > 0


def to_gpu(index: faiss.Index) -> faiss.Index:
    """The index on the GPUs when faiss-gpu supports its type, else unchanged (HNSW stays on the CPU)."""
    try:
        return faiss.index_cpu_to_all_gpus(index)
    except (RuntimeError, AttributeError):
        return index


class VectorSet:
    """One searchable kind of vector (sentences or token occurrences).

    Queries under the build-time mix go to the FAISS index (moved to the GPU with faiss-gpu; None: none); other
    mixes, and every query on a GPU without faiss-gpu, go to an exact torch search over the stored
    layers. Its mixed matrix is cached for the last mix used when it fits in ``EXACT_CACHE_BYTES``;
    larger collections are mixed and searched chunk by chunk on every query (bounded memory, slower).

    ``rerank`` > 1 with a compressed index (``is_compressed``): the index's top ``rerank``·k candidates are
    re-scored with the exact layers. ``layers`` None (not kept): only the build-time mix can be searched, and
    vectors (``gather``) are the index's own reconstructions (approximate for a compressed index).
    """

    def __init__(
        self,
        layers: LayerStore | None,
        index: faiss.Index | None,
        build_weights: Sequence[float],
        device: str = "cpu",
        rerank: int = 1,
    ):
        if layers is None and index is None:
            raise ValueError("a vector set needs its layers or a FAISS index")
        self.layers = layers
        self.build_weights = tuple(build_weights)
        self.device = device
        cuda = device.startswith("cuda")
        self.use_faiss = index is not None and (not cuda or gpu_faiss_available() or layers is None)
        self.cpu_index = index  # reconstructions come from it (GPU indexes do not all reconstruct)
        self.index = to_gpu(index) if cuda and self.use_faiss else index
        self.compressed = index is not None and is_compressed(index)
        self.rerank = rerank if self.compressed and layers is not None else 1
        self._exact: tuple[tuple[float, ...], ExactSearch] | None = None
        self._direct_map = False

    def __len__(self) -> int:
        return len(self.layers) if self.layers is not None else int(self.cpu_index.ntotal)

    @property
    def exact(self) -> bool:
        """Whether scores are exact cosines (exact layers kept, or an index that stores vectors uncompressed)."""
        return self.layers is not None or not self.compressed

    def searchable(self, weights: Sequence[float]) -> bool:
        """Whether a query under ``weights`` can be answered (other mixes need the exact layers)."""
        return self.layers is not None or tuple(weights) == self.build_weights

    def _reconstruct(self, ids: np.ndarray) -> np.ndarray:
        """The index's own vectors of ``ids`` (decoded, for a compressed index), normalised."""
        if not self._direct_map:
            try:
                faiss.extract_index_ivf(self.cpu_index).make_direct_map()  # an IVF index finds ids through it
            except RuntimeError:
                pass
            self._direct_map = True
        if not len(ids):
            return np.zeros((0, self.cpu_index.d), np.float32)
        return normalize(self.cpu_index.reconstruct_batch(np.ascontiguousarray(ids, dtype=np.int64)))

    def gather(self, ids: np.ndarray, weights: Sequence[float]) -> np.ndarray:
        """Normalised vectors of ``ids`` under ``weights``: exact from the layers, else the index's own."""
        if self.layers is not None:
            return self.layers.gather(ids, weights)
        if tuple(weights) != self.build_weights:
            raise ValueError("the exact layers are not kept: only the build-time mix can be used")
        return self._reconstruct(np.asarray(ids, dtype=np.int64))

    def scores(self, ids: np.ndarray, query: np.ndarray, weights: Sequence[float]) -> np.ndarray:
        """Cosines of the vectors ``ids`` under ``weights`` with a query (many calls, few rows each): from the mixed
        matrix when it is cached for this mix or small enough to cache (``SCORES_CACHE_BYTES``), else gathered."""
        weights = tuple(weights)
        cached = self._exact is not None and self._exact[0] == weights
        if self.layers is not None and (cached or len(self.layers) * len(query) * 4 <= SCORES_CACHE_BYTES):
            matrix = self._cached(weights).vectors.cpu().numpy()  # no copy on the CPU
            return matrix[np.asarray(ids, np.int64)] @ np.asarray(query, np.float32)
        return self.gather(ids, weights) @ np.asarray(query, np.float32)

    def _cached(self, weights: tuple[float, ...]) -> ExactSearch:
        if self._exact is None or self._exact[0] != weights:
            self._exact = None  # free the old matrix before building the new one
            self._exact = (weights, ExactSearch(np.concatenate(list(self.layers.mixed(weights))), self.device))
        return self._exact[1]

    def _streamed(
        self, query: np.ndarray, k: int, weights: tuple[float, ...], deleted: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        scores, ids, offset = [], [], 0
        for chunk in self.layers.mixed(weights):
            part = None if deleted is None else deleted[offset : offset + len(chunk)]
            chunk_scores, chunk_ids = ExactSearch(chunk, self.device).search(query, k, part)
            scores.append(chunk_scores)
            ids.append(chunk_ids + offset)
            offset += len(chunk)
        scores, ids = np.concatenate(scores), np.concatenate(ids)
        order = np.argsort(-scores, kind="stable")[:k]
        return scores[order], ids[order]

    def _faiss(
        self, query: np.ndarray, k: int, weights: tuple[float, ...], deleted: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The FAISS index's top k; with ``rerank``, its top rerank·k re-scored exactly."""
        if self.rerank <= 1:
            return faiss_search(self.index, query, k, deleted)
        _, ids = faiss_search(self.index, query, self.rerank * k, deleted)
        scores = self.layers.gather(ids, weights) @ np.asarray(query, dtype=np.float32)
        order = np.argsort(-scores, kind="stable")[:k]
        return scores[order], ids[order]

    def search_many(
        self, queries: np.ndarray, k: int, weights: Sequence[float], deleted: np.ndarray | None = None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """``search`` of each query (rows of ``queries``): in one FAISS search, or one matrix product, where the
        query's path allows (the build-time mix without re-ranking, or a cached mixed matrix); else one by one."""
        weights = tuple(weights)
        if self.use_faiss and weights == self.build_weights:
            if self.rerank <= 1:
                return faiss_search_many(self.index, queries, k, deleted)
        elif self.layers is not None and len(self.layers) * queries.shape[-1] * 4 <= EXACT_CACHE_BYTES:
            return self._cached(weights).search_many(queries, k, deleted)
        return [self.search(query, k, weights, deleted) for query in queries]

    def search(
        self,
        query: np.ndarray,
        k: int,
        weights: Sequence[float],
        deleted: np.ndarray | None = None,
        subset: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, ids) for a normalised query vector already mixed with ``weights``.

        ``subset`` restricts the search to those ids (exact over just those vectors, or over the index's own
        vectors of them when the layers are not kept).
        """
        weights = tuple(weights)
        if not self.searchable(weights):
            raise ValueError("the exact layers are not kept: only the build-time mix can be searched")
        if subset is not None:
            live = subset if deleted is None else subset[~deleted[subset]]
            scores, rows = ExactSearch(self.gather(live, weights), self.device).search(query, k)
            return scores, live[rows]
        if self.use_faiss and weights == self.build_weights:
            return self._faiss(query, k, weights, deleted)
        if len(self.layers) * len(query) * 4 <= EXACT_CACHE_BYTES:
            return self._cached(weights).search(query, k, deleted)
        return self._streamed(query, k, weights, deleted)
