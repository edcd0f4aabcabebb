"""How long `make demo` takes on a fresh checkout until the UI answers: both demo indexes built from the shipped
documents, then Streamlit started, on this machine idle and busy with other work.

    python -m bench.demo_time [--loads 0,4] [--port 8599]

For each background load L (L busy-loop processes, ``bench.background``; the measured 1-minute load average is
printed with each row), it copies this checkout's code and data (not its `.venv`, not its `indexes/`) into a
temporary folder, runs `python -m app --port PORT` there with this Python, as `make demo` runs it after its
install, and times the first answer of the UI's health check; each build's own time is read from the app's output
("Built the demo index in ..."). The default options throughout (the thread rule of ``encoder/threads.py``).
Prints a table and the figures the README quotes (``bench.figures``); writes only its temporary copies.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.background import busy
from bench.figures import figure, figure_block

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("app", "demo", "encoder", "indexer", "data", "pyproject.toml")
BUILT = re.compile(r"Built the demo index in (\d+) min (\d+) s")
LIMIT_S = 900


def fresh_checkout(folder: Path) -> Path:
    """This checkout's code and shipped data in ``folder``, with no demo index: what a fresh clone holds."""
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, folder / name)
    return folder


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def time_to_ui(checkout: Path, port: int) -> tuple[float, list[int]]:
    """Seconds from starting the app in ``checkout`` to its UI's first answer, and each demo build's seconds."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop("ELMO_SEARCH_INDEX", None)
    command = [sys.executable, "-m", "app", "--port", str(port)]
    started = time.perf_counter()
    app = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        while not answers(f"http://localhost:{port}/_stcore/health"):
            if app.poll() is not None:
                raise SystemExit(f"error: the app ended before its UI answered:\n{app.stdout.read()}")
            if time.perf_counter() - started > LIMIT_S:
                raise SystemExit(f"error: the UI did not answer within {LIMIT_S} s")
            time.sleep(0.2)
        seconds = time.perf_counter() - started
    finally:
        app.send_signal(signal.SIGINT)
        output, _ = app.communicate(timeout=60)
    builds = [60 * int(minutes) + int(secs) for minutes, secs in BUILT.findall(output)]
    return seconds, builds


TABLE_HEAD = (
    "| background load | 1-min load avg | English build, s | Korean build, s | UI answers after, s |",
    "|---:|---:|---:|---:|---:|",
)
"""The table's header, as docs/benchmarks.md quotes it (tests/test_docs.py checks the page's copy against it)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", default="0,4", help="background loads, busy-loop processes (default %(default)s)")
    parser.add_argument("--port", type=int, default=8599, help="a free local port for the app (default %(default)s)")
    args = parser.parse_args()
    print(f"/proc/loadavg at start: {Path('/proc/loadavg').read_text().strip()}")
    table = list(TABLE_HEAD)
    for load in map(int, args.loads.split(",")):
        with tempfile.TemporaryDirectory(prefix="demo-time-") as folder, busy(load):
            seconds, builds = time_to_ui(fresh_checkout(Path(folder)), args.port)
            measured = os.getloadavg()[0]
        english, korean = (builds + [None, None])[:2]
        table.append(
            f"| {load} | {measured:.1f} | {english} | {korean if korean is not None else '-'} | {seconds:.0f} |"
        )
        figure(f"demo_time.load{load}.ui_s", f"{seconds:.0f}")
        figure(f"demo_time.load{load}.loadavg", f"{measured:.1f}")
        figure(f"demo_time.load{load}.builds_s", f"{english} s English, {korean} s Korean")
    figure_block("demo_time.table", table)
    print(f"/proc/loadavg at the end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
