"""``encoder download NAME``: fetch one of AllenNLP's published biLMs into the cache, and check it before any use.

    download_model("elmo-small")        # then Elmo.load("elmo-small"), --model elmo-small

The two files (``options.json``, ``weights.hdf5``) are fetched into ``models/NAME.partial/`` of the cache (each as
``FILE.part`` until it is whole), by one process at a time (the folder's lock: a second download of the model is
refused). A download cut short is resumed where it stopped when the command runs again (an HTTP Range request), if
the server's file is still the one the part began: its ETag or Last-Modified and size, kept beside the part as
``FILE.part.source``, sent as If-Range and compared with the answer's; else, and from a server that gives neither,
it starts again from the first byte. Once both are there, the model must have the shape published under its name
(``PUBLISHED``) and its weights must open as hdf5 (which checks the file's end: a transfer cut short that no
Content-Length revealed is said to be cut short, and the next run fetches it again) and hold every tensor
``options.json`` asks for, in its shape; then their sizes and sha256 are recorded and the folder is renamed
``models/NAME``, where ``resolve_model`` looks. A file that fails the check is deleted (it would only fail again);
nothing half-written is ever where a model is looked up. A user and password in the base URL are sent (HTTP basic
authentication), never shown or recorded. Nothing is downloaded unless a user asks with this command
(``download_model``).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import NoReturn

from tqdm.auto import tqdm

from . import locks, ownership
from .commands import project_version
from .files import CACHE_ENV, atomic_path, cache_root, sha256_of, writing
from .model import BiLMConfig
from .model_files import (
    DOWNLOAD_RECORD,
    OPTIONS_FILE,
    PUBLISHED,
    WEIGHTS_FILE,
    ModelFiles,
    download_command,
    published_dir,
    published_files,
    read_download_record,
)
from .weights import CutShortError, WeightsError, check_hdf5

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
    root, url = Path(cache or cache_root()), base_url(url)
    target = published_dir(name, root)
    record = None if force else read_download_record(target, times=False)
    if record is not None:  # there already: its files checked against the download's record, byte for byte
        changed = [
            file
            for file, entry in record["files"].items()
            if isinstance(entry, dict) and "sha256" in entry and sha256_of(target / file) != entry["sha256"]
        ]
        if changed:
            raise DownloadError(
                f"the {name} model in {target} is damaged ({', '.join(changed)} changed since it was downloaded); "
                f"download it again: {download_command(name)} --force"
            )
        return published_files(name, root)
    partial = target.with_name(name + PARTIAL)
    try:
        partial.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DownloadError(
            f"the cache folder {root} cannot be written ({error.strerror}); choose one you may write with --cache DIR "
            f"or ${CACHE_ENV}"
        ) from None
    busy = DownloadError(f"another download of {name} into {root} is under way; wait for it to end")
    with locks.locked(partial / locks.LOCK, busy):
        _download(name, partial, url, progress)
        if target.exists() or target.is_symlink():  # --force, or a folder left without its record
            ours = (OPTIONS_FILE, WEIGHTS_FILE, DOWNLOAD_RECORD)
            ownership.remove(
                root, [target], lambda path: path == target or (path.parent == target and path.name in ours)
            )
        (partial / locks.LOCK).unlink()  # held still: a download that opened it meanwhile finds it gone (busy)
        with writing(target):
            os.rename(partial, target)
    return published_files(name, root)


def _download(name: str, partial: Path, url: str, progress: bool) -> None:
    """Fetch the model's files into ``partial``, check them and write their record there."""
    model = PUBLISHED[name]
    record = {"name": name, "elmo_search_version": project_version(), "files": {}}
    for ours, published in model.files.items():
        file_url = f"{url}{model.folder}/{published}"
        fetch(file_url, partial / ours, progress)
        record["files"][ours] = {"url": shown(file_url)}
    try:
        config = check_hdf5(partial / OPTIONS_FILE, partial / WEIGHTS_FILE)
        published = BiLMConfig.from_options(model.options())
        if config != published:
            raise WeightsError(f"its shape is {_shape(config)}, where {name} is {_shape(published)}")
    except CutShortError as error:  # a transfer that ended early with no Content-Length to tell: fetch it again
        (partial / WEIGHTS_FILE).unlink()
        raise DownloadError(
            f"the download of {record['files'][WEIGHTS_FILE]['url']} was cut short: {error.size:,} of the "
            f"{error.stated:,} bytes the file says it has came; run the same command again"
        ) from None
    except WeightsError as error:
        shutil.rmtree(partial)  # complete but wrong: fetching the rest again would not mend it
        raise DownloadError(
            f"the files served for {name} are not a published biLM ({error}); nothing was kept"
        ) from None
    for ours, entry in record["files"].items():
        stat = (partial / ours).stat()  # its time of last change too: a later change of the same size is then seen
        entry |= {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256_of(partial / ours)}
    record["downloaded_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with atomic_path(partial / DOWNLOAD_RECORD) as tmp:
        Path(tmp).write_text(json.dumps(record, indent=2))


def _shape(config: BiLMConfig) -> str:
    return (
        f"LSTM {config.lstm_dim}, projection {config.projection_dim}, {config.n_highway} highway, "
        f"{config.n_filters} filters"
    )


def shown(text: str) -> str:
    """``text`` (a URL, or a message holding one) as it may be shown or recorded: a user and password in a URL
    replaced by ``***`` (by its form alone: it holds for URLs that do not parse too)."""
    return re.sub(r"//[^@\s]*@", "//***@", text)


def _request(url: str, headers: dict[str, str]) -> urllib.request.Request:
    """A GET of ``url`` with ``headers``; a user and password in it sent as HTTP basic authentication."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return urllib.request.Request(url, headers=headers)
    user = urllib.parse.unquote(parts.username or "") + ":" + urllib.parse.unquote(parts.password or "")
    bare = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return urllib.request.Request(
        bare, headers={**headers, "Authorization": f"Basic {base64.b64encode(user.encode()).decode()}"}
    )


def fetch(url: str, file: Path, progress: bool) -> None:
    """Fetch ``url`` into ``file`` through ``file.part``, carrying on from the bytes already there when the server's
    file is still the one they began (a Range request with If-Range; else, or when the server ignores it, the whole
    file again). A transfer cut short keeps what came and says to run again; a whole transfer is renamed ``file``
    (and not fetched again)."""
    if file.is_file():
        return
    part = file.with_name(file.name + ".part")
    source = file.with_name(file.name + ".part.source")  # what the server said of the file the part began
    began = _read_source(source) if part.exists() else {}
    have = part.stat().st_size if began.get("validator") else 0
    headers = {"User-Agent": f"elmo-search/{project_version()}"}
    if have:
        headers |= {"Range": f"bytes={have}-", "If-Range": began["validator"]}
    try:
        response = urllib.request.urlopen(_request(url, headers), timeout=TIMEOUT_S)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # asked for bytes past the end: what is there is not a beginning of this file
            part.unlink()
            return fetch(url, file, progress)
        raise DownloadError(
            f"{shown(url)}: HTTP {error.code} {error.reason}; check the base URL (--base-url or ${BASE_URL_ENV})"
        ) from None
    except (http.client.InvalidURL, ValueError):  # its words may quote a piece of a password: not shown
        raise DownloadError(
            f"{shown(url)} is not a URL that can be fetched; check --base-url or ${BASE_URL_ENV}"
        ) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
        reason = shown(str(getattr(error, "reason", None) or error))
        raise DownloadError(
            f"cannot reach {shown(url)} ({reason}); check the network, or give a mirror or a local copy with "
            f"--base-url or ${BASE_URL_ENV}"
        ) from None
    with response:
        if response.status == 206 and not (have and _continues(response, have, began)):
            if not have:
                raise DownloadError(f"{shown(url)} answered with part of the file where the whole was asked for")
            part.unlink()  # the rest of another file (a server that ignored If-Range): from the first byte
            return fetch(url, file, progress)
        if response.status != 206:
            have = 0  # a whole file: start again
        length = response.headers.get("Content-Length")
        total = have + int(length) if length and length.isdigit() else None
        if not have:
            _write_source(source, response, total)
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
    source.unlink(missing_ok=True)


def _continues(response: http.client.HTTPResponse, offset: int, began: dict) -> bool:
    """Whether a 206 answer is the rest of the file the part began: its ``Content-Range`` starts where the part ends,
    of the same total size, with the same ETag when the server gives one (a server that ignored If-Range)."""
    start, _, total = response.headers.get("Content-Range", "").removeprefix("bytes ").partition("/")
    etag = response.headers.get("ETag")
    return (
        start.startswith(f"{offset}-")
        and total == str(began.get("size"))
        and (etag is None or etag == began.get("etag"))
    )


def _write_source(source: Path, response: http.client.HTTPResponse, size: int | None) -> None:
    """Keep what the server says of the file a part begins: its ETag (a strong one) or Last-Modified, and size."""
    etag = response.headers.get("ETag")
    strong = etag if etag and not etag.startswith("W/") else None
    validator = strong or response.headers.get("Last-Modified")
    began = {"validator": validator, "etag": etag, "size": size} if validator and size is not None else {}
    with atomic_path(source) as tmp, writing(source):
        Path(tmp).write_text(json.dumps(began))


def _read_source(source: Path) -> dict:
    try:
        began = json.loads(source.read_text())
        return began if isinstance(began, dict) else {}
    except (OSError, ValueError):
        return {}


def _stopped(url: str, got: int, total: int | None, reason: str) -> NoReturn:
    of = f" of {total:,}" if total is not None else ""
    raise DownloadError(
        f"the download of {shown(url)} stopped at {got:,}{of} bytes ({reason}); run the same command again to resume"
    )
