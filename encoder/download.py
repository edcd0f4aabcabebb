"""``encoder download NAME``: fetch one of AllenNLP's published biLMs into the cache, and check it before any use.

    download_model("elmo-small")        # then Elmo.load("elmo-small"), --model elmo-small

The two files (``options.json``, ``weights.hdf5``) are fetched into ``models/NAME.partial/`` of the cache (each as
``FILE.part`` until it is whole); a download cut short is resumed where it stopped when the command runs again (an
HTTP Range request). Once both are
there, the weights must open as hdf5 and hold every tensor ``options.json`` asks for in its shape; then their sizes
and sha256 are recorded and the folder is renamed ``models/NAME``, where ``resolve_model`` looks. A file that fails
the check is deleted (it would only fail again); nothing half-written is ever where a model is looked up. Nothing is
downloaded unless a user asks with this command (``download_model``).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import NoReturn

from tqdm.auto import tqdm

from . import ownership
from .commands import project_version
from .files import CACHE_ENV, atomic_path, cache_root, sha256_of, writing
from .model_files import (
    DOWNLOAD_RECORD,
    OPTIONS_FILE,
    PUBLISHED,
    WEIGHTS_FILE,
    ModelFiles,
    published_dir,
    published_files,
    read_download_record,
)
from .weights import WeightsError, check_hdf5

BASE_URL = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo/"
"""Where AllenNLP serves the published biLMs (also https://allennlp.s3.amazonaws.com/models/elmo/)."""
BASE_URL_ENV = "ELMO_SEARCH_MODELS_URL"
PARTIAL = ".partial"  # models/NAME.partial: a download under way (or cut short, to be resumed)
CHUNK_BYTES = 1 << 20
TIMEOUT_S = 60  # seconds without a byte before a download counts as stopped


class DownloadError(ValueError):
    """A download that did not give a usable model; the message says why and what to do."""


def base_url(given: str | None = None) -> str:
    """The base URL: ``given`` (``--base-url``), else ``$ELMO_SEARCH_MODELS_URL``, else AllenNLP's."""
    url = given or os.environ.get(BASE_URL_ENV, "").strip() or BASE_URL
    return url if url.endswith("/") else url + "/"


def download_model(
    name: str, cache: str | Path | None = None, url: str | None = None, progress: bool = True, force: bool = False
) -> ModelFiles:
    """Download the published model ``name`` (``PUBLISHED``) into the cache (``cache``, default ``cache_root()``)
    from ``url`` (default ``base_url()``), resuming a download cut short, and check it; its files once there.
    A model already downloaded is left as it is unless ``force``."""
    if name not in PUBLISHED:
        raise DownloadError(f"unknown model {name!r}: one of {', '.join(PUBLISHED)}")
    model, root, url = PUBLISHED[name], Path(cache or cache_root()), base_url(url)
    target = published_dir(name, root)
    if not force and read_download_record(target) is not None:
        return published_files(name, root)
    partial = target.with_name(name + PARTIAL)
    try:
        partial.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DownloadError(
            f"the cache folder {root} cannot be written ({error.strerror}); choose one you may write with --cache DIR "
            f"or ${CACHE_ENV}"
        ) from None
    record = {"name": name, "elmo_search_version": project_version(), "files": {}}
    for ours, published in model.files.items():
        file_url = f"{url}{model.folder}/{published}"
        fetch(file_url, partial / ours, progress)
        record["files"][ours] = {"url": file_url}
    try:
        check_hdf5(partial / OPTIONS_FILE, partial / WEIGHTS_FILE)
    except WeightsError as error:
        shutil.rmtree(partial)  # complete but wrong: fetching the rest again would not mend it
        raise DownloadError(
            f"the files served for {name} are not a published biLM ({error}); nothing was kept"
        ) from None
    for ours, entry in record["files"].items():
        entry |= {"size": (partial / ours).stat().st_size, "sha256": sha256_of(partial / ours)}
    record["downloaded_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with atomic_path(partial / DOWNLOAD_RECORD) as tmp:
        Path(tmp).write_text(json.dumps(record, indent=2))
    if target.exists() or target.is_symlink():  # --force, or a folder left without its record
        ours = (OPTIONS_FILE, WEIGHTS_FILE, DOWNLOAD_RECORD)
        ownership.remove(root, [target], lambda path: path == target or (path.parent == target and path.name in ours))
    with writing(target):
        os.rename(partial, target)
    return published_files(name, root)


def fetch(url: str, file: Path, progress: bool) -> None:
    """Fetch ``url`` into ``file`` through ``file.part``, carrying on from the bytes already there (an HTTP Range
    request; a server that ignores it sends the whole file again). A transfer cut short keeps what came and says to
    run again; a whole transfer is renamed ``file`` (and not fetched again)."""
    if file.is_file():
        return
    part = file.with_name(file.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": f"elmo-search/{project_version()}", **({"Range": f"bytes={have}-"} if have else {})}
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT_S)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # asked for bytes past the end: what is there is not a beginning of this file
            part.unlink()
            return fetch(url, file, progress)
        raise DownloadError(
            f"{url}: HTTP {error.code} {error.reason}; check the base URL (--base-url or ${BASE_URL_ENV})"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise DownloadError(
            f"cannot reach {url} ({reason}); check the network, or give a mirror or a local copy with --base-url "
            f"or ${BASE_URL_ENV}"
        ) from None
    with response:
        if not (have and response.status == 206 and _resumes_at(response, have)):
            have = 0  # a whole file: start again
        length = response.headers.get("Content-Length")
        total = have + int(length) if length and length.isdigit() else None
        bar = tqdm(total=total, initial=have, unit="B", unit_scale=True, desc=part.name, disable=not progress)
        try:
            with bar, open(part, "ab" if have else "wb") as out:
                while chunk := response.read(CHUNK_BYTES):
                    with writing(part):  # a full disk names the file
                        out.write(chunk)
                    bar.update(len(chunk))
        except (http.client.HTTPException, TimeoutError, ConnectionError) as error:
            _stopped(url, part.stat().st_size, total, type(error).__name__)
    got = part.stat().st_size
    if total is not None and got != total:
        _stopped(url, got, total, "the connection closed early")
    os.replace(part, file)


def _resumes_at(response: http.client.HTTPResponse, offset: int) -> bool:
    """Whether a 206 answer's ``Content-Range`` starts where the part ends."""
    return response.headers.get("Content-Range", "").startswith(f"bytes {offset}-")


def _stopped(url: str, got: int, total: int | None, reason: str) -> NoReturn:
    of = f" of {total:,}" if total is not None else ""
    raise DownloadError(
        f"the download of {url} stopped at {got:,}{of} bytes ({reason}); run the same command again to resume"
    )
