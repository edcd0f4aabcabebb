"""Word senses on sentences of our own: does a layer's vector of an ambiguous word tell its senses apart?

``sense_probe_en.tsv`` was written for this probe (not taken from any data set): 16 ambiguous English words,
2 senses each, 5 sentences per sense, tokenized as NLTK's word tokenizer does (``sense_probe_ko.tsv``: 12 Korean
homonyms, sentences as written). The model's own rules tokenize each sentence, and the word's vector is that of
the token equal to it, or of the one token that begins with it where the model's unit is coarser (the eojeol
배를 for 배). For each word, every pair of its
sentences gets the cosine of the word's two vectors; the score is the ROC AUC of same-sense pairs against
different-sense pairs (ties count 1/2), macro-averaged over words. A second row gives the share of sentences
whose nearest other sentence of the same word has the same sense (1-NN accuracy; a tie for nearest counts
its same-sense share). Nothing is trained, so there is no learned mix. GloVe has one vector per word type,
so its column is the bag-of-context baseline (``baselines.bag_of_context``: the mean vector of the sentence's
other words, stopwords dropped). ``--limit N`` keeps the first N words (all their sentences).

Sanity check: the token layer is context-free (the same vector for a word string in every sentence), so
every pair ties and it should score an AUC of 50 and a 1-NN accuracy of 4/9 (44.4); a layer scores above
that only by reading the context.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..glove import Glove
from ..text import TextRules, text_rules
from .baselines import bag_of_context
from .embeddings import Embedder, cosine, layer_views
from .results import GLOVE, TaskResult

DATA = Path(__file__).with_name("sense_probe_en.tsv")  # absolute: it ships with the code, whatever the data root
DATA_KO = Path(__file__).with_name("sense_probe_ko.tsv")  # Korean: 12 homonyms, sentences as written
HEADER = "word\tsense\tsentence"
AUC_ROW, NN_ROW = "ROC AUC, same- vs different-sense pairs", "1-NN accuracy, nearest sentence same sense"


@dataclass(frozen=True)
class SenseSentence:
    word: str
    sense: str
    tokens: tuple[str, ...]
    index: int  # the word's position in tokens


def target_index(tokens: tuple[str, ...], word: str) -> int | None:
    """The position of ``word`` among a sentence's tokens: the one token equal to it, else the one token that
    begins with it (a unit coarser than the probe's words, such as the Korean eojeol 배를 for 배); None when
    there is no such single token."""
    for matches in (str.__eq__, str.startswith):
        found = [i for i, token in enumerate(tokens) if matches(token, word)]
        if found:
            return found[0] if len(found) == 1 else None
    return None


def read_senses(path: Path, text: TextRules, limit: int | None = None) -> list[SenseSentence]:
    """The TSV (a header, then word, sense, sentence), each sentence tokenized by ``text`` (the model's rules);
    at most ``limit`` words.

    Malformed data raise ValueError: the word must be one token of its sentence (see ``target_index``), and
    every word needs two senses with two sentences or more each, or its AUC is undefined.
    """
    with open(path, encoding="utf-8") as f:
        if f.readline().rstrip("\r\n") != HEADER:
            raise ValueError(f"{path}: the first line must be the header {HEADER!r}")
        items = []
        for number, line in enumerate(f, start=2):
            fields = line.rstrip("\r\n").split("\t")
            tokens = tuple(text.tokenize(fields[2])) if len(fields) == 3 else ()
            index = target_index(tokens, fields[0])
            if index is None:
                raise ValueError(f"{path}, line {number}: expected word, sense, sentence, the word once in it")
            items.append(SenseSentence(fields[0], fields[1], tokens, index))
    words = list(dict.fromkeys(s.word for s in items))[:limit]
    for word in words:
        counts = Counter(s.sense for s in items if s.word == word)
        if len(counts) < 2 or min(counts.values()) < 2:
            raise ValueError(f"{path}: '{word}' needs two senses or more with two sentences or more each")
    return [s for s in items if s.word in words]


def pair_auc(similarity: np.ndarray, senses: np.ndarray) -> float:
    """P(a random same-sense pair is more similar than a random different-sense pair), ties 1/2; pairs i < j."""
    i, j = np.triu_indices(len(senses), k=1)
    same = senses[i] == senses[j]
    margin = similarity[i, j][same][:, None] - similarity[i, j][~same][None, :]
    return float(np.mean((margin > 0) + 0.5 * (margin == 0)))


def nearest_same(similarity: np.ndarray, senses: np.ndarray) -> np.ndarray:
    """Per item: the share of its nearest other items (more than one on a tie) that have its sense."""
    others = np.where(np.eye(len(senses), dtype=bool), -np.inf, similarity)
    nearest = others == others.max(axis=1, keepdims=True)
    return (nearest & (senses[:, None] == senses[None, :])).sum(axis=1) / nearest.sum(axis=1)


def glove_contexts(glove: Glove, items: list[SenseSentence]) -> np.ndarray:
    """(N, d): the bag-of-context vector of each sentence's target word."""
    return np.stack([bag_of_context(glove, s.tokens, s.index, s.index + 1) for s in items])


def run(embedder: Embedder, data: Path, glove: Glove | None = None, limit: int | None = None) -> TaskResult:
    """The first ``limit`` words of the probe."""
    rules = embedder.elmo.text
    items = read_senses(data, rules, limit)
    layers = embedder.layers([s.tokens for s in items])
    columns = layer_views(np.stack([x[:, s.index] for x, s in zip(layers, items)]))
    if glove is not None:  # the language's baseline GloVe knows the units of the language's default rules
        columns[GLOVE] = glove_contexts(glove, read_senses(data, text_rules(rules.language), limit))
    words = list(dict.fromkeys(s.word for s in items))
    groups = {w: np.array([k for k, s in enumerate(items) if s.word == w]) for w in words}
    senses = np.array([s.sense for s in items])

    result = TaskResult(
        "senses",
        "AUC / accuracy x 100",
        [*embedder.views, *([GLOVE] if glove else [])],
        notes=[
            "GloVe: bag of context (mean vector of the other words of the sentence, stopwords dropped)",
            *([f"--limit {limit}: the first {len(words)} words of the probe"] if limit is not None else []),
        ],
        details={"words": len(words), "sentences": len(items), "AUC x 100 per word": {}},
    )
    auc, nn = {}, {}
    for name, vectors in columns.items():
        per_word, hits = {}, []
        for word, rows in groups.items():
            similarity = cosine(vectors[rows][:, None], vectors[rows][None, :])
            per_word[word] = 100.0 * pair_auc(similarity, senses[rows])
            hits.append(nearest_same(similarity, senses[rows]))
        auc[name] = float(np.mean(list(per_word.values())))
        nn[name] = 100.0 * float(np.concatenate(hits).mean())
        result.details["AUC x 100 per word"][name] = {w: round(v, 1) for w, v in per_word.items()}
    result.add(AUC_ROW, auc)
    result.add(NN_ROW, nn)
    return result
