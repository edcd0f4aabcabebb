"""Word similarity: SimLex-999 and WordSim-353 Spearman x 100 with type-level vectors.

ELMo has no vector for a word type, so two are built: the token layer (the character CNN's context-free
vector of the word as listed), and for the biLSTM layers the average of the word's vectors over its
first CONTEXTS sentences in held-out Wikipedia text (``corpus-en/valid.txt.xz`` beside the data folder;
a word found in no sentence is embedded on its own). Cosine similarity, all pairs; an OOV GloVe word
scores 0 against everything. Beside each score, its coverage: the share of pairs whose two words both
have what the column needs (a context sentence for the biLSTM layers, a vector for GloVe).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from ..files import open_text, reading
from ..glove import Glove
from ..terminal import counted
from ..text import split_and_tokenize
from .embeddings import Embedder, cosine, layer_views
from .results import GLOVE, TaskResult, cap
from .sts import spearman

DATA = "wordsim"
DATASETS = {"SimLex-999": ("simlex-999/SimLex-999.txt", 3, 999), "WordSim-353": ("wordsim-353/combined.tab", 2, 353)}
"""Each data set's file, the column of its gold score, and how many pairs it holds."""
CONTEXT_CORPUS = Path("corpus-en") / "valid.txt.xz"  # relative to the folder holding the wordsim folder
CONTEXTS = 5
MAX_SENTENCE_TOKENS = 80


def read_pairs(
    path: Path, score_column: int, size: int | None = None, notes: list[str] | None = None
) -> list[tuple[str, str, float]]:
    """(word 1, word 2, score) from a tab-separated file with a header line: every line two words and a finite
    score, with as many fields as the header (a line with fewer was cut: its last field may be a cut number). Fewer
    (or more) than the data set's ``size`` pairs is said in ``notes``: a file cut short between lines is not scored
    as if whole without a word; one that also ends without a line end was cut inside its last line, whose score may
    be a cut number, and is refused; so are a line that is not UTF-8 and gold scores a rank correlation cannot be
    measured on (fewer than two pairs, or one score for all)."""
    pairs, ended = [], True
    with open(path, "rb") as f:
        lines = (_decoded(raw, path, number) for number, raw in enumerate(f, start=1))
        header = next(lines, "").rstrip("\r\n").split("\t")
        for number, line in enumerate(lines, start=2):
            if not line.strip():
                continue
            ended = line.endswith("\n")
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < len(header):
                raise ValueError(
                    f"{path}, line {number} has {len(fields)} of the header's {len(header)} fields: a line cut short?"
                )
            try:
                score = float(fields[score_column])
            except (IndexError, ValueError):
                score = None
            if len(fields) <= score_column or not fields[0].strip() or not fields[1].strip() or score is None:
                raise ValueError(f"{path}, line {number} is not two words and a score in column {score_column + 1}")
            if not np.isfinite(score):
                raise ValueError(
                    f"{path}, line {number}: the gold score is {fields[score_column]}, not a finite number"
                )
            pairs.append((fields[0].strip(), fields[1].strip(), score))
    if size is not None and len(pairs) < size and not ended:
        raise ValueError(
            f"{path} ends inside line {number}, with {len(pairs):,} of the data set's {size:,} pairs: a file cut short"
        )
    if len({score for _, _, score in pairs}) < 2:  # rho is undefined: it would be scored 0, as if measured
        raise ValueError(
            f"{path} holds {counted(len(pairs), 'pair')}, with {'one gold score' if pairs else 'no gold scores'}: a rank "
            "correlation needs at least two pairs with different gold scores"
        )
    if size is not None and len(pairs) != size and notes is not None:
        notes.append(f"{path} holds {len(pairs):,} pairs, the data set {size:,}: a file cut short? (scored as it is)")
    return pairs


def _decoded(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}, line {number}: byte 0x{raw[error.start]:02x} at column {error.start + 1} is not UTF-8"
        ) from None


def find_contexts(
    paragraphs: Iterable[str], words: set[str], per_word: int = CONTEXTS
) -> dict[str, list[tuple[list[str], int]]]:
    """Up to ``per_word`` (sentence tokens, position) per word (lowercase match), in corpus order."""
    found: dict[str, list[tuple[list[str], int]]] = {w: [] for w in words}
    wanted = set(words)
    for paragraph in paragraphs:
        if not wanted:
            break
        if wanted.isdisjoint(re.findall(r"\w+", paragraph.lower())):
            continue
        for sentence in split_and_tokenize(paragraph):
            if len(sentence.tokens) > MAX_SENTENCE_TOKENS:
                continue
            for position, token in enumerate(sentence.tokens):
                word = token.lower()
                if word in wanted:
                    found[word].append((sentence.tokens, position))
                    if len(found[word]) >= per_word:
                        wanted.discard(word)
    return found


def type_stacks(embedder: Embedder, words: list[str], contexts: dict[str, list[tuple[list[str], int]]]) -> np.ndarray:
    """(W, L+1, D): the token layer of each word as listed; other layers averaged over its contexts."""
    stacks = np.stack([x[:, 0] for x in embedder.layers([[w] for w in words])])
    uses = [(i, tokens, position) for i, w in enumerate(words) for tokens, position in contexts.get(w.lower(), [])]
    if uses:
        sums = np.zeros_like(stacks[:, 1:])
        counts = np.zeros(len(words))
        for (i, _, position), layers in zip(uses, embedder.layers([tokens for _, tokens, _ in uses])):
            sums[i] += layers[1:, position]
            counts[i] += 1
        seen = counts > 0
        stacks[seen, 1:] = sums[seen] / counts[seen, None, None]
    return stacks


def run(embedder: Embedder, data: Path, glove: Glove | None = None, limit: int | None = None) -> TaskResult:
    """The first ``limit`` pairs of each data set."""
    result = TaskResult("wordsim", "Spearman x 100", [*embedder.views, *([GLOVE] if glove else [])], details={})
    datasets = {
        name: cap(read_pairs(data / path, column, size, result.notes), limit, f"{name} pairs", result.notes)
        for name, (path, column, size) in DATASETS.items()
    }
    words = sorted({w for pairs in datasets.values() for p in pairs for w in p[:2]})
    corpus = data.parent / CONTEXT_CORPUS
    if corpus.is_file():
        with reading(corpus), open_text(corpus) as f:
            contexts = find_contexts(f, {w.lower() for w in words})
        result.notes.append(
            f"biLSTM layers: a word's vectors averaged over its first {CONTEXTS} sentences in "
            f"{CONTEXT_CORPUS}; token layer: the word on its own"
        )
    else:
        contexts = {}
        result.notes.append(f"{corpus} not found: every layer embeds the word on its own (no context)")
    result.details["words without a context sentence"] = sum(not contexts.get(w.lower()) for w in words)
    stacks = dict(zip(words, type_stacks(embedder, words, contexts)))

    def covered(has: Callable[[str], bool], pairs: list[tuple[str, str, float]]) -> float:
        return 100.0 * sum(has(a) and has(b) for a, b, _ in pairs) / max(len(pairs), 1)

    for name, pairs in datasets.items():
        gold = np.array([p[2] for p in pairs])
        left, right = (np.stack([stacks[p[i]] for p in pairs]) for i in (0, 1))
        columns = {view: (a, b) for (view, a), b in zip(layer_views(left).items(), layer_views(right).values())}
        in_context = covered(lambda w: bool(contexts.get(w.lower())), pairs)
        coverage = {view: 100.0 if view == "token" else in_context for view in columns}
        if glove is not None:
            columns[GLOVE] = tuple(np.stack([glove.mean([p[i]]) for p in pairs]) for i in (0, 1))
            coverage[GLOVE] = covered(lambda w: glove.vector(w) is not None, pairs)
        result.add(name, {view: spearman(cosine(*pair), gold) for view, pair in columns.items()})
        result.add(f"{name} coverage (% of pairs)", coverage)
        result.details[f"{name} pairs"] = len(pairs)
    return result
