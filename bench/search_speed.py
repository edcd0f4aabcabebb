"""Search speed: FAISS index types on random unit vectors, and end-to-end query latency on the demo index.

    python -m bench.search_speed                      # 1,000,000 vectors of dim 256 (minutes on 2 cores)
    python -m bench.search_speed --n 200000 --demo-index indexes/demo-index

Part 1 builds Flat (exact), IVF (nprobe sweep) and HNSW32 (efSearch sweep) inner-product indexes and
reports build time, queries/s and recall@10 against the exact results.
Random unit vectors have no cluster structure, so they are the hard case for IVF and HNSW
(``--data clustered`` draws them around 1,000 centres instead, closer to real sentence vectors).
Queries/s are measured with all queries in one batch and one query at a time (as the app sends them).
Part 2 opens a built index and times ``Index.search`` (tokenize + ELMo encode + search + passages), p50/p95, and
queries/s of the 60 dev queries of ``bench/queries_en.jsonl`` one at a time and as one list (``Index.search`` of a
list: one batched forward and one FAISS search per 64 queries).
Part 3 times ``python -m indexer search`` as a user runs it, whole processes (start, imports, model and index
loading, the answer): one query per process, and many queries in one process (``--queries``, the dev queries three
times over), where the time to each answer is read as it is printed. Every part runs the default method and
``--method keywords`` side by side, in one run, so that their ratio is measured under the same load.
``--threads N`` sets torch's and FAISS's threads here and in the processes of part 3 (default: the thread rule,
``encoder/threads.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import faiss
import numpy as np

from indexer.factory import ivf_lists, tune_search_params

QUERIES = [
    "How do volcanoes form?",
    "a cheap way to heat the house in winter",
    "the bank of the river",
    "why do people feel tired after a long flight",
    "recipes with eggs and sugar",
    "the history of railways",
    "how plants turn sunlight into energy",
    "tips for learning a new language",
    "storm damage on the coast",
    "what makes bread rise",
]


def unit_vectors(n: int, dim: int, seed: int, kind: str = "random") -> np.ndarray:
    """Random unit vectors, or (``clustered``) unit vectors around 1,000 random centres, as embeddings cluster."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim), dtype=np.float32)
    if kind == "clustered":
        centres = np.random.default_rng(12345).standard_normal((1_000, dim), dtype=np.float32)
        x = centres[rng.integers(0, len(centres), n)] + x
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def throughput(index: faiss.Index, queries: np.ndarray, k: int) -> tuple[np.ndarray, float, float]:
    """(ids, queries/s with all queries in one batch, queries/s one query at a time as the app sends them)."""
    start = time.perf_counter()
    _, ids = index.search(queries, k)
    batch = len(queries) / (time.perf_counter() - start)
    single = queries[:100]
    start = time.perf_counter()
    for query in single:
        index.search(query[None], k)
    return ids, batch, len(single) / (time.perf_counter() - start)


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth)]))


def vector_benchmark(n: int, dim: int, n_queries: int, k: int, kind: str) -> tuple[list[tuple], list[str]]:
    """Rows (factory, setting, build s, batch q/s, single q/s, single speed-up over exact, recall@k), and the
    IVF and HNSW settings the indexer's build-time tuning would pick for this data."""
    data, queries = unit_vectors(n, dim, 0, kind), unit_vectors(n_queries, dim, 1, kind)
    rows = []

    def build(factory: str) -> tuple[faiss.Index, float]:
        start = time.perf_counter()
        index = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
        if not index.is_trained:
            index.train(data[np.random.default_rng(0).choice(n, size=min(n, 100_000), replace=False)])
        index.add(data)
        print(f"  {factory} built in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        return index, time.perf_counter() - start

    def sweep(index: faiss.Index, factory: str, seconds: float, settings: list[str]) -> None:
        for setting in settings:
            if setting != "exact":
                faiss.ParameterSpace().set_index_parameters(index, setting)
            found, batch, single = throughput(index, queries, k)
            rows.append((factory, setting, seconds, batch, single, single / exact_single, recall(found, truth)))

    flat, seconds = build("Flat")
    truth, _, exact_single = throughput(flat, queries, k)
    sweep(flat, "Flat", seconds, ["exact"])
    nlist = ivf_lists(n)
    ivf, seconds = build(f"IVF{nlist},Flat")
    sweep(ivf, f"IVF{nlist},Flat", seconds, [f"nprobe={p}" for p in (1, 4, 16, 32, 64, 128, 256, 512) if p <= nlist])
    hnsw, seconds = build("HNSW32")
    sweep(hnsw, "HNSW32", seconds, [f"efSearch={ef}" for ef in (16, 32, 64, 128, 256, 512)])
    tuned = [tune_search_params(index, n, lambda: [data]) for index in (ivf, hnsw)]
    return rows, tuned


def end_to_end(path: Path, repeats: int) -> str:
    from indexer import Index
    from indexer.manifest import FolderInfo

    if not FolderInfo.of(path).has_index:
        return (
            f"end-to-end: no index at {path}; build the demo index first, e.g. "
            f"`python -m indexer build --corpus data/demo --out {path}`, then re-run with --demo-index {path}"
        )
    index = Index.open(path, verify=False)
    stats = index.stats()
    print("| query | p50 | p95 |\n|---|---:|---:|")
    for name, call in (
        ("search (hybrid)", lambda q: index.search(q, k=10)),
        ("search --method elmo", lambda q: index.search(q, k=10, method="elmo")),
        ("search --method keywords", lambda q: index.search(q, k=10, method="keywords")),
        ("search --layers top", lambda q: index.search(q, k=10, layers="top")),
        ("search --sentences", lambda q: index.search_sentences(q, k=10)),
        ("encode only", lambda q: index.elmo.embed([q])),
    ):
        times = []
        for query in QUERIES:  # warm-up: lazy loading (BM25, mixed matrix, chance scores), allocations
            call(query)
        for _ in range(repeats):
            for query in QUERIES:
                start = time.perf_counter()
                call(query)
                times.append(1000 * (time.perf_counter() - start))
        print(f"| {name:20s} | {np.percentile(times, 50):8.1f} | {np.percentile(times, 95):8.1f} |")
    return (
        f"end-to-end on {path}: model {stats['model']['name']} (dim {stats['model']['dim']}), "
        f"{stats['counts']['sentences']:,} sentences, sentence index {stats['indexes']['sentences']['factory']}, "
        f"{len(QUERIES) * repeats} queries per row, backend {stats['backend']}"
    )


def whole_process(path: Path, processes: int) -> None:
    """``python -m indexer search`` from the command line: seconds per process with one query (median of
    ``processes``, each a different query), and with all ``QUERIES`` in one process: the first answer, and then each
    further answer (median gap between answers)."""
    from indexer.manifest import FolderInfo

    if not FolderInfo.of(path).has_index:
        print(f"whole processes: no index at {path}; build the demo index first (see part 2)")
        return
    command = [sys.executable, "-m", "indexer", "search", "--index", str(path), "--k", "10"]
    print("| method | one query, whole process | many queries in one process: first answer | each further answer |")
    print("|---|---:|---:|---:|")
    for name, options in (("default (hybrid)", []), ("--method keywords", ["--method", "keywords"])):
        single = []
        for query in QUERIES[:processes]:
            start = time.perf_counter()
            subprocess.run([*command, *options, query], env=environment(), cwd=ROOT, capture_output=True, check=True)
            single.append(time.perf_counter() - start)
        answered = answer_times([*command, *options], QUERIES)
        print(
            f"| {name} | {np.median(single):.1f} s | {answered[0]:.1f} s | "
            f"{1000 * np.median(np.diff(answered)):.0f} ms |"
        )
    print(
        f"\nwhole processes on {path}: one query per process ({processes} processes per row, median), "
        f"{len(QUERIES)} queries through --queries - in one process"
    )
    dev = dev_queries() * 3
    print(f"\n| method | --queries FILE of {len(dev)} lines: queries/s after the first answer | whole process s |")
    print("|---|---:|---:|")
    for name, options in (("default (hybrid)", []), ("--method keywords", ["--method", "keywords"])):
        answered = answer_times([*command, *options], dev)
        rate = (len(dev) - 1) / max(answered[-1] - answered[0], 1e-9)
        print(f"| {name} | {rate:.0f} | {answered[-1]:.1f} |")


ROOT = Path(__file__).resolve().parents[1]


def environment() -> dict[str, str]:
    """This process's environment (``--threads`` included) with the checkout on the Python path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def answer_times(command: list[str], queries: list[str]) -> list[float]:
    """Seconds from the start of ``command --queries -`` to each answer it prints, given ``queries``."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--queries", "-"],
        env=environment(),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    process.stdin.write("".join(f"{query}\n" for query in queries))
    process.stdin.close()
    answered = [time.perf_counter() - start for _ in process.stdout]
    if process.wait() != 0 or len(answered) != len(queries):
        raise RuntimeError(f"{' '.join(command)} --queries - failed")
    return answered


def dev_queries() -> list[str]:
    """The 60 dev queries of bench/queries_en.jsonl (the test split is never measured here)."""
    lines = (Path(__file__).resolve().parent / "queries_en.jsonl").read_text(encoding="utf-8").splitlines()
    return [query["query"] for query in map(json.loads, filter(None, lines)) if query["split"] == "dev"]


def batch_throughput(path: Path, repeats: int) -> None:
    """Queries/s of ``Index.search`` on the dev queries: one at a time, and the whole list in one call (best of
    ``repeats``), for the default method and keywords."""
    from indexer import Index

    index = Index.open(path, verify=False)
    queries = dev_queries()
    print(f"| method | one at a time, q/s | a list of {len(queries)} (Index.search of a list), q/s |")
    print("|---|---:|---:|")
    for name, method in (("default (hybrid)", "hybrid"), ("--method keywords", "keywords")):
        index.search(queries, k=10, method=method)  # warm-up: lazy parts, chance scores, allocations
        batch, single = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            index.search(queries, k=10, method=method)
            batch.append(len(queries) / (time.perf_counter() - start))
            start = time.perf_counter()
            for query in queries[:20]:
                index.search(query, k=10, method=method)
            single.append(20 / (time.perf_counter() - start))
        print(f"| {name} | {max(single):.0f} | {max(batch):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="number of random vectors (default: 1,000,000)")
    parser.add_argument("--dim", type=int, default=256, help="vector size (default: 256, the default model's width)")
    parser.add_argument("--queries", type=int, default=1_000, help="number of queries (default: 1000)")
    parser.add_argument("--k", type=int, default=10, help="neighbours per query for recall@k (default: 10)")
    parser.add_argument(
        "--threads", type=int, help="torch and FAISS threads, here and in part 3's processes (default: the thread rule)"
    )
    parser.add_argument(
        "--demo-index",
        type=Path,
        default=Path("indexes/demo-index"),
        help="index for the end-to-end latency (default: indexes/demo-index)",
    )
    parser.add_argument("--repeats", type=int, default=5, help="passes over the end-to-end queries (default: 5)")
    parser.add_argument("--data", default="random", help="random, clustered or random,clustered (default: random)")
    parser.add_argument("--skip-vectors", action="store_true", help="only the end-to-end and whole-process parts")
    parser.add_argument(
        "--processes", type=int, default=3, help="single-query processes per method in part 3 (default: 3)"
    )
    parser.add_argument("--only-processes", action="store_true", help="only part 3, the whole processes")
    args = parser.parse_args()
    if args.threads:
        from encoder.threads import THREADS_ENV, apply_threads

        apply_threads(args.threads)
        os.environ[THREADS_ENV] = str(args.threads)  # the processes of part 3

    if args.only_processes:
        print("## Whole processes: `python -m indexer search` from the command line\n")
        whole_process(args.demo_index, args.processes)
        return
    for kind in [] if args.skip_vectors else args.data.split(","):
        print(
            f"## FAISS on {args.n:,} {kind} unit vectors, dim {args.dim}, {args.queries:,} queries, "
            f"{faiss.omp_get_max_threads()} threads\n"
        )
        rows, tuned = vector_benchmark(args.n, args.dim, args.queries, args.k, kind)
        print(
            f"| index | search setting | build s | q/s batched | q/s one by one | × exact (one by one) | recall@{args.k} |"
        )
        print("|---|---|---:|---:|---:|---:|---:|")
        for factory, setting, build_s, batch, single, speedup, rec in rows:
            print(
                f"| {factory} | {setting} | {build_s:.1f} | {batch:,.0f} | {single:,.0f} | {speedup:.1f} | {rec:.3f} |"
            )
        good = [r for r in rows if r[6] >= 0.95 and r[5] >= 10]
        best = max(good, key=lambda r: r[4]) if good else None
        print(
            "\ntarget (recall@10 >= 0.95 at >= 10x exact queries/s): "
            + (f"met by {best[0]} {best[1]} ({best[5]:.0f}x, recall {best[6]:.3f})" if best else "not met")
        )
        print(f"build-time tuning (tune_search_params) would pick {tuned[0]} for IVF and {tuned[1]} for HNSW32\n")
    print("\n## End-to-end query latency (ms): tokenize + encode + search, k=10\n")
    print("\n" + end_to_end(args.demo_index, args.repeats))
    print("\n## Queries/s of the Python API, dev queries, k=10\n")
    batch_throughput(args.demo_index, args.repeats)
    print("\n## Whole processes: `python -m indexer search` from the command line\n")
    whole_process(args.demo_index, args.processes)


if __name__ == "__main__":
    main()
