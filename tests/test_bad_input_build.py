"""Bad input and faults: `python -m indexer build|add|delete` and the Python API behind them (``build_index``, ``add_documents``,
``delete_documents``): reading a corpus, writing an index.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bad_input import (
    BINARY,
    ERROR,
    FAISS_FULL,
    LATIN1,
    NUMPY_FULL,
    ROOTLESS,
    USAGE,
    WORKS,
    Case,
    Cmd,
    Ctx,
    api_test,
    b,
    built,
    capped,
    cli_test,
    failing,
    lines,
    lock,
    manifest,
    other_shape_options,
    shard,
    small,
    truncate,
)
from helpers import SETTINGS

from encoder.mix import LayerMix
from indexer import (
    CorpusError,
    CorruptIndexError,
    Index,
    IndexFormatError,
    IndexMismatchError,
    QueryError,
    add_documents,
    build_index,
    delete_documents,
    storage,
)

CHAINED_SUBSTITUTIONS = "Text |a3|.\n\n.. |a0| replace:: x\n" + "".join(
    f".. |a{i}| replace:: {' '.join([f'|a{i - 1}|'] * 60)}\n" for i in range(1, 4)
)
"""Under 1 KB of reStructuredText whose substitutions name the one before 60 times, three deep: docutils expands
it to about 870,000 characters, which took it 18 s (docutils 0.23, load average 5; 70 times took 32 s)."""


def parquet(c: Ctx, columns: dict) -> Path:
    """A Parquet file of ``columns`` (their types as pyarrow infers them) in tmp/in/a.parquet."""
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer)
    return c.file("a.parquet", buffer.getvalue())


API = [
    Case("build from a missing path", lambda c: c.build(c.tmp / "missing.txt"), CorpusError, "does not exist"),
    Case(
        "index texts with the model None",
        lambda c: Index.from_texts(["The river bank."], model=None),
        TypeError,
        "a model is given by its name .*, not None",
    ),
    Case(
        "build from an empty folder",
        lambda c: c.build(c.tmp / "in"),
        CorpusError,
        "holds no corpus files",
        setup=lambda c: (c.tmp / "in").mkdir(),
    ),
    Case(
        "build from a folder of unsupported files",
        lambda c: c.build(c.tmp / "in"),
        CorpusError,
        "holds no corpus files",
        setup=lambda c: c.file("report.docx", BINARY),
    ),
    Case(
        "build from a .tsv file",
        lambda c: c.build(c.file("a.tsv", "id\ttext\n1\tOne.\n")),
        CorpusError,
        "unsupported file type",
    ),
    Case(
        "build from a binary .txt",
        lambda c: c.build([c.few(), c.file("blob.txt", BINARY)]),
        WORKS,
        "blob.txt: .* undecodable",
        lambda i: i.stats()["counts"]["replaced_characters"] > 0,
    ),
    Case(
        "build from a Latin-1 .txt",
        lambda c: c.build([c.few(), c.file("latin.txt", LATIN1)]),
        WORKS,
        "latin.txt: 2 undecodable",
        built(5, replaced_characters=2),
    ),
    Case(
        "build from a binary .parquet",
        lambda c: c.build(c.file("blob.parquet", BINARY)),
        CorpusError,
        "blob.parquet cannot be read as parquet",
    ),
    Case(
        "build from a .gz that is not gzip",
        lambda c: c.build(c.file("a.txt.gz", "plain")),
        CorpusError,
        "a.txt.gz cannot be read",
    ),
    Case(
        "build from a cut-off .gz",
        lambda c: c.build(c.file("a.jsonl.gz", gzip.compress(b'{"text": "One."}\n' * 50)[:-30])),
        CorpusError,
        "a.jsonl.gz cannot be read",
    ),
    Case(
        "build from a JSONL with a broken line",
        lambda c: c.build(c.jsonl({"text": "One."}, '{"text": "Tw')),
        CorpusError,
        "line 2: not valid JSON",
    ),
    Case(
        "build from a JSONL whose record gives a field twice",  # not its last text, unsaid
        lambda c: c.build(c.jsonl({"text": "One."}, '{"id": "a", "text": "Two.", "text": "Three."}')),
        CorpusError,
        "line 2: the key 'text' is given 2 times; give it once",
    ),
    Case(
        "build from a JSONL without the text field",
        lambda c: c.build(c.jsonl({"body": "One."})),
        CorpusError,
        "has no 'text' field .*--text-column",
    ),
    Case(
        "build from a JSONL with duplicate ids",
        lambda c: c.build(c.jsonl({"id": "a", "text": "One."}, {"id": "a", "text": "Two."})),
        CorpusError,
        "'a' appears more than once",
    ),
    Case(
        "build from a JSONL of numbers and strings as one id",
        lambda c: c.build(c.jsonl({"id": 7, "text": "One."}, {"id": "7", "text": "Two."})),
        CorpusError,
        "'7' appears more than once",
    ),
    Case("build from a JSONL of lists", lambda c: c.build(c.jsonl("[1, 2]")), CorpusError, "expected a JSON object"),
    Case(
        "build with a missing --id-column",
        lambda c: c.build(c.jsonl({"text": "One."}), id_column="key"),
        CorpusError,
        "has no 'key' field",
    ),
    Case(
        "build from a JSONL with a BOM",
        lambda c: c.build(
            [c.few(), c.file("bom.jsonl", "\ufeff" + json.dumps({"id": "b", "text": "The bank."}) + "\n")]
        ),
        WORKS,
        check=built(4),
    ),
    Case(
        "build from a CSV without the text column",
        lambda c: c.build(c.file("a.csv", "id,body\n1,One.\n")),
        CorpusError,
        "has no 'text' field",
    ),
    Case(
        "build from a ragged CSV",
        lambda c: c.build(c.file("a.csv", 'id,text\n1,"One."\n2,Two.,extra,more\n')),
        CorpusError,
        "a.csv cannot be read as csv",
    ),
    Case("build from an empty CSV", lambda c: c.build(c.file("a.csv", "")), CorpusError, "a.csv cannot be read as csv"),
    Case("build from a CSV header only", lambda c: c.build(c.file("a.csv", "id,text\n")), CorpusError, "holds no text"),
    Case(
        "build from a CSV with a BOM and quoted newlines",
        lambda c: c.build([c.few(), c.file("b.csv", '\ufeffid,text\nq1,"The river bank.\nThe money bank."\n')]),
        WORKS,
        check=built(4),
    ),
    Case(
        "build from a semicolon CSV",
        lambda c: c.build(c.file("a.csv", "id;text\n1;One.\n")),
        CorpusError,
        "has no 'text' field \\(fields: id;text\\)",
    ),
    Case("build from blank documents", lambda c: c.build(c.file("a.txt", "\n  \n\t\n")), CorpusError, "holds no text"),
    Case(
        "build with a model whose readout.json is damaged",  # refused before the build's folder is written
        lambda c: build_index([c.corpus], c.tmp / "out", model=c.tmp / "in" / "model", progress=False),
        ValueError,
        "model/readout.json does not hold readout settings \\(top must be a whole number .*not -1\\)",
        setup=lambda c: (
            shutil.copytree(c.model, c.tmp / "in" / "model"),
            (c.tmp / "in" / "model" / "readout.json").write_text('{"top": -1}'),
        ),
    ),
    Case(
        "build into a file",
        lambda c: build_index([c.corpus], c.file("out", "mine"), model=c.model, progress=False),
        FileExistsError,
        "in/out",
    ),
    Case(
        "build into a folder under a file",
        lambda c: build_index([c.corpus], c.file("out", "mine") / "index", model=c.model, progress=False),
        NotADirectoryError,
        "in/out",
    ),
    Case(
        "build into a folder of other files",
        lambda c: c.build(c.corpus),
        FileExistsError,
        "not empty and not an index",
        setup=lambda c: c.file("../out/thesis.docx", "mine"),
    ),
    Case(
        "build over an index",
        lambda c: build_index([c.tmp / "in"], c.index, model=c.model, progress=False),
        FileExistsError,
        "--overwrite",
        setup=lambda c: c.jsonl({"text": "One."}),
    ),
    Case(
        "build with an unknown index factory",
        lambda c: c.build(c.corpus, index_factory="Bogus42"),
        ValueError,
        "Bogus42",
    ),
    Case(
        "build with IVF on too few vectors",
        lambda c: c.build(c.few(), index_factory="IVF4096,Flat"),
        ValueError,
        "IVF4096",
    ),
    Case(
        "build with a bad nprobe",
        lambda c: c.build(c.few(), settings=small(search_params="nprobe=abc")),
        ValueError,
        "nprobe=abc",
    ),
    Case(
        "build with an unknown search parameter",
        lambda c: c.build(c.few(), settings=small(search_params="speed=11")),
        ValueError,
        "speed=11",
    ),
    Case("build with 2 layer weights for 3", lambda c: c.build(c.corpus, layers="1,1"), ValueError, "3 layers"),
    Case("build with negative layers", lambda c: c.build(c.corpus, search_layers="-1,0,2"), ValueError, "non-negative"),
    Case(
        "build with an unknown pooling",
        lambda c: c.build(c.corpus, pooling="median"),
        ValueError,
        "pooling must be one of",
    ),
    Case(
        "build with a missing GloVe file",
        lambda c: c.build(c.corpus, glove=c.tmp / "g.txt"),
        FileNotFoundError,
        "g.txt does not exist",
    ),
    Case(
        "build with a GloVe file that is not GloVe",
        lambda c: c.build(c.few(), glove=c.file("g.txt", "hello world\nriver 1 2\n")),
        ValueError,
        "g.txt",
    ),
    Case(
        "build with min_freq 0",
        lambda c: c.build(c.corpus, settings=small(min_freq=0)),
        ValueError,
        "min_freq must be a whole number of at least 1, not 0",
    ),
    Case(
        "build with shard_tokens 0",
        lambda c: c.build(c.corpus, settings=small(shard_tokens=0)),
        ValueError,
        "shard_tokens",
    ),
    Case(
        "build with an unknown reader option",
        lambda c: c.build(c.corpus, text_col="body"),
        TypeError,
        "unknown option: text_col; known: the settings .* and the reader options text_column",
    ),
    Case(
        "build into a locked folder",
        lambda c: c.build(c.corpus),
        IndexFormatError,
        "another process is writing",
        setup=lambda c: ((c.tmp / "out").mkdir(), lock(c.tmp / "out")),
    ),
    Case(
        "build a sentence longer than the cap",  # at a cap of 8 tokens; tests/encoder/test_text.py checks the real one
        lambda c: capped(8, lambda: c.build(c.jsonl({"id": "long", "text": " ".join(["river bank"] * 10)}))),
        WORKS,
        check=lambda i: (
            i.sentences["tokens"].map(len).tolist() == [8, 8, 4]
            and " ".join(i.sentences["text"]) == " ".join(["river bank"] * 10)
        ),
    ),
    Case(
        "add a document id the index has",
        lambda c: add_documents(c.index, [c.jsonl({"id": "river-0", "text": "Again."})], progress=False),
        CorpusError,
        "'river-0'",
    ),
    Case(
        "add duplicate ids",
        lambda c: add_documents(
            c.index, [c.jsonl({"id": "n", "text": "A."}, {"id": "n", "text": "B."})], progress=False
        ),
        CorpusError,
        "'n' appears more than once",
    ),
    Case(
        "add to a corpus folder",
        lambda c: add_documents(c.tmp / "in", [c.jsonl({"text": "A."})], progress=False),
        IndexFormatError,
        "not an index",
    ),
    Case(
        "add with another model",
        lambda c: add_documents(c.index, [c.jsonl({"text": "A bank."})], model=c.other_model, progress=False),
        IndexMismatchError,
    ),
    Case(
        "add to a locked index",
        lambda c: add_documents(c.index, [c.jsonl({"text": "A bank."})], progress=False),
        IndexFormatError,
        "another process is writing",
        setup=lambda c: lock(c.index),
    ),
    Case(
        "add to a damaged index",
        lambda c: add_documents(c.index, [c.jsonl({"text": "A bank."})], progress=False),
        CorruptIndexError,
        "token_layers.npy",
        setup=lambda c: truncate(shard(c, "token_layers.npy")),
    ),
    Case(
        "add a broken JSONL",
        lambda c: add_documents(c.index, [c.jsonl('{"text": ')], progress=False),
        CorpusError,
        "not valid JSON",
    ),
    Case("delete an unknown id", lambda c: delete_documents(c.index, ["no-such-doc"]), QueryError, "no-such-doc"),
    Case("delete nothing", lambda c: delete_documents(c.index, []), QueryError, "no document ids"),
    Case(  # not its characters' ids: "12" would delete the documents "1" and "2"
        "delete one string",
        lambda c: delete_documents(c.index, "river-0"),
        QueryError,
        "not one string \\(\\['river-0'\\] deletes that one\\)",
    ),
    Case("delete an id that is a number", lambda c: delete_documents(c.index, [3]), QueryError, "not 3 \\(type int\\)"),
    Case(
        "delete an id twice",
        lambda c: delete_documents(c.index, ["river-0"]),
        QueryError,
        "river-0",
        setup=lambda c: delete_documents(c.index, ["river-0"]),
    ),
    Case(
        "delete from a locked index",
        lambda c: delete_documents(c.index, ["river-0"]),
        IndexFormatError,
        "another process is writing",
        setup=lambda c: lock(c.index),
    ),
    Case(
        "delete from a broken manifest",
        lambda c: delete_documents(c.index, ["river-0"]),
        CorruptIndexError,
        "manifest.json",
        setup=lambda c: truncate(manifest(c), 30),
    ),
    Case(
        "delete from a missing index",
        lambda c: delete_documents(c.tmp / "nowhere", ["a"]),
        IndexFormatError,
        "does not exist",
    ),
    Case(
        "json text is a list",
        lambda c: c.build(c.jsonl({"id": "a", "text": ["One.", "Two."]})),
        CorpusError,
        "is a list, not text",
    ),
    Case(
        "json text is a dict",
        lambda c: c.build(c.jsonl({"id": "a", "text": {"p": "One."}})),
        CorpusError,
        "is a dict, not text",
    ),
    Case(
        "json title is a bool",
        lambda c: c.build(c.jsonl({"text": "One.", "title": True})),
        CorpusError,
        "'title' field is a bool",
    ),
    Case("build with NaN layer weights", lambda c: c.build(c.corpus, layers="nan,nan,nan"), ValueError, "finite"),
    Case(
        "build with overflowing layer weights",
        lambda c: c.build(c.corpus, search_layers="1e308,1e308,1e308"),
        ValueError,
        "finite",
    ),
    Case("infinite layer weight", lambda c: LayerMix.parse("1,inf,0", 3), ValueError, "finite"),
    Case(
        "build with overwrite over a user file inside a shard",
        lambda c: build_index([c.corpus], c.index, model=c.model, settings=SETTINGS, progress=False, overwrite=True),
        FileExistsError,
        "shards/00001/thesis.docx",
        setup=lambda c: shard(c, "thesis.docx", 1).write_text("mine"),
    ),
    Case(
        "build with nprobe 0",
        lambda c: c.build(c.few(), settings=small(search_params="nprobe=0")),
        ValueError,
        "nprobe must be a whole number from 1 to 1,048,576, not '0'",
    ),
    Case(
        "write index vectors holding NaN",
        lambda c: storage.write_npy(c.tmp / "v.npy", np.array([[1.0, np.nan]])),
        ValueError,
        "v.npy holds NaN or infinite values",
    ),
    pytest.param(
        Case(
            "build into a read-only folder",
            lambda c: build_index([c.corpus], c.tmp / "ro" / "out", model=c.model, progress=False),
            PermissionError,
            "Permission denied",
            setup=lambda c: ((c.tmp / "ro").mkdir(), (c.tmp / "ro").chmod(0o555)),
        ),
        marks=ROOTLESS,
    ),
    pytest.param(
        Case(
            "build from a folder with an unreadable subfolder",
            lambda c: c.build(c.tmp / "in"),
            CorpusError,
            "secret cannot be read",
            setup=lambda c: (
                c.jsonl({"text": "One."}),
                (c.tmp / "in" / "secret").mkdir(),
                (c.tmp / "in" / "secret").chmod(0),
            ),
        ),
        marks=ROOTLESS,
    ),
    Case(
        "build from a folder holding a link to nothing named like a corpus file",
        lambda c: c.build(c.tmp / "in"),
        CorpusError,
        "gone.txt is a link to .*nowhere, which does not exist; fix the link or remove it",
        setup=lambda c: (c.jsonl({"text": "One."}), (c.tmp / "in" / "gone.txt").symlink_to(c.tmp / "nowhere")),
    ),
    # ---- the lock file is never reached through a symbolic link
    Case(
        "build into a folder whose lock file is a symbolic link",
        lambda c: c.build(c.corpus),
        FileExistsError,
        "out/.lock is a symbolic link, not the lock file",
        setup=lambda c: ((c.tmp / "out").mkdir(), (c.tmp / "out" / ".lock").symlink_to(c.tmp / "elsewhere")),
    ),
    # ---- an index built inside its own corpus folder is not read as documents
    Case(
        "build an index inside its own corpus folder, again",
        lambda c: build_index([c.tmp / "in"], c.tmp / "in" / "index", model=c.model, settings=SETTINGS, progress=False),
        WORKS,
        check=built(3),
        setup=lambda c: (
            c.few(),
            build_index([c.tmp / "in"], c.tmp / "in" / "index", model=c.model, settings=SETTINGS, progress=False),
        ),
    ),
    # ---- malformed data is refused, never indexed as Python reprs or empty vectors
    Case(
        "build from a Parquet text column of lists",
        lambda c: c.build(parquet(c, {"id": ["a"], "text": [["One.", "Two."]]})),
        CorpusError,
        "a.parquet, row 1: the 'text' field is a list, not text",
    ),
    Case(
        "build from a Parquet text column of binary data",
        lambda c: c.build(parquet(c, {"id": ["a"], "text": [b"The bank."]})),
        CorpusError,
        "a.parquet, row 1: the 'text' field is binary data, not text",
    ),
    Case(
        "build from a JSON id that is a fraction",
        lambda c: c.build(c.jsonl({"id": 2.5, "text": "One."})),
        CorpusError,
        "line 1: the 'id' field is a float \\(2.5\\), not an id \\(a string or a whole number\\)",
    ),
    Case(
        "build from a JSON id that is a list",
        lambda c: c.build(c.jsonl({"id": ["a"], "text": "One."})),
        CorpusError,
        "line 1: the 'id' field is a list, not an id",
    ),
    Case(
        "build from a JSON id that is true",
        lambda c: c.build(c.jsonl({"id": True, "text": "One."})),
        CorpusError,
        "line 1: the 'id' field is a bool \\(True\\), not an id",
    ),
    Case(
        "build from documents that hold no words",
        lambda c: c.build(c.jsonl({"text": "?!"}, {"text": "... ;"}, {"text": "🙂 🌊"})),
        CorpusError,
        "the 3 documents hold no words .*nothing to index",
    ),
    # ---- a device is not a corpus file
    Case(
        "build from /dev/zero", lambda c: c.build(Path("/dev/zero")), CorpusError, "/dev/zero is not a file or folder"
    ),
]


CLI = [
    Cmd("build from a missing corpus", lambda c: b(c, corpus=c.tmp / "none.txt"), ERROR, "none.txt does not exist"),
    Cmd(
        "build into a file",
        lambda c: ["indexer", "build", "--corpus", str(c.corpus), "--out", lines(c, "mine"), "--model", str(c.model)],
        ERROR,
        "lines.txt already exists and is not a folder",
    ),
    Cmd("build with a bad factory", lambda c: b(c, "--index-factory", "Bogus42"), ERROR, "Bogus42"),
    Cmd(
        "build with a bad nprobe",
        lambda c: b(c, "--search-params", "nprobe=-3", corpus=c.few()),
        ERROR,
        "nprobe=-3",
        partial=True,
    ),
    Cmd("build with shard tokens 0", lambda c: b(c, "--shard-tokens", "0"), USAGE, "--shard-tokens: must be .*not '0'"),
    Cmd("build with min freq -1", lambda c: b(c, "--min-freq", "-1"), USAGE, "--min-freq: .* at least 1, not '-1'"),
    Cmd(
        "build with glove dim 0",
        lambda c: b(c, "--glove", "train", "--glove-dim", "0"),
        USAGE,
        "--glove-dim: must be a whole number from 1 to 10,000, not '0'",
    ),
    Cmd("build with an unknown pooling", lambda c: b(c, "--pooling", "median"), USAGE, "--pooling: invalid choice"),
    Cmd(
        "build with a missing GloVe file",
        lambda c: b(c, "--glove", str(c.tmp / "g.txt")),
        ERROR,
        "g.txt does not exist",
    ),
    Cmd("build with a missing model", lambda c: [*b(c), "--model", str(c.tmp / "m")], ERROR, "there is no model at"),
    Cmd(
        "build with a truncated model",
        lambda c: [*b(c), "--model", str(c.model_copy)],
        ERROR,
        "model.safetensors",
        setup=lambda c: truncate(c.model_copy / "model.safetensors", 300),
    ),
    Cmd(
        "build with --weights without options",
        lambda c: [*b(c), "--weights", str(c.published / "weights.hdf5")],
        ERROR,
        "is a folder: with --weights FILE.hdf5, --model names its options.json",
    ),
    Cmd(
        "build with options of another shape",
        lambda c: [*b(c), "--model", str(c.tmp / "published")],
        ERROR,
        "shape|weights",
        setup=other_shape_options,
    ),
    Cmd("build with a bad layer mix", lambda c: b(c, "--layers", "inf,1,1"), ERROR, "finite"),
    Cmd("build a broken JSONL", lambda c: b(c, corpus=c.jsonl({"text": "a"}, "{")), ERROR, "line 2: not valid JSON"),
    Cmd("build a CSV without text", lambda c: b(c, corpus=c.file("a.csv", "id,body\n1,x\n")), ERROR, "--text-column"),
    Cmd(
        "build a .rst file of chained substitutions (each level 60 times the last)",
        lambda c: b(c, corpus=c.file("chain.rst", CHAINED_SUBSTITUTIONS)),
        ERROR,
        "chain.rst cannot be read as rst: its substitutions would add [0-9,]+ characters; at most",
    ),
    Cmd(
        "build a .rst file of lists nested 200 deep",
        lambda c: b(c, corpus=c.file("deep.rst", "".join("   " * i + f"- level {i}\n\n" for i in range(200)))),
        ERROR,
        "deep.rst cannot be read as rst: its markup nests deeper than can be followed",
    ),
    Cmd(
        "build a .md file of lists nested 200 deep, text after them",
        lambda c: b(c, corpus=c.file("deep.md", "".join("  " * i + f"- level {i}\n" for i in range(200)) + "\nEnd.")),
        ERROR,
        "deep.md cannot be read as md: its lists and quotes are nested too deeply \\(100 levels\\): text would be lost",
    ),
    Cmd(
        "build a duplicate id",
        lambda c: b(c, corpus=c.jsonl({"id": 1, "text": "a"}, {"id": 1, "text": "b"})),
        ERROR,
        "'1' appears more than once",
    ),
    Cmd(
        "build --out an index of other inputs",
        lambda c: [*b(c, corpus=c.jsonl({"text": "The bank."})), "--out", str(c.index)],
        ERROR,
        "--overwrite",
    ),
    Cmd(
        "build with published weights and a binary file",
        lambda c: [
            *b(
                c,
                "--glove",
                "train",
                "--glove-min-count",
                "1",
                corpus=c.file("blob.txt", BINARY + b"\nThe river bank.\n"),
            ),
            "--model",
            str(c.published / "options.json"),
            "--weights",
            str(c.published / "weights.hdf5"),
        ],
        WORKS,
        "warning: .*blob.txt: .* undecodable",
    ),
    Cmd(
        "add a duplicate id",
        lambda c: [
            "indexer",
            "add",
            "--index",
            str(c.index),
            "--corpus",
            str(c.jsonl({"id": "other-1", "text": "x"})),
            "--quiet",
        ],
        ERROR,
        "'other-1'",
    ),
    Cmd(
        "add to a missing index",
        lambda c: ["indexer", "add", "--index", str(c.tmp / "no"), "--corpus", str(c.corpus)],
        ERROR,
        "does not exist",
    ),
    Cmd(
        "add to a locked index",
        lambda c: ["indexer", "add", "--index", str(c.index), "--corpus", str(c.jsonl({"text": "A bank."})), "--quiet"],
        ERROR,
        "another process is writing",
        setup=lambda c: lock(c.index),
    ),
    Cmd(
        "delete an unknown id",
        lambda c: ["indexer", "delete", "--index", str(c.index), "--doc-id", "ghost"],
        ERROR,
        "ghost",
    ),
    Cmd(
        "delete from a file",
        lambda c: ["indexer", "delete", "--index", lines(c, "x"), "--doc-id", "a"],
        ERROR,
        "not an index",
    ),
    Cmd(
        "delete without ids",
        lambda c: ["indexer", "delete", "--index", str(c.index), "--doc-id"],
        USAGE,
        "--doc-id: expected at least one",
    ),
    Cmd("indexer without a command", lambda c: ["indexer"], USAGE, "required: COMMAND"),
    Cmd(
        "build --overwrite over a user file inside a shard",
        lambda c: [*b(c), "--out", str(c.index), "--overwrite"],
        ERROR,
        "shards/00000/thesis.docx.*never deletes files it did not write",
        setup=lambda c: shard(c, "thesis.docx").write_text("mine"),
    ),
    Cmd(
        "build --overwrite into a folder whose manifest.json is the user's, not JSON",
        lambda c: [*b(c, corpus=c.few()), "--overwrite"],
        ERROR,
        "out/manifest.json cannot be read \\(.*no build wrote, or a damaged index; build into another folder, or move it away$",
        setup=lambda c: (
            (c.tmp / "out").mkdir(),
            (c.tmp / "out" / "manifest.json").write_text("my papers"),
            c._give(c.tmp / "out"),
        ),
    ),
    Cmd(
        "build with nprobe 0",
        lambda c: b(c, "--search-params", "nprobe=0", corpus=c.few()),
        ERROR,
        "nprobe must be a whole number from 1 to 1,048,576, not '0'",
    ),
    Cmd(
        "build with efSearch nan",
        lambda c: b(c, "--search-params", "efSearch=nan", corpus=c.few()),
        ERROR,
        "efSearch must be .*not 'nan'",
    ),
    Cmd(
        "build with a GloVe file holding NaN",
        lambda c: b(c, "--glove", str(c.file("g.txt", "river 0.1 0.2\nbank nan 0.3\n"))),
        ERROR,
        "g.txt, line 2 holds NaN or infinite numbers",
    ),
    Cmd(
        "build when FAISS finds the disk full",
        lambda c: b(c, corpus=c.few()),
        ERROR,
        "out/\\w+\\.g1\\.faiss: disk full \\(no space left on device\\)",
        partial=True,
        during=failing("faiss.write_index", FAISS_FULL),
    ),
    Cmd(
        "add when numpy finds the disk full",
        lambda c: [
            "indexer",
            "add",
            "--index",
            str(c.index),
            "--corpus",
            str(c.jsonl({"text": "A new bank."})),
            "--quiet",
        ],
        ERROR,
        "index/shards/\\d{5}: disk full",
        partial=True,
        during=failing("numpy.save", NUMPY_FULL, no_space=True),
        after=lambda c: len(Index.open(c.index).search_sentences("river bank", k=1)) == 1,  # as it was, and it works
    ),
    # ---- a search parameter that would allocate terabytes
    Cmd(
        "build with nprobe 10^12",
        lambda c: b(c, "--search-params", "nprobe=1000000000000", corpus=c.few()),
        ERROR,
        "nprobe must be a whole number from 1 to 1,048,576, not '1000000000000'",
    ),
]


test_api = api_test(API)


test_cli = cli_test(CLI)
