"""Perplexity on held-out text, delegated to the training code's ``perplexity``, in units that compare.

The protocol: the first paragraphs of the language's test text (``corpus-en/test.txt.xz``, Korean
``corpus-ko/test.txt.xz``) holding MAX_TOKENS targets per direction.
Rows: perplexity (forward, backward, and both directions as exp of the mean loss, i.e. the geometric mean
of the two, as the reference biLM reports it, not the arithmetic mean of the two perplexities); bits per
character, total loss in bits over the characters of those paragraphs (line breaks not counted), which
compares models with different vocabularies, word units or languages; and the share of targets that are ``<UNK>``
(each such target is predicted as the class of all unknown words, which flatters a small vocabulary or a sparse
word unit, so a second bits-per-character row also charges each ``<UNK>`` target the spelling of its characters).
It needs the model's LM head and vocabulary, which only models we trained ship; there are no layer views
and no GloVe column (GloVe is not a language model).
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from ..chars import BOS_TOKEN, EOS_TOKEN
from ..files import open_text, reading
from ..lm_data import VOCAB_FILE, Vocabulary, paragraph_pairs, paragraph_sentences
from ..lm_head import perplexity
from ..model_files import model_folder, resolve_model
from ..text import TextRules
from .results import TaskResult

DATA = Path("corpus-en") / "test.txt.xz"
DATA_KO = Path("corpus-ko") / "test.txt.xz"
MAX_TOKENS = 100_000  # docs/evaluation.md's perplexity figure; the whole file (~640k targets) is slow on 2 CPU cores
FORWARD, BACKWARD, BOTH = "forward", "backward", "both: exp(mean loss)"
PERPLEXITY, BPC, UNK = "perplexity", "bits per character", "<UNK> targets (%)"
BPC_SPELLED = "bits per character, <UNK> spelled out"


def read_paragraphs(path: Path, text: TextRules, max_tokens: int = MAX_TOKENS) -> list[str]:
    """The first paragraphs (lines) holding ``max_tokens`` forward targets, tokenized by ``text`` (the model's
    language rules) as ``perplexity`` tokenizes them."""
    lines, targets = [], 0
    with reading(path), open_text(path) as f:
        for line in f:
            _, forward = paragraph_pairs(paragraph_sentences(line, text))
            if forward:
                lines.append(line)
                targets += len(forward)
            if targets >= max_tokens:
                break
    return lines


def target_words(lines: list[str], text: TextRules) -> list[str]:
    """The words that are targets in ``lines`` (sentence ends left out), as ``text`` tokenizes them."""
    return [
        w
        for line in lines
        for w in paragraph_pairs(paragraph_sentences(line, text))[1]
        if w not in (BOS_TOKEN, EOS_TOKEN)
    ]


def spelling_bits(words: list[str], lines: list[str]) -> float:
    """Bits to spell ``words`` out one character at a time, under the character frequencies of ``lines``.

    What an ``<UNK>`` target leaves unsaid: the model predicts only "some unknown word", so bits per character
    charge each such target this much more, the same for every model and word unit. The frequencies are those
    of the evaluated text itself (spaces and line breaks left out), so the charge is optimistic."""
    counts = Counter(char for line in lines for char in line if not char.isspace())
    total = sum(counts.values())
    return sum(-math.log2(counts[char] / total) for word in words for char in word)


def run(model: str | Path, data: Path, limit: int | None = None) -> TaskResult:
    """``model``: a model directory or ``default``; ``data``: a text file, one paragraph per line; ``limit``
    caps the paragraphs (within the MAX_TOKENS protocol)."""
    notes = []
    try:
        lines = read_paragraphs(data, resolve_model(model).text())
        if limit is not None:
            notes.append(f"--limit {limit}: the first {min(limit, len(lines)):,} of {len(lines):,} paragraphs")
            lines = lines[:limit]
        return score(model, lines, data, notes)
    except (FileNotFoundError, ValueError) as error:
        return _result(data, [*notes, f"not measured: {error}"])


def score(model: str | Path, lines: list[str], data: Path, notes: list[str] | None = None) -> TaskResult:
    """The rows of ``model`` on the paragraphs ``lines`` of the file ``data``: ``run``'s protocol, or the same
    lines for models of other word units (``bench/korean_units.py``). Raises FileNotFoundError or ValueError for
    a model without an LM head or a text without words."""
    text = resolve_model(model).text()
    scores = perplexity(model, lines)
    vocab = Vocabulary.load(model_folder(model) / VOCAB_FILE)
    n, characters = scores["tokens"], sum(len(line.strip()) for line in lines)
    loss = {FORWARD: math.log(scores["forward"]), BACKWARD: math.log(scores["backward"])}
    loss[BOTH] = (loss[FORWARD] + loss[BACKWARD]) / 2  # both directions predict n targets
    unknown = [w for w in target_words(lines, text) if w not in vocab.index]
    spelled = spelling_bits(unknown, lines)  # the same unknown words are targets of both directions
    result = _result(data, list(notes or []))
    result.add(PERPLEXITY, {k: math.exp(v) for k, v in loss.items()})
    result.add(BPC, {k: v * n / math.log(2) / characters for k, v in loss.items()})
    result.add(BPC_SPELLED, {k: (v * n / math.log(2) + spelled) / characters for k, v in loss.items()})
    result.decimals[BPC] = result.decimals[BPC_SPELLED] = 2
    result.add(UNK, {k: 100.0 * len(unknown) / n for k in loss})
    result.notes.append(
        f"{n:,} targets per direction of {data.parent.name}/{data.name}; bits per character over "
        f"the {characters:,} characters of those paragraphs (line breaks not counted), so models with other units "
        "or languages compare; spelled out: each <UNK> target also pays for its characters under the text's "
        "own character frequencies (an optimistic charge, the same for every model); the arithmetic mean of the "
        f"two perplexities would be {(scores['forward'] + scores['backward']) / 2:.1f}"
    )
    result.details.update(tokens=n, characters=characters, paragraphs=len(lines), vocab_size=scores["vocab_size"])
    return result


def _result(data: Path, notes: list[str]) -> TaskResult:
    return TaskResult("perplexity", "per column", [FORWARD, BACKWARD, BOTH], notes=notes, details={"text": str(data)})
