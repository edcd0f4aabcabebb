"""Faults from outside: Ctrl-C and SIGTERM, and kill -9 at random moments (fault injection).

Interrupts: a command says one line and exits 130 (143 for SIGTERM), with no traceback from any of its processes,
from its first moment on; ``train`` writes a checkpoint first, which ``--resume`` goes on from.

Kill -9: ``add``, ``train``, ``prepare`` and ``ship`` are killed at a random one of the file operations they make
(each seed picks another; ``KILLED`` counts them, and kills at the one asked for, in a process of its own), and
what they were writing must be all or nothing: the index, run, prepared folder or model as it was before, or as
the command finished it; and running the command again (``--resume`` for a run) must give what an uninterrupted
run gives. Tiny models and corpora keep it to seconds a case.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import h5py
import pytest
import torch
from bad_input import FEW, snapshot
from safetensors import safe_open
from safetensors.torch import load_file

import encoder.__main__ as encoder_cli
import indexer.__main__ as indexer_cli
from encoder.corpus import corpus_files, is_complete, read_record
from encoder.lm_head import load_language_model
from encoder.run_folder import latest_checkpoint
from indexer import Index

ROOT = Path(__file__).resolve().parents[1]
TINY_RUN = ["--size", "tiny", "--batch-size", "2", "--unroll", "5", "--vocab-size", "40", "--workers", "0"]


# ------------------------------------------------------------------------------------------ Ctrl-C and SIGTERM
class Running:
    """A command in a process group of its own (as a terminal runs it), its stderr collected as it comes."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen(
            [sys.executable, "-m", *args], cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        self.err = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.err += line

    def wait_for(self, pattern: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.err):
            assert self.process.poll() is None and time.monotonic() < deadline, self.err
            time.sleep(0.05)

    def signal(self, number: int) -> tuple[int, str]:
        """Send ``number`` to every process of the command (as Ctrl-C does); its exit status and stderr."""
        os.killpg(self.process.pid, number)
        code = self.process.wait(timeout=120)
        self._reader.join(timeout=10)
        return code, self.err


def one_line(err: str, text: str) -> bool:
    """``err`` is one line holding ``text``, after any progress bars (carriage-return lines), and no traceback."""
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip() and "it/s]" not in line]
    return "Traceback" not in err and lines[-1].startswith(text) and sum(text in line for line in lines) == 1


@pytest.mark.parametrize(
    "program, number, delay",
    [("encoder", signal.SIGINT, 0.5), ("encoder", signal.SIGTERM, 1.0), ("indexer", signal.SIGINT, 1.5)]
    + [("indexer", signal.SIGTERM, 0.5), ("indexer", signal.SIGTERM, 2.0)],
)
def test_a_signal_while_a_command_starts_is_one_line(program: str, number: int, delay: float, tmp_path: Path) -> None:
    """In its first seconds a command is importing torch or loading its model: Ctrl-C or SIGTERM there is one line
    and exit 130 or 143, and nothing is left behind."""
    (tmp_path / "lines.txt").write_text("a b\n")
    out = str(tmp_path / "o")
    command = ["embed", "--input", str(tmp_path / "lines.txt"), "--output", out]
    running = Running(
        program, *(command if program == "encoder" else ["build", "--corpus", str(ROOT / "data/demo"), "--out", out])
    )
    time.sleep(delay)
    code, err = running.signal(number)
    assert code == 128 + number and one_line(err, "interrupted"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lines.txt"]


def test_ctrl_c_in_prepare_stops_its_workers_quietly_and_the_prepare_finishes_when_run_again(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("a", "b"):  # over the 200 kB under which prepare tokenizes without workers
        (corpus / f"{name}.txt").write_text("".join(f"{FEW[i % 3]} Line {i} of {name}.\n" for i in range(3000)))
    out = tmp_path / "prepared"
    running = Running("encoder", "prepare", "--corpus", str(corpus), "--out", str(out), "--workers", "2")
    running.wait_for("a.txt: [1-9][0-9]* paragraphs")  # the first paragraphs are done: its workers are at work
    code, err = running.signal(signal.SIGINT)
    assert code == 130 and one_line(err, "interrupted; run the same command again to finish the prepare"), err
    assert (
        encoder_cli.main(["prepare", "--corpus", str(corpus), "--out", str(out), "--no-progress", "--workers", "0"])
        is None
    )
    assert is_complete(read_record(out)) and len(read_record(out)["files"]) == 2


@pytest.fixture
def default_sigterm() -> Iterator[None]:
    """SIGTERM as a command's own process has it, restored after: a handler that another test's Ray left in this
    process would take the signal instead of the command's."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGTERM, previous)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.usefixtures("default_sigterm")
def test_a_signal_once_embed_has_replaced_its_output_lets_it_finish(
    number: int, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C or SIGTERM after ``embed`` put its hdf5 file in place (here: as it records it) no longer stops it: it
    said "interrupted; nothing was written" of the file it had replaced whole, and left it unrecorded, so the same
    command then refused to replace it without --overwrite. Before that (writing), the old file stays as it was."""
    from encoder import ownership
    from encoder.cli.embed import EMBEDDINGS_KIND

    (tmp_path / "in.txt").write_text("the river bank\na bank loan\n", encoding="utf-8")
    out = tmp_path / "out.hdf5"
    command = ["embed", "--model", str(tiny_model_dir), "--input", str(tmp_path / "in.txt"), "--output", str(out)]
    encoder_cli.main([*command, "--quiet", "--top"])
    old = out.read_bytes()
    record = ownership.record_written

    def signalled(path: Path, kind: str) -> None:
        os.kill(os.getpid(), number)
        record(path, kind)

    monkeypatch.setattr(ownership, "record_written", signalled)
    encoder_cli.main([*command, "--quiet"])  # returns: no SystemExit(130 or 143)
    assert out.read_bytes() != old and ownership.is_written(out, EMBEDDINGS_KIND)
    with h5py.File(out) as f:
        assert sorted(f) == ["0", "1", "sentence_to_index"] and f["0"].shape[0] == 3  # every layer: whole

    monkeypatch.setattr(h5py.File, "create_dataset", lambda *_, **__: os.kill(os.getpid(), number))
    new = out.read_bytes()
    with pytest.raises(SystemExit) as stopped:
        encoder_cli.main([*command, "--quiet", "--top"])
    assert stopped.value.code == 128 + number and out.read_bytes() == new


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("program, command, kind", [(indexer_cli, "glove", "glove"), (encoder_cli, "punkt", "punkt")])
@pytest.mark.usefixtures("default_sigterm")
def test_a_signal_once_a_one_file_output_is_in_place_lets_the_command_finish(
    program, command: str, kind: str, number: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``glove --out`` and ``punkt --out``, as ``embed`` (the rule is ``errors.ends_with``, said by
    ``ownership.check_replace``): a Ctrl-C or SIGTERM once the file is in place (here: as it is recorded) said
    "interrupted" (exit 130/143) of the file just replaced whole, and left it unrecorded; now the command ends, 0."""
    from encoder import ownership

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Mr. Smith sat by the river bank. He left the bank.\n" * 20, encoding="utf-8")
    out = tmp_path / "out.txt"
    argv = [command, "--corpus", str(corpus), "--out", str(out), *(["--epochs", "1"] if command == "glove" else [])]
    record = ownership.record_written

    def signalled(path: Path, kind: str) -> None:
        os.kill(os.getpid(), number)
        record(path, kind)

    monkeypatch.setattr(ownership, "record_written", signalled)
    assert not program.main([*argv, "--json"])  # 0 (None from encoder.main), where it returned 130 or 143
    assert ownership.is_written(out, kind)


def test_a_signal_while_embed_says_what_it_wrote_leaves_it_said(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Ctrl-C as ``embed`` prints its line (its file written and recorded) cut the line off and exited 130
    ("interrupted"); the command is done: it says what it wrote and exits 0."""
    (tmp_path / "in.txt").write_text("a b\n", encoding="utf-8")
    script = (
        "import os, signal, sys\n"
        "from encoder.errors import interrupts_at_start\n"
        "interrupts_at_start('__main__', 'elmo-encoder')\n"
        "import encoder.cli.embed as embed\n"
        "from encoder.cli import cli\n"
        "show = embed.show_embedded\n"
        "embed.show_embedded = lambda *a: (os.kill(os.getpid(), signal.SIGINT), show(*a))\n"
        "cli()\n"
    )
    out = tmp_path / "o.hdf5"
    argv = ["embed", "--model", str(tiny_model_dir), "--input", str(tmp_path / "in.txt"), "--output", str(out)]
    done = subprocess.run([sys.executable, "-c", script, *argv, "--quiet"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and re.fullmatch(rf"wrote 1 sentence \(.*\) to {re.escape(str(out))}\n", done.stderr)


@pytest.mark.parametrize("number, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_training_stopped_by_a_signal_writes_a_checkpoint_that_resumes(number: int, status: int, tmp_path: Path):
    corpus = tmp_path / "lines.txt"
    corpus.write_text("\n".join(FEW * 40) + "\n")
    run = tmp_path / "run"
    train = ["encoder", "train", "--corpus", str(corpus), "--out", str(run), *TINY_RUN, "--log-every", "1"]
    running = Running(*train, "--max-tokens", "100000000", "--checkpoint-every", "100")
    wait_for_log(run, running)
    code, err = running.signal(number)
    assert code == status and one_line(err, "interrupted at step "), err
    assert latest_checkpoint(run) is not None and not (run / "model.safetensors").exists()
    load_language_model(latest_checkpoint(run))  # whole: biLM, head and vocabulary of one model
    assert encoder_cli.main([*train[1:], "--resume", "--max-tokens", "1", "--no-progress"]) is None  # done: the model
    assert (run / "model.safetensors").is_file()


def wait_for_log(run: Path, running: Running, timeout: float = 180) -> None:
    """Until the run has logged a step: its training loop is running."""
    deadline = time.monotonic() + timeout
    while not ((run / "log.jsonl").is_file() and (run / "log.jsonl").read_text().strip()):
        assert running.process.poll() is None and time.monotonic() < deadline, running.err
        time.sleep(0.05)


# ------------------------------------------------------------------------------------------ kill -9
KILLED = """
import builtins, io, os, shutil, signal, sys

kill_at = int(sys.argv[1])  # 0: count the operations, and kill at none
operations, renames = 0, []


def counted(name, function):
    def operation(*args, **kwargs):
        global operations
        writing = name != "open" or any(c in str(args[1] if len(args) > 1 else kwargs.get("mode", "r")) for c in "wax+")
        if writing:
            operations += 1
            renames.extend([operations] if name in ("replace", "rename") else [])
            if operations == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
        return function(*args, **kwargs)

    return operation


for module, name in [(os, "replace"), (os, "rename"), (os, "unlink"), (os, "remove"), (os, "rmdir"), (os, "mkdir"),
                     (shutil, "rmtree"), (shutil, "copy2"), (builtins, "open"), (io, "open")]:
    setattr(module, name, counted(name, getattr(module, name)))

program, argv = sys.argv[2], sys.argv[3:]
if program == "encoder":
    from encoder.__main__ import main
else:
    from indexer.__main__ import main
code = main(argv)
print(f"operations: {operations}; renames at: {' '.join(map(str, renames))}", file=sys.stderr)
sys.exit(code or 0)
"""
SEEDS = (0, 1, 2)


def killed(program: str, argv: list[str], kill_at: int = 0) -> subprocess.CompletedProcess:
    """``python -m PROGRAM ARGV`` in a process of its own, killed (SIGKILL) at its ``kill_at``-th file operation
    (0: never; its stderr then ends with how many it made)."""
    command = [sys.executable, "-c", KILLED, str(kill_at), program, *argv]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def operations(program: str, argv: list[str]) -> tuple[int, list[int]]:
    """How many file operations the command makes when it runs to the end (it must), and which of them rename."""
    done = killed(program, argv)
    assert done.returncode == 0, done.stderr
    counts = done.stderr.rsplit("operations: ", 1)[1]
    return int(counts.split(";")[0]), [int(n) for n in counts.split("renames at:")[1].split()]


def kill_points(total: int) -> list[int]:
    """A random operation to be killed at for each seed (the same points every run of the suite)."""
    return [random.Random(seed).randint(1, total) for seed in SEEDS]


def kill_at_random(
    program: str, argv: list[str], before: Callable[[], None], check: Callable[[], None], renames: int = 0
) -> None:
    """For each kill point (and each of the last ``renames`` renames, where a command commits its work):
    ``before`` sets the scene, the command is killed there, ``check`` says what was left is all or nothing and
    that running it again gives the finished result."""
    before()
    total, renamed = operations(program, argv)
    for point in [*kill_points(total), *renamed[len(renamed) - renames :] * (renames > 0)]:
        before()
        result = killed(program, argv, point)
        assert result.returncode == -signal.SIGKILL, (point, total, result.stderr)
        check()


def contents(folder: Path) -> dict[str, object]:
    """What the files of ``folder`` hold: bytes, but a safetensors file's tensors and metadata (whose order in the
    file changes from one process to the next)."""
    found = {}
    for name, data in snapshot(folder).items():
        if name.endswith(".safetensors"):
            with safe_open(str(folder / name), framework="pt") as f:
                found[name] = (f.metadata(), {k: f.get_tensor(k).tolist() for k in f.keys()})
        else:
            found[name] = data
    return found


def model_tensors(folder: Path) -> dict[str, torch.Tensor]:
    return {
        **load_file(folder / "model.safetensors"),
        **{f"head.{k}": v for k, v in load_file(folder / "head.safetensors").items()},
    }


def same_tensors(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_a_killed_add_leaves_the_index_as_it_was_or_as_added(world, tmp_path: Path) -> None:
    index, corpus = tmp_path / "index", tmp_path / "new.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": f"new-{i}", "text": f"{t} New {i}."}) + "\n" for i, t in enumerate(FEW))
    )
    add = ["add", "--index", str(index), "--corpus", str(corpus), "--quiet"]
    old = Index.open(world.index).stats()["counts"]["documents"]

    def before() -> None:
        shutil.rmtree(index, ignore_errors=True)
        shutil.copytree(world.index, index)

    def check() -> None:
        documents = Index.open(index).stats()["counts"]["documents"]  # opens, every file's hash checked
        assert documents in (old, old + len(FEW))
        if documents == old:  # nothing added: the same command finishes it
            assert indexer_cli.main(add) == 0
        assert Index.open(index).stats()["counts"]["documents"] == old + len(FEW)

    kill_at_random("indexer", add, before, check)


def test_a_killed_prepare_is_unfinished_or_finished_and_finishes_when_run_again(tmp_path: Path) -> None:
    corpus, out, reference = tmp_path / "corpus", tmp_path / "prepared", tmp_path / "reference"
    corpus.mkdir()
    for name in ("a", "b", "c"):
        (corpus / f"{name}.txt").write_text("".join(f"{FEW[i % 3]} {name} {i}.\n" for i in range(20)))
    prepare = ["prepare", "--corpus", str(corpus), "--out", str(out), "--no-progress", "--part-tokens", "100"]
    assert encoder_cli.main([*prepare[:4], str(reference), *prepare[5:]]) is None
    parts = {name: data for name, data in snapshot(reference).items() if name.endswith(".tokens.xz")}

    def before() -> None:
        shutil.rmtree(out, ignore_errors=True)

    def check() -> None:
        if not (out / "prepared.json").is_file():  # nothing: the record is written before any part
            assert not any(out.glob("*.tokens.xz"))
        elif is_complete(read_record(out)):  # all
            assert {n: d for n, d in snapshot(out).items() if n.endswith(".tokens.xz")} == parts
        else:  # unfinished: nothing a training run would read
            with pytest.raises(ValueError, match="unfinished prepare"):
                corpus_files([out])
        assert encoder_cli.main(prepare) is None
        assert {n: d for n, d in snapshot(out).items() if n.endswith(".tokens.xz")} == parts

    kill_at_random("encoder", prepare, before, check)


def test_a_killed_training_run_resumes_to_the_same_model(tmp_path: Path) -> None:
    corpus, run, reference = tmp_path / "lines.txt", tmp_path / "run", tmp_path / "reference"
    corpus.write_text("\n".join(FEW * 10) + "\n")
    train = ["train", "--corpus", str(corpus), "--out", str(run), *TINY_RUN, "--no-progress", "--log-every", "1"]
    train += ["--max-tokens", "40", "--checkpoint-every", "0.00001"]  # a checkpoint after every step
    train += ["--threads", "1"]  # killed runs are processes of their own: one thread count, one float order
    assert encoder_cli.main([*train[:4], str(reference), *train[5:]]) is None
    finished = model_tensors(reference)

    def before() -> None:
        shutil.rmtree(run, ignore_errors=True)

    def check() -> None:
        checkpoint = latest_checkpoint(run) if run.is_dir() else None
        if checkpoint is not None:
            load_language_model(checkpoint)  # the checkpoint it names is whole
        if (run / "model.safetensors").is_file():  # the model written last: whole, and the run's last
            assert same_tensors(model_tensors(run), finished)
        again = ["--resume"] if checkpoint is not None else ["--overwrite"] if (run / "run.json").is_file() else []
        assert encoder_cli.main([*train, *again]) is None
        assert same_tensors(model_tensors(run), finished)

    kill_at_random("encoder", train, before, check)


def test_a_killed_ship_leaves_the_old_model_or_the_new_one(world, tmp_path: Path) -> None:
    to = tmp_path / "models" / "mine"
    ship = ["ship", "--run", str(world.run), "--to", str(to), "--overwrite"]

    def before() -> None:
        shutil.rmtree(to.parent, ignore_errors=True)
        shutil.copytree(world.model, to)

    before()
    old = contents(to)
    assert encoder_cli.main(ship) is None
    new = contents(to)

    def check() -> None:
        assert contents(to) in (old, new)
        assert all(p == to or p.name.startswith(".tmp-mine-") for p in to.parent.iterdir())  # else only temporaries
        assert encoder_cli.main(ship) is None
        assert contents(to) == new

    kill_at_random("encoder", ship, before, check, renames=2)  # the last two: where the new model takes the old's place
