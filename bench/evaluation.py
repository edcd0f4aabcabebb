"""The evaluation suite's tables, as docs/evaluation.md quotes them: ``encoder evaluate all`` run whole, each task's
table printed as a figure for ``scripts/paste_figures.py``.

    python -m bench.evaluation [--model default] [--limit N] [--threads N]

Runs, as its own process, exactly the command the page gives (``python -m encoder evaluate all --model MODEL
--report DIR --no-progress``, DIR a temporary folder), then prints each task's table from the report's
``results.json`` (as ``--report`` writes it in report.md) as the figure ``evaluation.MODEL.TASK`` (the command's
own output, above them, gives each table's notes: what was cut or not run), with the seconds each task took, the whole run's time and the 1-minute load at its start and end. Full protocols take
20-50 minutes on 2 CPU cores (POS and WSD most of it); ``--limit`` caps what is scored, for a quick check, and its
tables are then not the page's. ``--threads N`` is passed on: the last digit of a score can depend on the threads
the biLM embeds with (its float32 sums; the probes themselves run on one thread each), so a run is repeated exactly
with the same ``--threads``. Writes nothing outside its temporary folder.
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

from bench.figures import figure, figure_block
from encoder.eval.results import TaskResult


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default", help="the model to evaluate (default %(default)s)")
    parser.add_argument("--limit", type=int, help="cap what is scored (a quick check; not the page's tables)")
    parser.add_argument("--threads", type=int, help="the command's --threads (default: its thread rule)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-evaluation-") as work:
        report = Path(work) / "report"
        command = [sys.executable, "-m", "encoder", "evaluate", "all", "--model", args.model, "--report", str(report)]
        command += ["--no-progress", *(["--limit", str(args.limit)] if args.limit else [])]
        command += ["--threads", str(args.threads)] if args.threads else []
        print(f"$ python {' '.join(command[1:])}")
        load_before, start = os.getloadavg()[0], time.perf_counter()
        subprocess.run(command, check=True)
        seconds, load_after = time.perf_counter() - start, os.getloadavg()[0]
        output = json.loads((report / "results.json").read_text(encoding="utf-8"))
    model = output["model"]
    print(f"model {model['name']} (weights {model['hash']}), GloVe {output['glove']}, limit {output['limit']}")
    print(f"{seconds:.0f} s in all; 1-minute load {load_before:.1f} at the start, {load_after:.1f} at the end")
    figure(f"evaluation.{args.model}.minutes", f"{seconds / 60:.0f}")
    for task, scores in output["results"].items():
        result = TaskResult(**scores)
        table = [line for line in result.table(markdown=True).splitlines() if line.startswith("|")]
        print(f"\n{task}: {result.seconds:.0f} s")  # its notes: in the command's own output, above
        figure_block(f"evaluation.{args.model}.{task}", ["", *table, ""])


if __name__ == "__main__":
    main()
