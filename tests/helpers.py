"""What the tests share and build: the tiny models' shapes, the small corpora and their settings, a local server
of model files, a check that one call waits for another, and brute-force references. Fixtures are in conftest.py."""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import json
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np

from encoder.text import tokenize
from indexer import Index, Settings

SHARED = Path(__file__).resolve().parents[2] / "shared"


FIXTURE_DIR = SHARED / "fixtures" / "elmo"


TINY_CONFIG = dict(char_embed_dim=4, filters=[[1, 4], [2, 8]], n_highway=1, projection_dim=8, lstm_dim=16, n_layers=2)


SMALL_DOCUMENTS = [  # (id, title, text): one document without a title
    ("river", "The river bank", "The river bank was muddy after the rain. Fish swam near the bank."),
    ("money", "A loan", "She paid the money into her bank account. The bank gave her a loan."),
    ("volcano", "", "Volcanoes form where magma rises through the crust and erupts."),
]


TINY_LM_WORDS = ["<S>", "</S>", "<UNK>", *(f"w{i}" for i in range(45))]


class ServedFiles(http.server.BaseHTTPRequestHandler):
    """A local stand-in for the server of the published models: files by URL path with an ETag (their sha256),
    Range requests answered as S3 answers them (206, or 416 past the end; the whole file, 200, when If-Range names
    another ETag, unless ``ignore_if_range``); ``cut`` sends a file's full length (none for a path in ``no_length``)
    but closes after that many bytes, once; ``ranges`` and ``authorizations`` record those headers of each request."""

    files: dict[str, bytes] = {}
    cut: dict[str, int] = {}
    no_length: set[str] = set()
    ignore_if_range = False
    ranges: list[str | None] = []
    authorizations: list[str | None] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.ranges.append(self.headers.get("Range"))
        self.authorizations.append(self.headers.get("Authorization"))
        etag = f'"{hashlib.sha256(body).hexdigest()}"'
        same = self.ignore_if_range or self.headers.get("If-Range", etag) == etag
        start = int(self.headers["Range"].split("=")[1].rstrip("-")) if self.headers.get("Range") and same else 0
        if start >= len(body):
            self.send_error(416)
            return
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("ETag", etag)
        if self.path not in self.no_length:
            self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        self.wfile.write(body[start : self.cut.pop(self.path, len(body))])
        self.close_connection = True

    def log_message(self, *args) -> None:
        pass


def published_files(fixture: Path, model) -> dict[str, bytes]:
    """The reference fixture's two files under the URL paths of a published model (``PUBLISHED[name]``)."""
    prefix = f"/models/elmo/{model.folder}/"
    return {
        prefix + model.files["options.json"]: (fixture / "options.json").read_bytes(),
        prefix + model.files["weights.hdf5"]: (fixture / "lm_weights.hdf5").read_bytes(),
    }


@contextmanager
def serving(files: dict[str, bytes]) -> Iterator[tuple[str, type[ServedFiles]]]:
    """A local HTTP server of ``files`` for the block: its base URL (…/models/elmo/) and its handler class."""
    handler = type(
        "Handler",
        (ServedFiles,),
        {"files": dict(files), "cut": {}, "no_length": set(), "ranges": [], "authorizations": []},
    )
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/models/elmo/", handler
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextmanager
def fixture_published_as(name: str) -> Iterator[None]:
    """For the block, the published model ``name`` has the reference fixture's shape, so that the fixture served
    under its name passes the download's shape check."""
    from encoder.model_files import PUBLISHED

    options = json.loads((FIXTURE_DIR / "options.json").read_text())
    lstm, cnn = options["lstm"], options["char_cnn"]
    shape = dict(lstm_dim=lstm["dim"], projection_dim=lstm["projection_dim"], n_highway=cnn["n_highway"])
    shape |= dict(char_embed_dim=cnn["embedding"]["dim"], filters=tuple(map(tuple, cnn["filters"])))
    with mock.patch.dict(PUBLISHED, {name: dataclasses.replace(PUBLISHED[name], **shape)}):
        yield


# Twelve river-bank and twelve money-bank documents and eight others, the indexer tests' and the bad-input suite's.
FILLER = "yesterday my friend said that after lunch we finally went down to see how long the old road near".split()


OTHER = [
    "Volcanoes erupt when magma rises through the crust.",
    "Lava cools slowly into dark basalt rock.",
    "Bake the bread in a hot oven for forty minutes.",
    "Whisk the eggs with sugar until pale and thick.",
    "The train left the station five minutes late.",
    "Passengers changed trains at the busy junction.",
    "Plants turn sunlight into sugar through photosynthesis.",
    "The telescope revealed distant spiral galaxies.",
]


SETTINGS = Settings(shard_tokens=250, glove="train", glove_epochs=5, glove_dim=16, glove_min_count=1)


def corpus_documents(seed: int = 0) -> list[dict]:
    """Twelve river-bank and twelve money-bank documents (random filler, then the cue), and eight others."""
    rng = random.Random(seed)
    docs = []
    for i in range(12):
        for sense, cue in (("river", "muddy river"), ("money", "savings and loan")):
            text = " ".join(
                " ".join(rng.sample(FILLER, rng.randint(3, 7))).capitalize() + f" the {cue} bank." for _ in range(2)
            )
            docs.append({"id": f"{sense}-{i}", "title": f"{sense} story {i}", "text": text})
    for i in range(8):
        text = " ".join(f"{s[:-1]} in {1990 + 3 * i + j}." for j, s in enumerate(rng.sample(OTHER, 3)))
        docs.append({"id": f"other-{i}", "title": f"misc {i}", "text": text})
    return docs


def filler_documents(n: int, seed: int = 0) -> list[dict]:
    """``n`` documents of random ``FILLER`` sentences (seeded): what pads a test collection to
    ``ranking.MIN_CALIBRATED_DOCUMENTS``, so that relevance is shown, without a topic of its own."""
    rng = random.Random(seed)
    return [
        {
            "id": f"filler-{i}",
            "title": f"filler {i}",
            "text": " ".join(" ".join(rng.sample(FILLER, rng.randint(4, 8))).capitalize() + "." for _ in range(2)),
        }
        for i in range(n)
    ]


def write_corpus(directory: Path) -> Path:
    """``corpus_documents()`` as docs.jsonl and two paragraphs as notes.txt in ``directory``: a corpus folder."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "docs.jsonl", "w", encoding="utf-8") as f:
        for doc in corpus_documents():
            f.write(json.dumps(doc) + "\n")
    (directory / "notes.txt").write_text(
        "Glaciers carve deep valleys in the mountains.\n\nHoney never spoils when it is sealed.\n", encoding="utf-8"
    )
    return directory


def waits_for(owner: object, method: str, first: Callable[[], object], second: Callable[[], object]) -> bool:
    """Whether ``second`` waits for ``first``: ``first`` runs on a thread and is held inside ``owner.method`` (its
    first call), ``second`` starts on another thread and must not end until ``first`` is let go; both then end."""
    real = getattr(owner, method)
    inside, release, done = threading.Event(), threading.Event(), threading.Event()

    def held(*args: object, **kwargs: object) -> object:
        if not inside.is_set():
            inside.set()
            release.wait(60)
        return real(*args, **kwargs)

    setattr(owner, method, held)
    try:
        first_thread = threading.Thread(target=first)
        first_thread.start()
        assert inside.wait(60), "the first call never reached the method it is held in"
        second_thread = threading.Thread(target=lambda: (second(), done.set()))
        second_thread.start()
        waited = not done.wait(2)  # a lock can only make this true; a missing one ends it in milliseconds
        release.set()
        first_thread.join(60)
        second_thread.join(60)
        return waited and done.is_set()
    finally:
        setattr(owner, method, real)


def sif_pool(layers: np.ndarray, tokens: list[str], counts: dict[str, int]) -> np.ndarray:
    """Smooth-inverse-frequency pooling written out: weight a / (a + p(word)), punctuation 0."""
    total = sum(counts.values())
    weights = np.array(
        [1e-3 / (1e-3 + counts.get(t.lower(), 0) / total) if any(c.isalnum() for c in t) else 0.0 for t in tokens]
    )
    return (layers * weights[None, :, None]).sum(1) / weights.sum()


def brute_force(index: Index, query: str, weights: list[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cosines of the query to every sentence and every title, by plain numpy over the stored layers,
    independent of the indexer's search code: (sentence scores, title scores, query tokens' counts)."""
    counts: dict[str, int] = {}
    for tokens in index.sentences["tokens"]:
        for t in tokens:
            if any(c.isalnum() for c in t):
                counts[t.lower()] = counts.get(t.lower(), 0) + 1
    w = np.asarray(weights, np.float32)

    def cosines(kind: str) -> np.ndarray:
        stored = np.concatenate(
            [
                np.load(index.path / "shards" / s.name / f"{kind}_layers.npy").astype(np.float32)
                for s in index.manifest.shards
            ]
        )
        matrix = (stored * w[None, :, None]).sum(1)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        layers = index.elmo.embed([tokenize(query)])[0]
        pooled = {
            "sif": lambda: sif_pool(layers, tokenize(query), counts),
            "mean": lambda: layers.mean(1),
            "max": lambda: layers.max(1),
        }[index.manifest.pooling]()
        query_vector = (pooled * w[:, None]).sum(0)
        return matrix @ (query_vector / np.linalg.norm(query_vector))

    return cosines("sentence"), cosines("title"), counts


CLI_SETTINGS = [
    "--shard-tokens",
    str(SETTINGS.shard_tokens),
    "--glove",
    SETTINGS.glove,
    "--glove-epochs",
    str(SETTINGS.glove_epochs),
    "--glove-dim",
    str(SETTINGS.glove_dim),
    "--glove-min-count",
    str(SETTINGS.glove_min_count),
]
