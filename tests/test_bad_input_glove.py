"""Bad input and faults: `python -m indexer glove` and GloVe's Python API (``train_glove``, ``Glove.load``).

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

import scipy.sparse as sp
from bad_input import (
    BINARY,
    CONTROL,
    EMOJI,
    ERROR,
    OS_FULL,
    USAGE,
    WORKS,
    Case,
    Cmd,
    api_test,
    cli_test,
    failing,
    glove,
    is_json,
    lines,
    written_by,
)

import indexer.__main__ as indexer_cli
from encoder.glove import Glove
from indexer.glove import train_glove

API = [
    Case(
        "GloVe with a NaN x_max",
        lambda c: train_glove(sp.identity(3, format="csr"), ["a", "b", "c"], x_max=float("nan"), progress=False),
        ValueError,
        "x_max must be a number above 0 and of at most 1e\\+06, not nan",
    ),
    Case(
        "GloVe beyond this machine's memory",
        lambda c: train_glove(sp.csr_matrix((10**7, 10**7)), ["w"] * 10**7, dim=10_000, progress=False),
        ValueError,
        "GiB of memory, more than this machine has",
    ),
    Case(
        "read a GloVe file holding inf",
        lambda c: Glove.load(c.file("g.txt", "a 1 2\nb inf 2\n")),
        ValueError,
        "g.txt, line 2 holds NaN or infinite numbers",
    ),
]


CLI = [
    Cmd(
        "glove from a missing corpus",
        lambda c: ["indexer", "glove", "--corpus", str(c.tmp / "x"), "--out", str(c.tmp / "g.txt")],
        ERROR,
        "--corpus .*x does not exist",
    ),
    Cmd(
        "glove into a folder",
        lambda c: ["indexer", "glove", "--corpus", str(c.corpus), "--out", str(c.tmp), "--min-count", "1"],
        ERROR,
        "--out .* is a folder; give the GloVe file to write",
    ),
    Cmd(
        "glove dim 0",
        lambda c: ["indexer", "glove", "--corpus", str(c.corpus), "--out", str(c.tmp / "g.txt"), "--dim", "0"],
        USAGE,
        "--dim: must be a whole number from 1 to 10,000, not '0'",
    ),
    Cmd(
        "glove max tokens 0",
        lambda c: ["indexer", "glove", "--corpus", str(c.corpus), "--out", str(c.tmp / "g.txt"), "--max-tokens", "0"],
        USAGE,
        "--max-tokens: must be a whole number of at least 1, not '0'",
    ),
    Cmd(
        "glove of a binary file",
        lambda c: [*glove(c, "--corpus", lines(c, BINARY)), "--min-count", "1"],
        WORKS,
        "warning: .*lines.txt: .*undecodable",
    ),
    Cmd(
        "glove of emoji and control characters as JSON",
        lambda c: glove(
            c, "--corpus", lines(c, f"{EMOJI}\n{CONTROL}\n" * 3), "--min-count", "1", "--dim", "4", "--json"
        ),
        WORKS,
        check=is_json(lambda r: r["dim"] == 4 and r["words"] > 3),
    ),
    Cmd(
        "glove --out over the user's file",
        lambda c: glove(c, "--out", lines(c, "my notes\n"), "--min-count", "1"),
        ERROR,
        "--out .*lines.txt already exists and is not a GloVe file this command wrote.*--overwrite",
    ),
    Cmd(
        "glove --out under a file, refused before any training",
        lambda c: glove(c, "--out", lines(c, "my notes\n") + "/g.txt", "--min-count", "1"),
        ERROR,
        "--out .*lines.txt/g.txt: .*lines.txt is a file, not a folder; check the path",
        during=failing("indexer.cli.glove.train_glove_on_text", AssertionError("trained before checking --out")),
    ),
    Cmd(
        "glove into a folder's path (a trailing slash)",
        lambda c: glove(c, "--out", str(c.tmp / "new") + "/"),
        USAGE,
        "--out: '.*new/' ends in a slash, so names a folder; give the path of a file",
    ),
    Cmd("glove with a NaN x-max", lambda c: glove(c, "--x-max", "nan"), USAGE, "--x-max: .*not 'nan'"),
    Cmd("glove of a huge dimension", lambda c: glove(c, "--dim", "1e9"), USAGE, "--dim: .*from 1 to 10,000"),
    Cmd(
        "glove when the disk is full",
        lambda c: glove(
            c, "--out", str(written_by(c, c.file("g.txt", "river 0.1 0.2\n"), "glove")), "--min-count", "1"
        ),
        ERROR,
        "g.txt: disk full",
        during=failing("indexer.glove.open_text", OS_FULL),
    ),
    # ---- a one-file output replaces only a file it wrote (a record it checks)
    Cmd(
        "glove --out over an index's own GloVe, --overwrite included",
        lambda c: glove(c, "--out", str(c.index / "glove.txt"), "--min-count", "1", "--overwrite"),
        ERROR,
        "--out .*index/glove.txt is inside .*index, a folder a command writes whole .*write a GloVe file elsewhere",
        setup=lambda c: c.index,
    ),
    Cmd(
        "glove on a JSON Lines file named as its corpus",
        lambda c: glove(c, "--corpus", str(c.file("docs.jsonl", '{"id": "a", "text": "the river bank"}\n'))),
        ERROR,
        "docs.jsonl is a JSON Lines file by its name, not plain text .*`indexer build` reads JSON Lines",
    ),
    Cmd(
        "glove on a compressed Parquet file named as its corpus",
        lambda c: glove(c, "--corpus", str(c.file("docs.parquet.gz", b"PAR1\x00\x15"))),
        ERROR,
        "docs.parquet.gz is a Parquet file by its name, not plain text",
    ),
    Cmd(
        "glove --out over its own --corpus file, --overwrite included",
        lambda c: glove(
            c, "--corpus", lines(c, "the river bank\n"), "--out", lines(c, "the river bank\n"), "--overwrite"
        ),
        ERROR,
        "--out .*lines.txt is the input .*lines.txt; write a GloVe file elsewhere",
    ),
    Cmd(
        "glove --out inside its --corpus folder",
        lambda c: glove(c, "--out", str(c.corpus / "glove.txt")),
        ERROR,
        "--out .*glove.txt is a text file inside the input folder .*corpus",
    ),
    Cmd(
        "glove --out over a GloVe file shipped beside a model",
        lambda c: glove(c, "--out", str(c.model_copy / "glove-ko-50d.txt"), "--min-count", "1"),
        ERROR,
        "glove-ko-50d.txt already exists and is not a GloVe file this command wrote .*--overwrite",
        setup=lambda c: (c.model_copy / "glove-ko-50d.txt").write_text("서울 0.1 0.2\n부산 0.2 0.1\n"),
    ),
    Cmd(
        "glove --out over a downloaded GloVe file",
        lambda c: glove(
            c, "--out", str(c.file("glove.6B.50d.txt", "the 0.418 0.24968\nbank 0.1 0.2\n")), "--min-count", "1"
        ),
        ERROR,
        "glove.6B.50d.txt already exists and is not a GloVe file this command wrote",
    ),
    Cmd(
        "glove --out over the file it wrote before",
        lambda c: glove(c, "--out", str(c.tmp / "out" / "g.txt"), "--min-count", "1", "--dim", "4"),
        WORKS,
        "wrote \\d+ words x 4 dims",
        setup=lambda c: indexer_cli.main(glove(c, "--out", str(c.tmp / "out" / "g.txt"), "--min-count", "1")[1:]),
        own="out",
    ),
    # ---- GloVe that would be written untrained, or of nothing
    Cmd(
        "glove with an x-max beyond any count",
        lambda c: glove(c, "--x-max", "1e308"),
        USAGE,
        "--x-max: must be a number above 0 and of at most 1e\\+06, not '1e308'",
    ),
    Cmd(
        "glove on an empty folder",
        lambda c: glove(c, "--corpus", str(c.tmp / "in")),
        ERROR,
        "in holds no text: nothing to train GloVe on; give more text",
        setup=lambda c: (c.tmp / "in").mkdir(),
    ),
    Cmd(
        "glove on text where no word is frequent enough",
        lambda c: glove(c, "--corpus", lines(c, "One bank.\n"), "--min-count", "100"),
        ERROR,
        "lines.txt holds no word 100 times or more \\(min_count\\): .*lower --min-count",
    ),
]


test_api = api_test(API)


test_cli = cli_test(CLI)
