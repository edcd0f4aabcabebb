"""Bad input and faults: `python -m encoder ship`.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from bad_input import (
    ERROR,
    ROOT,
    SAFETENSORS_FULL,
    USAGE,
    Cmd,
    World,
    cli_test,
    e,
    failing,
    run_copy,
    ships,
    snapshot,
)

import encoder.__main__ as encoder_cli
from encoder import Elmo
from encoder.lm_data import Vocabulary
from encoder.lm_head import LMHead
from encoder.model_files import model_hash

CLI = [
    Cmd(
        "ship a missing run",
        lambda c: e(c, "ship", "--run", str(c.tmp / "run"), "--to", str(c.tmp / "m")),
        ERROR,
        "run",
    ),
    Cmd(
        "ship a folder that is no run",
        lambda c: e(c, "ship", "--run", str(c.corpus), "--to", str(c.tmp / "m")),
        ERROR,
        "head.safetensors is missing",
    ),
    Cmd(
        "ship a run that has not finished (interrupted: its checkpoints, no model yet)",
        lambda c: e(c, "ship", "--run", str(c.tmp / "in"), "--to", str(c.tmp / "m")),
        ERROR,
        "the run in .* has not finished .*train --resume --out",
        setup=lambda c: (c.file("run.json", '{"start": "fresh"}'), c.file("log.jsonl", "")),
    ),
    Cmd("ship without --to", lambda c: e(c, "ship", "--run", str(c.run)), USAGE, "--to"),
    Cmd(
        "ship over another model",
        lambda c: ships(c, c.model_copy),
        ERROR,
        "holds another model .*did not continue a model.*--overwrite to replace it",
    ),
    Cmd(
        "ship a fine-tuned run over the model it was fine-tuned from",
        lambda c: e(c, "ship", "--run", str(c.tmp / "run"), "--to", str(c.model_copy)),
        ERROR,
        "model holds the model .*run was fine-tuned from \\(--init-from .*model\\); a fine-tuned model is a new one",
        setup=lambda c: (run_copy(c) / "run.json").write_text(
            json.dumps({"start": "init_from", "model": str(c.model_copy), "model_hash": model_hash(c.model_copy)})
        ),
    ),
    Cmd(
        "ship into a folder of the user's files",
        lambda c: ships(c, c.tmp / "in"),
        ERROR,
        "in holds drafts, which ship would not keep",
        setup=lambda c: (c.file("notes.txt", "mine"), c.file("drafts/chapter.txt", "mine")),
    ),
    Cmd(
        "ship --overwrite into a folder holding the user's folder",
        lambda c: ships(c, c.tmp / "in", "--overwrite"),
        ERROR,
        "in holds drafts, which ship would not keep",
        setup=lambda c: (c.file("config.json", "{}"), c.file("drafts/chapter.txt", "mine")),
    ),
    Cmd(
        "ship --overwrite into a folder that is not a model",
        lambda c: ships(c, c.tmp / "in", "--overwrite"),
        ERROR,
        "not empty and not a model folder",
        setup=lambda c: c.file("notes.txt", "mine"),
    ),
    Cmd(
        "ship when safetensors finds the disk full",
        lambda c: ships(c, c.model_copy, "--overwrite"),
        ERROR,
        "model: disk full",
        during=failing("encoder.weights.save_file", SAFETENSORS_FULL),
    ),
    # ---- a model of mixed parts
    Cmd(
        "ship a model with the head of another model",
        lambda c: e(c, "ship", "--run", str(run_copy(c)), "--to", str(c.tmp / "m")),
        ERROR,
        "run/head.safetensors reads 16-dimensional states, the biLM gives 32: they are not of one model",
        setup=lambda c: LMHead(16, 5).save(
            run_copy(c) / "head.safetensors", Vocabulary(["<S>", "</S>", "<UNK>", "the", "bank"])
        ),
    ),
]


test_cli = cli_test(CLI)


def ship_cli(run: Path, to: Path, *flags: str) -> None:
    """``python -m encoder ship`` run in this process; it must succeed."""
    assert encoder_cli.main(["ship", "--run", str(run), "--to", str(to), *flags]) is None


def test_ship_replaces_only_the_model_its_run_made_or_continued(world: World, tmp_path: Path) -> None:
    """Shipping a run again into the folder it made needs no flag; another model needs --overwrite, which keeps the
    files beside it; the files shipped beside a model stay, stale weight shards do not."""
    to = tmp_path / "models" / "mine"
    ship_cli(world.run, to)
    (to / "README.md").write_text("the card")
    (to / "model-00001-of-00002.safetensors").write_bytes(b"a stale shard of an older model")
    ship_cli(world.run, to)  # the same run again: the model it made
    assert (to / "README.md").read_text() == "the card"
    assert not (to / "model-00001-of-00002.safetensors").exists()
    other = Path(shutil.copytree(world.model, tmp_path / "other"))
    (other / "glove-ko-50d.txt.xz").write_bytes(b"shipped beside the model")
    with pytest.raises(SystemExit):
        ship_cli(world.run, other)
    ship_cli(world.run, other, "--overwrite")
    assert Elmo.load(other).model_hash == Elmo.load(to).model_hash
    assert (other / "glove-ko-50d.txt.xz").read_bytes() == b"shipped beside the model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models", "other"]  # no staging or old folder left


KILLED_SHIP = """
import os, signal, sys
import encoder.weights
from encoder.__main__ import main

write = encoder.weights.save_file
def write_then_die(*args, **kwargs):
    write(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)  # kill -9 with the new model half written
encoder.weights.save_file = write_then_die
main(["ship", "--run", sys.argv[1], "--to", sys.argv[2], "--overwrite"])
"""


def test_a_ship_killed_half_way_leaves_the_model_as_it_was(world: World, tmp_path: Path) -> None:
    target = Path(shutil.copytree(world.model, tmp_path / "model"))
    before = snapshot(target)
    killed = subprocess.run([sys.executable, "-c", KILLED_SHIP, str(world.run), str(target)], cwd=ROOT)
    assert killed.returncode == -9
    assert snapshot(target) == before
    ship_cli(world.run, target, "--overwrite")  # and it ships when run again
    assert Elmo.load(target).model_hash != Elmo.load(world.model).model_hash


def test_a_shipped_model_folder_has_the_usual_permissions(world: World, tmp_path: Path) -> None:
    """The model folder is made as a temporary (mode 0700) and renamed into place; it ends with the
    permissions of any folder the user makes (0755 under umask 022), whether new or replacing a model."""
    old = os.umask(0o022)
    try:
        ship_cli(world.run, tmp_path / "new")
        replaced = Path(shutil.copytree(world.model, tmp_path / "replaced"))
        ship_cli(world.run, replaced, "--overwrite")
    finally:
        os.umask(old)
    assert [stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("new", "replaced")] == [0o755, 0o755]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "replaced"]  # the old model and staging are gone


def test_ship_to_the_current_folder_names_only_the_users_files(world: World, tmp_path: Path, monkeypatch, capsys):
    """``--to .`` is the folder the command runs in: holding the user's files, it is refused, and the refusal names
    those files, not the staging folder ship makes beside its destination. (``--to ''`` is refused as empty.)"""
    mine = tmp_path / "mine"
    (mine / "drafts").mkdir(parents=True)
    (mine / "drafts" / "chapter.txt").write_text("mine")
    before = snapshot(tmp_path)
    monkeypatch.chdir(mine)
    with pytest.raises(SystemExit) as refused:
        encoder_cli.main(["ship", "--run", str(world.run), "--to", "."])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "holds drafts, which ship would not keep" in err and ".tmp" not in err, err
    assert snapshot(tmp_path) == before


def test_a_signal_once_the_new_model_is_in_place_lets_ship_finish(world: World, tmp_path: Path, monkeypatch) -> None:
    """Ctrl-C as ship removes the old model folder (the new one swapped in, whole) said "interrupted" (130) of a
    model already shipped; now ship ends as shipped, 0 (``errors.ends_with``)."""
    from encoder import ownership

    target = Path(shutil.copytree(world.model, tmp_path / "model"))
    remove = ownership.remove
    monkeypatch.setattr(ownership, "remove", lambda *a: (os.kill(os.getpid(), signal.SIGINT), remove(*a)))
    ship_cli(world.run, target, "--overwrite")
    assert Elmo.load(target).model_hash != Elmo.load(world.model).model_hash
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # the old model gone, no staging left
