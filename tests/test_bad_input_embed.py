"""Bad input and faults: `python -m encoder embed` and the models it loads (``Elmo.load``, ``Elmo.embed``, ``save_model``).

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

import numpy as np
from bad_input import (
    CONTROL,
    EMOJI,
    ERROR,
    LATIN1,
    OS_FULL,
    USAGE,
    WORKS,
    Case,
    Cmd,
    api_test,
    cli_test,
    diverged_model,
    e,
    edit_json,
    embeds,
    failing,
    lines,
    other_shape_options,
    own_hdf5,
    poisoned,
    truncate,
    without,
)

import encoder.__main__ as encoder_cli
from encoder import Elmo
from encoder.weights import save_model

API = [
    Case("load a missing model", lambda c: Elmo.load(c.tmp / "nope"), FileNotFoundError, "there is no model at"),
    Case("load the model None", lambda c: Elmo.load(None), TypeError, "a model is given by its name .*, not None"),
    Case("load the model 123", lambda c: Elmo.load(123), TypeError, "a model is given by its name .*, not 123"),
    Case("load a corpus folder as a model", lambda c: Elmo.load(c.corpus), FileNotFoundError, "holds neither"),
    Case(
        "load options without weights",
        lambda c: Elmo.load(c.published / "options.json"),
        FileNotFoundError,
        "--weights",
    ),
    Case(
        "load a truncated model.safetensors",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "model.safetensors is not a readable safetensors file; restore the model|model.safetensors",
        setup=lambda c: truncate(c.model_copy / "model.safetensors", 200),
    ),
    Case(
        "load a config.json with a wrong size",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "shape",
        setup=lambda c: edit_json(c.model_copy / "config.json", lambda m: {**m, "lstm_dim": 32}),
    ),
    Case(
        "load a config.json with an unknown field",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "config.json",
        setup=lambda c: edit_json(c.model_copy / "config.json", lambda m: {**m, "n_layers": "two"}),
    ),
    Case(
        "load a config.json that is not JSON",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "config.json",
        setup=lambda c: (c.model_copy / "config.json").write_text("{model"),
    ),
    Case(
        "load options.json of another shape",
        lambda c: Elmo.load(c.tmp / "published"),
        ValueError,
        "shape|weights",
        setup=other_shape_options,
    ),
    Case("embed nothing", lambda c: c.opened.elmo.embed([]), WORKS, check=lambda v: v == []),
    Case("embed None", lambda c: c.opened.elmo.embed(None), TypeError, "a list of strings .*, not NoneType"),
    Case("encode a number", lambda c: c.opened.elmo.encode(5), TypeError, "a list of strings .*, not int"),
    Case("encode bytes", lambda c: c.opened.elmo.encode(b"the bank"), TypeError, "a list of strings .*, not bytes"),
    Case(
        "encode a list holding None", lambda c: c.opened.elmo.encode(["a b", None]), TypeError, "text 1 is a NoneType"
    ),
    Case("embed tokens that are numbers", lambda c: c.opened.elmo.embed([[1, 2]]), TypeError, "text 0 is a list, not"),
    Case(
        "encode tokens and a string",
        lambda c: c.opened.elmo.encode([("the", "bank"), "the bank"]),
        WORKS,
        check=lambda v: v.shape == (2, 16) and np.allclose(v[0], v[1], atol=1e-5),
    ),
    Case(
        "embed an empty sentence", lambda c: c.opened.elmo.embed([""]), WORKS, check=lambda v: v[0].shape == (3, 0, 16)
    ),
    Case(
        "embed emoji and control", lambda c: c.opened.elmo.embed([EMOJI, CONTROL]), WORKS, check=lambda v: len(v) == 2
    ),
    Case(
        "embed a 10,000-letter token",
        lambda c: c.opened.elmo.embed([["x" * 10_000]]),
        WORKS,
        check=lambda v: v[0].shape == (3, 1, 16) and np.isfinite(v[0]).all(),
    ),
    Case(
        "embed batch size 0",
        lambda c: c.opened.elmo.embed(["a b"], batch_size=0),
        ValueError,
        "batch_size must be a whole number from 1",
    ),
    Case(
        "embed with a token budget that is no number",
        lambda c: c.opened.elmo.embed(["a b"], max_tokens="x"),
        ValueError,
        "max_tokens must be a whole number of at least 1, not 'x'",
    ),
    Case("embed with a token budget of 0", lambda c: c.opened.elmo.embed(["a b"], max_tokens=0), ValueError, "not 0"),
    Case("embed a mix that is one number", lambda c: c.opened.elmo.embed(["a"], mix=5), ValueError, "got 5"),
    Case("encode with no mix", lambda c: c.opened.elmo.encode("a b", mix=None), ValueError, "got None"),
    Case("embed a NaN mix", lambda c: c.opened.elmo.embed(["a b"], mix="nan,1,1"), ValueError, "finite"),
    Case("embed a mix of 4 for 3", lambda c: c.opened.elmo.embed(["a"], mix=[1, 1, 1, 1]), ValueError, "3 layers"),
    Case(
        "load a model holding NaN",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "model.safetensors holds NaN or infinite values",
        setup=lambda c: poisoned(c.model_copy / "model.safetensors"),
    ),
    Case(
        "save a model holding NaN",
        lambda c: save_model(diverged_model(), c.tmp / "m"),
        ValueError,
        "hold NaN or infinite values .* nothing was written",
    ),
    Case(
        "embed a batch of 1e9",
        lambda c: c.opened.elmo.embed(["a"], batch_size=10**9),
        ValueError,
        "batch_size must be a whole number from 1 to 65,536",
    ),
    Case("load a model on an unknown device", lambda c: Elmo.load(c.model, device="tpu"), ValueError, "unknown device"),
    # ---- a model's sizes and records of the wrong shape are named, never a traceback
    Case(
        "load options.json without its lstm block",
        lambda c: Elmo.load(c.tmp / "published"),
        ValueError,
        "options.json is not a published options.json of a biLM we can build: it has no 'lstm' entry",
        setup=lambda c: (
            other_shape_options(c),
            edit_json(c.tmp / "published" / "options.json", lambda o: without(o, "lstm")),
        ),
    ),
    Case(
        "load a config.json with a negative projection_dim",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "config.json has a field of the wrong type or value: projection_dim must be a whole number from 1 to 65,536, not -5",
        setup=lambda c: edit_json(c.model_copy / "config.json", lambda m: {**m, "projection_dim": -5}),
    ),
    Case(
        "load a config.json of sizes beyond this machine's memory",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "config.json has a field .*: a biLM of [\\d,]+ parameters needs [\\d,.]+ GiB of memory, more than this machine has",
        setup=lambda c: edit_json(
            c.model_copy / "config.json", lambda m: {**m, "lstm_dim": 60000, "projection_dim": 60000}
        ),
    ),
    Case(
        "load a config.json whose format_version is text",
        lambda c: Elmo.load(c.model_copy),
        ValueError,
        "config.json has format_version '1', not a whole number",
        setup=lambda c: edit_json(c.model_copy / "config.json", lambda m: {**m, "format_version": "1"}),
    ),
]


CLI = [
    Cmd(
        "embed a missing input",
        lambda c: e(
            c, "embed", "--model", str(c.model), "--input", str(c.tmp / "x.txt"), "--output", str(c.tmp / "o.hdf5")
        ),
        ERROR,
        "x.txt does not exist",
    ),
    Cmd(
        "embed a folder",
        lambda c: e(c, "embed", "--model", str(c.model), "--input", str(c.corpus), "--output", str(c.tmp / "o.hdf5")),
        ERROR,
        "corpus is a folder",
    ),
    Cmd(
        "embed a non-UTF-8 line",
        lambda c: e(
            c, "embed", "--model", str(c.model), "--input", lines(c, LATIN1), "--output", str(c.tmp / "o.hdf5")
        ),
        ERROR,
        "line 1 is not valid UTF-8",
    ),
    Cmd(
        "embed batch size 0",
        lambda c: e(
            c,
            "embed",
            "--model",
            str(c.model),
            "--input",
            lines(c, "a b\n"),
            "--output",
            str(c.tmp / "o.hdf5"),
            "--batch-size",
            "0",
        ),
        USAGE,
        "--batch-size: must be a whole number from 1 to 65,536, not '0'",
    ),
    Cmd(
        "embed with a missing model",
        lambda c: e(
            c, "embed", "--model", str(c.tmp / "m"), "--input", lines(c, "a\n"), "--output", str(c.tmp / "o.hdf5")
        ),
        ERROR,
        "there is no model",
    ),
    Cmd(
        "embed into a missing folder",
        lambda c: e(
            c, "embed", "--model", str(c.model), "--input", lines(c, "a\n"), "--output", str(c.tmp / "no" / "o.hdf5")
        ),
        WORKS,
        "wrote 1 sentence ",
    ),
    Cmd(
        "embed into a folder's path (a trailing slash)",
        lambda c: embeds(c, "--output", str(c.tmp / "new") + "/"),
        USAGE,
        "--output: '.*new/' ends in a slash, so names a folder; give the path of a file",
    ),
    Cmd(
        "embed onto a folder",
        lambda c: e(c, "embed", "--model", str(c.model), "--input", lines(c, "a\n"), "--output", str(c.tmp)),
        ERROR,
        "is a folder",
    ),
    Cmd(
        "embed an unknown precision",
        lambda c: e(c, "embed", "--input", "x", "--output", "y", "--precision", "fp8"),
        USAGE,
        "--precision: invalid choice",
    ),
    Cmd(
        "embed empty, emoji and control lines",
        lambda c: e(
            c,
            "embed",
            "--model",
            str(c.model),
            "--input",
            lines(c, f"\n{EMOJI}\n{CONTROL}\n"),
            "--output",
            str(c.tmp / "out.hdf5"),
            "--quiet",
        ),
        WORKS,
        "wrote 3 sentences",
    ),
    Cmd(
        "embed --output over the user's file",
        lambda c: embeds(c, "--output", str(c.file("o.hdf5", "mine"))),
        ERROR,
        "--output .*o.hdf5 already exists and is not an hdf5 file of embeddings this command wrote",
    ),
    Cmd(
        "embed --output over an index's manifest, --overwrite included",
        lambda c: embeds(c, "--output", str(c.index / "manifest.json"), "--overwrite"),
        ERROR,
        "--output .*index/manifest.json is inside .*index, a folder a command writes whole .*; write an hdf5 file of "
        "embeddings elsewhere",
    ),
    Cmd(
        "embed --output as a new file in an index's shard",
        lambda c: embeds(c, "--output", str(c.index / "shards" / "00000" / "mine.hdf5")),
        ERROR,
        "mine.hdf5 is inside .*index, a folder a command writes whole",
    ),
    Cmd(
        "embed --output over its own --input, --overwrite included",
        lambda c: embeds(c, "--output", lines(c, "a b\n"), "--overwrite"),  # embeds' --input is that file
        ERROR,
        "--output .*lines.txt is the input .*lines.txt; write an hdf5 file of embeddings elsewhere",
    ),  # fmt: skip
    Cmd(
        "embed --output over an hdf5 file of something else",
        lambda c: embeds(c, "--output", str(own_hdf5(c, ("weights",), kind=None))),
        ERROR,
        "o.hdf5 already exists and is not an hdf5 file of embeddings this command wrote",
    ),
    Cmd(
        "embed with a model holding NaN",
        lambda c: e(
            c, "embed", "--model", str(c.model_copy), "--input", lines(c, "a b\n"), "--output", str(c.tmp / "o")
        ),
        ERROR,
        "model.safetensors holds NaN or infinite values .*damaged",
        setup=lambda c: poisoned(c.model_copy / "model.safetensors"),
    ),
    Cmd("embed a huge batch", lambda c: embeds(c, "--batch-size", "1e9", "--output", "o"), USAGE, "65,536, not '1e9'"),
    Cmd("embed on an unknown device", lambda c: embeds(c, "--device", "tpu", "--output", "o"), ERROR, "unknown device"),
    Cmd(
        "embed with weights that are not hdf5",
        lambda c: embeds(c, "--model", str(c.published / "options.json"), "--weights", lines(c, "x"), "--output", "o"),
        ERROR,
        "lines.txt is not a readable hdf5 file",
    ),
    Cmd(
        "embed with published weights cut short",
        lambda c: embeds(
            c,
            *["--model", str(c.published / "options.json"), "--output", "o", "--weights"],
            str(c.file("w.hdf5", (c.published / "weights.hdf5").read_bytes()[:5000])),
        ),
        ERROR,
        r"w.hdf5 is cut short: it has 5,000 of the [\d,]+ bytes its header says it has .*copy or download it again",
    ),
    Cmd(
        "embed when h5py finds the disk full",
        lambda c: embeds(c, "--output", str(own_hdf5(c))),
        ERROR,
        "o.hdf5: disk full",
        during=failing("h5py.Group.create_dataset", OS_FULL),
    ),
    # ---- a one-file output replaces only a file it wrote (a record it checks)
    Cmd(
        "embed --output over an hdf5 file in AllenNLP's layout written by another tool",
        lambda c: embeds(c, "--output", str(own_hdf5(c, kind=None))),
        ERROR,
        "o.hdf5 already exists and is not an hdf5 file of embeddings this command wrote .*--overwrite",
    ),
    Cmd(
        "embed --output over the file it wrote before",
        lambda c: embeds(c, "--output", str(c.tmp / "out" / "e.hdf5")),
        WORKS,
        "wrote 1 sentence ",
        setup=lambda c: encoder_cli.main(embeds(c, "--output", str(c.tmp / "out" / "e.hdf5"))[1:]),
        own="out",
    ),
    # ---- a model's sizes of the wrong shape are named, never a traceback
    Cmd(
        "embed with a model whose config.json has a negative size",
        lambda c: embeds(c, "--model", str(c.model_copy), "--output", str(c.tmp / "o.hdf5")),
        ERROR,
        "config.json has a field of the wrong type or value: projection_dim must be .*not -5",
        setup=lambda c: edit_json(c.model_copy / "config.json", lambda m: {**m, "projection_dim": -5}),
    ),
]


test_api = api_test(API)


test_cli = cli_test(CLI)
