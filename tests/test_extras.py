"""Without the ``[ko]`` extra (Kiwi made unimportable, as where it is not installed): tokenizing Korean text is one
error naming the packages to install (``pip install kiwipiepy==... kiwipiepy_model==...``, from the project's
metadata); loading the Korean model, embedding tokens, training from prepared
files and shipping work."""

from __future__ import annotations

import importlib.metadata
import json
import sys

import numpy as np
import pytest

from encoder import Elmo
from encoder.text import text_rules

KOREAN = [
    "서울은 대한민국의 수도이다. 한강이 도시를 가로질러 흐른다.",
    "강가에 앉아 물소리를 들었다. 배 한 척이 지나갔다.",
]
INSTALL = "pip install kiwipiepy=="  # the packages of the [ko] extra, pinned as pyproject.toml pins them


def hide_kiwi(monkeypatch) -> None:
    """Kiwi as where it is not installed: its import fails and its distributions have no metadata."""
    kiwi = ("kiwipiepy", "kiwipiepy_model")
    for name in kiwi:
        monkeypatch.setitem(sys.modules, name, None)
    installed = importlib.metadata.version

    def version(name: str) -> str:
        if name in kiwi:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    text_rules.cache_clear()  # the rules read what is installed once


@pytest.fixture
def no_kiwi(monkeypatch):
    hide_kiwi(monkeypatch)
    yield
    text_rules.cache_clear()


def one_error_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_the_korean_model_loads_and_embeds_tokens_without_kiwi(no_kiwi, tmp_path, capsys):
    from encoder.__main__ import main

    elmo = Elmo.load("ko")
    assert elmo.text.language == "ko" and "not installed" in elmo.text.identity
    (tmp_path / "tokens.txt").write_text("배 를 타 고 갔 다 .\n", encoding="utf-8")
    main(
        [
            "embed",
            "--model",
            "ko",
            "--input",
            str(tmp_path / "tokens.txt"),
            "--output",
            str(tmp_path / "out.hdf5"),
            "--quiet",
        ]
    )
    assert (tmp_path / "out.hdf5").is_file() and "wrote 1 sentence " in capsys.readouterr().err
    raw = ["embed", "--model", "ko", "--raw", "--input", str(tmp_path / "tokens.txt")]
    with pytest.raises(SystemExit) as ended:
        main([*raw, "--output", str(tmp_path / "raw.hdf5"), "--quiet"])
    assert ended.value.code == 2 and INSTALL in one_error_line(capsys)
    assert not (tmp_path / "raw.hdf5").exists()


def test_building_a_korean_index_without_kiwi_is_one_error(no_kiwi, tmp_path, capsys):
    from indexer.__main__ import main

    (tmp_path / "docs.txt").write_text("\n".join(KOREAN), encoding="utf-8")
    command = ["build", "--corpus", str(tmp_path / "docs.txt"), "--out", str(tmp_path / "index"), "--model", "ko"]
    assert main([*command, "--quiet"]) == 2
    assert INSTALL in one_error_line(capsys)
    assert not (tmp_path / "index").exists()


def test_training_from_prepared_files_and_shipping_need_no_kiwi(tmp_path, monkeypatch):
    from encoder.prepare import prepare
    from encoder.ship import ship
    from encoder.train import TrainConfig, train

    (tmp_path / "ko.txt").write_text("\n".join(KOREAN * 30) + "\n", encoding="utf-8")
    prepare([tmp_path / "ko.txt"], tmp_path / "prepared", language="ko", workers=0, progress=False)  # with Kiwi
    hide_kiwi(monkeypatch)
    try:
        tiny = dict(size="tiny", batch_size=8, unroll=10, vocab_size=100, progress=False, threads=1, log_every=5)
        config = TrainConfig(
            corpus=[str(tmp_path / "prepared")], out=str(tmp_path / "run"), max_tokens=800, language="ko", **tiny
        )
        train(config)
        ship(tmp_path / "run", tmp_path / "model")
        shipped = Elmo.load(tmp_path / "model")
        assert json.loads((tmp_path / "model" / "config.json").read_text())["language"] == "ko"
        vectors = shipped.embed([["배", "를", "타", "고"]])[0]
        assert vectors.shape[:2] == (shipped.n_layers, 4) and np.isfinite(vectors).all()
    finally:
        text_rules.cache_clear()


def test_the_kiwi_check_is_what_reads_korean_text(no_kiwi):
    with pytest.raises(ImportError, match=r"pip install kiwipiepy=="):
        text_rules("ko").tokenize(KOREAN[0])
    assert text_rules("en").tokenize("The bank.") == ["The", "bank", "."]
