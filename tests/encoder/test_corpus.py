"""Prepared corpora: `encoder prepare` tokenizes once; `train` reads the files with no tokenizer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import encoder.prepare
from encoder.corpus import (
    MANIFEST_FILE,
    PREPARED_SUFFIX,
    TokenizedCorpus,
    held_out_paragraphs,
    read_prepared,
    tokenize_file,
)
from encoder.prepare import prepare
from encoder.text import KoreanText, text_rules
from encoder.train import TrainConfig, train

REPO = Path(__file__).resolve().parents[2]
TINY = dict(size="tiny", batch_size=4, unroll=5, vocab_size=60, log_every=1, seed=3, progress=False, workers=0)

ENGLISH_TEXT = [
    "The bank of the river flooded. Fishermen sat on the bank and waited for the water to fall.",
    "She paid the cheque into her account at the bank. The bank charged a small fee.",
    "The actors rehearsed the play for weeks. On the opening night the theatre was full.",
    "The children play football in the park after school. Their team won the match.",
]
KOREAN_TEXT = [
    "배를 타고 섬에 갔다. 바다는 잔잔했고 배는 천천히 나아갔다.",
    "가을에는 배가 달고 시원하다. 시장에서 배 한 상자를 샀다.",
    "눈이 와서 길이 미끄럽다. 아이들은 눈사람을 만들었다.",
    "눈이 아파서 안과에 갔다. 의사는 눈을 쉬게 하라고 했다.",
]


def write_corpus(folder: Path, lines: list[str], copies: int = 6) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, part in (("a.txt", lines[:2]), ("b.txt", lines[2:])):
        (folder / name).write_text("\n".join(part * copies) + "\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("language,lines", [("en", ENGLISH_TEXT), ("ko", KOREAN_TEXT)])
def test_training_on_prepared_files_equals_training_on_text(tmp_path, language, lines):
    text = write_corpus(tmp_path / "text", lines)
    manifest = prepare([text], tmp_path / "prepared", language, workers=0, progress=False)
    assert [f["file"] for f in manifest["files"]] == [f"a.000{PREPARED_SUFFIX}", f"b.000{PREPARED_SUFFIX}"]
    assert manifest["rules"] == language and manifest["rules_identity"] == text_rules(language).identity

    on_the_fly = TokenizedCorpus.from_paths([text], workers=0, progress=False, language=language)
    prepared = TokenizedCorpus.from_paths([tmp_path / "prepared"], workers=0, progress=False, language=language)
    assert prepared.types == on_the_fly.types
    for a, b in zip(on_the_fly.names(), prepared.names()):
        assert np.array_equal(on_the_fly.files[a], prepared.files[b])  # the same ids, file by file

    runs = {}
    for name, corpus in (("text", text), ("prepared", tmp_path / "prepared")):
        out = tmp_path / f"run-{name}"
        train(TrainConfig(corpus=[str(corpus)], out=str(out), language=language, max_tokens=4 * 5 * 6, **TINY))
        losses = [r["train_loss"] for r in map(json.loads, (out / "log.jsonl").read_text().splitlines())]
        runs[name] = losses, load_file(str(out / "model.safetensors"))
    assert len(runs["text"][0]) == 6 and runs["prepared"][0] == runs["text"][0]  # the same loss at every step
    assert all(torch.equal(runs["text"][1][k], runs["prepared"][1][k]) for k in runs["text"][1])


def test_korean_training_from_prepared_files_needs_no_tokenizer(tmp_path, monkeypatch):
    text = write_corpus(tmp_path / "text", KOREAN_TEXT)
    prepare([text], tmp_path / "prepared", "ko", workers=0, progress=False)
    (tmp_path / "valid.txt").write_text("\n".join(KOREAN_TEXT) + "\n", encoding="utf-8")
    prepare([tmp_path / "valid.txt"], tmp_path / "valid", "ko", workers=0, progress=False)
    expected = held_out_paragraphs(tmp_path / "valid.txt", "ko", 10_000)

    def no_kiwi(*args, **kwargs):
        raise ImportError("Korean text needs kiwipiepy")

    # as on a GPU machine without Kiwi: no identity to compare with, and any tokenizing would fail
    monkeypatch.setattr(KoreanText, "identity", property(no_kiwi))
    monkeypatch.setattr(KoreanText, "split_and_tokenize", no_kiwi)
    valid = tmp_path / "valid" / f"valid.000{PREPARED_SUFFIX}"
    assert held_out_paragraphs(valid, "ko", 10_000) == expected  # the same sentences, read back from the file
    out = tmp_path / "run"
    train(
        TrainConfig(
            corpus=[str(tmp_path / "prepared")], out=str(out), language="ko", max_tokens=4 * 5 * 4, valid=str(valid),
            valid_every=2, **TINY,
        )
    )  # fmt: skip
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if "valid" in r] == [2, 4, 4]
    assert all(np.isfinite(r["valid"]["mean"]) for r in log if "valid" in r)


def test_prepared_files_of_other_rules_are_refused(tmp_path, monkeypatch):
    text = write_corpus(tmp_path / "text", ENGLISH_TEXT)
    prepare([text], tmp_path / "prepared", "en", workers=0, progress=False)
    with pytest.raises(
        ValueError, match=r"a\.000\.tokens\.xz was prepared with the 'en' text rules, but this model's are 'ko'"
    ):
        TokenizedCorpus.from_paths([tmp_path / "prepared"], workers=0, progress=False, language="ko")
    # the same rules by name, another version of the tokenizer here
    monkeypatch.setattr(type(text_rules("en")), "identity", property(lambda self: "en: another tokenizer"))
    with pytest.raises(ValueError, match="this machine's tokenizer is 'en: another tokenizer'"):
        TokenizedCorpus.from_paths([tmp_path / "prepared"], workers=0, progress=False, language="en")


def test_parts_are_cut_between_paragraphs_and_stay_under_the_file_limit(tmp_path, monkeypatch):
    source = tmp_path / "big.txt"
    source.write_text("".join(f"{ENGLISH_TEXT[i % 4]} Item {i} is unique{i}.\n" for i in range(120)))
    whole = tokenize_file(source, "en")
    monkeypatch.setattr(encoder.prepare, "MAX_FILE_BYTES", 1500)  # forces pieces to be cut again after writing
    manifest = prepare([source], tmp_path / "prepared", "en", workers=0, part_tokens=400, progress=False)
    files = [tmp_path / "prepared" / f["file"] for f in manifest["files"]]
    assert len(files) > 3 and all(f.stat().st_size <= 1500 for f in files)
    pieces = [read_prepared(f)[0] for f in files]
    assert all(len(p.types) < len(whole.types) for p in pieces)  # each piece keeps only the types it uses
    assert [s for p in pieces for s in p.sentences()] == list(whole.sentences())  # nothing lost, nothing moved
    assert sum(len(p.ids) for p in pieces) == len(whole.ids) == sum(f["tokens"] for f in manifest["files"])


def test_a_damaged_prepared_file_is_named(tmp_path):
    damaged = tmp_path / f"x.000{PREPARED_SUFFIX}"
    damaged.write_bytes(b"not xz at all")
    with pytest.raises(ValueError, match=r"x\.000\.tokens\.xz is not a prepared corpus file"):
        TokenizedCorpus.from_paths([tmp_path], workers=0, progress=False)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "encoder", *args], capture_output=True, text=True, env=env)


def test_prepare_command_replaces_only_what_it_wrote(tmp_path):
    text = write_corpus(tmp_path / "text", ENGLISH_TEXT)
    users = tmp_path / "users"
    users.mkdir()
    (users / "notes.txt").write_text("mine\n")
    refused = run_cli("prepare", "--corpus", str(text), "--out", str(users), "--no-progress")
    assert refused.returncode == 2 and "holds files prepare did not write" in refused.stderr
    assert sorted(p.name for p in users.iterdir()) == ["notes.txt"]

    out = tmp_path / "prepared"
    done = run_cli("prepare", "--corpus", str(text), "--out", str(out), "--language", "en", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "prepared" in done.stdout and (out / MANIFEST_FILE).is_file()
    again = run_cli("prepare", "--corpus", str(text), "--out", str(out), "--no-progress")
    assert again.returncode == 2 and "--overwrite" in again.stderr
    (out / "mine.txt").write_text("kept\n")
    replaced = run_cli("prepare", "--corpus", str(text / "a.txt"), "--out", str(out), "--overwrite", "--no-progress")
    assert replaced.returncode == 0, replaced.stderr
    assert sorted(p.name for p in out.iterdir()) == [".lock", f"a.000{PREPARED_SUFFIX}", "mine.txt", MANIFEST_FILE]


def test_a_users_file_named_as_prepares_record_does_not_stop_a_text_folder(tmp_path):
    """A folder of text with a prepared.json that no prepare wrote is read as text (only prepare's own record, when
    unfinished, is refused)."""
    from encoder.corpus import corpus_files

    (tmp_path / "a.txt").write_text("the river\n")
    (tmp_path / "prepared.json").write_text('{"experiment": "x"}')
    assert corpus_files([tmp_path]) == [tmp_path / "a.txt"]
