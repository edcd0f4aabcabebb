"""Scale: build throughput and bytes per token measured here, and a projection to 1M, 100M and 1B tokens.

    python -m bench.scale                          # data/demo with the shipped "default" model on CPU (2-3 minutes)
    python -m bench.scale --corpus FILE... --keep /tmp/scale-index --threads 1

Measured (and printed as such):
1. Build throughput of one worker: one process with ``--threads`` torch and FAISS threads (default 1: one core,
   as a Ray actor per CPU) builds an index of the corpus with the default settings; tokens/s of encoding (the
   shards: the part workers share), of the first pass over the corpus and of the FAISS indexes with their tuning
   (both in the one process that drives a build), the rest (loading the model and GloVe, writing the
   vocabulary; about constant), and the process's peak memory.
2. Bytes per corpus token of each part of that index on disk, and of what ``Index.open`` holds in memory.
3. The token index built by FAISS from the same stored vectors with other factories (Flat; IVF-PQ as the "auto"
   rule builds it beyond its threshold, with its IVF lists scaled down to this corpus; OPQ): bytes per token
   vector and recall@10 against exact search, for neighbours among all occurrences (the PQ index alone, and its
   top 10x re-ranked with the exact vectors, ``vectors.RERANK``) and among the occurrences of the same word (the
   PQ index's own vectors; with exact vectors kept these are exact by construction). Queries are stored
   occurrences (themselves left out) of words with more than 10 other occurrences; search parameters are tuned
   as a build tunes them.
Projected (printed as projections): time, disk and memory for 1M / 100M / 1B corpus tokens and 1 / 8 / 64
workers, assuming encoding scales linearly in tokens and workers (no coordination or I/O limits, one model per
worker), the first pass and the FAISS indexes run in one process at their measured tokens/s (linear, and on one
core; FAISS training and tuning grow somewhat faster than linearly, FAISS would use more cores), shards take the
measured bytes per token, and FAISS indexes take their codes plus centroids (``faiss_bytes``) for the factory
the "auto" rules choose at that size.

Writes nothing the tests use: the index goes to a temporary folder (or ``--keep``).
"""

from __future__ import annotations

import argparse
import glob
import re
import resource
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np

import indexer.build as build_module
from bench.figures import figure, figure_block
from encoder.threads import apply_threads
from encoder.words import normalize
from indexer import Index, Settings, build_index
from indexer.factory import (
    apply_search_params,
    build_faiss,
    choose_factory,
    ivf_lists,
    pq_subquantizers,
    token_factory,
    tune_search_params,
)
from indexer.vectors import RERANK, VectorSet

ROOT = Path(__file__).resolve().parents[1]
TOKENS = (1_000_000, 100_000_000, 1_000_000_000)
WORKERS = (1, 8, 64)
STEPS_HEAD = ("| step | seconds | tokens/s |", "|---|---:|---:|")
BYTES_HEAD = ("| part of the index | bytes per corpus token |", "|---|---:|")
FACTORIES_HEAD = (
    "| token index | bytes a vector | build s | PQ alone | PQ + exact re-ranking | same word, PQ alone | tuned "
    "(alone; re-ranked) |",
    "|---|---:|---:|---:|---:|---:|---|",
)
PROJECTION_HEAD = (
    "| tokens | workers | build time | token index (auto) | disk, exact vectors kept | disk, `--no-exact-tokens` | "
    "RAM to serve |",
    "|---:|---:|---:|---|---:|---:|---:|",
)
"""The tables' headers: the pages keep the last run's tables (``tests/test_docs.py``, ``MARKED_ONLY``)."""
K = 10


def timed(module, name: str, times: dict) -> None:
    """Wrap ``module.name`` (a module's function, or an object's method) so that its seconds add up in
    ``times[name]``."""
    real = getattr(module, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            times[name] = times.get(name, 0.0) + time.perf_counter() - start

    setattr(module, name, wrapper)


def faiss_bytes(factory: str, n: int, dim: int) -> float:
    """Bytes of a FAISS index of n vectors: codes (+ 8-byte ids in IVF lists) plus centroids and codebooks."""
    lists = int(m.group(1)) if (m := re.match(r"IVF(\d+),", factory)) else 0
    ids = 8 if lists else 0
    if (pq := re.search(r"PQ(\d+)(?:x(\d+))?", factory)) is not None:
        m, bits = int(pq.group(1)), int(pq.group(2) or 8)
        code, tables = m * bits / 8, 2**bits * dim * 4
    elif "SQ8" in factory:
        code, tables = dim, 2 * dim * 4
    else:
        code, tables = 4 * dim, 0
    return n * (code + ids) + lists * dim * 4 + tables


def duration(seconds: float) -> str:
    if seconds < 3600:
        return f"{max(seconds / 60, 1):.0f} min" if seconds >= 60 else "< 1 min"
    return f"{seconds / 3600:.1f} h" if seconds < 72 * 3600 else f"{seconds / 86400:.1f} days"


def short_count(n: int) -> str:
    """1M, 100M, 1B."""
    return f"{n // 10**9}B" if n >= 10**9 else f"{n // 10**6}M"


def recall(found: list[np.ndarray], truth: list[np.ndarray]) -> float:
    return float(np.mean([len(set(f.tolist()) & set(t.tolist())) / len(t) for f, t in zip(found, truth)]))


def token_index_table(index: Index, n_queries: int, seed: int, factories: list[str] | None) -> list[dict]:
    """Part 3: token index factories on the stored token vectors, bytes per vector and recall@10."""
    layers, weights = index.parts.token_vectors.layers, index.layer_mix.weights
    n, dim = len(layers), index.elmo.dim
    vectors = np.concatenate(list(layers.mixed(weights)))
    words = index.tokens["word"].map(normalize).to_numpy()
    groups = index.tokens.groupby(words).indices
    rng = np.random.default_rng(seed)
    eligible = np.flatnonzero(np.array([len(groups[w]) > K + 1 for w in words]))
    queries = np.sort(rng.choice(eligible, min(n_queries, len(eligible)), replace=False))
    exact = VectorSet(layers, None, weights)

    def top(vector_set: VectorSet, row: int, subset: np.ndarray | None) -> np.ndarray:
        ids = vector_set.search(vectors[row], K + 1, weights, subset=subset)[1]
        return ids[ids != row][:K]

    truth = [top(exact, q, None) for q in queries]
    same_truth = [top(exact, q, groups[words[q]]) for q in queries]
    lists = min(ivf_lists(n), 1 << max(int(np.log2(n / 39)), 0))  # "auto"'s, or what n trains without warnings
    m = pq_subquantizers(dim)
    factories = factories or ["Flat", f"IVF{lists},PQ{m}np", f"IVF{lists},PQ{max(m // 2, 1)}np"]
    rows = []
    for factory in factories:
        start = time.perf_counter()
        built = build_faiss(factory, dim, n, lambda: iter([vectors]), seed=seed)
        seconds = time.perf_counter() - start
        row = {"factory": factory, "bytes": len(faiss.serialize_index(built)) / n, "build_s": seconds}
        stream = lambda: iter([vectors])  # noqa: E731
        for name, kept, rerank in (("pq", None, 1), ("reranked", layers, RERANK)):
            params = tune_search_params(built, n, stream, seed=seed, rerank=rerank)
            apply_search_params(built, params)
            searched = VectorSet(kept, built, weights, rerank=rerank)
            row[f"{name}_params"] = params
            row[name] = recall([top(searched, q, None) for q in queries], truth)
            if kept is None:
                row["same_word_pq"] = recall([top(searched, q, groups[words[q]]) for q in queries], same_truth)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="+", default=sorted(glob.glob(str(ROOT / "data" / "demo" / "*.jsonl"))))
    parser.add_argument("--model", default="default")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the one worker (default 1)")
    parser.add_argument("--keep", type=Path, help="build the index here and keep it (default: a temporary folder)")
    parser.add_argument("--queries", type=int, default=300, help="stored occurrences used as queries (default 300)")
    parser.add_argument(
        "--factory",
        action="append",
        help="a token index factory to measure (repeatable; default: Flat, the auto rule's IVF-PQ with its lists "
        "scaled down to the corpus, and one with half its bytes); e.g. OPQ32,IVF256,PQ32np (slow to train)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    apply_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp) / "index"
        times: dict[str, float] = {}
        for step in ("scan_corpus", "encode_shards", "build_indexes"):
            timed(build_module, step, times)
        start = time.perf_counter()
        index = build_index(args.corpus, out, model=args.model, progress=False, overwrite=True, settings=Settings())
        total = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
        m, counts = index.manifest, index.manifest.counts
        tokens, dim = counts.tokens, index.elmo.dim
        rates = {step: tokens / seconds for step, seconds in times.items()}
        other = total - sum(times.values())

        print(f"Measured: {args.model} model (dim {dim}), CPU, {args.threads} thread(s), one process")
        print(f"corpus: {', '.join(Path(c).name for c in args.corpus)}: {counts.documents:,} documents, ", end="")
        print(f"{counts.sentences:,} sentences, {tokens:,} tokens, {counts.token_vectors:,} token vectors\n")
        steps = list(STEPS_HEAD)
        for step, what in (
            ("encode_shards", "encoding the shards (what workers share)"),
            ("scan_corpus", "first pass over the corpus (the driver)"),
            ("build_indexes", "FAISS indexes and their tuning (the driver)"),
        ):
            steps.append(f"| {what} | {times[step]:.1f} | {rates[step]:,.0f} |")
        steps.append(f"| the rest: model, GloVe, vocabulary, manifest (about constant) | {other:.1f} | |")
        figure_block("scale.steps", steps)
        figure("scale.peak_gib", f"{peak:.2f}")

        # ---------------------------------------------------------------- 2. bytes per token on disk and in memory
        parts: dict[str, int] = {}
        for shard in m.shards:
            for stored in shard.files:
                parts[f"shards: `{stored.file}`"] = parts.get(f"shards: `{stored.file}`", 0) + stored.size
        for kind, entry in m.indexes.items():
            parts[f"FAISS: {kind} ({entry.factory})"] = entry.size
        parts["vocabulary"] = m.vocab.size
        tables = sum(int(t.memory_usage(deep=True).sum()) for t in (index.docs, index.sentences, index.tokens))
        faiss_total = sum(entry.size for entry in m.indexes.values())
        print("\nbytes per corpus token of the index (default settings):\n")
        sizes = list(BYTES_HEAD)
        sizes += [f"| {name} | {size / tokens:.1f} |" for name, size in parts.items()]
        sizes.append(f"| **on disk, all** | {m.disk_bytes() / tokens:.1f} |")
        sizes.append(
            f"| in memory once opened (tables + FAISS; the layers are memory-mapped) | {(tables + faiss_total) / tokens:.1f} |"
        )
        figure_block("scale.bytes", sizes)

        # ---------------------------------------------------------------- 3. the token index
        print(f"\ntoken index factories on the {counts.token_vectors:,} stored token vectors, ", end="")
        print(f"recall@{K} against exact search ({args.queries} stored occurrences as queries):\n")
        factories = list(FACTORIES_HEAD)
        for row in token_index_table(index, args.queries, args.seed, args.factory):
            factories.append(
                f"| {row['factory']} | {row['bytes']:.1f} | {row['build_s']:.1f} | {row['pq']:.3f} | "
                f"{row['reranked']:.3f} | {row['same_word_pq']:.3f} | {row['pq_params'] or '-'}; "
                f"{row['reranked_params'] or '-'} |"
            )
        figure_block("scale.token_indexes", factories)

        # ---------------------------------------------------------------- projections
        per_token = {
            "shards": sum(v for k, v in parts.items() if k.startswith("shards")) / tokens,
            "token_layers": parts.get("shards: `token_layers.npy`", 0) / tokens,
            "vocabulary": m.vocab.size / tokens,
            "tables": tables / tokens,
        }
        ratios = {"sentences": counts.sentences / tokens, "tokens": counts.token_vectors / tokens}
        glove_dim = m.indexes["glove"].dim
        print("\nPROJECTED (not measured): linear in tokens and workers from the figures above; default settings")
        print("(token index by the 'auto' rule) with the exact token vectors kept, and with --no-exact-tokens:\n")
        projection = list(PROJECTION_HEAD)
        for n_tokens in TOKENS:
            n_sentences, n_vectors = n_tokens * ratios["sentences"], int(n_tokens * ratios["tokens"])
            token_kind = token_factory(n_vectors, dim)
            faiss_sum = (
                faiss_bytes(choose_factory(int(n_sentences)), n_sentences, dim)
                + faiss_bytes(choose_factory(int(n_sentences)), n_sentences, glove_dim)
                + faiss_bytes(token_kind, n_vectors, dim)
            )
            kept = n_tokens * (per_token["shards"] + per_token["vocabulary"]) + faiss_sum
            none = kept - n_tokens * per_token["token_layers"]
            ram = n_tokens * per_token["tables"] + faiss_sum
            for workers in WORKERS:
                serial = n_tokens / rates["scan_corpus"] + n_tokens / rates["build_indexes"] + other
                seconds = n_tokens / (rates["encode_shards"] * workers) + serial
                projection.append(
                    f"| {short_count(n_tokens)} | {workers} | {duration(seconds)} | {token_kind} | "
                    f"{kept / 1e9:.1f} GB | {none / 1e9:.1f} GB | {ram / 1e9:.1f} GB |"
                )
        figure_block("scale.projection", projection)
        print(
            f"build RAM per worker: about the measured peak ({peak:.2f} GiB; one model, one shard at a time); the "
            "finalizing process holds the FAISS indexes it builds (the RAM column) and their training sample"
        )


if __name__ == "__main__":
    main()
