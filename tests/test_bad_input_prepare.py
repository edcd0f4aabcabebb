"""Bad input and faults: `python -m encoder prepare`.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bad_input import (
    ERROR,
    HOSTILE_NAME,
    USAGE,
    WORKS,
    Cmd,
    World,
    e,
    lines,
    lock,
    params,
    run_cli_case,
)

CLI = [
    Cmd(
        "prepare nan part tokens",
        lambda c: e(c, "prepare", "--corpus", lines(c, "a b\n"), "--out", str(c.tmp / "p"), "--part-tokens", "nan"),
        USAGE,
        "--part-tokens: .*nan",
    ),
    Cmd(
        "prepare over a folder of the user's, --overwrite included",
        lambda c: e(c, "prepare", "--corpus", lines(c, "a b\n"), "--out", str(c.tmp / "in" / "mine"), "--overwrite"),
        ERROR,
        "holds files prepare did not write \\(notes.txt\\)",
        setup=lambda c: c.file("mine/notes.txt", "mine\n"),
    ),
    # ---- issue 40, class 4: injection (file names in the progress)
    Cmd(
        "prepare a file whose name holds escape sequences",
        lambda c: e(
            c, "prepare", "--corpus", str(c.file(f"{HOSTILE_NAME}.txt", "The bank.\n")), "--out", str(c.tmp / "p")
        ),
        WORKS,
        "x\\\\x1b\\]0;pwned\\\\x07\\\\x9b31m\\\\u202etxt.exe.txt: 5 ids",
    ),
    # ---- issue 40, class 3: concurrent runs on one folder
    Cmd(
        "prepare into a folder another prepare is writing",
        lambda c: e(c, "prepare", "--corpus", lines(c, "The bank.\n"), "--out", str(c.tmp / "p")),
        ERROR,
        "another prepare is writing .*/p; wait for it to finish",
        setup=lambda c: ((c.tmp / "p").mkdir(), lock(c.tmp / "p")),
    ),
]


@pytest.mark.parametrize("cmd", params(CLI))
def test_cli(cmd: Cmd, world: World, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run_cli_case(cmd, world, tmp_path, capsys)
