"""POS probing: a linear softmax classifier on frozen vectors, UD English EWT train -> test UPOS accuracy.

One probe per layer view, one on a learned scalar mix of all layers, and one on GloVe (the word's own
static vector; OOV words get zeros). Baseline without vectors: each word's most frequent tag in train
(unseen words: the most frequent tag overall). Sentences are embedded as the treebank tokenizes them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..files import open_text, reading
from ..glove import Glove
from .embeddings import Embedder
from .probe import probe_views
from .results import GLOVE, MIX, TaskResult, cap

DATA = "ud-english-ewt"
CHUNK = 2048  # sentences embedded at a time, so only the target vectors are kept
MOST_FREQUENT = "most frequent tag"
ANCHORS = "anchors: Peters et al. 2018 (PTB, not EWT): ELMo layer 1 97.3, layer 2 96.8"


def read_conllu(path: Path, column: int = 3) -> Iterator[tuple[list[str], list[str]]]:
    """(forms, tags) per sentence, the tags of ``column`` (3: UPOS, 4: XPOS); multi-word token ranges (1-2) and empty
    nodes (1.1) are skipped."""
    with reading(path), open_text(path) as f:
        forms: list[str] = []
        tags: list[str] = []
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if forms:
                    yield forms, tags
                forms, tags = [], []
            elif not line.startswith("#"):
                fields = line.split("\t")
                if fields[0].isdigit():
                    forms.append(fields[1])
                    tags.append(fields[column])
        if forms:
            yield forms, tags


def split_path(folder: Path, split: str) -> Path:
    """``en_ewt-ud-{split}.conllu``, or its ``.xz`` (train ships compressed)."""
    plain = folder / f"en_ewt-ud-{split}.conllu"
    return plain if plain.is_file() else plain.with_name(plain.name + ".xz")


def most_frequent_tags(train: list[tuple[list[str], list[str]]], test_forms: list[str]) -> list[str]:
    """Each test word's most frequent tag in train (ties: the first seen); the commonest tag for unseen words."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for forms, tags in train:
        for form, tag in zip(forms, tags):
            counts[form][tag] += 1
    overall = Counter(tag for _, tags in train for tag in tags).most_common(1)[0][0]
    return [counts[form].most_common(1)[0][0] if form in counts else overall for form in test_forms]


def token_stack(embedder: Embedder, sentences: list[list[str]]) -> np.ndarray:
    """(n_tokens, L+1, D) for all tokens of all sentences in order, embedded a chunk at a time."""
    parts = []
    for start in range(0, len(sentences), CHUNK):
        layers = embedder.layers(sentences[start : start + CHUNK], cache=False)
        parts.extend(np.moveaxis(x, 0, 1) for x in layers)
    return np.concatenate(parts)


def run(embedder: Embedder, data: Path, glove: Glove | None = None, limit: int | None = None) -> TaskResult:
    """All of train, the first ``limit`` test sentences."""
    notes = [ANCHORS]
    train = list(read_conllu(split_path(data, "train")))
    test = cap(list(read_conllu(split_path(data, "test"))), limit, "test sentences (train: all)", notes)
    tagset = sorted({t for _, tags in train for t in tags})
    label = {t: i for i, t in enumerate(tagset)}
    y_train = np.array([label[t] for _, tags in train for t in tags])
    # a tag never seen in training can only be wrong: it gets a label the probe never predicts
    y_test = np.array([label.get(t, len(tagset)) for _, tags in test for t in tags])
    glove_arrays = None
    if glove is not None:
        glove_arrays = tuple(
            np.stack([glove.mean([w]) for forms, _ in sentences for w in forms]) for sentences in (train, test)
        )
    embedder.announce([f for f, _ in train + test])
    scores, weights = probe_views(
        token_stack(embedder, [f for f, _ in train]),
        y_train,
        token_stack(embedder, [f for f, _ in test]),
        y_test,
        len(tagset),
        glove=glove_arrays,
    )
    baseline = most_frequent_tags(train, [w for forms, _ in test for w in forms])
    scores[MOST_FREQUENT] = 100.0 * float(np.mean(np.array(baseline) == np.array([t for _, ts in test for t in ts])))
    result = TaskResult(
        "pos",
        "UPOS test accuracy (%)",
        [*embedder.views, MIX, *([GLOVE] if glove else []), MOST_FREQUENT],
        notes=notes,
        details={"train tokens": len(y_train), "test tokens": len(y_test), "tags": tagset},
    )
    result.add("linear probe", scores)
    result.mix_weights["linear probe"] = weights
    return result
