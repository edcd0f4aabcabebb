"""``python -m encoder``'s command line: train's options are ``TrainConfig``'s fields, and a command's result is
printed by the shared frame as text or, with ``--json``, as one JSON object."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import h5py
import pytest

from encoder.__main__ import build_parser, main
from encoder.cli.train import config_of
from encoder.options import option_fields
from encoder.train_config import DEFAULT_RECIPE, TrainConfig


@pytest.mark.parametrize("program", ["encoder", "indexer"])
def test_a_command_imports_only_its_own_module(program):
    """Parsing a command imports that command's module, not the others' (``frame.make_parser``): the encoder's
    other commands cost every ``embed`` 0.14 s. The parser of no command in particular (``--help``) has them all."""
    import subprocess
    import sys

    command = {"encoder": "embed", "indexer": "stats"}[program]
    factory = {"encoder": "build_parser", "indexer": "make_parser"}[program]
    script = (
        f"import json, sys; import {program}.cli as cli; "
        f"one = cli.{factory}([{command!r}]); "
        "mine = sorted(m for m in sys.modules if m.startswith(cli.__name__ + '.')); "
        f"every = cli.{factory}(); "
        "print(json.dumps([mine, sorted(one._subparsers._group_actions[0].choices), "
        "sorted(every._subparsers._group_actions[0].choices)]))"
    )
    mine, one, every = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                                 check=True).stdout)  # fmt: skip
    commands = __import__(f"{program}.cli").cli.COMMANDS
    assert [m for m in mine if m.split(".")[-1] in commands] == [f"{program}.cli.{command}"]
    assert one == [command]
    assert sorted(every) == sorted(commands) and len(every) > 5


def test_a_program_freezes_what_its_imports_made():
    """The console scripts freeze the objects their imports made out of Python's full garbage collections
    (``frame.cli``): one walked torch's objects for 0.07 s of ``encoder embed``."""
    import subprocess
    import sys

    script = (
        "import atexit, gc, sys; sys.argv = ['encoder', '--version']; import encoder.cli as cli; "
        "atexit.register(lambda: print(gc.get_freeze_count())); cli.cli()"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert int(done.stdout.split()[-1]) > 10_000


def test_train_options_are_the_train_config_fields():
    """Every ``TrainConfig`` field has its train option (``encoder.options``): no options give the field defaults
    (but the device, ``auto`` on the command line), flags set and clear booleans, ``--continue`` is spelled so, a
    recipe fills what was not given, and a numeric option keeps its field's rule."""
    assert [f.name for f in option_fields(TrainConfig)] == [f.name for f in fields(TrainConfig)]
    parse = build_parser().parse_args
    base = ["train", "--corpus", "a.txt", "texts", "--out", "run"]
    plain = TrainConfig(corpus=["a.txt", "texts"], out="run", device="auto")
    assert config_of(parse(base)) == plain
    changed = parse(
        [*base, "--continue", "default", "--no-progress", "--watch", "--size", "tiny", "--lr", "0.5", "--schedule",
         "linear", "--max-tokens", "1000", "--time-budget", "2.5", "--compile"]
    )  # fmt: skip
    assert config_of(changed) == TrainConfig(
        corpus=["a.txt", "texts"], out="run", device="auto", continue_from="default", progress=False, watch=True,
        size="tiny", lr=0.5, schedule="linear", max_tokens=1000, time_budget=2.5, compile=True,
    )  # fmt: skip
    recipe = config_of(parse([*base, "--recipe", "--batch-size", "8"]))
    assert recipe == TrainConfig.from_recipe(DEFAULT_RECIPE, corpus=["a.txt", "texts"], out="run", device="auto",
                                             batch_size=8)  # fmt: skip
    assert recipe.batch_size == 8 and recipe.size != plain.size  # the option given wins, the recipe fills the rest
    for bad in (["--dropout", "1"], ["--batch-size", "0"], ["--lr", "nan"]):
        with pytest.raises(SystemExit):
            parse([*base, *bad])


def test_json_prints_the_result_that_show_prints_as_a_line(tiny_model_dir, tmp_path, capsys):
    """``embed`` returns what it wrote; the frame prints it as embed's line on stderr, or with ``--json`` as one
    JSON object on stdout, which says what the hdf5 file holds."""
    (tmp_path / "in.txt").write_text("the river bank\na bank loan\n", encoding="utf-8")
    command = ["embed", "--model", str(tiny_model_dir), "--input", str(tmp_path / "in.txt"), "--quiet", "--top"]
    main([*command, "--output", str(tmp_path / "a.hdf5")])
    shown = capsys.readouterr()
    assert shown.out == "" and shown.err.startswith("wrote 2 sentences (the top layer x ")
    main([*command, "--output", str(tmp_path / "b.hdf5"), "--json"])
    shown = capsys.readouterr()
    result = json.loads(shown.out)
    with h5py.File(tmp_path / "b.hdf5") as f:
        assert [f[str(i)].shape for i in range(2)] == [(3, result["dim"]), (3, result["dim"])]
    assert result == {"output": str(tmp_path / "b.hdf5"), "sentences": 2, "format": "top", "layers": 3,
                      "dim": result["dim"]}  # fmt: skip
    assert shown.err == ""
    (tmp_path / "bom.txt").write_bytes("\ufeffthe river bank\r\na bank loan\r\n".encode())  # as Notepad saves it
    main(["embed", "--model", str(tiny_model_dir), "--input", str(tmp_path / "bom.txt"), "--quiet", "--top",
          "--output", str(tmp_path / "bom.hdf5"), "--raw"])  # fmt: skip
    with h5py.File(tmp_path / "bom.hdf5") as f, h5py.File(tmp_path / "b.hdf5") as g:
        assert f["0"][()].tolist() == g["0"][()].tolist()  # the mark is no text: the same vectors
        assert [json.loads(s) for s in f["sentence_to_index"][()]] == [
            json.loads(s) for s in g["sentence_to_index"][()]
        ]
    with pytest.raises(SystemExit) as refused:
        main([*command, "--output", "-"])
    assert refused.value.code == 2 and "not standard output" in capsys.readouterr().err
    assert not Path("-").exists()


def test_sentence_to_index_maps_lines_as_allennlp_does(tiny_model_dir, tmp_path):
    """As AllenNLP's `elmo` command writes it: each line stripped (its inner whitespace kept) to its dataset's name,
    a repeated line to its last."""
    (tmp_path / "in.txt").write_text("the bank\n\tthe\tbank\t\nthe bank\n")
    main(["embed", "--model", str(tiny_model_dir), "--input", str(tmp_path / "in.txt"), "--quiet",
          "--output", str(tmp_path / "out.hdf5")])  # fmt: skip
    with h5py.File(tmp_path / "out.hdf5") as f:
        assert json.loads(f["sentence_to_index"][0]) == {"the bank": "2", "the\tbank": "1"}


def test_embed_writes_the_bytes_h5py_create_dataset_writes(tmp_path):
    """``embed`` writes its arrays through h5py's low-level calls (``write_float32``, for speed): the file holds the
    same bytes as one written with ``create_dataset``, for empty, one-token, float64 and non-contiguous arrays."""
    import numpy as np

    from encoder.weights import write_float32, write_hdf5

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in [(3, 0, 8), (3, 1, 8), (2, 5, 8), (7,)]]
    arrays.append(rng.standard_normal((4, 6)).astype(np.float32)[:, ::2])
    with write_hdf5(tmp_path / "low.hdf5") as f:
        for i, array in enumerate(arrays):
            write_float32(f, str(i), array)
    with write_hdf5(tmp_path / "high.hdf5") as f:
        for i, array in enumerate(arrays):
            f.create_dataset(str(i), data=array.astype(np.float32))
    assert (tmp_path / "low.hdf5").read_bytes() == (tmp_path / "high.hdf5").read_bytes()


def test_counts_are_said_in_the_singular_for_one():
    from encoder.terminal import counted

    assert [counted(n, "sentence") for n in (0, 1, 2, 1204)] == [
        "0 sentences",
        "1 sentence",
        "2 sentences",
        "1,204 sentences",
    ]
    assert counted(1, "token vector") == "1 token vector" and counted(3, "sense", "senses") == "3 senses"


def test_a_command_run_in_process_leaves_the_callers_signal_handlers(tmp_path):
    """While a command runs, Ctrl-C and SIGTERM stop it (``errors.interrupting``); after it, the process's own
    handlers are back, so a test runner that called it still stops on SIGTERM as it would."""
    import signal

    def mine(number, frame):
        pass

    before = {number: signal.signal(number, mine) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(SystemExit):  # a missing corpus: one error line, after the handlers were changed
            main(["punkt", "--corpus", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "p.json")])
        assert [signal.getsignal(number) for number in before] == [mine, mine]
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


@pytest.mark.parametrize("status", [0, 2])
def test_a_signal_once_the_command_is_over_leaves_its_exit_status(status):
    """A Ctrl-C or SIGTERM that comes while the interpreter tears down a finished command (a second or so of
    freeing torch's modules, when Python has put the default handlers back) does not kill the process: its status
    is the command's (0, or the 2 of an error line already printed), not death by the signal."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import os, signal, sys\n"
        "from encoder.cli.frame import cli\n"
        "class Late:  # freed with the module's globals, in the teardown\n"
        "    def __del__(self):\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "late = Late()\n"
        f"cli(lambda: {status})\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert done.returncode == status
