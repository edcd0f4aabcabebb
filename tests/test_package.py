"""`pip install .` gives a working package: every subpackage, the Punkt parameters, the shipped model and the demo
corpus, found from the installed copy (no checkout on the path)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import h5py
import numpy as np

from encoder import Elmo

ROOT = Path(__file__).resolve().parents[1]
NOT_SOURCE = (".git", ".venv", "build", "runs", ".whl", ".gpu", "__pycache__", ".pytest_cache", "*.egg-info")


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{command[:4]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def test_the_wheel_installs_and_embeds_with_the_default_model(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy, so building leaves no build/ or egg-info in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q", "-w", "dist"],
        cwd=tmp_path,
    )
    wheel = next((tmp_path / "dist").glob("elmo_search-*.whl"))
    # a fresh venv; the dependencies (torch, faiss, ...) come from this one's site-packages through a .pth file,
    # which does not hold our code, so only the installed wheel can be imported
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (purelib / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([str(python), "-m", "pip", "install", "--no-deps", "-q", str(wheel)])

    work = tmp_path / "work"  # not the checkout: nothing of it is importable from here
    work.mkdir()
    (work / "sentences.txt").write_text("The bank of the river .\nI play the violin .\n", encoding="utf-8")
    run(
        [
            str(python),
            "-m",
            "encoder",
            "embed",
            "--model",
            "default",
            "--input",
            "sentences.txt",
            "--output",
            "out.hdf5",
            "--quiet",
        ],
        cwd=work,
    )
    where = run(
        [
            str(python),
            "-c",
            "import encoder, app.views, encoder.eval, indexer; from encoder.files import shipped_data; "
            "from encoder.text import split_and_tokenize; import json; print(json.dumps([encoder.__file__, "
            "str(shipped_data()), [s.tokens for s in split_and_tokenize('Dr. Smith sat. He left.')]]))",
        ],
        cwd=work,
    )
    module, data, sentences = json.loads(where.stdout)
    assert Path(module).is_relative_to(purelib) and Path(data) == purelib / "elmo_search_data"
    assert sentences == [["Dr.", "Smith", "sat", "."], ["He", "left", "."]]  # the shipped Punkt parameters
    assert sorted(p.name for p in (Path(data) / "demo").glob("*.jsonl")) == ["part_a.jsonl", "part_b.jsonl"]
    assert (Path(data) / "demo" / "labels.tsv").is_file() and (purelib / "app" / "icon.png").is_file()
    # the installed default model embeds exactly as the checkout's does
    expected = Elmo.load("default").embed([["The", "bank", "of", "the", "river", "."]])[0]
    with h5py.File(work / "out.hdf5", "r") as f:
        np.testing.assert_allclose(f["0"][()], expected, rtol=1e-5, atol=1e-5)
    assert run([str(python), "-m", "app", "--help"], cwd=work).stdout.startswith("usage: python -m app")
