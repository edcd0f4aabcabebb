"""How many CPU threads the model, FAISS and BLAS use: the project's one thread rule.

Every command that runs the model (``--threads N``), the app and the HTTP server, and the Python API go through
``apply_threads``. Without ``--threads`` the count is ``ELMO_SEARCH_THREADS`` when that is set, else
``default_threads()``: the rule measured by ``bench/thread_rule.py`` (table in docs/benchmarks.md). torch's own
default, one thread per core, is as fast on an idle machine but several times slower on one busy with other work,
where threads spin waiting on each other instead of working.

The cores this process may use (``usable_cores``) are its CPU affinity, capped by a container's CPU quota (cgroup v2
``cpu.max``, cgroup v1 ``cpu.cfs_quota_us``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import torch
from threadpoolctl import threadpool_limits

from .cpu_use import others_busy
from .numbers import THREADS

THREADS_ENV = "ELMO_SEARCH_THREADS"
"""The environment variable that sets the thread count where no ``--threads`` does (the app, scripts, the API)."""

CGROUP_ROOT = Path("/sys/fs/cgroup")

RULE = "one thread per usable core that other work leaves idle now, at least one"
"""The default rule in words, for ``--help`` and the docs (``default_threads`` is its code)."""

THREADS_HELP = (
    f"CPU threads of torch, FAISS and BLAS (default: ${THREADS_ENV} when set, else the measured rule: {RULE}; "
    "bench/thread_rule.py)"
)
"""``--threads``'s help, the same on every command (``train``'s comes from ``TrainConfig``)."""

_TORCH_AT_IMPORT = torch.get_num_threads()  # torch's count before anyone here set it: see ``_process_chose``
_applied: int | None = None


def _cgroup_dirs() -> list[Path]:
    """This process's own cgroup folders (v2 first, then v1's cpu controller), then the mount roots."""
    found = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            found.append(CGROUP_ROOT / path.lstrip("/"))
        elif "cpu" in controllers.split(","):
            found.append(CGROUP_ROOT / controllers / path.lstrip("/"))
    return [*found, CGROUP_ROOT, CGROUP_ROOT / "cpu", CGROUP_ROOT / "cpu,cpuacct"]


def _quota_cores() -> int | None:
    """The cores a cgroup CPU quota allows this process (rounded up), or None where there is no quota."""
    for folder in _cgroup_dirs():
        try:
            if (folder / "cpu.max").is_file():
                quota, period = (folder / "cpu.max").read_text().split()[:2]
            elif (folder / "cpu.cfs_quota_us").is_file():
                quota = (folder / "cpu.cfs_quota_us").read_text().strip()
                period = (folder / "cpu.cfs_period_us").read_text().strip()
            else:
                continue
        except (OSError, ValueError):
            continue
        if quota in ("max", "-1") or not quota.lstrip("-").isdigit() or not period.isdigit() or int(period) <= 0:
            return None
        return max(1, math.ceil(int(quota) / int(period)))
    return None


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity, capped by its cgroup's CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on macOS and Windows
        cores = os.cpu_count() or 1
    quota = _quota_cores()
    return max(1, min(cores, quota) if quota is not None else cores)


def machine_load(cores: int) -> float:
    """The other work competing for ``cores`` now, in cores: the share of the machine's CPUs other processes kept
    busy during this process's start-up (``cpu_use.others_busy``), times ``cores``; where the system does not say,
    the 1-minute load average per core of the machine, times ``cores`` (0 where neither is known)."""
    share = others_busy()
    if share is not None:
        return share * cores
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 0.0
    return load * cores / (os.cpu_count() or 1)


def process_share() -> int:
    """The usable cores of this process's own: all of them, or its share where ``torchrun`` started several ranks
    on this machine (``LOCAL_WORLD_SIZE``), which run side by side on the same cores."""
    ranks = os.environ.get("LOCAL_WORLD_SIZE", "1")
    return max(1, usable_cores() // max(1, int(ranks) if ranks.isdigit() else 1))


def default_threads(cores: int | None = None, load: float | None = None) -> int:
    """The measured rule (``RULE``) for ``cores`` usable cores at ``load`` (default: this process's share of them,
    ``process_share``, and the load now).

    A thread that has no idle core of its own is descheduled, and the others wait for it at every parallel step:
    measured on 2 cores, 2 threads embedded 1.7x faster than one with no background load and 6-16x slower under
    load (docs/benchmarks.md): a busy core costs far more than an idle one left unused."""
    cores = process_share() if cores is None else cores
    load = machine_load(cores) if load is None else load
    return max(1, min(cores, math.floor(cores - load + 0.5)))


def chosen_threads(threads: int | None = None) -> int:
    """``threads`` when given, else ``ELMO_SEARCH_THREADS`` when set, else ``default_threads()``."""
    if threads is not None:
        return THREADS.check("threads", threads)
    text = os.environ.get(THREADS_ENV, "").strip()
    if text:
        problem = THREADS.text_problem(text)
        if problem is not None:
            raise ValueError(f"{THREADS_ENV} {problem}")
        return THREADS.read(text)
    return default_threads()


def apply_threads(threads: int | None = None) -> int:
    """Set torch's intra-op and inter-op threads, and those of every BLAS and OpenMP library loaded (FAISS's too), to
    ``chosen_threads(threads)``; returns the count. Inter-op threads can only be set once, before torch's first
    parallel work: after that they stay as they are. OpenMP's count is the calling thread's (``faiss_threads_here``)."""
    global _applied
    count = chosen_threads(threads)
    torch.set_num_threads(count)
    if torch.get_num_interop_threads() != count:
        try:
            torch.set_num_interop_threads(count)
        except RuntimeError:  # torch's inter-op pool has started: it keeps its size
            pass
    threadpool_limits(count)  # every BLAS and OpenMP library loaded: FAISS's OpenMP, numpy's and FAISS's BLAS
    _applied = count
    return count


def faiss_threads_here() -> None:
    """Give FAISS, in the calling thread, torch's thread count. OpenMP keeps its count per thread: a thread that
    never set it (a server's or the app's worker thread) would run FAISS with one thread per core, where torch
    re-applies its own count in every thread."""
    if "faiss" in sys.modules:
        sys.modules["faiss"].omp_set_num_threads(torch.get_num_threads())


def _process_chose() -> bool:
    """Whether this process chose its threads already: ``apply_threads`` ran, or torch's count changed since this
    module was imported (``torch.set_num_threads``)."""
    return _applied is not None or torch.get_num_threads() != _TORCH_AT_IMPORT


def apply_default_threads() -> None:
    """The Python API's threads (``Elmo.load``, and so ``Index.open`` and ``build_index``): ``apply_threads()``,
    unless the process chose its own (``_process_chose``), which it keeps."""
    if not _process_chose():
        apply_threads()


def api_threads(threads: int | None = None) -> int:
    """The torch threads of a Python API call that takes a count (``train``): ``threads`` when given, else the
    process's own when it chose them, else ``chosen_threads()``."""
    if threads is None and _process_chose():
        return torch.get_num_threads()
    return chosen_threads(threads)


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    """``--threads``, for every command that runs the model (or trains GloVe); ``encoder.cli.frame`` gives its value
    to ``apply_threads`` before the command runs."""
    parser.add_argument("--threads", type=THREADS, metavar="N", help=THREADS_HELP)
