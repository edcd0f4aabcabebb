"""Bad input and faults: `python -m encoder punkt`.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

from bad_input import (
    ERROR,
    USAGE,
    Cmd,
    cli_test,
    e,
    lines,
)

PUNKT_LIKE = '{"abbrev_types": ["mr"], "collocations": [], "sent_starters": [], "ortho_context": {}}'
"""Punkt parameters in the layout the command writes, from another tool (or typed by hand)."""

CLI = [
    Cmd(
        "punkt --out over a file of the user's",
        lambda c: e(
            c, "punkt", "--corpus", lines(c, "Mr. Smith sat. He left.\n"), "--out", str(c.file("mine.json", "{}"))
        ),
        ERROR,
        "mine.json already exists and is not a file of Punkt parameters this command wrote.*--overwrite",
    ),
    Cmd(
        "punkt into a folder's path (a trailing slash)",
        lambda c: e(c, "punkt", "--corpus", lines(c, "Mr. Smith sat.\n"), "--out", str(c.tmp / "new") + "/"),
        USAGE,
        "--out: '.*new/' ends in a slash, so names a folder; give the path of a file",
    ),
    Cmd(
        "punkt from a missing corpus",
        lambda c: e(c, "punkt", "--corpus", str(c.tmp / "x"), "--out", str(c.tmp / "p.json")),
        ERROR,
        "no such file or folder",
    ),
    Cmd(
        "punkt of an empty file",
        lambda c: e(c, "punkt", "--corpus", lines(c, ""), "--out", str(c.tmp / "p.json")),
        ERROR,
        "no text to train Punkt on",
    ),
    # ---- a one-file output replaces only a file it wrote (a record it checks)
    Cmd(
        "punkt --out over Punkt parameters of the user's",
        lambda c: e(
            c, "punkt", "--corpus", lines(c, "Mr. Smith sat. He left.\n"), "--out", str(c.file("p.json", PUNKT_LIKE))
        ),
        ERROR,
        "p.json already exists and is not a file of Punkt parameters this command wrote",
    ),
    Cmd(
        "punkt on a CSV file",
        lambda c: e(
            c, "punkt", "--corpus", str(c.file("t.csv", "id,text\n1,Mr. Smith sat.\n")), "--out", str(c.tmp / "p.json")
        ),
        ERROR,
        "t.csv is a CSV file by its name, not plain text",
    ),
    Cmd(
        "punkt --out over an index's manifest, --overwrite included",
        lambda c: e(
            c, "punkt", "--corpus", lines(c, "Mr. Smith sat.\n"), "--out", str(c.index / "manifest.json"), "--overwrite"
        ),
        ERROR,
        "--out .*index/manifest.json is inside .*index, a folder a command writes whole",
    ),  # fmt: skip
]


test_cli = cli_test(CLI)
