"""Vector search: per-layer vector stores, FAISS indexes chosen by size, and exact torch search.

Stored vectors keep every ELMo layer (float16). Pooling is linear per layer, so any layer mix at query
time is ``normalize(sum_j s_j * v_j)``: the FAISS index answers queries under the build-time mix, and an
exact torch matmul answers any other mix (and serves as the GPU path when faiss-gpu is missing).

A compressed FAISS index (product quantisation, ``IVF…,PQ…``; see ``token_factory``) answers with
approximate scores: when the exact layers are kept, ``VectorSet`` fetches ``RERANK`` times more candidates
from it and re-scores them exactly; without them (``layers=None``) its answers are the index's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence

import faiss
import numpy as np
import torch

from encoder.numbers import Number

FLAT_LIMIT = 100_000  # up to this many vectors exact search is fast enough (a few ms per query)
SQ8_FROM = 2_000_000  # beyond this, 8-bit scalar quantisation keeps the index in memory
TRAIN_SAMPLE = 100_000  # vectors used to train IVF centroids / quantisers (more for many IVF lists, see train_size)
TRAIN_PER_LIST = 39  # FAISS's k-means wants at least this many training vectors per centroid (else it warns)
TOKEN_PQ_BYTES = 1 << 30  # "auto" token index: product quantisation once float32 vectors would pass 1 GiB
PQ_DIMS = 8  # dimensions per PQ sub-quantiser in the "auto" token factory (one byte each: dim / 8 bytes a vector)
MAX_PQ_LISTS = 65_536  # IVF lists of the "auto" token factory at most
PLATEAU = 0.005  # search-parameter tuning: recall this close to the best measured is as good as it gets
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


def ivf_lists(n: int) -> int:
    """IVF list count for n vectors: the power of two nearest 4·sqrt(n) (FAISS's rule of thumb)."""
    return 1 << round(math.log2(4 * math.sqrt(max(n, 1))))


def choose_factory(n: int) -> str:
    """An ``index_factory`` string for n vectors: Flat (exact) when small, IVF beyond, IVF-SQ8 when huge."""
    if n <= FLAT_LIMIT:
        return "Flat"
    return f"IVF{ivf_lists(n)},{'Flat' if n <= SQ8_FROM else 'SQ8'}"


def pq_subquantizers(dim: int) -> int:
    """PQ sub-quantisers for ``dim``: the largest divisor of dim up to dim / PQ_DIMS (FAISS needs a divisor)."""
    return max(m for m in range(1, max(dim // PQ_DIMS, 1) + 1) if dim % m == 0)


def token_factory(n: int, dim: int) -> str:
    """The "auto" token index for n vectors of ``dim``: ``choose_factory(n)`` (Flat, then IVF-Flat) while the
    float32 vectors fit in ``TOKEN_PQ_BYTES``, beyond that ``IVF{lists},PQ{m}np``: lists as ``ivf_lists`` (at most
    ``MAX_PQ_LISTS``), m sub-quantisers of ``PQ_DIMS`` dims, 8 bits each (m bytes a vector instead of 4·dim);
    ``np``: no polysemous training (FAISS's default for PQ, slow, and only for searches with ``ht``)."""
    if n * dim * 4 <= TOKEN_PQ_BYTES:
        return choose_factory(n)
    return f"IVF{min(ivf_lists(n), MAX_PQ_LISTS)},PQ{pq_subquantizers(dim)}np"


def _chain(index: faiss.Index) -> tuple[list[faiss.VectorTransform], faiss.Index]:
    """The transforms (e.g. OPQ) in front of an index, and the index behind them (``index`` must stay alive)."""
    transforms = []
    inner = faiss.downcast_index(index)
    while isinstance(inner, faiss.IndexPreTransform):
        transforms += [faiss.downcast_VectorTransform(inner.chain.at(i)) for i in range(inner.chain.size())]
        inner = faiss.downcast_index(inner.index)
    return transforms, inner


def is_compressed(index: faiss.Index) -> bool:
    """Whether the index stores vectors lossily (PQ, SQ, ...): its scores are approximate."""
    transforms, inner = _chain(index)
    if any(not isinstance(t, (faiss.OPQMatrix, faiss.RandomRotationMatrix)) for t in transforms):
        return True  # e.g. PCA drops dimensions
    try:
        inner = faiss.downcast_index(faiss.extract_index_ivf(inner))
        return not isinstance(inner, faiss.IndexIVFFlat)
    except RuntimeError:
        pass
    if isinstance(inner, faiss.IndexHNSW):
        inner = faiss.downcast_index(inner.storage)
    return not isinstance(inner, faiss.IndexFlat)


def train_size(index: faiss.Index, n: int) -> int:
    """Vectors to train ``index`` on out of n: ``TRAIN_SAMPLE``, or ``TRAIN_PER_LIST`` per IVF list if more."""
    try:
        lists = faiss.extract_index_ivf(index).nlist
    except RuntimeError:
        lists = 0
    return min(n, max(TRAIN_SAMPLE, TRAIN_PER_LIST * lists))


def min_train_points(index: faiss.Index) -> int:
    """The fewest training vectors FAISS accepts for ``index``: one per IVF list, per PQ centroid (2^bits), and
    256 for an OPQ rotation (its own 8-bit PQ); 0 for indexes that need no training."""
    transforms, inner = _chain(index)
    need = [256 for t in transforms if isinstance(t, faiss.OPQMatrix)]
    try:
        ivf = faiss.downcast_index(faiss.extract_index_ivf(inner))
        need.append(ivf.nlist)
        inner = ivf
    except RuntimeError:
        pass
    if hasattr(inner, "pq"):
        need.append(inner.pq.ksub)
    return max(need, default=0)


def _knob(index: faiss.Index) -> tuple[str, list[int]] | None:
    """The search-time speed/recall parameter of an index and the values worth trying, cheapest first."""
    try:
        nlist = faiss.extract_index_ivf(index).nlist
        return "nprobe", [p for p in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048) if p < nlist] + [nlist]
    except RuntimeError:
        pass
    if "HNSW" in type(faiss.downcast_index(index)).__name__:
        return "efSearch", [16, 32, 64, 128, 256, 512, 1024]
    return None


def tune_search_params(
    index: faiss.Index,
    n: int,
    chunks: Callable[[], Iterable[np.ndarray]],
    k: int = 10,
    target: float = 0.95,
    n_queries: int = 200,
    seed: int = 0,
    rerank: int = 1,
) -> str:
    """An nprobe / efSearch for recall@k >= ``target``, found on queries drawn from the data itself.

    Each query is a stored vector; its exact neighbours (itself excluded) come from a brute-force pass.
    ``rerank``: the index's top rerank·k are re-scored exactly afterwards (``RERANK``), so a true neighbour
    counts as found when it is among them. A compressed index may never reach the target: then the
    cheapest value within ``PLATEAU`` of the best recall measured counts as reaching it. Stored vectors are
    easier queries than new text, so the value returned is one step (2x) beyond the cheapest that reaches the
    target. Returns "" for exact indexes, else faiss ParameterSpace syntax.
    """
    knob = _knob(index)
    if knob is None or n <= k + 1:
        return ""
    name, values = knob
    rows = np.sort(np.random.default_rng(seed + 1).choice(n, size=min(n, n_queries), replace=False))
    queries = gather(chunks(), rows)
    scores, ids, offset = [], [], 0
    for chunk in chunks():  # exact top k+1 by streaming
        part = queries @ np.asarray(chunk, dtype=np.float32).T
        top = np.argpartition(-part, min(k, part.shape[1] - 1), axis=1)[:, : k + 1]
        scores.append(np.take_along_axis(part, top, 1))
        ids.append(top + offset)
        offset += len(chunk)
    scores, ids = np.concatenate(scores, 1), np.concatenate(ids, 1)
    truth = np.take_along_axis(ids, np.argsort(-scores, axis=1)[:, : k + 1], 1)
    truth = [set(t) - {r} for t, r in zip(truth.tolist(), rows.tolist())]
    fetch = min(n, max(rerank, 1) * k + 1)
    recalls = []
    for value in values:
        apply_search_params(index, f"{name}={value}")
        found = index.search(queries, fetch)[1]
        recalls.append(
            np.mean([len((set(f) - {r}) & t) / len(t) for f, r, t in zip(found.tolist(), rows.tolist(), truth)])
        )
        if recalls[-1] >= target:
            break
    reached = len(recalls) - 1
    if recalls[-1] < target:  # nothing reaches it (recall is bounded by the compression): the plateau's start
        reached = next(i for i, r in enumerate(recalls) if r >= max(recalls) - PLATEAU)
    return f"{name}={values[min(reached + 1, len(values) - 1)]}"


def apply_search_params(index: faiss.Index, params: str) -> None:
    """Set FAISS search parameters such as ``nprobe=32``; a ValueError names the ones this index has not, or a value
    no search works with (``check_search_params``: a manifest is checked too when an index is opened)."""
    if not params:
        return
    check_search_params(params)
    try:
        faiss.ParameterSpace().set_index_parameters(index, params)
    except RuntimeError as error:
        raise ValueError(
            f"FAISS cannot set search parameters {params!r} on a {type(index).__name__} "
            f"({str(error).splitlines()[0].rsplit(':', 1)[-1].strip()}); give e.g. nprobe=32 for IVF or "
            "efSearch=128 for HNSW indexes, or leave them out to have them tuned"
        ) from None


SEARCH_PARAMETERS = {
    "nprobe": Number(int, 1, 2**20),  # IVF lists probed (FAISS takes at most all of them)
    "efSearch": Number(int, 1, 2**20),  # HNSW's candidate list
    "ht": Number(int, 0, 2**16),  # the Hamming threshold of polysemous codes (in bits)
    "k_factor": Number(float, 1, 2**10),  # how many more candidates a refining index re-ranks
    "max_codes": Number(int, 1),  # codes an IVF search visits at most
}
"""FAISS's search-time parameters (``faiss.ParameterSpace``) and the values with which a search still works (0 probes,
say, fail every later search; 10^12, which FAISS takes as the size of its arrays, ask for terabytes and fail every
search too); ``quantizer_`` before one sets the quantizer's."""


def check_search_params(params: str) -> None:
    """Fail before any encoding starts if ``params`` is not "name=number[,name=number...]" of FAISS's names, each
    number one a search works with."""
    for item in filter(None, params.split(",")):
        name, _, value = item.partition("=")
        rule = SEARCH_PARAMETERS.get(name.removeprefix("quantizer_"))
        if rule is None:
            raise ValueError(
                f"search parameters {params!r}: {item!r} is not one of {', '.join(SEARCH_PARAMETERS)} = a number; "
                "give e.g. nprobe=32 for IVF or efSearch=128 for HNSW indexes, or leave them out to have them tuned"
            )
        problem = rule.text_problem(value)
        if problem is not None:
            raise ValueError(f"search parameters {params!r}: {name} {problem}")


def check_trainable(factory: str, dim: int, n: int, what: str = "sentences", option: str = "--index-factory") -> None:
    """Fail before any encoding starts if ``factory`` needs more training vectors than the ``n`` there will be
    (IVF lists, PQ centroids, OPQ; see ``min_train_points``); ``what`` and ``option`` word the message."""
    try:
        index = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    except RuntimeError:  # refused by check_factory
        return
    need = min_train_points(index)
    if need <= n:
        return
    try:
        nlist = faiss.extract_index_ivf(index).nlist
    except RuntimeError:
        nlist = 0
    needs = f"{nlist:,} IVF lists" if nlist == need else f"at least {need:,} training vectors"
    raise ValueError(
        f"FAISS cannot train {factory!r} ({needs}) on the corpus's {n:,} {what}; choose a smaller "
        f"{option} (e.g. fewer IVF lists, fewer PQ bits, or Flat) or leave it out to have it chosen by size"
    )


def check_factory(factory: str, dim: int, examples: str = "'Flat', 'IVF1024,Flat', 'HNSW32' or 'IVF4096,SQ8'") -> None:
    """Fail before any encoding starts if FAISS does not understand ``factory``."""
    try:
        faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    except RuntimeError as error:
        raise ValueError(
            f"FAISS cannot make an index from {factory!r} ({str(error).splitlines()[0]}); try e.g. {examples}"
        ) from None


def build_faiss(
    factory: str, dim: int, n: int, chunks: Callable[[], Iterable[np.ndarray]], seed: int = 0
) -> faiss.Index:
    """Train (on a seeded sample) and fill an inner-product index from a re-iterable stream of chunks."""
    index = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
    if not index.is_trained and n:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=train_size(index, n), replace=False))
        try:
            index.train(gather(chunks(), rows))
        except RuntimeError as error:  # e.g. fewer vectors than IVF lists
            reason = str(error).splitlines()[0].rsplit("failed:", 1)[-1].strip()
            raise ValueError(
                f"FAISS cannot train a {factory!r} index on {n:,} vectors ({reason}); choose a smaller "
                "--index-factory (e.g. fewer IVF lists, or Flat) or leave it out to have it chosen by size"
            ) from None
    for chunk in chunks():
        index.add(np.ascontiguousarray(chunk, dtype=np.float32))
    return index


def gather(chunks: Iterable[np.ndarray], rows: np.ndarray) -> np.ndarray:
    """Rows (sorted global ids) of a stream of chunks."""
    parts, offset = [], 0
    for chunk in chunks:
        lo, hi = np.searchsorted(rows, [offset, offset + len(chunk)])
        parts.append(np.asarray(chunk[rows[lo:hi] - offset], dtype=np.float32))
        offset += len(chunk)
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


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
