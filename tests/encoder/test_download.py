"""``encoder download``: the fixture biLM served under a published model's file names by a local HTTP server (no
test reaches the web), each failure one clear error with nothing half-written where models are looked up, and
``--model NAME`` never downloading by itself."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import FIXTURE_DIR, fixture_published_as, published_files, serving

from encoder import Elmo, download_model, model_files
from encoder.download import DownloadError
from encoder.files import sha256_of
from encoder.model_files import DOWNLOAD_RECORD, PUBLISHED, published_dir, resolve_model
from encoder.weights import WeightsError

REPO = Path(__file__).resolve().parents[2]
MODEL = PUBLISHED["elmo-small"]


@pytest.fixture
def server(reference_fixture):
    """The fixture biLM served as elmo-small (published in its shape); yields (base URL, the handler class, to
    change what it serves)."""
    with serving(published_files(reference_fixture, MODEL)) as served, fixture_published_as("elmo-small"):
        yield served


def weights_path(handler) -> str:
    return next(p for p in handler.files if p.endswith(".hdf5"))


def nothing_installed(cache: Path) -> None:
    """Where models are looked up there is nothing, and looking one up says how to download it."""
    assert not published_dir("elmo-small", cache).exists()
    with pytest.raises(FileNotFoundError, match="download elmo-small"):
        resolve_model("elmo-small")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ELMO_SEARCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ELMO_SEARCH_MODELS_URL", raising=False)
    return tmp_path / "cache"


def test_a_good_download_is_checked_recorded_and_loads_as_the_fixture(server, cache):
    url, handler = server
    found = download_model("elmo-small", url=url, progress=False)
    folder = published_dir("elmo-small", cache)
    assert found.weights == folder / "weights.hdf5" and found.name == "elmo-small"
    assert sorted(p.name for p in cache.joinpath("models").iterdir()) == ["elmo-small"]  # no .partial left
    record = json.loads((folder / DOWNLOAD_RECORD).read_text())
    weights = record["files"]["weights.hdf5"]
    assert weights["size"] == (FIXTURE_DIR / "lm_weights.hdf5").stat().st_size
    assert weights["url"] == url + MODEL.folder + "/" + MODEL.files["weights.hdf5"]
    import hashlib

    assert weights["sha256"] == hashlib.sha256((FIXTURE_DIR / "lm_weights.hdf5").read_bytes()).hexdigest()
    ours, reference = Elmo.load("elmo-small"), Elmo.load(FIXTURE_DIR / "lm_weights.hdf5")
    assert ours.name == "elmo-small" and ours.model_hash == reference.model_hash
    sentence = ["The", "bank", "of", "the", "river", "."]
    np.testing.assert_array_equal(ours.embed([sentence])[0], reference.embed([sentence])[0])
    # a second call finds it there and fetches nothing
    handler.ranges.clear()
    assert download_model("elmo-small", url=url, progress=False) == found and handler.ranges == []


def test_base_url_comes_from_the_environment_when_not_given(server, monkeypatch):
    url, _ = server
    monkeypatch.setenv("ELMO_SEARCH_MODELS_URL", url)
    assert download_model("elmo-small", progress=False).name == "elmo-small"


def test_a_404_is_one_error_naming_the_url(server, cache):
    url, handler = server
    handler.files.pop(weights_path(handler))
    with pytest.raises(DownloadError, match=r"HTTP 404 .*--base-url"):
        download_model("elmo-small", url=url, progress=False)
    nothing_installed(cache)


def test_a_download_cut_short_says_so_and_resumes_where_it_stopped(server, cache):
    url, handler = server
    size = len(handler.files[weights_path(handler)])
    handler.cut[weights_path(handler)] = 100_000
    with pytest.raises(DownloadError, match=f"stopped at 100,000 of {size:,} bytes.*run the same command again"):
        download_model("elmo-small", url=url, progress=False)
    nothing_installed(cache)
    part = cache / "models" / "elmo-small.partial" / "weights.hdf5.part"
    assert part.stat().st_size == 100_000
    handler.ranges.clear()
    found = download_model("elmo-small", url=url, progress=False)
    assert handler.ranges == ["bytes=100000-"]  # the weights resumed; the options were already whole
    assert found.weights.read_bytes() == (FIXTURE_DIR / "lm_weights.hdf5").read_bytes()


@pytest.mark.parametrize("ignore_if_range", [False, True], ids=["If-Range honoured", "If-Range ignored"])
def test_a_resume_after_the_file_changed_starts_again(server, cache, ignore_if_range):
    """The mirror's file changed between the cut and the resume: the part is the beginning of another file, so the
    whole new file is fetched (never the old beginning spliced to the new end)."""
    url, handler = server
    whole = handler.files[weights_path(handler)]
    handler.files[weights_path(handler)] = bytes(255 - b for b in whole[:100_000]) + whole[100_000:]  # the old file
    handler.cut[weights_path(handler)] = 100_000
    with pytest.raises(DownloadError, match="stopped at 100,000"):
        download_model("elmo-small", url=url, progress=False)
    handler.files[weights_path(handler)], handler.ignore_if_range = whole, ignore_if_range  # the mirror's new file
    handler.ranges.clear()
    found = download_model("elmo-small", url=url, progress=False)
    assert handler.ranges == ["bytes=100000-", *([None] if ignore_if_range else [])]
    assert found.weights.read_bytes() == whole


def test_two_downloads_of_one_model_never_share_a_part(server, cache):
    """A second download while one is under way (holding the folder's lock) is refused, writing nothing."""
    from encoder import locks

    url, handler = server
    partial = cache / "models" / "elmo-small.partial"
    partial.mkdir(parents=True)
    with locks.locked(partial / locks.LOCK, RuntimeError("held by the first download")):
        with pytest.raises(DownloadError, match="another download of elmo-small .* is under way"):
            download_model("elmo-small", url=url, progress=False)
        assert sorted(p.name for p in partial.iterdir()) == [locks.LOCK] and handler.ranges == []
    assert download_model("elmo-small", url=url, progress=False).name == "elmo-small"
    assert sorted(p.name for p in cache.joinpath("models").iterdir()) == ["elmo-small"]


def test_a_model_of_another_shape_is_not_taken_for_the_published_one(reference_fixture, cache):
    """The fixture (a consistent toy biLM, LSTM 64) served as elmo-original is refused: not its published shape."""
    with serving(published_files(reference_fixture, PUBLISHED["elmo-original"])) as (url, _):
        with pytest.raises(DownloadError, match="its shape is LSTM 64, .* where elmo-original is LSTM 4096.*nothing"):
            download_model("elmo-original", url=url, progress=False)
    assert not published_dir("elmo-original", cache).exists()
    assert not (cache / "models" / "elmo-original.partial").exists()


def test_a_transfer_cut_without_a_length_is_said_to_be_cut_short_and_fetched_again(server, cache):
    """Not taken as whole, and said to be a download cut short (how many bytes of how many the file's header
    states), where it said the files served "are not a published biLM (... truncated file: eof = ...)"; the next
    run fetches it again and succeeds."""
    url, handler = server
    size = len(handler.files[weights_path(handler)])
    handler.no_length.add(weights_path(handler))
    handler.cut[weights_path(handler)] = size - 1000
    with pytest.raises(DownloadError) as refused:
        download_model("elmo-small", url=url, progress=False)
    assert str(refused.value) == (
        f"the download of {url}{MODEL.folder}/{MODEL.files['weights.hdf5']} was cut short: {size - 1000:,} of the "
        f"{size:,} bytes the file says it has came; run the same command again"
    )
    nothing_installed(cache)
    handler.cut.clear()
    download_model("elmo-small", url=url, progress=False)
    Elmo.load("elmo-small")


@pytest.mark.parametrize("base", ["http://user:s3cret@127.0.0.1:x/", "http://user:s3/cret@127.0.0.1:1/"])
def test_a_base_url_that_is_not_a_url_is_one_error_without_its_password(cache, base):
    """A port that is not a number (http.client's InvalidURL), a password holding a slash (which moves the host)."""
    with pytest.raises(DownloadError, match=r"is not a URL that can be fetched; check --base-url") as refused:
        download_model("elmo-small", url=base, progress=False)
    assert "s3" not in str(refused.value)
    nothing_installed(cache)


def test_a_password_in_the_base_url_is_sent_but_never_shown(server, cache):
    url, handler = server
    secret = url.replace("http://", "http://user:s3cr%40t@")
    download_model("elmo-small", url=secret, progress=False)
    assert handler.authorizations[-1] == "Basic " + base64.b64encode(b"user:s3cr@t").decode()
    record = (published_dir("elmo-small", cache) / DOWNLOAD_RECORD).read_text()
    assert "s3cr" not in record and "***@127.0.0.1" in record
    with pytest.raises(DownloadError) as refused:
        download_model("elmo-small", url=secret.replace("/models/", "/nowhere/"), progress=False, force=True)
    assert "HTTP 404" in str(refused.value) and "s3cr" not in str(refused.value) and "user" not in str(refused.value)


@pytest.mark.parametrize(
    "body, reason",
    [
        (b"<html><body>Access denied</body></html>", "not a readable hdf5 file"),
        ("truncated", "was cut short: .* of the .* bytes the file says it has came"),
    ],
)
def test_a_body_that_is_not_the_weights_is_refused_and_not_kept(server, cache, body, reason):
    url, handler = server
    whole = handler.files[weights_path(handler)]
    handler.files[weights_path(handler)] = whole[: len(whole) // 2] if body == "truncated" else body
    with pytest.raises(DownloadError, match=reason):
        download_model("elmo-small", url=url, progress=False)
    nothing_installed(cache)
    assert not (cache / "models" / "elmo-small.partial" / "weights.hdf5").exists()


def test_weights_of_another_shape_are_refused(server, cache, tiny_model_dir, tmp_path):
    from encoder.weights import load_model, save_hdf5

    url, handler = server
    save_hdf5(load_model(tiny_model_dir), tmp_path / "other.json", tmp_path / "other.hdf5")
    handler.files[weights_path(handler)] = (tmp_path / "other.hdf5").read_bytes()
    with pytest.raises(DownloadError, match="does not match .*(has shape|missing)"):
        download_model("elmo-small", url=url, progress=False)
    nothing_installed(cache)


def test_no_network_is_one_error(cache):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DownloadError, match="cannot reach .*check the network"):
        download_model("elmo-small", url=f"http://127.0.0.1:{port}/", progress=False)
    nothing_installed(cache)


def test_a_read_only_cache_is_one_error_line(server, tmp_path):
    """Root, whom file modes do not stop, runs the command without the capability to override them (setpriv)."""
    url, _ = server
    drop = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: a read-only folder cannot be made")
        caps = "-dac_override,-dac_read_search"
        drop = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}"]
    cache = tmp_path / "read-only"
    cache.mkdir(mode=0o555)
    result = subprocess.run(
        [*drop, sys.executable, "-m", "encoder", "download", "elmo-small", "--cache", str(cache), "--base-url", url],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    cache.chmod(0o755)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: the cache folder {cache} cannot be written (Permission denied); choose one you may write with "
        "--cache DIR or $ELMO_SEARCH_CACHE"
    ]
    assert list(cache.iterdir()) == []


def test_a_model_not_downloaded_is_one_error_line_giving_the_command(tmp_path, capsys):
    from encoder.__main__ import main

    (tmp_path / "in.txt").write_text("a b c\n")
    with pytest.raises(SystemExit) as ended:
        main(["embed", "--model", "elmo-original", "--input", str(tmp_path / "in.txt"), "--output", "x.hdf5"])
    assert ended.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the elmo-original model is not downloaded")
    assert lines[0].endswith("download it first: python -m encoder download elmo-original")


def test_download_then_build_and_search_by_name(server, cache, tmp_path, capsys):
    """The round trip a user makes: one command to download, one to build, one to search; the index records the
    model by name, so it opens from the cache wherever that is."""
    from encoder.__main__ import main as encoder_main
    from indexer.__main__ import main as indexer_main

    url, _ = server
    encoder_main(["download", "elmo-small", "--base-url", url, "--quiet"])
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps({"id": f"d{i}", "text": text})
            for i, text in enumerate(["The river bank was muddy after the rain.", "She paid the money into a bank."])
        )
    )
    index = tmp_path / "index"
    assert (
        indexer_main(["build", "--corpus", str(corpus), "--out", str(index), "--model", "elmo-small", "--quiet"]) == 0
    )
    assert json.loads((index / "manifest.json").read_text())["model"]["source"] == "elmo-small"
    capsys.readouterr()
    assert indexer_main(["search", "--index", str(index), "muddy river", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["results"]
    assert hits[0]["doc_id"] == "d0"


def test_evaluate_takes_a_published_model_by_name(published_cache, monkeypatch, capsys):
    """`encoder evaluate` runs on a downloaded model by its name (the sense probe ships with the code)."""
    from encoder.__main__ import main

    monkeypatch.setenv("ELMO_SEARCH_CACHE", str(published_cache))
    main(["evaluate", "senses", "--model", "elmo-small", "--json", "--no-progress", "--limit", "40"])
    report = json.loads(capsys.readouterr().out)
    assert report["model"]["name"] == "elmo-small"


def test_the_command_shows_its_progress_and_where_the_model_went(server, cache, capsys):
    from encoder.__main__ import main

    url, _ = server
    main(["download", "elmo-small", "--base-url", url])
    err = capsys.readouterr().err
    assert "weights.hdf5.part: 100%" in err  # tqdm's bar, on the file being fetched
    assert f"elmo-small: checked and ready in {published_dir('elmo-small', cache)}" in err


def test_force_downloads_again_and_replaces_only_its_own_files(server, cache):
    url, handler = server
    download_model("elmo-small", url=url, progress=False)
    handler.ranges.clear()
    download_model("elmo-small", url=url, progress=False, force=True)
    assert handler.ranges == [None, None]  # both files fetched again, whole
    (published_dir("elmo-small", cache) / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="notes.txt"):
        download_model("elmo-small", url=url, progress=False, force=True)
    assert (published_dir("elmo-small", cache) / "notes.txt").read_text() == "mine"


def test_a_name_and_list_together_are_refused(tmp_path, capsys):
    """``download elmo-small --list`` listed the models and downloaded nothing, without a word about the name."""
    from encoder.__main__ import main

    with pytest.raises(SystemExit) as exited:
        main(["download", "elmo-small", "--list", "--cache", str(tmp_path)])
    assert exited.value.code == 2 and capsys.readouterr().err == (
        "error: give elmo-small to download it, or --list to see which models are downloaded, not both\n"
    )
    assert not any(tmp_path.iterdir())


def test_a_damaged_download_is_named_damaged_with_the_command_that_fetches_it_again(server, cache, monkeypatch):
    """A downloaded model whose weights changed since (same size, other bytes; or cut short) is said to be damaged,
    by ``download`` (which checks the files' sha256) and by a command that loads it, each giving ``--force``. A copy
    of the files (new times of change, same bytes) is still the download."""
    url, _ = server
    download_model("elmo-small", url=url, progress=False)
    weights = published_dir("elmo-small", cache) / "weights.hdf5"
    data = bytearray(weights.read_bytes())
    data[-100:] = bytes(100)
    weights.write_bytes(bytes(data))
    with pytest.raises(DownloadError, match=r"damaged \(weights.hdf5 changed since it was downloaded\).*--force"):
        download_model("elmo-small", url=url, progress=False)
    weights.write_bytes(bytes(data[:-100]))
    with pytest.raises(FileNotFoundError, match="elmo-small model in .* is damaged .*download elmo-small --force"):
        model_files.published_files("elmo-small", cache)
    download_model("elmo-small", url=url, progress=False, force=True)
    assert model_files.published_files("elmo-small", cache).weights == weights
    weights.write_bytes(weights.read_bytes())  # the same bytes written again: a new time of change
    assert Elmo.load("elmo-small").name == "elmo-small"
    hashed = []  # the record took the new time: the file is not hashed again
    monkeypatch.setattr(model_files, "sha256_of", lambda path: hashed.append(path) or sha256_of(path))
    assert model_files.read_download_record(weights.parent) is not None and hashed == []

    def change_a_number(value: float) -> None:  # the file keeps its size
        with h5py.File(weights, "r+") as f:
            names = []
            f.visititems(
                lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) and item.size else None
            )
            damaged = f[names[0]]
            damaged[(0,) * damaged.ndim] = value

    change_a_number(12345.0)  # finite: nothing in the numbers tells
    with pytest.raises(FileNotFoundError, match=r"elmo-small model in .* is damaged .*download elmo-small --force"):
        Elmo.load("elmo-small")
    change_a_number(np.nan)  # by its folder or its weights file, the record is not asked: the NaN is found on load
    for given in (weights.parent, weights):
        with pytest.raises(WeightsError, match=r"NaN .*damaged.*download it again: .*download elmo-small --force"):
            Elmo.load(given)
