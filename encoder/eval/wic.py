"""WiC (Pilehvar & Camacho-Collados 2019): is the target word used in the same sense in both sentences?

Two protocols, both trained on all of train and scored as accuracy on dev (WiC's test labels are not in
the data, so published test figures are anchors, not comparisons): the cosine of the target's two vectors
with one threshold tuned on train, and logistic regression on [u, v, u*v, |u-v|] (per layer, and with a
learned scalar mix). Baselines: the GloVe column is the bag of context (``baselines.bag_of_context``: GloVe
has one vector per word type, so it can only read the other words), and the majority class of train.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..glove import Glove
from .baselines import bag_of_context, majority_accuracy
from .embeddings import Embedder, cosine, layer_views
from .probe import probe_views
from .results import GLOVE, MIX, TaskResult, cap

DATA = "wic"
MAJORITY = "majority class"
ANCHORS = (
    "anchors: Pilehvar & Camacho-Collados 2019, TEST-set accuracy (this suite scores dev): ELMo 57.7, "
    "BERT-large 65.5; chance 50"
)


@dataclass(frozen=True)
class WicPair:
    target: str
    tokens: tuple[tuple[str, ...], tuple[str, ...]]
    index: tuple[int, int]
    same: bool


def read_wic(folder: Path, split: str) -> list[WicPair]:
    """``{split}.data.txt`` (target, PoS, i1-i2, sentence 1, sentence 2; tokens split on spaces) + gold T/F."""
    with (
        open(folder / f"{split}.data.txt", encoding="utf-8") as data,
        open(folder / f"{split}.gold.txt", encoding="utf-8") as gold,
    ):
        pairs = []
        for number, (line, label) in enumerate(zip(data, gold), start=1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 5 or label.strip() not in ("T", "F"):
                raise ValueError(f"{folder / split}.data.txt, line {number}: not a WiC line (or bad gold label)")
            target, _, indices, first, second = fields
            i, j = (int(x) for x in indices.split("-"))
            pairs.append(
                WicPair(target, (tuple(first.split(" ")), tuple(second.split(" "))), (i, j), label.strip() == "T")
            )
    return pairs


def tune_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    """The threshold (predict "same" when score >= it) with the best accuracy on (scores, labels)."""
    order = np.argsort(scores, kind="stable")
    s, same = scores[order], labels[order].astype(bool)
    # correct[k]: predict "different" for the k lowest scores and "same" for the rest
    correct = np.concatenate([[0], np.cumsum(~same)]) + np.concatenate([np.cumsum(same[::-1])[::-1], [0]])
    valid = np.ones(len(s) + 1, dtype=bool)
    valid[1:-1] = s[1:] > s[:-1]  # a cut between equal scores cannot be made
    k = int(np.argmax(np.where(valid, correct, -1)))
    if k == 0:
        return float(s[0]) - 1.0 if len(s) else 0.0
    if k == len(s):
        return float(s[-1]) + 1.0
    return float(s[k - 1] + s[k]) / 2


def threshold_accuracy(
    train_scores: np.ndarray, train_labels: np.ndarray, test_scores: np.ndarray, test_labels: np.ndarray
) -> tuple[float, float]:
    """Accuracy (%) on test with the threshold tuned on train, and that threshold."""
    threshold = tune_threshold(train_scores, train_labels)
    return 100.0 * float(np.mean((test_scores >= threshold) == test_labels.astype(bool))), threshold


def target_stacks(embedder: Embedder, pairs: list[WicPair]) -> np.ndarray:
    """(N, 2, L+1, D): all layers of the target token in sentence 1 and in sentence 2."""
    sentences = [p.tokens[k] for p in pairs for k in (0, 1)]
    layers = embedder.layers(sentences)
    index = [p.index[k] for p in pairs for k in (0, 1)]
    stack = np.stack([layers_i[:, i] for layers_i, i in zip(layers, index)])
    return stack.reshape(len(pairs), 2, *stack.shape[1:])


def glove_pairs(glove: Glove, pairs: list[WicPair]) -> np.ndarray:
    """(N, 2, d): the bag-of-context vector of the target in each sentence."""
    return np.stack([[bag_of_context(glove, p.tokens[k], p.index[k], p.index[k] + 1) for k in (0, 1)] for p in pairs])


def run(embedder: Embedder, data: Path, glove: Glove | None = None, limit: int | None = None) -> TaskResult:
    """All of train, the first ``limit`` dev pairs."""
    notes = [ANCHORS, "GloVe: bag of context (mean vector of the other words of each sentence, stopwords dropped)"]
    train, dev = read_wic(data, "train"), cap(read_wic(data, "dev"), limit, "dev pairs (train: all)", notes)
    y_train, y_dev = (np.array([p.same for p in ps], dtype=np.int64) for ps in (train, dev))
    x_train, x_dev = target_stacks(embedder, train), target_stacks(embedder, dev)
    columns = {
        name: (v_train, v_dev)
        for (name, v_train), v_dev in zip(layer_views(x_train).items(), layer_views(x_dev).values())
    }
    glove_arrays = (glove_pairs(glove, train), glove_pairs(glove, dev)) if glove is not None else None
    if glove_arrays is not None:
        columns[GLOVE] = glove_arrays

    result = TaskResult(
        "wic",
        "dev accuracy (%)",
        [*embedder.views, MIX, *([GLOVE] if glove else []), MAJORITY],
        notes=notes,
        details={"train pairs": len(train), "dev pairs": len(dev), "thresholds": {}},
    )
    majority = {MAJORITY: majority_accuracy(y_train, y_dev)}
    cosine_scores = {}
    for name, (v_train, v_dev) in columns.items():
        accuracy, threshold = threshold_accuracy(
            cosine(v_train[:, 0], v_train[:, 1]), y_train, cosine(v_dev[:, 0], v_dev[:, 1]), y_dev
        )
        cosine_scores[name] = accuracy
        result.details["thresholds"][name] = round(threshold, 4)
    result.add("cosine, threshold tuned on train", cosine_scores | majority)
    scores, weights = probe_views(x_train, y_train, x_dev, y_dev, 2, glove=glove_arrays, pair=True)
    result.add("logistic regression [u,v,u*v,|u-v|]", scores | majority)
    result.mix_weights["logistic regression"] = weights
    return result
