"""Queries answered per second by the HTTP API (``python -m indexer serve``), one query a request and in batches.

Builds the English demo index into a temporary folder (or takes --index), starts the server as a user would (a
separate process on 127.0.0.1), and sends the dev queries of bench/queries_en.jsonl, repeated to --queries, from
one client: each request waits for its answer. Default search options (hybrid, k=10).

    python -m bench.serve_speed [--index DIR] [--queries 240] [--batch 1 8 32]

Prints a table (a figure for the docs, ``bench/figures.py``); writes nothing but the temporary index.
"""

from __future__ import annotations

import argparse
import itertools
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.figures import figure_block

ROOT = Path(__file__).resolve().parents[1]
TABLE_HEAD = ("| queries a request | requests | seconds | queries/s |", "|---|---|---|---|")
"""The table's header, as docs/benchmarks.md quotes it (tests/test_docs.py checks the page's copy against it)."""


def dev_queries(n: int) -> list[str]:
    rows = [json.loads(line) for line in (ROOT / "bench" / "queries_en.jsonl").read_text().splitlines()]
    dev = [row["query"] for row in rows if row["split"] == "dev"]
    return list(itertools.islice(itertools.cycle(dev), n))


def ask(url: str, queries: list[str]) -> dict:
    request = urllib.request.Request(
        url + "/search", data=json.dumps({"queries": queries}).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=600) as answer:
        return json.load(answer)


def started(index: Path, port: int) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "indexer", "serve", "--index", str(index), "--port", str(port)]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/health", timeout=2).close()
            return server, url
        except OSError:
            if server.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.5)
    raise SystemExit("the server did not answer in 5 minutes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path)
    parser.add_argument("--queries", type=int, default=240)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        index = args.index
        if index is None:
            from demo.corpora import demo_corpus
            from indexer import build_index

            index = Path(tmp) / "index"
            build_index(demo_corpus("en"), index, progress=False)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server, url = started(index, port)
        try:
            queries = dev_queries(args.queries)
            ask(url, queries[:8])  # warm-up: the model's token cache, BM25 and the calibration load on first use
            print(f"{len(queries)} queries (the dev split, repeated), one client, {url}")
            table = list(TABLE_HEAD)
            for batch in args.batch:
                begin = time.perf_counter()
                for start in range(0, len(queries), batch):
                    answers = ask(url, queries[start : start + batch])["answers"]
                    assert all("results" in a for a in answers), answers
                seconds = time.perf_counter() - begin
                requests = -(-len(queries) // batch)
                table.append(f"| {batch} | {requests} | {seconds:.1f} | {len(queries) / seconds:.1f} |")
            figure_block("serve_speed.table", table)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
