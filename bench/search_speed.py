"""Search speed: FAISS index types on random unit vectors, and end-to-end query latency on the demo index.

    python -m bench.search_speed                      # 1,000,000 vectors of dim 256 (minutes on 2 cores)
    python -m bench.search_speed --n 200000 --demo-index indexes/demo-index

Part 1 builds Flat (exact), IVF (nprobe sweep) and HNSW32 (efSearch sweep) inner-product indexes and
reports build time, queries/s and recall@10 against the exact results.
Random unit vectors have no cluster structure, so they are the hard case for IVF and HNSW
(``--data clustered`` draws them around 1,000 centres instead, closer to real sentence vectors).
Queries/s are measured with all queries in one batch and one query at a time (as the app sends them).
Part 2 opens a built index and times ``Index.search`` (tokenize + ELMo encode + search + passages), p50/p95, and
queries/s of ``BATCH`` dev queries (the dev queries of ``bench/queries_en.jsonl``, repeated) one at a time and as one
list (``Index.search`` of a list: one FAISS search per ``indexer.index.QUERY_BATCH`` queries).
Part 3 times ``python -m indexer search`` as a user runs it, whole processes (start, imports, model and index
loading, the answer): one query per process, and ``2 * BATCH`` dev queries in one process (``--queries``), where the
time to each answer is read as it is printed: the queries/s of the second ``BATCH`` is the figure of the issue's
target (a batch of 200 in a started process), with the thread rule's count and with ``--threads 1`` and ``2``
(alternating, best of ``--rounds``). Every part runs the default method and ``--method keywords`` side by side, in one run, so
that their ratio is measured under the same load; each part prints the 1-minute load average before and after it.
``--threads N`` sets torch's and FAISS's threads here and in the processes of part 3 (default: the thread rule,
``encoder/threads.py``).
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import faiss
import numpy as np

from bench.figures import figure_block
from bench.scale import timed
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


def whole_process(path: Path, processes: int, rounds: int, against: Path | None) -> None:
    """``python -m indexer search`` from the command line: seconds per process with one query (median of
    ``processes``, each a different query), and with all ``QUERIES`` in one process (``--queries -``); then ``BATCH``
    dev queries in one process (``batch_processes``). ``against``: another checkout, run alternately with this one."""
    from indexer.manifest import FolderInfo

    if not FolderInfo.of(path).has_index:
        print(f"whole processes: no index at {path}; build the demo index first (see part 2)")
        return
    checkouts = [("this checkout", ROOT)] + ([(str(against), against.resolve())] if against is not None else [])
    command = ["-m", "indexer", "search", "--index", str(path.resolve()), "--k", "10"]
    print(f"1-minute load average before: {load():.2f}\n")
    print(f"| checkout | method | one query, whole process (s) | {len(QUERIES)} queries in one process (s) |")
    print("|---|---|---:|---:|")
    single: dict[tuple[str, str], list[float]] = {}
    for query in QUERIES[:processes]:
        for checkout, root in checkouts:
            for name, options in METHODS:
                start = time.perf_counter()
                run = [sys.executable, *command, *options, query]
                subprocess.run(run, env=environment(root), cwd=root, capture_output=True, check=True)
                single.setdefault((checkout, name), []).append(time.perf_counter() - start)
    for checkout, root in checkouts:
        for name, options in METHODS:
            answered = answer_times(root, [*command, *options], QUERIES)
            print(f"| {checkout} | {name} | {np.median(single[checkout, name]):.1f} | {answered[-1]:.1f} |")
    ratio = np.median(single["this checkout", METHODS[0][0]]) / np.median(single["this checkout", METHODS[1][0]])
    print(
        f"\none query per process: {processes} processes per row (median), alternating; this checkout's default "
        f"method's process takes {ratio:.2f}x keywords'; 1-minute load average after: {load():.2f}\n"
    )
    batch_processes(checkouts, command, rounds)


METHODS = (("default (hybrid)", []), ("--method keywords", ["--method", "keywords"]))
"""The methods every part compares: the default, and keywords (the speed a search cannot beat by much)."""
THREADS = (("default (the rule)", []), ("1", ["--threads", "1"]), ("2", ["--threads", "2"]))
"""The thread settings of part 3's batch: the thread rule's count, and one and two threads."""
BATCH = 200
"""Queries in part 2's list and part 3's ``--queries`` file (the issue's batch)."""
PROCESSES_HEAD = (
    f"| checkout | method | threads | q/s after the first {BATCH} of {2 * BATCH} lines | whole process s "
    "| q/s over the whole process |",
    "|---|---|---|---:|---:|---:|",
)
START_HEAD = ("| step of one process's start | default (hybrid), s | `--method keywords`, s |", "|---|---:|---:|")
STAGES_HEAD = (f"| stage of a batch of {BATCH} (default method) | s | ms per query | share |", "|---|---:|---:|---:|")
"""The headers of the tables docs/search-quality.md quotes (tests/test_docs.py checks the page's copies)."""


def shown(method: str) -> str:
    """A method's name as the tables show it: an option in backticks, as the docs write it."""
    return f"`{method}`" if method.startswith("--") else method


def batch_processes(checkouts: list[tuple[str, Path]], command: list[str], rounds: int) -> None:
    """``2 * BATCH`` dev queries through ``--queries`` in one process, for each checkout, method and thread setting
    (one process each, alternating, ``rounds`` rounds, the fastest kept): the queries/s of a batch of ``BATCH`` once
    the process has started (``rate_after``: the lines after the first ``BATCH`` answers, whose wait includes the
    start-up, loading and the parts' first use), and the whole process's seconds."""
    queries = dev_batch(2 * BATCH)
    print(f"1-minute load average before: {load():.2f}\n")
    times: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(rounds):
        for checkout, root in checkouts:
            for name, options in METHODS:
                for threads, thread_options in THREADS:
                    answered = answer_times(root, [*command, *options, *thread_options], queries)
                    best = times.get((checkout, name, threads))
                    if best is None or answered[-1] < best[-1]:
                        times[checkout, name, threads] = answered
    table = list(PROCESSES_HEAD)
    rates = {key: rate_after(answered, BATCH) for key, answered in times.items()}
    for (checkout, name, threads), answered in times.items():
        table.append(
            f"| {checkout} | {shown(name)} | {threads} | {rates[checkout, name, threads]:.0f} | {answered[-1]:.1f} | "
            f"{len(answered) / answered[-1]:.0f} |"
        )
    figure_block("search_speed.processes", table)
    default, keywords = (rates["this checkout", name, THREADS[0][0]] for name, _ in METHODS)
    best_threads = max((rates["this checkout", METHODS[0][0], threads], threads) for threads, _ in THREADS)
    print(
        f"\nthis checkout, the default method with the default threads: {default:.0f} queries/s after the first "
        f"{BATCH}, {default / keywords:.2f}x keywords' ({keywords:.0f}), {default / best_threads[0]:.2f}x the best "
        f"thread setting's ({best_threads[1]}); best of {rounds} rounds; 1-minute load average after: {load():.2f}"
    )


SAME_WRITE = 0.005
"""Seconds within which answers read from a process count as written together (one batch's)."""


def rate_after(answered: list[float], first: int) -> float:
    """Queries/s of the answers after the first ``first`` and those written with them (the rest of their batch,
    whatever the checkout's batch size): from that batch's time to the last answer's."""
    cut = bisect.bisect_right(answered, answered[first - 1] + SAME_WRITE)
    return (len(answered) - cut) / max(answered[-1] - answered[cut - 1], 1e-9)


def load() -> float:
    """The 1-minute load average (others' work and this bench's)."""
    return os.getloadavg()[0]


ROOT = Path(__file__).resolve().parents[1]


def environment(root: Path = ROOT) -> dict[str, str]:
    """This process's environment (``--threads`` included) with the checkout ``root`` on the Python path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}


def answer_times(root: Path, command: list[str], queries: list[str]) -> list[float]:
    """Seconds from the start of ``python command --queries -`` in the checkout ``root`` to each answer it prints,
    given ``queries``."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *command, "--queries", "-"],
        env=environment(root),
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    process.stdin.write("".join(f"{query}\n" for query in queries))
    process.stdin.close()
    answered = [time.perf_counter() - start for _ in process.stdout]
    if process.wait() != 0 or len(answered) != len(queries):
        raise RuntimeError(f"{' '.join(command)} --queries - failed in {root}")
    return answered


def dev_queries() -> list[str]:
    """The 60 dev queries of bench/queries_en.jsonl (the test split is never measured here)."""
    lines = (Path(__file__).resolve().parent / "queries_en.jsonl").read_text(encoding="utf-8").splitlines()
    return [query["query"] for query in map(json.loads, filter(None, lines)) if query["split"] == "dev"]


def dev_batch(n: int = BATCH) -> list[str]:
    """``n`` queries: the dev queries over and over (the test split is never measured here)."""
    queries = dev_queries()
    return [queries[i % len(queries)] for i in range(n)]


def batch_throughput(path: Path, repeats: int) -> None:
    """Queries/s of ``Index.search`` on ``BATCH`` dev queries: one at a time (the first 20), and the whole list in
    one call (best of ``repeats``), for the default method and keywords."""
    from indexer import Index

    index = Index.open(path, verify=False)
    queries = dev_batch()
    print(f"1-minute load average before: {load():.2f}\n")
    print(f"| method | one at a time, q/s | a list of {len(queries)} (Index.search of a list), q/s |")
    print("|---|---:|---:|")
    for name, options in METHODS:
        method = options[-1] if options else "hybrid"
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
    print(f"\n1-minute load average after: {load():.2f}")


START_UP = """
import sys, time
start = time.perf_counter()
def lap(name):
    global start
    now = time.perf_counter()
    print(f"{name}\\t{now - start}", flush=True)
    start = now
import torch
lap("import torch")
import nltk
lap("import nltk (it imports scipy.stats and more)")
from indexer.cli import search
lap("import the rest of `indexer search`")
from encoder.threads import apply_threads
from indexer import Index
apply_threads(None)
index = Index.open(sys.argv[1], verify=False)
lap("open the index (tables, FAISS indexes, the model)")
index.parts.bm25
lap("first use: BM25 matrix")
index.parts.glove.glove
lap("first use: GloVe (is a query word a word?)")
index.search(sys.argv[2], method=sys.argv[3])
lap("the first query (chance scores of its length, the model's first run)")
index.search(sys.argv[4], method=sys.argv[3])
lap("a second query")
"""
"""One process's start, step by step, as ``indexer search`` takes those steps (argv: index, query, method, query)."""


def where_time_goes(path: Path, repeats: int) -> None:
    """Where a search's time goes: one process's start (``START_UP``, in a fresh process per method), and a batch of
    ``BATCH`` dev queries in one process after a warm-up (best of ``repeats``), stage by stage: each stage of
    ``DocumentSearch`` timed where it is called, then the answers' dicts (``as_dict``) and JSON lines."""
    from encoder.terminal import json_text
    from indexer import Index
    from indexer.answers import search_answers
    from indexer.options import SearchOptions

    print(f"1-minute load average before: {load():.2f}\n")
    steps = {}
    for name, options in METHODS:
        method = options[-1] if options else "hybrid"
        run = [sys.executable, "-c", START_UP, str(path), QUERIES[0], method, QUERIES[1]]
        output = subprocess.run(run, env=environment(), cwd=ROOT, capture_output=True, text=True, check=True).stdout
        steps[name] = dict(line.split("\t") for line in output.splitlines())
    start_table = list(START_HEAD)
    for step in steps[METHODS[0][0]]:
        start_table.append(f"| {step} | " + " | ".join(f"{float(steps[name][step]):.2f}" for name, _ in METHODS) + " |")
    start_table.append(
        "| whole start and two queries | "
        + " | ".join(f"{sum(map(float, steps[name].values())):.2f}" for name, _ in METHODS)
        + " |"
    )
    figure_block("search_speed.start", start_table)
    index = Index.open(path, verify=False)
    queries = dev_batch()
    stages = ("prepare", "query_vectors", "elmo_documents", "candidates", "results", "passages")
    spent: dict[str, float] = {}
    search = index.document_search
    for stage in stages:  # each stage timed where it is called (an instance attribute over the method)
        timed(search, stage, spent)
    best: dict[str, float] | None = None
    for repeat in range(repeats + 1):  # the first pass is the warm-up
        spent.clear()
        start = time.perf_counter()
        found = search_answers(index, queries, SearchOptions())
        answered = time.perf_counter()
        lines = [json_text(answer) for answer in found]
        done = time.perf_counter()
        searched = sum(spent[stage] for stage in stages if stage != "passages")
        times = {**spent, "answers as dicts (`as_dict`) and the rest": answered - start - searched}
        times |= {"JSON lines": done - answered, "all": done - start}
        if repeat and (best is None or times["all"] < best["all"]):
            best = times
    assert best is not None and len(lines) == len(queries)
    stages_table = list(STAGES_HEAD)
    names = {
        "prepare": "respelling, keyword terms",
        "query_vectors": "ELMo forward of the queries (pooled, mixed)",
        "elmo_documents": "FAISS search of passages and titles",
        "candidates": "BM25, exact ELMo scores of the candidates, fusion",
        "results": "hits: relevance, matched words, passages",
        "passages": "of which the passages",
    }
    for stage in [*names, *list(best)[len(stages) :]]:
        seconds, share = best[stage], best[stage] / best["all"]
        stages_table.append(
            f"| {names.get(stage, stage)} | {seconds:.3f} | {1000 * seconds / len(queries):.2f} | {share:.0%} |"
        )
    figure_block("search_speed.stages", stages_table)
    print(
        f"\n{len(queries) / best['all']:.0f} queries/s in this process (best of {repeats}); "
        f"1-minute load average after: {load():.2f}"
    )


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
    parser.add_argument(
        "--rounds", type=int, default=2, help="rounds of part 3's --queries processes, fastest kept (default: 2)"
    )
    parser.add_argument("--only-processes", action="store_true", help="only part 3, the whole processes")
    parser.add_argument("--only-stages", action="store_true", help="only where the time goes (part 2's last table)")
    parser.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="another checkout (e.g. `git archive` of an older commit) whose processes part 3 runs alternately with "
        "this one's, on the same index (default: none)",
    )
    args = parser.parse_args()
    if args.threads:
        from encoder.threads import THREADS_ENV, apply_threads

        apply_threads(args.threads)
        os.environ[THREADS_ENV] = str(args.threads)  # the processes of part 3

    if args.only_stages:
        where_time_goes(args.demo_index, args.repeats)
        return
    if args.only_processes:
        print("## Whole processes: `python -m indexer search` from the command line\n")
        whole_process(args.demo_index, args.processes, args.rounds, args.against)
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
    print("\n## Where the time goes\n")
    where_time_goes(args.demo_index, args.repeats)
    print("\n## Whole processes: `python -m indexer search` from the command line\n")
    whole_process(args.demo_index, args.processes, args.rounds, args.against)


if __name__ == "__main__":
    main()
