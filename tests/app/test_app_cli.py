"""``python -m app``: build the demo index only when there is none, then hand over to Streamlit on localhost."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

import app.__main__ as cli
from app.settings import INDEX_ENV, MAIN_SCRIPT, build_command
from demo.corpora import DEMOS
from encoder.readout import READOUT_FILE
from indexer import Settings
from indexer.errors import CorpusError

TINY_GLOVE = Settings(glove_epochs=1, glove_dim=4, glove_min_count=1)


class Served(Exception):
    """Raised instead of replacing the test process with Streamlit."""


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Captures the command and environment ``python -m app`` would exec."""
    calls: dict = {}

    def fake_execve(path: str, argv: list[str], env: dict[str, str]) -> None:
        calls.update(argv=argv, env=env)
        raise Served

    monkeypatch.setattr(os, "execve", fake_execve)
    monkeypatch.setattr(cli, "check_port", lambda address, port: None)  # no server starts: any port will do
    monkeypatch.chdir(os.getcwd())  # main() changes into the repository; undo it after the test
    return calls


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def one_document_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A demo corpus of one document in place of data/demo; returns where its index goes."""
    corpus = tmp_path / "demo.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Banks", "text": "The bank flooded. The bank lent money."}))
    monkeypatch.setattr(cli, "demo_corpus", lambda demo="en": [corpus])
    return tmp_path / "index"


def test_first_run_builds_the_demo_index_then_serves_on_localhost(
    tmp_path: Path, tiny_model_dir: Path, served: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    index = one_document_demo(tmp_path, monkeypatch)
    with pytest.raises(SystemExit):  # a folder that holds no index is built only when asked
        cli.main(["--index", str(index), "--model", str(tiny_model_dir)])
    assert "holds no index" in capsys.readouterr().err and not index.exists()
    with pytest.raises(Served):
        cli.main(["--index", str(index), "--model", str(tiny_model_dir), "--build"])
    out = capsys.readouterr().out
    assert "First run: building the demo index" in out and "Built the demo index in" in out
    assert "open http://localhost:8501 in your browser" in out
    assert (index / "manifest.json").is_file()
    argv = served["argv"]
    assert argv[1:5] == ["-m", "streamlit", "run", str(MAIN_SCRIPT)]
    assert option(argv, "--server.address") == "localhost" and option(argv, "--server.port") == "8501"
    assert option(argv, "--server.headless") == "true" and option(argv, "--browser.gatherUsageStats") == "false"
    assert served["env"][INDEX_ENV] == str(index)

    def no_build(*args, **kwargs):
        raise AssertionError("the index exists: it must not be built again")

    monkeypatch.setattr(cli, "build_index", no_build)
    with pytest.raises(Served):
        cli.main(["--index", str(index), "--address", "0.0.0.0", "--port", "9000"])
    out = capsys.readouterr().out
    assert f"Using the index in {index} (built with {tiny_model_dir};" in out and "http://localhost:9000" in out
    assert option(served["argv"], "--server.address") == "0.0.0.0"
    assert option(served["argv"], "--server.port") == "9000"


def built_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: Path) -> Path:
    """The one-document demo index built with ``model``, as a first run builds it; its folder."""
    index = one_document_demo(tmp_path, monkeypatch)
    with pytest.raises(Served):
        cli.main(["--index", str(index), "--model", str(model), "--build"])
    return index


def builds_of_a_rerun(index: Path, model: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Start the app again on ``index`` with ``model``: the options of the builds it starts (recorded, not run)."""
    builds = []
    monkeypatch.setattr(cli, "build_index", lambda corpus, out, **options: builds.append(options))
    with pytest.raises(Served):
        cli.main(["--index", str(index), "--model", str(model)])
    return builds


def test_index_of_a_model_that_changed_is_rebuilt(
    tmp_path: Path, tiny_model_dir: Path, served: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """After a `git pull` brings a new shipped model, the demo index built with the old one is rebuilt."""
    import shutil

    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    index = built_demo(tmp_path, monkeypatch, model)
    from helpers import TINY_CONFIG

    from encoder.model import BiLM, BiLMConfig
    from encoder.weights import save_model

    retrained = BiLM(BiLMConfig(**TINY_CONFIG))
    retrained.reset_parameters(seed=1)  # other weights, as a new shipped model would have
    save_model(retrained, model, extra_config={"name": "tiny"})
    capsys.readouterr()
    builds = builds_of_a_rerun(index, model, monkeypatch)
    assert "has changed since the index" in capsys.readouterr().out
    assert builds and builds[0]["overwrite"] is True


def test_the_demo_index_is_rebuilt_for_another_model_asked_for(
    tmp_path: Path, tiny_model_dir: Path, served: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """`--model` names another model than the demo index was built with: the app's own index is built again for it
    (it served the old model's index and said nothing); the same model in another folder (the same hash) is not."""
    import shutil

    from helpers import TINY_CONFIG

    from encoder.model import BiLM, BiLMConfig
    from encoder.weights import save_model

    index = built_demo(tmp_path, monkeypatch, tiny_model_dir)
    same = Path(shutil.copytree(tiny_model_dir, tmp_path / "same"))  # the same model, spelled otherwise
    assert not builds_of_a_rerun(index, same, monkeypatch)
    other = BiLM(BiLMConfig(**TINY_CONFIG))
    other.reset_parameters(seed=1)
    save_model(other, tmp_path / "other", extra_config={"name": "other"})
    capsys.readouterr()
    builds = builds_of_a_rerun(index, tmp_path / "other", monkeypatch)
    assert f"built with another model ({tiny_model_dir}) than {str(tmp_path / 'other')!r}" in capsys.readouterr().out
    assert builds and builds[0]["overwrite"] is True


def test_index_built_before_its_models_readout_changed_is_rebuilt(
    tmp_path: Path, tiny_lm_dir: Path, served: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A model whose readout.json now picks another sense readout (same weights): its demo index is rebuilt, so Word
    in context reads the new one; unchanged, it is not."""
    import shutil

    model = tmp_path / "model"
    shutil.copytree(tiny_lm_dir, model)
    index = built_demo(tmp_path, monkeypatch, model)
    assert not builds_of_a_rerun(index, model, monkeypatch)
    (model / READOUT_FILE).write_text(json.dumps({"dim": 64}))
    capsys.readouterr()
    builds = builds_of_a_rerun(index, model, monkeypatch)
    assert "sense readout has changed since the index was built" in capsys.readouterr().out
    assert builds and builds[0]["overwrite"] is True


def test_an_index_of_an_older_format_is_rebuilt(
    tmp_path: Path, tiny_model_dir: Path, served: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """After an update that changes the index format, `make demo` rebuilds the demo index instead of failing."""
    index = built_demo(tmp_path, monkeypatch, tiny_model_dir)
    manifest = json.loads((index / "manifest.json").read_text())
    (index / "manifest.json").write_text(json.dumps({**manifest, "format_version": 1}))
    capsys.readouterr()
    builds = builds_of_a_rerun(index, tiny_model_dir, monkeypatch)
    assert "built by another version of ELMo Search (format 1" in capsys.readouterr().out
    assert builds and builds[0]["overwrite"] is True


def test_rebuild_replaces_the_demo_index_the_app_built(
    tmp_path: Path, served: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"generation": 1, "build": {"demo": "en"}}))
    builds = []
    monkeypatch.setattr(cli, "build_index", lambda corpus, out, **options: builds.append((corpus, out, options)))
    with pytest.raises(Served):
        cli.main(["--index", str(tmp_path), "--rebuild"])
    [(corpus, out, options)] = builds
    assert corpus == cli.demo_corpus() and out == tmp_path
    assert options["model"] == "default" and options["overwrite"] is True and options["demo"] == "en"


def test_an_index_the_app_did_not_build_is_never_rebuilt_from_the_demo(
    tmp_path: Path, tiny_model_dir: Path, served: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A user's index made with the demo's model is served as it is, whatever its GloVe; --rebuild, an
    older format or documents added since give the command that rebuilds it from its own corpus instead."""
    from indexer import add_documents, build_index

    corpus = tmp_path / "mine.jsonl"
    corpus.write_text(json.dumps({"id": "m1", "text": "My private bank notes."}) + "\n")
    index = tmp_path / "index"
    build_index([corpus], index, model=tiny_model_dir, settings=replace(TINY_GLOVE, glove="train"), progress=False)
    before = {p.name: p.read_bytes() for p in index.iterdir() if p.is_file()}
    builds = []
    monkeypatch.setattr(cli, "build_index", lambda corpus, out, **options: builds.append(options))
    with pytest.raises(Served):
        cli.main(["--index", str(index), "--model", str(tiny_model_dir)])
    assert f"Using the index in {index}" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["--index", str(index), "--model", str(tiny_model_dir), "--rebuild"])
    err = capsys.readouterr().err
    assert "is not the demo index this app built" in err and not builds
    assert f"python -m indexer build --corpus {corpus} --out {index} --model {tiny_model_dir}" in err
    assert "--glove train" in err and err.rstrip().endswith("--overwrite")
    assert {p.name: p.read_bytes() for p in index.iterdir() if p.is_file()} == before

    demo = tmp_path / "demo"  # the app's own demo index, then a document added to it: the user's now
    (demo_corpus := tmp_path / "demo.jsonl").write_text(json.dumps({"id": "d1", "text": "The bank."}) + "\n")
    build_index([demo_corpus], demo, model=tiny_model_dir, settings=TINY_GLOVE, progress=False, demo="en")
    assert cli.demo_of(demo, cli.FolderInfo.of(demo)) == "en"
    add_documents(demo, [corpus], progress=False)
    assert cli.demo_of(demo, cli.FolderInfo.of(demo)) is None


def test_a_demo_index_built_before_the_app_marked_them_is_still_its_own(tmp_path: Path) -> None:
    """An index in the demo's place, built from exactly the demo corpus, is the app's; another corpus there is not."""
    from types import SimpleNamespace

    demo_files = tuple(str(p) for p in cli.demo_corpus("en"))
    place = DEMOS["en"].index_dir
    assert cli.demo_of(place, SimpleNamespace(demo=None, corpus=demo_files)) == "en"
    assert cli.demo_of(place, SimpleNamespace(demo=None, corpus=(str(tmp_path / "mine.jsonl"),))) is None
    assert cli.demo_of(tmp_path, SimpleNamespace(demo=None, corpus=demo_files)) is None


def test_a_failed_build_is_a_one_line_error(
    tmp_path: Path, served: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    def bad_build(*args, **kwargs):
        raise CorpusError("document id 'x' appears more than once")

    monkeypatch.setattr(cli, "build_index", bad_build)
    with pytest.raises(SystemExit) as exited:
        cli.main(["--index", str(tmp_path / "index"), "--build"])
    assert exited.value.code == 2 and not served
    assert capsys.readouterr().err.startswith("error: building the demo index failed: document id 'x'")


def test_index_setting_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(INDEX_ENV, str(tmp_path / "mine"))
    assert cli.configured_index_dir() == tmp_path / "mine"
    monkeypatch.delenv(INDEX_ENV)
    assert cli.configured_index_dir().parts[-2:] == ("indexes", "demo-index")
    assert cli.configured_index_dir("ko").parts[-2:] == ("indexes", "demo-index-ko")


def test_the_korean_demo_is_built_from_its_corpus_with_its_model(
    tmp_path: Path, served: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = []
    monkeypatch.setattr(cli, "build_index", lambda corpus, out, **options: builds.append((corpus, out, options)))
    with pytest.raises(Served):
        cli.main(["--demo", "ko", "--index", str(tmp_path / "ko"), "--build"])
    [(corpus, out, options)] = builds
    assert [p.name for p in corpus] == ["part_a.jsonl", "part_b.jsonl"] and corpus[0].parent.name == "demo-ko"
    assert out == tmp_path / "ko" and options["model"] == "ko" and options["glove"] == "korean"
    assert build_command(DEMOS["ko"].index_dir) == "python -m app --demo ko"


def test_the_app_chooses_the_threads_once_for_the_build_and_the_ui(
    tmp_path: Path, tiny_model_dir: Path, served: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from encoder import threads

    monkeypatch.delenv(threads.THREADS_ENV, raising=False)
    monkeypatch.setattr(threads, "_applied", threads._applied)  # set back after the test, as torch's count is
    before = torch.get_num_threads()
    try:
        monkeypatch.setattr(threads, "default_threads", lambda: 3)  # the rule's choice, whatever the load now
        index = built_demo(tmp_path, monkeypatch, tiny_model_dir)
        assert served["env"][threads.THREADS_ENV] == "3" and torch.get_num_threads() == 3
        with pytest.raises(Served):
            cli.main(["--index", str(index), "--model", str(tiny_model_dir), "--threads", "1"])
        assert served["env"][threads.THREADS_ENV] == "1" and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
