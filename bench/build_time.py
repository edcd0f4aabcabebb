"""How long building the demo index takes with this checkout's code, beside another checkout's (e.g. the commit before
the sense readout), timed side by side: whole `python -m indexer build` processes, alternating, so both see the
same load.

    git worktree add /tmp/baseline 3c10ffb    # the code to compare with
    python -m bench.build_time --baseline /tmp/baseline [--rounds 3] [--corpus data/demo]

Each round builds the corpus into a new temporary folder with each checkout (its own code, its own shipped model,
the Python running this bench); prints each time as it comes, then the table of rounds with the medians as the figure
``build_time.rounds``, their ratio as ``build_time.ratio`` and the 1-minute load at the start and end as
``build_time.loadavg`` (``bench/figures.py``: docs/evaluation.md quotes them). Writes nothing that stays.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.figures import figure, figure_block

ROOT = Path(__file__).resolve().parents[1]


def build_seconds(checkout: Path, corpus: Path, out: Path) -> float:
    """Wall seconds of one build process run in ``checkout`` (its code first on the path)."""
    command = [sys.executable, "-m", "indexer", "build", "--corpus", str(corpus), "--out", str(out), "--quiet"]
    start = time.perf_counter()
    subprocess.run(command, cwd=checkout, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout of the project to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="builds per checkout, alternating (default %(default)s)")
    parser.add_argument("--corpus", type=Path, default=ROOT / "data" / "demo", help="default %(default)s")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"this checkout": [], "baseline": []}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for name, checkout in (("baseline", args.baseline), ("this checkout", ROOT)):
                seconds = build_seconds(checkout.resolve(), args.corpus.resolve(), Path(tmp) / f"{name}-{round_}")
                times[name].append(seconds)
                print(f"round {round_ + 1}, {name}: {seconds:.1f} s", flush=True)
    load_after = os.getloadavg()[0]
    medians = {name: statistics.median(t) for name, t in times.items()}
    table = ["| round | baseline | this checkout |", "|---:|---:|---:|"]
    table += [
        f"| {i + 1} | {b:.1f} s | {t:.1f} s |"
        for i, (b, t) in enumerate(zip(times["baseline"], times["this checkout"]))
    ]
    table.append(f"| median | {medians['baseline']:.1f} s | {medians['this checkout']:.1f} s |")
    print()
    figure_block("build_time.rounds", table)
    figure("build_time.ratio", f"{medians['this checkout'] / medians['baseline']:.2f}x")
    figure("build_time.loadavg", f"{load_before:.1f} at the start, {load_after:.1f} at the end")


if __name__ == "__main__":
    main()
