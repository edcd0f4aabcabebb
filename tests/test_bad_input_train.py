"""Bad input and faults: `python -m encoder train` and `perplexity` (``train``, ``LMHead``).

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

import lzma
import time

import numpy as np
import pytest
from bad_input import (
    ACTING,
    ERROR,
    FEW,
    HOSTILE_NAME,
    LATIN1,
    SAFETENSORS_FULL,
    USAGE,
    WORKS,
    Case,
    Cmd,
    api_test,
    cli_test,
    e,
    failing,
    forged_prepared,
    killed_prepare,
    lines,
    lock,
    prepared_folder,
    run_copy,
    trained_run,
    trains,
    truncate,
)

from encoder.corpus import PREPARED_FORMAT, TokenizedCorpus
from encoder.lm_head import LMHead
from encoder.prepare import prepare
from encoder.train import TrainConfig, train

API = [
    Case(
        "train with a NaN clip",
        lambda c: train(TrainConfig(corpus=[str(c.corpus)], out=str(c.tmp / "r"), clip=float("nan"))),
        ValueError,
        "--clip must be a number above 0, not nan",
    ),
    Case(
        "train with dropout 1.5",
        lambda c: train(TrainConfig(corpus=[str(c.corpus)], out=str(c.tmp / "r"), dropout=1.5)),
        ValueError,
        "--dropout must be a number of at least 0 and below 1, not 1.5",
    ),
    Case(
        "load a truncated LM head",
        lambda c: LMHead.load(run_copy(c) / "head.safetensors"),
        ValueError,
        "head.safetensors is not a readable safetensors file",
        setup=lambda c: truncate(run_copy(c) / "head.safetensors", 50),
    ),
]


CLI = [
    Cmd(
        "train zero tokens",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "run"), "--max-tokens", "0"),
        USAGE,
        "--max-tokens: must be a whole number of at least 1, not '0'",
    ),
    Cmd(
        "train batch size 0",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "run"), "--batch-size", "0"),
        USAGE,
        "--batch-size: must be a whole number from 1 to 65,536, not '0'",
    ),
    Cmd(
        "train an unknown size",
        lambda c: e(c, "train", "--corpus", "x", "--out", "y", "--size", "huge"),
        USAGE,
        "--size: invalid choice",
    ),
    Cmd(
        "train from a missing corpus",
        lambda c: e(
            c,
            "train",
            "--corpus",
            str(c.tmp / "x.txt"),
            "--out",
            str(c.tmp / "run"),
            "--size",
            "tiny",
            "--max-tokens",
            "100",
        ),
        ERROR,
        "x.txt",
    ),
    Cmd(
        "train into a model folder",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.model), "--size", "tiny"),
        ERROR,
        "--resume|--overwrite",
    ),
    Cmd(
        "train from scratch with a frozen char CNN",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "r"), "--freeze-char-cnn"),
        ERROR,
        "--freeze-char-cnn keeps a trained char CNN as it is: give the model to fine-tune with --init-from",
    ),
    Cmd(
        "train resume and overwrite",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "r"), "--resume", "--overwrite"),
        ERROR,
        "give one of them",
    ),
    Cmd(
        "train with a config that is not JSON",
        lambda c: e(c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "r"), "--config", lines(c, "{")),
        ERROR,
        "lines.txt is not valid JSON",
    ),
    Cmd(
        "train with a config whose key is misspelt",
        lambda c: e(
            c, "train", "--corpus", str(c.corpus), "--out", str(c.tmp / "r"), "--config", lines(c, '{"lstm_dims": 8}')
        ),
        ERROR,
        "lines.txt: 'lstm_dims' is not a field of the model's shape \\(char_embed_dim, ",
    ),
    Cmd(
        "train with a config of another layout's keys",
        lambda c: e(
            c,
            "train",
            "--corpus",
            str(c.corpus),
            "--out",
            str(c.tmp / "r"),
            "--config",
            lines(c, '{"lstm": {"dim": 8}, "language": "ko"}'),
        ),
        ERROR,
        "lines.txt: 'language', 'lstm' are not a field of the model's shape .*; the language and vocabulary are "
        "train's own options",
    ),
    Cmd(
        "perplexity of text in another language than the model's",
        lambda c: e(c, "perplexity", "--model", "default", "--corpus", lines(c, "우리는 강가에 앉아 배를 먹었다.\n")),
        WORKS,
        "warning: \\d+% of the tokens are not in the model's vocabulary and count as <UNK>, which is easy to predict",
    ),
    Cmd(
        "perplexity of a file of Latin-1 bytes",
        lambda c: e(c, "perplexity", "--model", "default", "--corpus", lines(c, LATIN1)),
        WORKS,
        "warning: .*lines.txt: 2 undecodable byte sequences were replaced by U\\+FFFD",
    ),
    Cmd(
        "perplexity of a missing corpus",
        lambda c: e(c, "perplexity", "--model", str(c.model), "--corpus", str(c.tmp / "x.txt")),
        ERROR,
        "x.txt does not exist",
    ),
    Cmd(
        "perplexity of a missing model",
        lambda c: e(c, "perplexity", "--model", str(c.tmp / "m"), "--corpus", lines(c, "a b\n")),
        ERROR,
        "there is no model",
    ),
    Cmd(
        "perplexity without a head",
        lambda c: e(c, "perplexity", "--model", str(c.model), "--corpus", lines(c, "a b\n")),
        ERROR,
        "head.safetensors",
    ),
    Cmd(
        "perplexity of published weights",
        lambda c: e(c, "perplexity", "--model", str(c.published), "--corpus", lines(c, "a b\n")),
        ERROR,
        "published AllenNLP model",
    ),
    Cmd(
        "train on a damaged prepared file",
        lambda c: trains(c, "--corpus", str(c.file("x.000.tokens.xz", b"not xz"))),
        ERROR,
        "x.000.tokens.xz is not a prepared corpus file",
    ),
    Cmd(
        "train a Korean model on English prepared files",
        lambda c: trains(c, "--corpus", str(c.tmp / "in" / "p"), "--language", "ko"),
        ERROR,
        "prepared with the 'en' text rules, but this model's are 'ko'",
        setup=lambda c: (
            prepare([c.file("few.txt", "\n".join(FEW) + "\n")], c.tmp / "in" / "p", "en", 0, progress=False)
            and c._give(c.tmp / "in" / "p")
        ),
    ),
    Cmd(
        "train --overwrite over a model",
        lambda c: trains(c, "--overwrite", out="model"),
        ERROR,
        "holds a model or files of its own, not a training run",
        setup=lambda c: c.model_copy,
    ),
    Cmd(
        "train --overwrite over the user's files named as a run's",
        lambda c: trains(c, "--overwrite", out="in"),
        ERROR,
        "holds a model or files of its own, not a training run",
        setup=lambda c: (c.file("run.json", '{"mine": 1}'), c.file("log.jsonl", "log"), c.file("vocab.txt", "mine")),
    ),
    Cmd(
        "train --overwrite over a run holding the user's file",
        lambda c: trains(c, "--overwrite", out="in"),
        ERROR,
        "in/checkpoints holds files this command did not write \\(step-00000001/notes.txt\\)",
        setup=lambda c: (
            c.file("run.json", '{"start": "fresh"}'),
            c.file("checkpoints/step-00000001/notes.txt", "mine"),
        ),
    ),
    Cmd(
        "train with a NaN clip", lambda c: trains(c, "--clip", "nan"), USAGE, "--clip: .*not 'nan' \\(NaN and infinity"
    ),
    Cmd(
        "train for -1 minutes", lambda c: trains(c, "--time-budget", "-1"), USAGE, "--time-budget: .*above 0, not '-1'"
    ),
    Cmd("train for NaN minutes", lambda c: trains(c, "--time-budget", "nan"), USAGE, "--time-budget: .*'nan'"),
    Cmd("train with NaN dropout", lambda c: trains(c, "--dropout", "nan"), USAGE, "--dropout: .*'nan'"),
    Cmd("train with dropout 1", lambda c: trains(c, "--dropout", "1"), USAGE, "--dropout: .*below 1, not '1'"),
    Cmd("train with an infinite rate", lambda c: trains(c, "--lr", "inf"), USAGE, "--lr: .*not 'inf'"),
    Cmd(
        "train that diverges",
        lambda c: trains(c, "--lr", "1e30", "--log-every", "1", "--max-tokens", "200", out="run"),
        ERROR,
        "training diverged at step \\d+: the loss .*NaN or infinite, so no checkpoint or model was written",
        partial=True,
        after=lambda c: not (c.tmp / "run" / "model.safetensors").exists(),
    ),
    Cmd("train validating every 0 steps", lambda c: trains(c, "--valid-every", "0"), USAGE, "--valid-every: .*not '0'"),
    Cmd(
        "train with an empty --valid file",
        lambda c: trains(c, "--valid", str(c.file("empty.txt", "\n  \n"))),
        ERROR,
        "empty.txt holds no text to validate on",
        after=lambda c: not (c.tmp / "r").exists(),  # refused before the corpus was read and the run folder made
    ),
    Cmd(
        "train with a CSV --valid file",
        lambda c: trains(c, "--valid", str(c.file("v.csv", "id,text\n1,the river\n"))),
        ERROR,
        "v.csv is a CSV file by its name, not plain text",
    ),
    Cmd(
        "perplexity of a JSON Lines file",
        lambda c: e(c, "perplexity", "--model", "default", "--corpus", str(c.file("v.jsonl", '{"text": "a b"}\n'))),
        ERROR,
        "v.jsonl is a JSON Lines file by its name, not plain text",
    ),
    Cmd("train a huge batch", lambda c: trains(c, "--batch-size", "1000000000"), USAGE, "from 1 to 65,536"),
    Cmd("train on an unknown device", lambda c: trains(c, "--device", "tpu"), ERROR, "unknown device 'tpu'"),
    Cmd(
        "perplexity with a truncated head",
        lambda c: e(c, "perplexity", "--model", str(run_copy(c)), "--corpus", lines(c, "a b\n")),
        ERROR,
        "run/head.safetensors is not a readable safetensors file",
        setup=lambda c: truncate(run_copy(c) / "head.safetensors", 50),
    ),
    Cmd(
        "train from a cut-off .xz",
        lambda c: (
            ["encoder", "train", "--corpus", str(c.file("a.txt.xz", lzma.compress(b"The bank.\n" * 99)[:-20]))]
            + trains(c)[4:]
        ),
        ERROR,
        "a.txt.xz cannot be read .*damaged",
    ),
    Cmd(
        "resume from a damaged checkpoint",
        lambda c: trains(c, "--resume", "--max-tokens", "400", out="run"),
        ERROR,
        "optimizer.safetensors is not a readable safetensors file",
        setup=lambda c: truncate(trained_run(c) / "checkpoints" / "step-00000001" / "optimizer.safetensors", 50),
    ),
    Cmd(
        "train when a checkpoint finds the disk full",
        lambda c: trains(c, "--max-tokens", "60", out="run"),
        ERROR,
        "run/checkpoints/step-\\d+/[\\w.]+: disk full",
        partial=True,
        during=failing("encoder.run_folder.save_file", SAFETENSORS_FULL),
    ),
    # ---- concurrent runs on one folder
    Cmd(
        "train into a folder another run is writing",
        lambda c: trains(c, "--max-tokens", "20", out="r"),
        ERROR,
        "another training run is writing .*/r; wait for it to finish",
        setup=lambda c: ((c.tmp / "r").mkdir(), lock(c.tmp / "r")),
    ),
    Cmd(
        "train --resume into a folder another run is writing, before its first checkpoint",
        lambda c: trains(c, "--max-tokens", "20", "--resume", out="r"),
        ERROR,
        "another training run is writing .*/r; wait for it to finish",
        setup=lambda c: ((c.tmp / "r").mkdir(), lock(c.tmp / "r")),
    ),
    # ---- only what a finished prepare lists is trained on
    Cmd(
        "train on a folder a killed prepare left",
        lambda c: trains(c, "--max-tokens", "20", "--corpus", str(c.tmp / "p")),
        ERROR,
        "p holds an unfinished prepare \\(killed, or still running\\): run the same .*prepare. again",
        setup=killed_prepare,
    ),
    Cmd(
        "train on a folder a prepare killed before its first part left",
        lambda c: trains(c, "--max-tokens", "20", "--corpus", str(c.tmp / "p")),
        ERROR,
        "p holds an unfinished prepare \\(killed, or still running\\)",
        setup=lambda c: [path.unlink() for path in killed_prepare(c).glob("*.tokens.xz")],
    ),
    Cmd(
        "train on a prepared folder holding a stray part",
        lambda c: trains(c, "--max-tokens", "20", "--corpus", str(c.tmp / "p")),
        ERROR,
        "p holds c.000.tokens.xz, which its prepared.json does not list",
        setup=lambda c: (prepared_folder(c) / "c.000.tokens.xz").write_bytes(
            (c.tmp / "p" / "a.000.tokens.xz").read_bytes()
        ),
    ),
    # ---- prepared files and records of the wrong shape
    Cmd(
        "train on a prepared folder whose record is a JSON list",
        lambda c: trains(c, "--max-tokens", "20", "--corpus", str(c.tmp / "p")),
        ERROR,
        "p/prepared.json is not the record of a prepare",
        setup=lambda c: (prepared_folder(c) / "prepared.json").write_text("[]"),
    ),
    Cmd(
        "train on a prepared file whose paragraphs start out of range",
        lambda c: trains(
            c,
            "--max-tokens",
            "20",
            "--corpus",
            str(forged_prepared(c, np.array([0, 2, 3, 1], np.uint32), np.array([0, 99]))),
        ),
        ERROR,
        "forged.000.tokens.xz is damaged: its paragraph starts are out of order, out of range",
    ),
    Cmd(
        "train on a prepared file of negative ids",
        lambda c: trains(
            c, "--max-tokens", "20", "--corpus", str(forged_prepared(c, np.array([0, -5, 1]), np.array([0])))
        ),
        ERROR,
        "forged.000.tokens.xz is damaged: its ids are int64 and paragraph starts int64, not uint32",
    ),
    Cmd(
        "train on a prepared file whose record lacks its rules",
        lambda c: trains(
            c,
            "--max-tokens",
            "20",
            "--corpus",
            str(forged_prepared(c, np.array([0, 2, 3, 1], np.uint32), np.array([0]), {"format": PREPARED_FORMAT})),
        ),
        ERROR,
        "forged.000.tokens.xz is damaged: its record lacks rules, rules_identity",
    ),
    # ---- work silently mixed or taken from the wrong place
    Cmd(
        "train with --out the --corpus folder",
        lambda c: trains(c, "--max-tokens", "20", "--corpus", str(c.tmp / "in"), out="in"),
        ERROR,
        "--out .*in is inside --corpus .*in: the run's own files .* would be read as training text",
        setup=lambda c: c.file("text.txt", "\n".join(FEW * 20) + "\n"),
    ),
    Cmd(
        "resume after the corpus was replaced in place",
        lambda c: trains(c, "--resume", "--max-tokens", "400", out="run", corpus=c.tmp / "in" / "lines.txt"),
        ERROR,
        "--resume: the corpus is not the one the checkpoint in .*run was trained on \\(.*lines.txt has changed\\)",
        setup=lambda c: (trained_run(c), c.file("lines.txt", "Other text.\n" * 99)),
    ),
    Cmd(
        "resume a run from scratch with --freeze-char-cnn (it kept training, frozen half way, saying nothing)",
        lambda c: trains(c, "--resume", "--max-tokens", "400", "--freeze-char-cnn", out="run"),
        ERROR,
        "--resume: the run in .*run was started with other --freeze-char-cnn \\(False, now True\\); resume it with "
        "the same options",
        setup=trained_run,
    ),
    Cmd(
        "resume on another corpus file",
        lambda c: trains(
            c, "--resume", "--max-tokens", "400", "--corpus", str(c.file("b.txt", "The bank.\n" * 99)), out="run"
        ),
        ERROR,
        "--resume: the corpus is not the one .*lines.txt is not in --corpus; .*b.txt is new",
        setup=trained_run,
    ),
    Cmd(
        "perplexity of a model whose vocabulary was cut",
        lambda c: e(c, "perplexity", "--model", str(run_copy(c)), "--corpus", lines(c, "the bank\n")),
        ERROR,
        "run/head.safetensors predicts 5 words, .*run/vocab.txt lists 4: they are not of one model",
        setup=lambda c: (run_copy(c) / "vocab.txt").write_text("<S>\n</S>\n<UNK>\nthe\n"),
    ),
    Cmd(
        "perplexity of a model whose vocabulary lists a word twice",
        lambda c: e(c, "perplexity", "--model", str(run_copy(c)), "--corpus", lines(c, "the bank\n")),
        ERROR,
        "run/vocab.txt is not a vocabulary of ours .*'bank' is listed more than once",
        setup=lambda c: (run_copy(c) / "vocab.txt").write_text("<S>\n</S>\n<UNK>\nbank\nbank\n"),
    ),
    Cmd(
        "perplexity of a model with the head of another vocabulary",
        lambda c: e(c, "perplexity", "--model", str(run_copy(c)), "--corpus", lines(c, "the bank\n")),
        ERROR,
        "run/head.safetensors was trained with another vocabulary than .*run/vocab.txt",
        setup=lambda c: (run_copy(c) / "vocab.txt").write_text("<S>\n</S>\n<UNK>\nriver\nbank\n"),
    ),
    # ---- a damaged record of a run is named, never "Expecting value: line 1 column 1"
    Cmd(
        "resume from a checkpoint whose trainer.json is not JSON",
        lambda c: trains(c, "--resume", "--max-tokens", "400", out="run"),
        ERROR,
        "step-00000001/trainer.json cannot be read as JSON .*it is the checkpoint's record of the run: restore it",
        setup=lambda c: (trained_run(c) / "checkpoints" / "step-00000001" / "trainer.json").write_text("garbage"),
    ),
    Cmd(
        "resume from a checkpoint whose rank0.json is of the wrong shape",
        lambda c: trains(c, "--resume", "--max-tokens", "400", out="run"),
        ERROR,
        "step-00000001/rank0.json is not rank 0's place in the data \\(no pass, window, files\\)",
        setup=lambda c: (trained_run(c) / "checkpoints" / "step-00000001" / "rank0.json").write_text("[]"),
    ),
    Cmd(
        "resume a run whose log.jsonl holds a line that is not a record",
        lambda c: trains(c, "--resume", "--max-tokens", "400", out="run"),
        ERROR,
        "run/log.jsonl, line 2 is not a record of the run's log",
        setup=lambda c: (trained_run(c) / "log.jsonl").write_text('{"step": 1}\ngarbage\n{"step": 1}\n'),
        partial=True,
    ),
    # ---- a device is not a corpus file
    Cmd(
        "train on /dev/zero",
        lambda c: trains(c, "--corpus", "/dev/zero"),
        ERROR,
        "/dev/zero is not a file or folder \\(a device or a pipe\\?\\)",
    ),
    Cmd(
        "train with a --config of sizes beyond this machine's memory",
        lambda c: trains(c, "--config", str(c.file("big.json", '{"lstm_dim": 60000, "projection_dim": 60000}'))),
        ERROR,
        "big.json: a biLM of [\\d,]+ parameters needs [\\d,.]+ GiB of memory, more than this machine has .*check its sizes",
    ),
]


test_api = api_test(API)


test_cli = cli_test(CLI)


def test_perplexity_of_an_empty_text_is_an_error(tmp_path):
    from encoder.lm_head import evaluate

    with pytest.raises(ValueError, match="no words to predict"):
        evaluate(None, None, [])  # refused before the model is touched


def test_training_refuses_zero_tokens_before_reading_the_corpus(tmp_path):

    with pytest.raises(ValueError, match="--max-tokens must be a whole number of at least 1"):
        train(TrainConfig(corpus=[str(tmp_path / "missing.txt")], out=str(tmp_path / "run"), max_tokens=0))
    assert not (tmp_path / "run").exists()


def test_watch_shows_the_name_of_a_file_that_joins(tmp_path, capsys):
    """`train --watch` says which file joined the corpus: its name is shown, never obeyed as terminal codes."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("The bank.\n")
    corpus = TokenizedCorpus.from_paths([folder], workers=0, progress=False)
    corpus.watch([folder], interval=0.05)
    (folder / f"{HOSTILE_NAME}.txt").write_text("The river.\n")
    said, deadline = "", time.monotonic() + 60
    while "added" not in said and time.monotonic() < deadline:
        time.sleep(0.05)
        said += capsys.readouterr().err
    corpus.close()
    assert "added" in said and "x\\x1b]0;pwned\\x07\\x9b31m\\u202etxt.exe.txt" in said and not ACTING.search(said)
