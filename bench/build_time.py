"""How long building the demo index takes with this checkout's code, beside another checkout's (e.g. the commit before
the sense readout), timed side by side: whole `python -m indexer build` processes, alternating, so both see the
same load.

    git worktree add /tmp/baseline 3c10ffb    # the code to compare with
    python -m bench.build_time --baseline /tmp/baseline [--rounds 3] [--corpus data/demo]

Each round builds the corpus into a new temporary folder with each checkout (its own code, its own shipped model,
the Python running this bench); prints each time, the medians and their ratio. Writes nothing that stays.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for name, checkout in (("baseline", args.baseline), ("this checkout", ROOT)):
                seconds = build_seconds(checkout.resolve(), args.corpus.resolve(), Path(tmp) / f"{name}-{round_}")
                times[name].append(seconds)
                print(f"round {round_ + 1}, {name}: {seconds:.1f} s", flush=True)
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"\nmedian: this checkout {medians['this checkout']:.1f} s, baseline {medians['baseline']:.1f} s, ratio "
        f"{medians['this checkout'] / medians['baseline']:.2f}x"
    )


if __name__ == "__main__":
    main()
