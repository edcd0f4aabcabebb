"""Bad input and faults: What every command shares: file permissions, a closed pipe, a full disk.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from bad_input import (
    FEW,
    ROOT,
    World,
)

from encoder.files import atomic_path


def test_written_files_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_path(tmp_path / "out.json") as tmp:
            Path(tmp).write_text("{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == 0o644


def test_a_failed_or_interrupted_write_leaves_no_folder_it_made(tmp_path):
    """A one-file output into folders that do not exist yet (``embed --output new/sub/out.hdf5``): a write that
    fails or is interrupted leaves none of them (it left new/sub empty behind "nothing was written"); a folder that
    was there stays, and a write that succeeds keeps the folders it made."""
    (tmp_path / "mine").mkdir()
    for stop in (OSError("disk full"), KeyboardInterrupt()):
        with pytest.raises(type(stop)), atomic_path(tmp_path / "mine" / "new" / "sub" / "out.hdf5") as tmp:
            Path(tmp).write_bytes(b"half")
            raise stop
        assert [p.name for p in tmp_path.rglob("*")] == ["mine"]
    with atomic_path(tmp_path / "mine" / "new" / "out.hdf5") as tmp:
        Path(tmp).write_bytes(b"whole")
    assert (tmp_path / "mine" / "new" / "out.hdf5").read_bytes() == b"whole"


def test_a_closed_pipe_is_not_a_traceback(tmp_path):
    """`python -m indexer ... | head` must not end in a BrokenPipeError traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "indexer", "--help"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    process.stdout.close()  # the reader goes away before the output is written
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) in (0, 2) and "Traceback" not in stderr


FULL_DISK = """
import contextlib, io, json, os, sys
import h5py
from pathlib import Path
from encoder import ownership
import encoder.__main__ as encoder_cli
import indexer.__main__ as indexer_cli

full, corpus, model = sys.argv[1:4]
with h5py.File(os.path.join(full, "old.hdf5"), "w") as f:  # what was there before: its own kind of output
    f.create_dataset("sentence_to_index", data=["{}"])
with open(os.path.join(full, "old.txt"), "w") as f:
    f.write("river 0.1 0.2\\n")
for name, kind in (("old.hdf5", "embeddings"), ("old.txt", "glove")):  # as each command recorded writing it
    ownership.record_written(Path(full, name), kind)
before = {name: open(os.path.join(full, name), "rb").read() for name in os.listdir(full)}
lines = os.path.join(corpus, "lines.txt")
commands = {
    "embed": (encoder_cli.main, ["embed", "--model", model, "--input", lines, "--output", full + "/old.hdf5", "--quiet"]),
    "glove": (indexer_cli.main, ["glove", "--corpus", lines, "--out", full + "/old.txt", "--min-count", "1",
                                 "--dim", "300", "--epochs", "1"]),
    "build": (indexer_cli.main, ["build", "--corpus", corpus, "--out", full + "/index", "--model", model, "--quiet"]),
}
said = {}
for name, (main, argv) in commands.items():
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit:
            code = exit.code
    said[name] = [code, [line for line in err.getvalue().splitlines() if line.startswith("error:")]]
after = {name: open(os.path.join(full, name), "rb").read() for name in before}
print(json.dumps({"said": said, "intact": after == before}))
"""


def test_a_file_system_of_no_blocks_is_not_a_full_disk(tmp_path):
    """/proc and /sys have no blocks at all (statvfs: 0 of 0 free): a write refused there ends in the system's own
    error, not "disk full" (as root, ``embed --output /proc/x.hdf5`` had said the disk was full)."""
    from unittest import mock

    from encoder.files import writing

    no_blocks = os.statvfs_result((4096, 4096, 0, 0, 0, 0, 0, 0, 0, 255))
    with mock.patch("os.statvfs", return_value=no_blocks), pytest.raises(OSError) as raised:
        with writing(tmp_path / "x.hdf5"):
            raise OSError(errno.EINVAL, "Invalid argument")
    assert raised.value.errno == errno.EINVAL and "disk full" not in str(raised.value)


def test_a_real_full_disk(world: World, tmp_path: Path) -> None:
    """On a real 192 KiB file system (a tmpfs mounted in a mount namespace of this test's own, so nothing else sees
    it): embed, GloVe and a build each end with one error line naming the file and saying "disk full", and the
    outputs that were there before are byte-identical."""
    if subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode != 0:
        pytest.skip(
            "mounting a small tmpfs needs unshare and CAP_SYS_ADMIN (root); the full-disk rows of the CLI table "
            "cover the same errors without it"
        )
    full, corpus = tmp_path / "full", tmp_path / "corpus"
    full.mkdir()
    corpus.mkdir()
    (corpus / "lines.txt").write_text("".join(f"{FEW[i % 3]} number {i} of many\n" for i in range(600)))
    script = f'mount -t tmpfs -o size=192k tmpfs {full} && exec {sys.executable} -c "$0" "$@"'
    process = subprocess.run(
        ["unshare", "--mount", "sh", "-c", script, FULL_DISK, str(full), str(corpus), str(world.model)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert process.returncode == 0, process.stderr
    result = json.loads(process.stdout.splitlines()[-1])
    assert result["intact"]
    for name, (code, errors) in result["said"].items():
        assert code == 2 and len(errors) == 1 and re.search(f"{full}/.*: disk full", errors[0]), (name, errors)
