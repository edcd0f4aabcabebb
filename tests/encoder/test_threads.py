"""The thread rule (encoder/threads.py): the cores a process may use, the load it reads (encoder/cpu_use.py), the rule, ``ELMO_SEARCH_THREADS``, what
``apply_threads`` sets, and ``--threads`` on every command that runs the model."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import app.__main__ as app_cli
import encoder.__main__ as encoder_cli
import indexer.__main__ as indexer_cli
from encoder import cpu_use, threads
from encoder.numbers import THREADS

NO_MODEL = {"encoder": {"download", "punkt", "ship", "prepare"}, "indexer": {"delete"}}
"""The commands that run no model, so take no ``--threads``; any other command must take it."""


@pytest.fixture
def torch_threads():
    """Give torch its threads (and this module its record) back after a test that sets them."""
    before, applied = torch.get_num_threads(), threads._applied
    yield
    torch.set_num_threads(before)  # (inter-op threads cannot be set back once started)
    threads._applied = applied


@pytest.fixture
def cgroup(tmp_path, monkeypatch):
    """An empty cgroup tree in tmp_path, for this process (which /proc/self/cgroup places at its root)."""
    monkeypatch.setattr(threads, "CGROUP_ROOT", tmp_path)
    monkeypatch.setattr(threads, "_cgroup_dirs", lambda: [tmp_path, tmp_path / "cpu"])
    return tmp_path


def test_usable_cores_are_the_affinity_capped_by_the_cgroup_quota(cgroup, monkeypatch):
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda _: set(range(8)))
    assert threads.usable_cores() == 8  # no quota file
    (cgroup / "cpu.max").write_text("max 100000\n")
    assert threads.usable_cores() == 8  # v2, no limit
    (cgroup / "cpu.max").write_text("250000 100000\n")
    assert threads.usable_cores() == 3  # 2.5 cores: rounded up
    (cgroup / "cpu.max").write_text("2000000 100000\n")
    assert threads.usable_cores() == 8  # a quota above the affinity
    (cgroup / "cpu.max").unlink()
    (cgroup / "cpu").mkdir()
    (cgroup / "cpu" / "cpu.cfs_quota_us").write_text("150000\n")
    (cgroup / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert threads.usable_cores() == 2  # v1
    (cgroup / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert threads.usable_cores() == 8
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda _: {3})
    assert threads.usable_cores() == 1


def test_the_cgroup_folders_are_the_process_own(tmp_path, monkeypatch):
    proc = tmp_path / "self-cgroup"
    proc.write_text("4:memory:/job\n1:cpu,cpuacct:/job/a\n0::/user.slice/x\n")
    real = Path
    monkeypatch.setattr(threads, "Path", lambda p: proc if p == "/proc/self/cgroup" else real(p))
    found = threads._cgroup_dirs()
    assert found[:2] == [threads.CGROUP_ROOT / "cpu,cpuacct" / "job/a", threads.CGROUP_ROOT / "user.slice/x"]


def test_the_rule(monkeypatch):
    assert [threads.default_threads(cores, 0) for cores in (1, 2, 4, 16)] == [1, 2, 4, 16]  # idle: every core
    assert [threads.default_threads(2, load) for load in (0.4, 0.6, 1.0, 2.0, 6.0)] == [2, 1, 1, 1, 1]
    assert [threads.default_threads(16, load) for load in (0.4, 4.0, 15.4, 40.0)] == [16, 12, 1, 1]
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    monkeypatch.setattr(threads, "others_busy", lambda: 0.25)  # a quarter of the machine busy: 1 of these 4 cores
    assert threads.default_threads() == 3
    monkeypatch.setattr(threads, "others_busy", lambda: 1.0)
    assert threads.default_threads() == 1
    monkeypatch.setattr(threads, "others_busy", lambda: 0.0)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")  # two torchrun ranks on these cores: half each
    assert threads.default_threads() == 2


def test_without_proc_the_rule_reads_the_load_average(monkeypatch):
    monkeypatch.setattr(threads, "others_busy", lambda: None)  # no /proc (macOS, Windows)
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 16)  # 4 of a machine's 16 cores: a quarter of its load
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (4.0, 0.0, 0.0))
    assert threads.default_threads() == 3
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (20.0, 0.0, 0.0))
    assert threads.default_threads() == 1


def test_the_others_share_leaves_out_this_process():
    before = cpu_use.CpuTime(at=0.0, total=1000, busy=300, own=50)
    after = cpu_use.CpuTime(at=1.0, total=1200, busy=450, own=150)  # 150 busy ticks of 200, 100 of them this one's
    assert cpu_use.others_busy_share(before, after) == pytest.approx(50 / 200)
    assert cpu_use.others_busy_share(before, before) == 0.0  # no time passed: nothing known to be busy


def test_the_others_share_reads_this_machine():
    """A busy child process is other work: with one running, at least a fair part of one core is seen busy."""
    reading = cpu_use.read_cpu_time()
    if reading is None:
        pytest.skip("no /proc on this system: the rule reads the load average (test above)")
    assert reading.total >= reading.busy >= 0 and reading.own > 0
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # the child's start-up
        cpu_use.others_busy()  # the window starts here
        time.sleep(1.0)
        share = cpu_use.others_busy()
    finally:
        child.kill()
        child.wait()
    assert share is not None and share * (os.cpu_count() or 1) >= 0.5  # the child's core, at least half of it


def test_the_environment_variable_overrides_the_rule(monkeypatch):
    monkeypatch.setattr(threads, "default_threads", lambda: 2)
    monkeypatch.delenv(threads.THREADS_ENV, raising=False)
    assert threads.chosen_threads() == 2
    monkeypatch.setenv(threads.THREADS_ENV, "3")
    assert threads.chosen_threads() == 3
    assert threads.chosen_threads(5) == 5  # --threads over the variable
    for bad in ("0", "-1", "abc", "2.5"):
        monkeypatch.setenv(threads.THREADS_ENV, bad)
        with pytest.raises(ValueError, match=threads.THREADS_ENV):
            threads.chosen_threads()
    with pytest.raises(ValueError, match="threads"):
        threads.chosen_threads(0)


def test_apply_threads_sets_torch_and_faiss(torch_threads, monkeypatch):
    import faiss

    monkeypatch.delenv(threads.THREADS_ENV, raising=False)
    for count in (3, 1):
        assert threads.apply_threads(count) == count
        assert torch.get_num_threads() == count
        assert faiss.omp_get_max_threads() == count
    monkeypatch.setenv(threads.THREADS_ENV, "2")
    assert threads.apply_threads() == 2 and torch.get_num_threads() == 2


def test_the_api_keeps_a_count_the_process_chose(torch_threads, monkeypatch):
    monkeypatch.setenv(threads.THREADS_ENV, "3")
    threads._applied = None
    torch.set_num_threads(threads._TORCH_AT_IMPORT)
    threads.apply_default_threads()  # nothing chosen yet: the rule (here the variable)
    assert torch.get_num_threads() == 3
    assert threads.api_threads() == 3 and threads.api_threads(1) == 1
    threads._applied = None
    torch.set_num_threads(1 if threads._TORCH_AT_IMPORT != 1 else 2)
    chosen = torch.get_num_threads()
    threads.apply_default_threads()  # the process set torch's count itself: kept
    assert torch.get_num_threads() == chosen and threads.api_threads() == chosen


def test_loading_a_model_applies_the_rule(torch_threads, monkeypatch):
    from encoder import Elmo

    count = 3 if threads._TORCH_AT_IMPORT != 3 else 2
    monkeypatch.setenv(threads.THREADS_ENV, str(count))
    threads._applied = None
    torch.set_num_threads(threads._TORCH_AT_IMPORT)
    Elmo.load("default")
    assert torch.get_num_threads() == count


def _commands() -> list[tuple[str, str, argparse.ArgumentParser]]:
    found = []
    for program, parser in (("encoder", encoder_cli.build_parser()), ("indexer", indexer_cli.make_parser())):
        (subcommands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        found += [(program, name, sub) for name, sub in subcommands.choices.items()]
    return [*found, ("app", "app", app_cli.make_parser())]


def _threads_option(parser: argparse.ArgumentParser) -> argparse.Action | None:
    return next((a for a in parser._actions if "--threads" in a.option_strings), None)


def test_every_command_that_runs_the_model_takes_threads():
    commands = _commands()
    assert len(commands) > 15
    for program, name, parser in commands:
        option = _threads_option(parser)
        if name in NO_MODEL.get(program, ()):
            assert option is None, f"{program} {name} runs no model, yet takes --threads"
            continue
        assert option is not None, f"{program} {name} runs the model but takes no --threads"
        assert option.type == THREADS and threads.THREADS_ENV in option.help, f"{program} {name}"


@pytest.mark.parametrize("bad", ["0", "-1", "abc"])
def test_a_bad_threads_is_one_usage_error(bad, capsys):
    for program, name, parser in _commands():
        if _threads_option(parser) is None:
            continue
        with pytest.raises(SystemExit) as exit:
            parser.parse_args(["--threads", bad])
        errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
        assert exit.value.code == 2 and len(errors) == 1, f"{program} {name}"
        assert errors[0].startswith(f"{parser.prog}: error: argument --threads") and bad in errors[0], errors


def test_a_command_runs_with_its_threads(torch_threads, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(threads.THREADS_ENV, raising=False)
    missing = str(tmp_path / "missing.txt")
    count = 3 if torch.get_num_threads() != 3 else 2
    with pytest.raises(SystemExit) as exit:
        encoder_cli.main(["perplexity", "--corpus", missing, "--threads", str(count)])
    assert exit.value.code == 2 and "missing.txt" in capsys.readouterr().err
    assert torch.get_num_threads() == count  # set before the command ran (and failed on its missing corpus)
    monkeypatch.setenv(threads.THREADS_ENV, "nine")
    with pytest.raises(SystemExit) as exit:
        encoder_cli.main(["perplexity", "--corpus", missing])
    assert exit.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {threads.THREADS_ENV} must be") and line.endswith("not 'nine'"), line


def test_faiss_searches_in_any_thread_with_the_count(torch_threads):
    """OpenMP keeps a count per thread: a server's worker thread must not search with one thread per core."""
    import threading

    import faiss
    import numpy as np

    from indexer.vectors import faiss_search_many

    count = 3 if threads.usable_cores() != 3 else 4
    threads.apply_threads(count)
    index = faiss.IndexFlatIP(4)
    index.add(np.eye(4, dtype=np.float32))
    seen = {}

    def search() -> None:
        seen["before"] = faiss.omp_get_max_threads()
        faiss_search_many(index, np.eye(4, dtype=np.float32)[:1], 1, None)
        seen["after"] = faiss.omp_get_max_threads()

    worker = threading.Thread(target=search)
    worker.start()
    worker.join()
    assert seen["before"] != count and seen["after"] == count  # it started with OpenMP's own count
