"""How busy the machine's other work keeps its CPUs now: the load the thread rule (``threads.py``) reads.

The 1-minute load average lags: it still counts work that ended a minute ago (the install before ``make demo``, a
bench's previous process) and has not yet counted work that started seconds ago. Instead this module reads the
machine's CPU time (``/proc/stat``) and this process's own (``/proc/self/stat``) when the package is imported and
again when the threads are chosen: what the machine spent in between, less this process's share, is the other
work competing for the cores now. Reading costs two small files, no waiting: the window is the process's own
start-up (imports, the model's files), and only a choice made within ``MIN_WINDOW_S`` of the last reading waits for
the rest of it. Where ``/proc`` is not there (macOS, Windows), ``others_busy`` is None and the rule falls back to the
load average.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

MIN_WINDOW_S = 0.1
"""The shortest window read: ``/proc/stat`` counts in hundredths of a second, so a shorter one is mostly rounding."""


class CpuTime(NamedTuple):
    """One reading: when (``time.monotonic``), and CPU time in clock ticks: all CPUs, busy of them, this process."""

    at: float
    total: int
    busy: int
    own: int


def read_cpu_time() -> CpuTime | None:
    """The machine's CPU time (every CPU's ticks, and the busy ones: not idle or waiting for disk) and this process's
    (user + system, all its threads), or None where ``/proc`` cannot be read."""
    try:
        machine = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        process = Path("/proc/self/stat").read_text()
    except OSError:
        return None
    if not machine or machine[0] != "cpu":
        return None
    ticks = [int(value) for value in machine[1:9]]  # user nice system idle iowait irq softirq steal
    own = process[process.rindex(")") + 2 :].split()  # fields after the command name, which may hold spaces
    return CpuTime(time.monotonic(), sum(ticks), sum(ticks) - ticks[3] - ticks[4], int(own[11]) + int(own[12]))


def others_busy_share(before: CpuTime, after: CpuTime) -> float:
    """The share (0-1) of the machine's CPU time between two readings that went to other processes."""
    total = after.total - before.total
    others = (after.busy - before.busy) - (after.own - before.own)
    return min(1.0, max(0.0, others / total)) if total > 0 else 0.0


_last = read_cpu_time()  # at the package's import: the first window is the process's start-up


def others_busy() -> float | None:
    """The share (0-1) of the machine's CPUs other processes kept busy since the last call (the first time: since
    this module was imported), or None where ``/proc`` cannot be read."""
    global _last
    now = read_cpu_time()
    if _last is None or now is None:
        return None
    if now.at - _last.at < MIN_WINDOW_S:
        time.sleep(MIN_WINDOW_S - (now.at - _last.at))
        now = read_cpu_time() or now
    share, _last = others_busy_share(_last, now), now
    return share
