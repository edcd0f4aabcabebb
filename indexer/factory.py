"""FAISS indexes by factory string: chosen by size, checked before any encoding, trained, filled and tuned.

``choose_factory`` and ``token_factory`` pick an index for n vectors (exact while small, IVF, then SQ8 or IVF-PQ);
``check_factory``, ``check_trainable`` and ``check_search_params`` refuse what FAISS could not make or search;
``build_faiss`` trains on a seeded sample and fills; ``tune_search_params`` finds the nprobe / efSearch that reaches
a recall. Searching the stored vectors is ``vectors.py``'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import faiss
import numpy as np

from encoder.numbers import Number

FLAT_LIMIT = 100_000  # up to this many vectors exact search is fast enough (a few ms per query)
SQ8_FROM = 2_000_000  # beyond this, 8-bit scalar quantisation keeps the index in memory
TRAIN_SAMPLE = 100_000  # vectors used to train IVF centroids / quantisers (more for many IVF lists, see train_size)
TRAIN_PER_LIST = 39  # FAISS's k-means wants at least this many training vectors per centroid (else it warns)
TOKEN_PQ_BYTES = 1 << 30  # "auto" token index: product quantisation once float32 vectors would pass 1 GiB
PQ_DIMS = 8  # dimensions per PQ sub-quantiser in the "auto" token factory (one byte each: dim / 8 bytes a vector)
MAX_PQ_LISTS = 65_536  # IVF lists of the "auto" token factory at most
PLATEAU = 0.005  # search-parameter tuning: recall this close to the best measured is as good as it gets


def gather(chunks: Iterable[np.ndarray], rows: np.ndarray) -> np.ndarray:
    """Rows (sorted global ids) of a stream of chunks."""
    parts, offset = [], 0
    for chunk in chunks:
        lo, hi = np.searchsorted(rows, [offset, offset + len(chunk)])
        parts.append(np.asarray(chunk[rows[lo:hi] - offset], dtype=np.float32))
        offset += len(chunk)
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


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
