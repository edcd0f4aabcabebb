"""Bad input and faults: `python -m encoder prepare`.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

from bad_input import (
    ERROR,
    HOSTILE_NAME,
    LATIN1,
    USAGE,
    WORKS,
    Cmd,
    cli_test,
    e,
    killed_prepare,
    lines,
    lock,
)

from encoder.corpus import is_complete, read_record

CLI = [
    Cmd(
        "prepare nan part tokens",
        lambda c: e(c, "prepare", "--corpus", lines(c, "a b\n"), "--out", str(c.tmp / "p"), "--part-tokens", "nan"),
        USAGE,
        "--part-tokens: .*nan",
    ),
    Cmd(
        "prepare into a folder inside its --corpus folder",
        lambda c: e(
            c, "prepare", "--corpus", str(c.file("a.txt", "The bank.\n").parent), "--out", str(c.tmp / "in" / "p")
        ),
        ERROR,
        "--out .*in/p is inside --corpus .*in: training on .*in would read its text twice",
    ),
    Cmd(
        "prepare over a folder of the user's, --overwrite included",
        lambda c: e(c, "prepare", "--corpus", lines(c, "a b\n"), "--out", str(c.tmp / "in" / "mine"), "--overwrite"),
        ERROR,
        "holds files prepare did not write \\(notes.txt\\)",
        setup=lambda c: c.file("mine/notes.txt", "mine\n"),
    ),
    Cmd(
        "prepare a corpus of blank lines",
        lambda c: e(c, "prepare", "--corpus", lines(c, "\n  \n\t\n"), "--out", str(c.tmp / "p")),
        ERROR,
        "the corpus holds no text \\(blank lines only\\) in .*lines.txt",
    ),
    Cmd(
        "prepare a file of Latin-1 bytes",
        lambda c: e(c, "prepare", "--corpus", lines(c, LATIN1), "--out", str(c.tmp / "p")),
        WORKS,
        "warning: .*lines.txt: 2 undecodable byte sequences were replaced by U\\+FFFD",
    ),
    # ---- injection (file names in the progress)
    Cmd(
        "prepare a file whose name holds escape sequences",
        lambda c: e(
            c, "prepare", "--corpus", str(c.file(f"{HOSTILE_NAME}.txt", "The bank.\n")), "--out", str(c.tmp / "p")
        ),
        WORKS,
        "x\\\\x1b\\]0;pwned\\\\x07\\\\x9b31m\\\\u202etxt.exe.txt: 5 ids",
    ),
    # ---- concurrent runs on one folder
    Cmd(
        "prepare into a folder another prepare is writing",
        lambda c: e(c, "prepare", "--corpus", lines(c, "The bank.\n"), "--out", str(c.tmp / "p")),
        ERROR,
        "another prepare is writing .*/p; wait for it to finish",
        setup=lambda c: ((c.tmp / "p").mkdir(), lock(c.tmp / "p")),
    ),
    # ---- a killed prepare is finished or replaced
    Cmd(
        "prepare again after it was killed",
        lambda c: e(c, "prepare", "--corpus", str(c.tmp / "text"), "--out", str(c.tmp / "p"), "--no-progress"),
        WORKS,
        "prepared 50 ids in 2 files",
        setup=killed_prepare,
        own="p",
        after=lambda c: is_complete(read_record(c.tmp / "p")) and len(read_record(c.tmp / "p")["files"]) == 2,
    ),
    Cmd(
        "prepare --overwrite after it was killed",
        lambda c: e(c, "prepare", "--corpus", str(c.tmp / "text" / "b.txt"), "--out", str(c.tmp / "p"), "--overwrite"),
        WORKS,
        "prepared 25 ids in 1 file,",
        setup=killed_prepare,
        own="p",
        after=lambda c: (
            sorted(p.name for p in (c.tmp / "p").iterdir()) == [".lock", "b.000.tokens.xz", "prepared.json"]
        ),
    ),
    Cmd(
        "prepare other files into a folder a killed prepare left",
        lambda c: e(c, "prepare", "--corpus", lines(c, "The bank.\n"), "--out", str(c.tmp / "p")),
        ERROR,
        "holds an unfinished prepare of other files or options: run that prepare again .*--overwrite",
        setup=killed_prepare,
    ),
]


test_cli = cli_test(CLI)
