"""`pip install` of the wheel gives a working package in a fresh venv: pip resolves every dependency from the package
index (nothing handed over from this venv), and the console scripts embed with both shipped models, build an index
and serve the app, from a folder outside the checkout.

The install is the slow part (about 45 s on 2 cores with pip's cache warm; without --no-compile, 1.5-2 min)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import h5py
import numpy as np
import pytest

from app.settings import INDEX_ENV
from encoder import Elmo

ROOT = Path(__file__).resolve().parents[1]
NOT_SOURCE = (".git", ".venv", "build", "runs", ".whl", ".gpu", "__pycache__", ".pytest_cache", "*.egg-info")


def run(command: list[str | Path], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(list(map(str, command)), capture_output=True, text=True, timeout=900, **kwargs)
    assert done.returncode == 0, f"{command[:4]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_healthy(server: subprocess.Popen, url: str, log: Path) -> str:
    """Streamlit's health check's answer once it gives one (the app failing or 120 s passing fails the test)."""
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return answer.read().decode()
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the installed app did not start:\n{log.read_text()[-4000:]}")
            time.sleep(0.5)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (no system site-packages) with the wheel and its [ko] extra installed by pip."""
    tmp = tmp_path_factory.mktemp("package")
    source = tmp / "source"  # a copy, so building leaves no build/ or egg-info in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    # the build backend (setuptools, of the [dev] extra) is this venv's: the wheel builds without fetching one
    run(
        [sys.executable, "-m", "pip", "wheel", source, "--no-deps", "--no-build-isolation", "-q", "-w", "dist"], cwd=tmp
    )
    wheel = next((tmp / "dist").glob("elmo_search-*.whl"))
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", venv])
    # every dependency from the package index (or pip's cache); --no-compile: modules compile when first imported,
    # which saves a minute of compiling all of torch's
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-compile", f"{wheel}[ko]"], cwd=tmp)
    return venv


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder outside the checkout: nothing of it is importable from here."""
    return tmp_path


def test_the_installed_package_finds_its_code_and_data_in_site_packages(installed: Path, work: Path) -> None:
    python = installed / "bin" / "python"
    where = run(
        [
            python,
            "-c",
            "import encoder, app.views, encoder.eval, indexer.cli, demo.labels, sysconfig; from encoder.files import shipped_data; "
            "from encoder.text import split_and_tokenize; import json; print(json.dumps([encoder.__file__, "
            "str(shipped_data()), sysconfig.get_paths()['purelib'], "
            "[s.tokens for s in split_and_tokenize('Dr. Smith sat. He left.')]]))",
        ],
        cwd=work,
    )
    module, data, purelib, sentences = json.loads(where.stdout)
    assert Path(module).is_relative_to(purelib) and Path(data) == Path(purelib) / "elmo_search_data"
    assert sentences == [["Dr.", "Smith", "sat", "."], ["He", "left", "."]]  # the shipped Punkt parameters
    for folder in ("demo", "demo-ko"):
        assert sorted(p.name for p in (Path(data) / folder).glob("*.jsonl")) == ["part_a.jsonl", "part_b.jsonl"]
    for model in ("default", "ko"):
        shipped = sorted(p.name for p in (ROOT / "data" / "models" / model).iterdir())
        assert sorted(p.name for p in (Path(data) / "models" / model).iterdir()) == shipped
    assert (Path(module).parent / "eval" / "sense_probe_ko.tsv").is_file()
    assert (Path(data) / "demo" / "labels.tsv").is_file() and (Path(purelib) / "app" / "icon.png").is_file()
    assert run([installed / "bin" / "elmo-search", "--help"], cwd=work).stdout.startswith("usage: elmo-search ")
    assert run([installed / "bin" / "elmo-indexer", "--version"], cwd=work).stdout.startswith("elmo-indexer 0.")


@pytest.mark.parametrize(
    "model, line, tokens",
    [
        ("default", "The bank of the river .", ["The", "bank", "of", "the", "river", "."]),
        ("ko", "배를 타고 강을 건넜다.", None),  # --raw: the model's own tokenizer (Kiwi, of the [ko] extra)
    ],
)
def test_the_installed_models_embed_as_the_checkouts_do(
    installed: Path, work: Path, model: str, line: str, tokens: list[str] | None
) -> None:
    (work / "sentences.txt").write_text(line + "\n", encoding="utf-8")
    raw = [] if tokens else ["--raw"]
    command = [installed / "bin" / "elmo-encoder", "embed", "--model", model, "--input", "sentences.txt", *raw]
    run([*command, "--output", "out.hdf5", "--quiet"], cwd=work)
    elmo = Elmo.load(model)
    with h5py.File(work / "out.hdf5", "r") as f:
        tokens = tokens or json.loads(f["tokens"][()])[0]
        assert tokens == elmo.text.tokenize(line)
        np.testing.assert_allclose(f["0"][()], elmo.embed([tokens])[0], rtol=1e-5, atol=1e-5)


def test_the_installed_commands_build_an_index_and_serve_it(installed: Path, work: Path) -> None:
    data = Path(
        run(
            [installed / "bin" / "python", "-c", "import elmo_search_data; print(elmo_search_data.__path__[0])"]
        ).stdout.strip()
    )
    corpus = work / "corpus.jsonl"  # the first five documents of the installed demo
    corpus.write_text("".join((data / "demo" / "part_a.jsonl").read_text(encoding="utf-8").splitlines(True)[:5]))
    run([installed / "bin" / "elmo-indexer", "build", "--corpus", corpus, "--out", "index", "--quiet"], cwd=work)
    stats = json.loads(
        run([installed / "bin" / "elmo-indexer", "stats", "--index", "index", "--json"], cwd=work).stdout
    )
    assert stats["counts"]["documents"] == 5 and stats["model"]["name"] == Elmo.load("default").name

    port, log = free_port(), work / "app.log"
    env = {**os.environ, "HOME": str(work), "XDG_CACHE_HOME": str(work / "cache")}  # the app writes nothing of ours
    with open(log, "w") as out:
        server = subprocess.Popen(
            [installed / "bin" / "elmo-search", "--index", "index", "--address", "127.0.0.1", "--port", str(port)],
            cwd=work,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        assert wait_until_healthy(server, f"http://127.0.0.1:{port}/_stcore/health", log) == "ok"
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert "Using the index in" in log.read_text()  # served the index just built, not a demo it built itself
    # and the installed page answers a query on it, as a browser session would run it
    page = run([installed / "bin" / "python", "-c", SEARCH_PAGE], cwd=work, env={**env, INDEX_ENV: "index"}).stdout
    assert json.loads(page) == {"exceptions": [], "errors": [], "first": "**1. How volcanoes form**"}


SEARCH_PAGE = """
import json
from streamlit.testing.v1 import AppTest
from app.settings import MAIN_SCRIPT
at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
at.query_params.update({"q": "how do volcanoes erupt", "k": "3"})
at.run()
found = [m.value for m in at.markdown if m.value.startswith("**1. ")]
print(json.dumps({"exceptions": [e.value for e in at.exception], "errors": [e.value for e in at.error],
                  "first": found[0].split("\\n")[0] if found else None}))
"""
