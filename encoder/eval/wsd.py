"""Nearest-neighbour WSD (Peters et al. 2018, §5.3): SemCor sense centroids, Raganato ALL and its parts.

Each WordNet sense annotated in SemCor (all of it, always) gets the mean vector of its occurrences; a test
word takes the sense, among its lemma's WordNet senses, whose centroid is nearest (cosine). A lemma with no
sense seen in SemCor falls back to WordNet's first sense; F1 is reported with and without that fallback
(without it such words go unanswered, so precision and recall differ). A multi-word target (``took_place``
in SemCor, ``took place`` in the test sets) is split into tokens and its vector is their mean.

Baselines, as columns: the GloVe bag of context (``baselines.bag_of_context``, centroids built the same
way), WordNet's first sense (it answers every word), and SemCor's most frequent sense of the lemma (with
the same fallback as the vectors, or without it).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..files import open_text, reading
from ..glove import Glove
from .baselines import bag_of_context
from .embeddings import Embedder, cosine, layer_views, span_vector
from .results import GLOVE, TaskResult
from .wordnet import DEFAULT_DIR as DEFAULT_WORDNET
from .wordnet import SenseInventory

DATA = "wsd"
PARTS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015")
UPOS_TO_WN = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
FIRST_SENSE, SEMCOR_MFS = "WN first sense", "SemCor MFS"
CHUNK = 1024  # SemCor sentences embedded at a time; only the centroid sums are kept
ANCHORS = (
    "anchors (ALL F1): Raganato et al. 2017, WN first sense 65.2, SemCor MFS 64.8; "
    "Peters et al. 2018 (ELMo, nearest SemCor centroid + first-sense fallback), layer 1 67.4, layer 2 69.0"
)


@dataclass
class Target:
    """A word to disambiguate (or a SemCor annotation): tokens start..end-1 of its sentence."""

    id: str
    lemma: str
    pos: str
    start: int
    end: int
    senses: list[str] = field(default_factory=list)


@dataclass
class Sentence:
    """Tokens as the biLM reads them, with the targets among them."""

    tokens: list[str]
    targets: list[Target]
    id: str = ""


def _add_word(tokens: list[str], text: str, separator: str) -> tuple[int, int]:
    """Append a (possibly multi-word) word's tokens; return its span."""
    start = len(tokens)
    tokens.extend(t for t in text.split(separator) if t)
    return start, len(tokens)


def read_raganato(xml_file: Path, gold_file: Path) -> list[Sentence]:
    """Sentences of a Raganato data.xml (ids start with their part's name) with their instances and gold keys."""
    gold = {}
    with open(gold_file, encoding="utf-8") as f:
        for line in f:
            instance_id, *keys = line.split()
            gold[instance_id] = keys
    sentences = []
    for node in ET.parse(xml_file).getroot().iter("sentence"):
        tokens: list[str] = []
        targets = []
        for word in node:
            start, end = _add_word(tokens, word.text or "", " ")
            if word.tag == "instance" and end > start:
                targets.append(
                    Target(
                        word.get("id"),
                        word.get("lemma"),
                        UPOS_TO_WN.get(word.get("pos"), "?"),
                        start,
                        end,
                        gold.get(word.get("id"), []),
                    )
                )
        if tokens:
            sentences.append(Sentence(tokens, targets, node.get("id")))
    return sentences


def part_of(sentence_or_target_id: str) -> str:
    """``senseval2.d000.s000[.t000]`` -> ``senseval2``."""
    return sentence_or_target_id.split(".")[0]


def first_of_each_part(sentences: list[Sentence], limit: int | None, notes: list[str]) -> list[Sentence]:
    """The first ``limit`` sentences of each part, so a limited ALL still covers all five."""
    parts: dict[str, list[Sentence]] = defaultdict(list)
    for sentence in sentences:
        parts[part_of(sentence.id)].append(sentence)
    kept = [s for part in parts.values() for s in part[:limit]]
    if limit is not None:
        instances = sum(len(s.targets) for s in sentences)
        notes.append(
            f"--limit {limit}: scored the first {limit:,} sentences of each part, "
            f"{sum(len(s.targets) for s in kept):,} of {instances:,} test instances (SemCor: all)"
        )
    return kept


def read_semcor_file(path: Path, inventory: SenseInventory) -> Iterator[Sentence]:
    """Sentences of one SemCor NAF file with their annotations that are WordNet 3.0 sense keys."""
    with reading(path), open_text(path) as f:
        root = ET.parse(f).getroot()
    sentences: dict[str, Sentence] = {}
    where: dict[str, tuple[Sentence, int, int]] = {}
    for wf in root.iter("wf"):
        sentence = sentences.setdefault(wf.get("sent"), Sentence([], []))
        start, end = _add_word(sentence.tokens, wf.text or "", "_")
        where[wf.get("id")] = (sentence, start, end)
    for term in root.iter("term"):
        keys = [
            f"{term.get('lemma')}%{ref.get('reference')}"
            for ref in term.iter("externalRef")
            if ref.get("reftype") == "lexical_key"
        ]
        keys = [k.lower() for k in keys if k.lower() in inventory.keys]
        spans = [where[t.get("id")] for t in term.iter("target") if t.get("id") in where]
        if keys and spans and all(s[0] is spans[0][0] for s in spans):
            start, end = min(s[1] for s in spans), max(s[2] for s in spans)
            if end > start:
                spans[0][0].targets.append(Target(term.get("id"), term.get("lemma"), "", start, end, keys))
    yield from (s for s in sentences.values() if s.tokens)


def read_semcor(folder: Path, inventory: SenseInventory) -> list[Sentence]:
    """The SemCor sentences that hold an annotation, files in sorted order (brown1, brown2, brownv)."""
    paths = sorted(folder.glob("*/*.naf.xz"))
    if not paths:
        raise FileNotFoundError(f"no SemCor NAF files (*/*.naf.xz) in {folder}")
    return [s for path in paths for s in read_semcor_file(path, inventory) if s.targets]


class Centroids:
    """Running sums of each sense's occurrence vectors (ELMo stack (L+1, D), optionally GloVe)."""

    def __init__(self):
        self.sums: dict[str, np.ndarray] = {}
        self.glove_sums: dict[str, np.ndarray] = {}
        self.counts: dict[str, int] = defaultdict(int)

    def add(self, key: str, stack: np.ndarray, glove_vector: np.ndarray | None) -> None:
        self.sums[key] = self.sums.get(key, 0.0) + stack
        if glove_vector is not None:
            self.glove_sums[key] = self.glove_sums.get(key, 0.0) + glove_vector
        self.counts[key] += 1


def collect_centroids(embedder: Embedder, sentences: list[Sentence], glove: Glove | None) -> Centroids:
    """Sense centroids over annotated sentences, embedding CHUNK sentences at a time (only sums are kept)."""
    centroids = Centroids()
    embedder.announce([s.tokens for s in sentences])
    for start in range(0, len(sentences), CHUNK):
        chunk = sentences[start : start + CHUNK]
        for sentence, layers in zip(chunk, embedder.layers([s.tokens for s in chunk], cache=False)):
            for target in sentence.targets:
                stack = span_vector(layers, target.start, target.end)
                vector = bag_of_context(glove, sentence.tokens, target.start, target.end) if glove else None
                for key in target.senses:
                    centroids.add(key, stack, vector)
    return centroids


def nearest_senses(
    vectors: np.ndarray, candidates: list[list[str]], centroids: dict[str, np.ndarray]
) -> list[str | None]:
    """For each vector (N, D) the candidate key with the nearest centroid; None when no candidate has one."""
    answers = []
    for vector, keys in zip(vectors, candidates):
        known = [k for k in keys if k in centroids]
        if not known:
            answers.append(None)
            continue
        similarity = cosine(np.broadcast_to(vector, (len(known), len(vector))), np.stack([centroids[k] for k in known]))
        answers.append(known[int(np.argmax(similarity))])
    return answers


def f1(answers: list[str | None], gold: list[list[str]]) -> float:
    """F1 x 100 of answers (None = no answer) against gold key lists."""
    answered = sum(a is not None for a in answers)
    correct = sum(a is not None and a in g for a, g in zip(answers, gold))
    precision = correct / answered if answered else 0.0
    recall = correct / len(gold) if gold else 0.0
    return 100.0 * 2 * precision * recall / (precision + recall) if correct else 0.0


def most_frequent_senses(candidates: list[list[str]], counts: dict[str, int]) -> list[str | None]:
    """Per word, its candidate sense annotated most often in SemCor (ties: WordNet's order); None if none was."""
    return [max((k for k in keys if counts.get(k)), key=lambda k: counts[k], default=None) for keys in candidates]


def run(
    embedder: Embedder, data: Path, glove: Glove | None = None, limit: int | None = None, wordnet: Path | None = None
) -> TaskResult:
    """Centroids from all of SemCor; the first ``limit`` test sentences of each part."""
    notes = [ANCHORS, "GloVe: bag of context (mean vector of the other words of the sentence, stopwords dropped)"]
    inventory = SenseInventory.load(wordnet or DEFAULT_WORDNET)
    folder = data / "Evaluation_Datasets" / "ALL"
    test = first_of_each_part(read_raganato(folder / "ALL.data.xml", folder / "ALL.gold.key.txt"), limit, notes)
    centroids = collect_centroids(embedder, read_semcor(data / "SemCor3.0-NAF", inventory), glove)
    targets = [t for s in test for t in s.targets]
    stacks = np.stack(
        [
            span_vector(layers, t.start, t.end)
            for s, layers in zip(test, embedder.layers([s.tokens for s in test]))
            for t in s.targets
        ]
    )

    # per column: the test vectors and the centroid of every sense (sums: cosine ignores the scale)
    columns: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]] = {}
    keys = list(centroids.sums)
    centroid_views = layer_views(np.stack([centroids.sums[k] for k in keys])) if keys else {}
    for name, vectors in layer_views(stacks).items():
        columns[name] = (vectors, dict(zip(keys, centroid_views.get(name, []))))
    if glove is not None:
        columns[GLOVE] = (
            np.stack([bag_of_context(glove, s.tokens, t.start, t.end) for s in test for t in s.targets]),
            centroids.glove_sums,
        )
    candidates = [inventory.senses(t.lemma, t.pos) for t in targets]
    first = [c[0] if c else None for c in candidates]
    answers = {name: nearest_senses(vectors, candidates, sums) for name, (vectors, sums) in columns.items()}
    answers[SEMCOR_MFS] = most_frequent_senses(candidates, centroids.counts)
    unseen = sum(answer is None for answer in answers[SEMCOR_MFS])

    result = TaskResult(
        "wsd",
        "F1",
        [*answers, FIRST_SENSE],
        notes=notes,
        details={
            "semcor senses": len(keys),
            "semcor occurrences": int(sum(centroids.counts.values())),
            "test instances": len(targets),
            "test instances answered by the first-sense fallback (%)": round(100 * unseen / max(len(targets), 1), 1),
        },
    )
    for part in ("ALL", *PARTS):
        keep = [i for i, t in enumerate(targets) if part in ("ALL", part_of(t.id))]
        gold = [targets[i].senses for i in keep]
        first_f1 = f1([first[i] for i in keep], gold)
        result.add(
            f"{part} + first-sense fallback",
            {
                FIRST_SENSE: first_f1,
                **{
                    name: f1([a[i] if a[i] is not None else first[i] for i in keep], gold)
                    for name, a in answers.items()
                },
            },
        )
        result.add(
            f"{part}, SemCor senses only",
            {FIRST_SENSE: first_f1, **{name: f1([a[i] for i in keep], gold) for name, a in answers.items()}},
        )
    return result
