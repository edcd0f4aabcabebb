"""Where a model's files are: the one rule (``resolve_model``) every command and the Python API follow.

A model is named in one of these ways: a shipped model by name (``default``, ``ko``); a published AllenNLP biLM by
name (``elmo-small``, ``elmo-medium``, ``elmo-original``, ``elmo-original-5.5b``: ``PUBLISHED``), found in the
download cache once ``encoder download NAME`` has fetched and checked it (never downloaded implicitly); one of our
model folders; or published weights given by hand (a folder with ``options.json`` and a ``.hdf5``, the two files,
or the ``.hdf5`` with ``options.json`` beside it).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open

from .commands import path_argument, program
from .files import atomic_path, cache_root, sha256_of, shipped_data
from .model import BiLMConfig
from .text import TextRules, text_rules
from .weights import CONFIG_FILE, read_config, weight_files

SHIPPED_MODELS_DIR = shipped_data() / "models"
SHIPPED_MODELS = ("default", "ko")
"""The models we ship, by name: the English default and the Korean model (data/models/NAME)."""
DEFAULT_MODEL_DIR = SHIPPED_MODELS_DIR / "default"


@dataclass(frozen=True)
class PublishedModel:
    """One of AllenNLP's published English biLMs (Peters et al. 2018): where it is served and its shape."""

    name: str
    folder: str  # its folder under the base URL, also the stem of its two file names
    lstm_dim: int
    projection_dim: int
    n_highway: int
    trained_on: str
    char_embed_dim: int = 16
    filters: tuple[tuple[int, int], ...] = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512), (7, 1024))

    @property
    def files(self) -> dict[str, str]:
        """Our name of each file in the cache -> its published name (under ``folder`` of the base URL)."""
        return {
            OPTIONS_FILE: f"elmo_{self.folder}_options.json",
            WEIGHTS_FILE: f"elmo_{self.folder}_weights.hdf5",
        }

    def options(self) -> dict:
        """The published ``options.json`` of this shape (what the benches build random models of)."""
        return {
            "lstm": {
                "cell_clip": 3,
                "use_skip_connections": True,
                "n_layers": 2,
                "proj_clip": 3,
                "projection_dim": self.projection_dim,
                "dim": self.lstm_dim,
            },
            "char_cnn": {
                "embedding": {"dim": self.char_embed_dim},
                "filters": [list(f) for f in self.filters],
                "n_highway": self.n_highway,
                "n_characters": 262,
                "max_characters_per_token": 50,
                "activation": "relu",
            },
        }


ONE_BILLION_WORDS = "the 1 Billion Word Benchmark (about 800M tokens of news)"
PUBLISHED = {
    model.name: model
    for model in (
        PublishedModel("elmo-small", "2x1024_128_2048cnn_1xhighway", 1024, 128, 1, ONE_BILLION_WORDS),
        PublishedModel("elmo-medium", "2x2048_256_2048cnn_1xhighway", 2048, 256, 1, ONE_BILLION_WORDS),
        PublishedModel("elmo-original", "2x4096_512_2048cnn_2xhighway", 4096, 512, 2, ONE_BILLION_WORDS),
        PublishedModel(
            "elmo-original-5.5b",
            "2x4096_512_2048cnn_2xhighway_5.5B",
            4096,
            512,
            2,
            "5.5B tokens: Wikipedia (1.9B) and the WMT 2008-2012 news crawl (3.6B)",
        ),
    )
}
"""AllenNLP's published biLMs by the name every command takes (``encoder download NAME``, ``--model NAME``)."""
MODEL_NAMES = (*SHIPPED_MODELS, *PUBLISHED)
"""Every model named by a word rather than a path; an index records these by name, so it opens wherever they are."""
OPTIONS_FILE, WEIGHTS_FILE, DOWNLOAD_RECORD = "options.json", "weights.hdf5", "download.json"
"""A published model in the cache: its two files under these names, and the record ``encoder download`` writes last,
once both are checked (their sizes and sha256): a folder without it is never used."""


def published_dir(name: str, cache: str | Path | None = None) -> Path:
    """Where the published model ``name`` lives once downloaded: ``models/NAME`` of the cache (``cache_root``)."""
    return Path(cache or cache_root()) / "models" / name


def download_command(name: str) -> str:
    return f"{program('encoder')} download {name}"


def read_download_record(folder: Path, times: bool = True) -> dict | None:
    """The record of a finished download in ``folder``, if its files are still those it describes: the same sizes,
    and the same times of last change or, where a time differs (a copy of the cache), the same sha256, after which
    the record takes the new time (where the folder may be written), so the file is hashed once. (A record written
    before times were recorded is taken on the sizes alone; so is every record with ``times=False``, for a caller
    that checks every byte itself.)"""
    try:
        record = json.loads((folder / DOWNLOAD_RECORD).read_text())
        retimed = False
        for name in (OPTIONS_FILE, WEIGHTS_FILE):
            entry, stat = record["files"][name], (folder / name).stat()
            if stat.st_size != entry["size"]:
                return None
            if times and entry.get("mtime_ns", stat.st_mtime_ns) != stat.st_mtime_ns:
                if sha256_of(folder / name) != entry["sha256"]:
                    return None
                entry["mtime_ns"], retimed = stat.st_mtime_ns, True
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if retimed:
        with contextlib.suppress(OSError):  # a cache this process may only read: hashed again next time
            with atomic_path(folder / DOWNLOAD_RECORD) as tmp:
                Path(tmp).write_text(json.dumps(record, indent=2))
    return record


def downloaded_name(folder: Path) -> str | None:
    """The published model whose download ``folder`` holds, by its record, whether or not its files are still those
    the record describes (None: no download's folder)."""
    try:
        name = json.loads((folder / DOWNLOAD_RECORD).read_text())["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return name if isinstance(name, str) else None


@dataclass(frozen=True)
class ModelFiles:
    """Where a model's weights are: one of our folders (``config.json`` + safetensors), or a published
    AllenNLP / bilm-tf model (``options.json`` + weights ``.hdf5``), with its name when it is one of ``PUBLISHED``."""

    folder: Path | None = None
    options: Path | None = None
    weights: Path | None = None
    name: str | None = None

    def hash(self) -> str:
        """Content hash of everything that decides the vectors: the architecture (``config.json``'s model fields,
        or ``options.json``, keys sorted) and the weights (our tensors by name: dtype, shape and values; the
        published ``.hdf5`` file). A model saved again unchanged, sharded or not, hashes the same."""
        digest = hashlib.sha256(self.text().identity.encode())  # the tokenizer and its version: tokens depend on it
        if self.folder is None:
            digest.update(json.dumps(json.loads(self.options.read_text()), sort_keys=True).encode())
            record = read_download_record(self.weights.parent) if self.name else None
            # a checked download's sha256 is recorded: hashing 374 MB again on every load would cost seconds
            digest.update((record["files"][WEIGHTS_FILE]["sha256"] if record else sha256_of(self.weights)).encode())
            return digest.hexdigest()[:16]
        config = read_config(self.folder)
        digest.update(
            json.dumps({k: config[k] for k in BiLMConfig.__dataclass_fields__ if k in config}, sort_keys=True).encode()
        )
        files = {}
        for file in weight_files(self.folder):
            try:
                with safe_open(file, framework="numpy") as tensors:
                    files |= dict.fromkeys(tensors.keys(), file)
            except (OSError, SafetensorError) as error:
                raise ValueError(f"{file} is not a readable safetensors file ({error}); restore the model") from None
        for name in sorted(files):  # by name, whichever shard holds it
            with safe_open(files[name], framework="numpy") as tensors:
                array = tensors.get_tensor(name)
            digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()[:16]

    def text(self) -> TextRules:
        """The model's language rules: the language its config names (published weights and a config without
        one: English)."""
        language = read_config(self.folder).get("language", "en") if self.folder is not None else "en"
        return text_rules(language)


ONE_PATH_MODEL_HELP = (
    "'default' (the shipped English model), 'ko' (the shipped Korean model), a published AllenNLP model once "
    f"downloaded ({', '.join(PUBLISHED)}: `encoder download NAME`), one of our model folders, a folder of published "
    "weights (options.json + .hdf5) or a weights .hdf5 (options.json beside it)"
)
"""How a command line that takes a model as one path (``train --init-from``) explains it."""
MODEL_SPEC_HELP = ONE_PATH_MODEL_HELP.replace(" or a weights", ", an options.json (give --weights too) or a weights")
"""How every command line explains ``--model`` (and ``--weights``): the forms ``resolve_model`` takes."""


def add_model_options(
    parser: argparse.ArgumentParser, default: str | None = "default", default_help: str = "default: %(default)s"
) -> None:
    """``--model`` and ``--weights``, spelled and explained the same way by every command line."""
    parser.add_argument("--model", default=default, metavar="MODEL", help=f"{MODEL_SPEC_HELP} ({default_help})")
    parser.add_argument(
        "--weights",
        type=path_argument,
        metavar="FILE.hdf5",
        help="published weights, when --model is their options.json",
    )


def published_files(name: str, cache: str | Path | None = None) -> ModelFiles:
    """The downloaded files of the published model ``name``; a ``FileNotFoundError`` giving the download command
    when they are not there (or not complete: the download record is written last)."""
    folder = published_dir(name, cache)
    if read_download_record(folder) is None:
        if (folder / DOWNLOAD_RECORD).is_file():  # downloaded once, and a file changed since
            raise FileNotFoundError(
                f"the {name} model in {folder} is damaged (its files are not those its download recorded); "
                f"download it again: {download_command(name)} --force"
            )
        raise FileNotFoundError(
            f"the {name} model is not downloaded (looked in {folder}); download it first: {download_command(name)}"
        )
    return ModelFiles(options=folder / OPTIONS_FILE, weights=folder / WEIGHTS_FILE, name=name)


def resolve_model(spec: str | Path = "default", weights: str | Path | None = None) -> ModelFiles:
    """The one rule for finding a model: a shipped one by name (``SHIPPED_MODELS``); a published one by name
    (``PUBLISHED``, from the download cache); one of our folders; a folder of published weights (``options.json``
    and one ``.hdf5``, or the one whose name contains "weights"); ``options.json`` with ``weights``; or a weights
    ``.hdf5`` with ``options.json`` beside it. Clear errors otherwise."""
    for given in (spec, weights) if weights is not None else (spec,):
        if not isinstance(given, (str, os.PathLike)):  # Path(None) said "expected str, bytes or os.PathLike"
            raise TypeError(f"a model is given by its name or its files' path (a string or a Path), not {given!r}")
    if weights is not None:
        options, weights = Path(spec), Path(weights)
        if options.is_dir():
            raise FileNotFoundError(f"{options} is a folder: with --weights FILE.hdf5, --model names its options.json")
        for path in (options, weights):
            if not path.is_file():
                raise FileNotFoundError(f"{path} does not exist")
        return ModelFiles(options=options, weights=weights)
    if str(spec) in SHIPPED_MODELS:
        folder = SHIPPED_MODELS_DIR / str(spec)
        if not (folder / CONFIG_FILE).is_file():
            raise FileNotFoundError(
                f"the {spec!r} model is not installed at {folder}; train one with "
                f"`{program('encoder')} train` or pass a model folder, or --model options.json --weights FILE.hdf5"
            )
        return ModelFiles(folder=folder)
    if str(spec) in PUBLISHED:
        return published_files(str(spec))
    path = Path(spec)
    if path.suffix == ".hdf5" and path.is_file():
        return resolve_model(path.parent / "options.json", path)
    if path.suffix == ".json" and path.is_file():
        raise FileNotFoundError(
            f"{path} is an options file: give its weights too (--weights FILE.hdf5), or name the weights .hdf5 with "
            "this options.json beside it"
        )
    if (path / CONFIG_FILE).is_file():
        return ModelFiles(folder=path)
    if (path / "options.json").is_file():
        candidates = sorted(path.glob("*.hdf5"))
        if len(candidates) > 1:
            candidates = [p for p in candidates if "weights" in p.name]
        if len(candidates) != 1:
            raise FileNotFoundError(f"{path} has options.json but not exactly one weights .hdf5 file")
        return ModelFiles(options=path / "options.json", weights=candidates[0])
    if not path.exists():
        raise FileNotFoundError(f"there is no model at {path}: {MODEL_SPEC_HELP}")
    raise FileNotFoundError(f"{path} holds neither {CONFIG_FILE} (our format) nor options.json (published weights)")


def model_folder(spec: str | Path = "default") -> Path:
    """The folder of one of our models (``resolve_model``'s rule); published weights are refused, as they have
    no language-model head, vocabulary or training record."""
    found = resolve_model(spec)
    if found.folder is None:
        raise ValueError(
            f"{spec} is a published AllenNLP model: it has no LM head, vocabulary or training "
            "record; this needs one of our model folders"
        )
    return found.folder


def model_hash(spec: str | Path = "default", weights: str | Path | None = None) -> str:
    """The content hash of a model's weights (what an index records), without loading it; same arguments as
    ``Elmo.load``."""
    return resolve_model(spec, weights).hash()
