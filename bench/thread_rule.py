"""The table behind the thread rule (``encoder/threads.py``): build work and batch search at several thread counts,
on this machine idle and busy with other work.

    python -m bench.thread_rule [--loads 0,2,4] [--sentences 300] [--rounds 2] [--counts 1,2]

For each background load L (L busy-loop processes this bench starts, and stops before the next load; the other
developers' work adds to it: the measured 1-minute load average is printed with each row), it runs, alternating, one
fresh process per thread setting and round: ``--counts`` (default 1, 2 and the usable cores) set with
``apply_threads(N)``, and the rule (``apply_threads()`` with no count, as every command runs without ``--threads``;
the count it chose is printed). Each process loads the default model (data/models/default) and times:

  build    ``Elmo.embed`` of the first ``--sentences`` sentences of the English demo corpus (what a build spends
           its time on), after one warm-up batch
  search   ``Index.search`` of the 60 dev queries of bench/queries_en.jsonl as one list (what one ``search
           --queries`` process does), on an index of the demo corpus this bench builds first, after one warm-up

The best of ``--rounds`` is kept for each; ratios are to the best thread count at the same load, measured side by
side. Prints a table; writes only its temporary index, removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.background import busy
from bench.figures import figure_block

ROOT = Path(__file__).resolve().parents[1]
RULE = "rule"


def worker(index: Path, sentences: int, threads: int | None) -> dict:
    """One setting's timings, in this process: seconds to embed ``sentences`` and to search the dev queries."""
    from bench.published_models import demo_sentences
    from bench.search_speed import dev_queries
    from encoder.threads import apply_threads
    from indexer import Index

    chosen = apply_threads(threads)
    opened = Index.open(index, verify=False)
    text = demo_sentences(sentences)
    opened.elmo.embed(text[:32])
    started = time.perf_counter()
    opened.elmo.embed(text)
    build = time.perf_counter() - started
    queries = dev_queries()
    opened.search(queries, k=10)
    started = time.perf_counter()
    opened.search(queries, k=10)
    search = time.perf_counter() - started
    return {"threads": chosen, "build_s": build, "search_qps": len(queries) / search}


def run_worker(index: Path, sentences: int, setting: int | str) -> dict:
    command = [sys.executable, "-m", "bench.thread_rule", "--worker", str(index), "--sentences", str(sentences)]
    if setting != RULE:
        command += ["--threads", str(setting)]
    env = {k: v for k, v in os.environ.items() if k not in ("ELMO_SEARCH_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_load(load: int, index: Path, args: argparse.Namespace, settings: list) -> list[dict]:
    """The rows of one background load: each setting's best of ``args.rounds``, run alternating."""
    with busy(load, args.settle):
        runs: dict = {setting: [] for setting in settings}
        for _ in range(args.rounds):
            for setting in settings:
                runs[setting].append(run_worker(index, args.sentences, setting))
        measured = os.getloadavg()[0]
    rows = []
    for setting, found in runs.items():
        rows.append(
            {
                "load": load,
                "loadavg": measured,
                "setting": setting,
                "threads": found[0]["threads"] if setting == RULE else setting,
                "chosen": sorted({run["threads"] for run in found}),
                "build_s": min(run["build_s"] for run in found),
                "search_qps": max(run["search_qps"] for run in found),
            }
        )
    return rows


TABLE_HEAD = (
    "| background load | 1-min load avg | threads | build: embed, s | x best | search, q/s | x best |",
    "|---:|---:|---|---:|---:|---:|---:|",
)
"""The table's header, as docs/benchmarks.md quotes it (tests/test_docs.py checks the page's copy against it)."""


def table(rows: list[dict]) -> list[str]:
    """One line per load and thread setting, each against the best setting at that load."""
    lines = list(TABLE_HEAD)
    for load in sorted({row["load"] for row in rows}):
        at = [row for row in rows if row["load"] == load]
        best_build = min(row["build_s"] for row in at)
        best_search = max(row["search_qps"] for row in at)
        for row in at:
            name = str(row["setting"])
            if row["setting"] == RULE:
                name = f"rule (chose {'/'.join(map(str, row['chosen']))})"
            lines.append(
                f"| {load} | {row['loadavg']:.1f} | {name} | {row['build_s']:.2f} | "
                f"{row['build_s'] / best_build:.2f} | {row['search_qps']:.1f} | {best_search / row['search_qps']:.2f} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", default="0,2,4", help="background loads, busy-loop processes (default 0,2,4)")
    parser.add_argument("--counts", help="thread counts beside the rule (default: 1, 2 and the usable cores)")
    parser.add_argument("--sentences", type=int, default=300, help="demo sentences embedded (default 300)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per setting, best kept (default 2)")
    parser.add_argument("--settle", type=float, default=10, help="seconds a load runs before measuring (default 10)")
    parser.add_argument("--worker", type=Path, metavar="INDEX", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.sentences, args.threads)))
        return

    from encoder.threads import apply_threads, usable_cores
    from indexer import build_index

    cores = usable_cores()
    counts = [int(c) for c in args.counts.split(",")] if args.counts else sorted({1, 2, cores})
    print(f"usable cores: {cores}; /proc/loadavg at start: {Path('/proc/loadavg').read_text().strip()}")
    with tempfile.TemporaryDirectory(prefix="thread-rule-") as folder:
        apply_threads(1)
        index = Path(folder) / "index"
        build_index(sorted((ROOT / "data" / "demo").glob("*.jsonl")), index, progress=False)
        rows = []
        for load in map(int, args.loads.split(",")):
            rows += measure_load(load, index, args, [*counts, RULE])
            print(f"  load {load} done; /proc/loadavg: {Path('/proc/loadavg').read_text().strip()}", flush=True)
    figure_block("thread_rule.table", table(rows))
    print(f"/proc/loadavg at end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
