"""Bad input and faults: `python -m encoder evaluate`.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bad_input import ERROR, USAGE, Cmd, World, e, params, run_cli_case

CLI = [
    Cmd(
        "evaluate --report over a file of the user's, before any task runs",
        lambda c: e(c, "evaluate", "all", "--model", str(c.model), "--report", str(c.tmp / "in")),
        ERROR,
        "holds report.md, which is not a report of ours",
        setup=lambda c: c.file("report.md", "my notes"),
    ),
    Cmd(
        "evaluate --report without all",
        lambda c: e(c, "evaluate", "wic", "--report", str(c.tmp / "r")),
        ERROR,
        "--report goes with the task 'all'",
    ),
    Cmd(
        "evaluate with a missing model",
        lambda c: e(c, "evaluate", "wordsim", "--model", str(c.tmp / "m")),
        ERROR,
        "there is no model",
    ),
    Cmd(
        "evaluate with a missing GloVe",
        lambda c: e(c, "evaluate", "wordsim", "--model", str(c.model), "--glove", str(c.tmp / "g.txt")),
        ERROR,
        "g.txt",
    ),
    Cmd(
        "evaluate with missing data",
        lambda c: e(c, "evaluate", "wordsim", "--model", str(c.model), "--glove", "none", "--data", str(c.tmp / "d")),
        ERROR,
        "wordsim: ",
    ),
    Cmd("evaluate an unknown task", lambda c: e(c, "evaluate", "magic"), USAGE, "invalid choice: 'magic'"),
]


@pytest.mark.parametrize("cmd", params(CLI))
def test_cli(cmd: Cmd, world: World, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run_cli_case(cmd, world, tmp_path, capsys)
