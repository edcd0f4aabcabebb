"""Building on a Ray cluster (``--ray``): the same index as a local build, for ``build`` and ``add``; a driver
interrupted mid-build resumes (here without Ray); a worker that dies is restarted and its shards retried; a worker
that does not see the index folder is a clear error; without ``--ray`` Ray is never imported.

One local Ray instance with 2 CPUs serves the whole module: 2 actors for the first build, one for the others (an
actor takes seconds to start: it imports torch). The actors encode with one torch thread and the local build with
several, so vectors are compared to float16 rounding, everything else exactly.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import ray
from helpers import CLI_SETTINGS, write_corpus
from helpers import SETTINGS as INDEXER_SETTINGS

from indexer import Index, add_documents, build_index, folder
from indexer import distributed as ray_encoding
from indexer.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = dataclasses.replace(INDEXER_SETTINGS, shard_tokens=100)  # eight shards
QUERIES = ("muddy river bank", "savings and loan", "bread in the oven", "spiral galaxies")
EXTRA = [
    {"id": "new-1", "title": "Comets", "text": "A comet grows a bright tail near the sun. Its nucleus is ice."},
    {"id": "new-2", "title": "Tides", "text": "The moon pulls the sea into tides twice a day along the bank."},
    {"id": "new-3", "title": "Rivers", "text": "After lunch the muddy river rose over the old road near the bank."},
]


@pytest.fixture(scope="module")
def ray_cluster():
    """A new local Ray instance for this module (whatever RAY_ADDRESS says): 2 CPUs, no dashboard."""
    ray.init("local", num_cpus=2, include_dashboard=False, object_store_memory=200 * 2**20, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def local(tmp_path_factory, tiny_model_dir) -> tuple[Path, Index]:
    """(corpus, index) built without Ray: the reference."""
    root = tmp_path_factory.mktemp("ray-reference")
    corpus = write_corpus(root / "corpus")
    return corpus, build_index([corpus], root / "index", model=tiny_model_dir, settings=SETTINGS, progress=False)


def _comparable(data):
    """A manifest's JSON without times and file hashes (float16 vectors may differ in the last bit)."""
    if isinstance(data, dict):
        return {k: _comparable(v) for k, v in data.items() if k not in ("sha256", "created_at", "updated_at")}
    if isinstance(data, list):
        return [_comparable(v) for v in data]
    return data


def assert_same_index(got: Index, want: Index) -> None:
    """Same shards, documents, sentences and tokens, vectors equal to float16 rounding, same search results."""
    assert _comparable(got.manifest.to_json()) == _comparable(want.manifest.to_json())
    for frame in ("docs", "sentences", "tokens"):
        pd.testing.assert_frame_equal(getattr(got, frame), getattr(want, frame))
    for shard in want.manifest.shards:
        for kind in ("sentence", "token", "title"):
            name = Path("shards", shard.name, f"{kind}_layers.npy")
            a, b = np.load(got.path / name).astype(np.float32), np.load(want.path / name).astype(np.float32)
            np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3, err_msg=str(name))
    a, b = got.search(QUERIES[0], k=5, method="elmo"), want.search(QUERIES[0], k=5, method="elmo")
    assert [h.doc_id for h in a] == [h.doc_id for h in b]
    np.testing.assert_allclose([h.score for h in a], [h.score for h in b], atol=2e-3)
    for query in QUERIES:
        a, b = got.search_sentences(query, k=5), want.search_sentences(query, k=5)
        assert [h.sentence_id for h in a] == [h.sentence_id for h in b], query
        np.testing.assert_allclose([h.score for h in a], [h.score for h in b], atol=2e-3)


def _extra_corpus(path: Path) -> Path:
    path.write_text("".join(json.dumps(doc) + "\n" for doc in EXTRA), encoding="utf-8")
    return path


def test_ray_build_and_add_equal_local_ones(ray_cluster, local, tiny_model_dir, tmp_path):
    corpus, reference = local
    built = build_index([corpus], tmp_path / "ray", model=tiny_model_dir, settings=SETTINGS, progress=False, ray=True)
    assert len(built.manifest.shards) >= 4  # enough shards for both actors
    assert_same_index(built, reference)
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == sorted(p.name for p in reference.path.iterdir())

    extra = _extra_corpus(tmp_path / "extra.jsonl")
    shutil.copytree(reference.path, tmp_path / "local-add")
    added = add_documents(tmp_path / "local-add", [extra], progress=False)
    arguments = ["add", "--index", str(tmp_path / "ray"), "--corpus", str(extra), "--quiet"]
    assert main([*arguments, "--ray", "--ray-workers", "1"]) == 0  # one shard: one actor is enough
    ray_added = Index.open(tmp_path / "ray")
    assert ray_added.manifest.generation == 2 and ray_added.manifest.counts.documents == len(reference.docs) + 3
    assert_same_index(ray_added, added)


def test_a_dead_worker_is_retried_and_an_interrupted_driver_resumes_without_ray(
    ray_cluster, local, tiny_model_dir, tmp_path, monkeypatch
):
    """One actor: it is killed after its first shard (Ray restarts it and retries the shard it was on, if any), so
    the third shard comes from the restarted actor; then the driver stops (Ctrl-C). The shards written stay, and
    a local re-run finishes the same index."""
    corpus, reference = local
    out = tmp_path / "index"
    writer, events = ray_encoding._writer, []

    def dying_then_interrupted(actors, shared):
        def write(jobs):
            for number, shard in enumerate(writer(actors, shared)(jobs), start=1):
                yield shard
                events.append(shard.name)
                if number == 1:
                    ray.kill(actors[0], no_restart=False)
                if number == 3:
                    raise KeyboardInterrupt

        return write

    monkeypatch.setattr(ray_encoding, "_writer", dying_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_index([corpus], out, model=tiny_model_dir, settings=SETTINGS, progress=False, ray=True, ray_workers=1)
    assert sorted(events) == ["00000", "00001", "00002"]  # a retried shard may come back after a later one
    written = sorted(p.name for p in (out / "shards").glob("[0-9]*"))
    assert written[:3] == sorted(events) and len(written) < len(reference.manifest.shards)
    assert (out / "build-state.json").is_file() and not (out / "manifest.json").exists()
    assert not folder.read(out).foreign, "everything left behind is the build's own"
    assert not list(out.glob(".build-state.json.*")), "the check file is removed"
    monkeypatch.undo()
    resumed = build_index([corpus], out, model=tiny_model_dir, settings=SETTINGS, progress=False)
    assert_same_index(resumed, reference)
    assert not list((out / "shards").glob(".tmp-*"))


def test_a_worker_that_does_not_see_the_index_folder_is_named(
    ray_cluster, local, tiny_model_dir, tmp_path, monkeypatch, capsys
):
    """As if the index folder were on a disk of the driver's machine only: the workers do not find the check file."""
    corpus, _ = local
    monkeypatch.setattr(ray_encoding, "_leave_marker", lambda marker, nonce: None)
    out = tmp_path / "index"
    arguments = ["build", "--corpus", str(corpus), "--out", str(out), "--model", str(tiny_model_dir), "--quiet"]
    assert main([*arguments, *CLI_SETTINGS, "--ray", "--ray-workers", "1"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: the Ray worker on node ") and error.count("\n") == 1, error
    assert f"does not see the index folder {out.resolve()}" in error and "storage every node" in error
    assert not list((out / "shards").glob("[0-9]*")) and (out / "build-state.json").is_file()


def test_without_ray_ray_is_not_imported(tiny_model_dir, tmp_path):
    (tmp_path / "tiny.txt").write_text("One short document about a river bank.\nAnother about bread.\n")
    script = (
        "import sys\n"
        "from indexer.__main__ import main\n"
        "assert main(sys.argv[1:]) == 0\n"
        "assert 'ray' not in sys.modules and 'indexer.distributed' not in sys.modules, 'Ray was imported'\n"
    )
    arguments = ["build", "--corpus", str(tmp_path / "tiny.txt"), "--out", str(tmp_path / "index")]
    arguments += ["--model", str(tiny_model_dir), "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", script, *arguments], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


TERMINATED_IN_A_RAY_BUILD = """
import os, signal, sys
from encoder.errors import interrupts_at_start
interrupts_at_start("__main__", "elmo-indexer")
from indexer import distributed
from indexer.cli import cli
writer = distributed._writer
def terminated(actors, shared):  # SIGTERM to the driver once Ray is up and a shard is written
    def write(jobs):
        for shard in writer(actors, shared)(jobs):
            os.kill(os.getpid(), signal.SIGTERM)
            yield shard
    return write
distributed._writer = terminated
cli()
"""


def test_sigterm_to_a_ray_build_is_one_line_and_exit_143(tiny_model_dir, tmp_path):
    """Ray's core worker puts a crash handler of its own on SIGTERM: a terminated ``build --ray`` aborted (exit 134,
    a C++ stack on stderr) where every other command says "interrupted" and exits 143 (``distributed.connected``
    puts the command's handlers back)."""
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "index"
    argv = ["build", "--corpus", str(corpus), "--out", str(out), "--model", str(tiny_model_dir), "--quiet"]
    argv += [*CLI_SETTINGS, "--ray", "--ray-workers", "1"]
    done = subprocess.run(
        [sys.executable, "-c", TERMINATED_IN_A_RAY_BUILD, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 143, done.stderr
    assert done.stderr.splitlines()[-1] == "interrupted; re-run the same command to resume" and "@ " not in done.stderr
