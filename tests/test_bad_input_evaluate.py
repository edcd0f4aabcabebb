"""Bad input and faults: `python -m encoder evaluate`.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

from pathlib import Path

from bad_input import (
    ERROR,
    USAGE,
    WORKS,
    Cmd,
    Ctx,
    cli_test,
    e,
)


def wordsim_data(c: Ctx, simlex: list[str] | None = None) -> Path:
    """A word-similarity data folder in tmp/in/ws of the data sets' sizes (999 and 353 pairs of made-up words), its
    SimLex-999 lines ``simlex`` instead when given."""
    pairs = [f"w{i}\tv{i}\tA\t{i % 10}.5" for i in range(999)]
    c.file("ws/simlex-999/SimLex-999.txt", "\n".join(["word1\tword2\tPOS\tSimLex999", *(simlex or pairs)]) + "\n")
    c.file("ws/wordsim-353/combined.tab", "".join(f"w{i}\tv{i}\t{i % 10}.5\n" for i in range(-1, 353)))
    return c.tmp / "in" / "ws"


def simlex_as_published(c: Ctx) -> Path:
    """A word-similarity data folder whose SimLex-999.txt has the published file's ten columns and CRLF lines."""
    header = "word1\tword2\tPOS\tSimLex999\tconc(w1)\tconc(w2)\tconcQ\tAssoc(USF)\tSimAssoc333\tSD(SimLex)"
    lines = [f"w{i}\tv{i}\tA\t{i % 10}.55\t2.32\t2.25\t1\t0.21\t0\t0.6" for i in range(999)]
    wordsim_data(c)
    return c.file("ws/simlex-999/SimLex-999.txt", "".join(f"{line}\r\n" for line in [header, *lines]))


def cut_in_a_field(simlex: bytes) -> bytes:
    """The file cut after 3 KB, inside the fifth field of a line: the score before it is whole."""
    return simlex[: simlex.index(b"\t2.32", 3072) + len(b"\t2.3")]


def wordsim(c: Ctx) -> list[str]:
    return e(c, "evaluate", "wordsim", "--model", str(c.model), "--glove", "none", "--data", str(c.tmp / "in" / "ws"))


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
    # ---- gold data that would be scored wrongly
    Cmd(
        "evaluate wordsim on gold scores that are NaN",
        wordsim,
        ERROR,
        "SimLex-999.txt, line 4: the gold score is nan, not a finite number",
        setup=lambda c: wordsim_data(
            c, [*(f"w{i}\tv{i}\tA\t1.0" for i in range(2)), "a\tb\tA\tnan", *(["x\ty\tA\t2"] * 996)]
        ),
    ),
    Cmd(
        "evaluate wordsim on a file cut short, with a note",
        wordsim,
        WORKS,
        "note: .*SimLex-999.txt holds 500 pairs, the data set 999: a file cut short\\? \\(scored as it is\\)",
        setup=lambda c: wordsim_data(c, [f"w{i}\tv{i}\tA\t{i % 10}.5" for i in range(500)]),
    ),
    Cmd(
        "evaluate wordsim on one pair (its rho would be shown as 0.0, as if measured)",
        wordsim,
        ERROR,
        "SimLex-999.txt holds 1 pair, with one gold score: a rank correlation needs at least two pairs",
        setup=lambda c: wordsim_data(c, ["w1\tv1\tA\t1.5"]),
    ),
    Cmd(
        "evaluate wordsim on an empty file",
        wordsim,
        ERROR,
        "SimLex-999.txt holds 0 pairs, with no gold scores",
        setup=lambda c: (wordsim_data(c), c.file("ws/simlex-999/SimLex-999.txt", "")),
    ),
    Cmd(
        "evaluate wordsim on pairs of one gold score",
        wordsim,
        ERROR,
        "SimLex-999.txt holds 999 pairs, with one gold score",
        setup=lambda c: wordsim_data(c, [f"w{i}\tv{i}\tA\t1.0" for i in range(999)]),
    ),
    Cmd(
        "evaluate wordsim on a line that is not UTF-8",
        wordsim,
        ERROR,
        "SimLex-999.txt, line 3: byte 0xff at column 1 is not UTF-8",
        setup=lambda c: (
            wordsim_data(c),
            c.file("ws/simlex-999/SimLex-999.txt", b"w1\tw2\tP\tS\na\tb\tA\t1\n\xff\tc\tA\t2\n"),
        ),
    ),
    Cmd(
        "evaluate wordsim on a file cut in the middle of a line",
        wordsim,
        ERROR,
        "SimLex-999.txt, line 1001 has 2 of the header's 4 fields: a line cut short\\?",
        setup=lambda c: wordsim_data(c, [*(f"w{i}\tv{i}\tA\t1.0" for i in range(999)), "w999\tv9"]),
    ),
    Cmd(
        "evaluate wordsim on WordSim-353 cut inside its last score",
        wordsim,
        ERROR,
        "combined.tab ends inside line 101, with 100 of the data set's 353 pairs: a file cut short",
        setup=lambda c: (
            wordsim_data(c),
            c.file(
                "ws/wordsim-353/combined.tab", "".join(f"w{i}\tv{i}\t{i % 10}.5\n" for i in range(-1, 99)) + "w\tv\t7."
            ),
        ),
    ),
    Cmd(
        "evaluate wordsim on SimLex-999 as published, cut after 3 KB in a line's fifth field (it keeps a score)",
        wordsim,
        ERROR,
        "SimLex-999.txt, line 79 has 5 of the header's 10 fields: a line cut short\\?",
        setup=lambda c: c.file("ws/simlex-999/SimLex-999.txt", cut_in_a_field(simlex_as_published(c).read_bytes())),
    ),
]


test_cli = cli_test(CLI)
