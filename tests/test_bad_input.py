"""Bad input and faults: each case gets a clear error (or a correct answer) and leaves every file as it was.

A growing table: one row per case, with the outcome class it must have and the words its message must say.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from encoder.files import atomic_path
from encoder.mix import LayerMix
from indexer import CorpusError, IndexFormatError, QueryError, add_documents, build_index, delete_documents

ROOT = Path(__file__).resolve().parents[1]


def jsonl(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes: what "nothing was touched" compares."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


CASES = [
    # (case, what to run given tmp_path and the tiny model, the error, words its message must have)
    (
        "json text is a list",
        lambda t, m: build_index([jsonl(t, {"id": "a", "text": ["One.", "Two."]})], t / "i", model=m, progress=False),
        CorpusError,
        "is a list, not text",
    ),
    (
        "json text is a dict",
        lambda t, m: build_index([jsonl(t, {"id": "a", "text": {"p": "One."}})], t / "i", model=m, progress=False),
        CorpusError,
        "is a dict, not text",
    ),
    (
        "json title is a bool",
        lambda t, m: build_index([jsonl(t, {"text": "One.", "title": True})], t / "i", model=m, progress=False),
        CorpusError,
        "'title' field is a bool",
    ),
    (
        "add to an index that does not exist",
        lambda t, m: add_documents(t / "nowhere", [jsonl(t, {"text": "One."})], progress=False),
        IndexFormatError,
        "does not exist",
    ),
    (
        "delete from an index that does not exist",
        lambda t, m: delete_documents(t / "nowhere", ["a"]),
        IndexFormatError,
        "does not exist",
    ),
    (
        "build with NaN layer weights",
        lambda t, m: build_index([jsonl(t, {"text": "One."})], t / "i", model=m, layers="nan,nan,nan", progress=False),
        ValueError,
        "finite",
    ),
    (
        "build with overflowing layer weights",
        lambda t, m: build_index(
            [jsonl(t, {"text": "One."})], t / "i", model=m, search_layers="1e308,1e308,1e308", progress=False
        ),
        ValueError,
        "finite",
    ),
    ("infinite layer weight", lambda t, m: LayerMix.parse("1,inf,0", 3), ValueError, "finite"),
]


@pytest.mark.parametrize("case, run, error, words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_clearly_and_touches_nothing(case, run, error, words, tmp_path, tiny_model_dir):
    (tmp_path / "keep.txt").write_text("mine")
    before = snapshot(tmp_path)
    with pytest.raises(error, match=words):
        run(tmp_path, tiny_model_dir)
    after = snapshot(tmp_path)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing that was there changed
    assert not (tmp_path / "nowhere").exists()  # nor was a folder made for a missing index
    assert not (tmp_path / "i" / "manifest.json").exists()  # no index half-made from bad input


def test_a_query_with_nan_weights_is_a_query_error(tiny_model_dir, tmp_path):
    index = build_index(
        [jsonl(tmp_path, {"text": "The river bank. The money bank."})],
        tmp_path / "i",
        model=tiny_model_dir,
        progress=False,
    )
    with pytest.raises(QueryError, match="finite"):
        index.search("bank", layers="nan,nan,nan")


def test_written_files_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_path(tmp_path / "out.json") as tmp:
            Path(tmp).write_text("{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == 0o644


def test_a_closed_pipe_is_not_a_traceback(tmp_path):
    """`python -m indexer ... | head` must not end in a BrokenPipeError traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "indexer", "--help"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    process.stdout.close()  # the reader goes away before the output is written
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) in (0, 2) and "Traceback" not in stderr


def test_perplexity_of_an_empty_text_is_an_error(tmp_path):
    from encoder.lm_head import evaluate

    with pytest.raises(ValueError, match="no words to predict"):
        evaluate(None, None, [])  # refused before the model is touched


def test_training_refuses_zero_tokens_before_reading_the_corpus(tmp_path):
    from encoder.train import TrainConfig, train

    with pytest.raises(ValueError, match="--max-tokens must be at least 1"):
        train(TrainConfig(corpus=[str(tmp_path / "missing.txt")], out=str(tmp_path / "run"), max_tokens=0))
    assert not (tmp_path / "run").exists()
