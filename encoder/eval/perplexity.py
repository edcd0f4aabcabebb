"""Perplexity on held-out text, delegated to the training code's ``perplexity``, in units that compare.

The protocol: the first paragraphs of the language's test text (``corpus-en/test.txt.xz``, Korean
``corpus-ko/test.txt.xz``) holding MAX_TOKENS targets per direction.
Rows: perplexity (forward, backward, and both directions as exp of the mean loss, i.e. the geometric mean
of the two, as the reference biLM reports it, not the arithmetic mean of the two perplexities); bits per
character, total loss in bits over the characters of those paragraphs (line breaks not counted), which
compares models with different vocabularies, word units or languages; and the share of targets that are ``<UNK>``
(each such target is predicted as the class of all unknown words, which flatters a small vocabulary).
It needs the model's LM head and vocabulary, which only models we trained ship; there are no layer views
and no GloVe column (GloVe is not a language model).
"""

from __future__ import annotations

import math
from pathlib import Path

from ..chars import BOS_TOKEN, EOS_TOKEN
from ..elmo import model_folder, resolve_model
from ..files import open_text
from ..lm_data import VOCAB_FILE, Vocabulary, paragraph_pairs
from ..lm_head import perplexity
from ..text import TextRules
from .results import TaskResult

DATA = Path("corpus-en") / "test.txt.xz"
DATA_KO = Path("corpus-ko") / "test.txt.xz"
MAX_TOKENS = 100_000  # the README's perplexity figure; the whole file (~640k targets) is slow on 2 CPU cores
FORWARD, BACKWARD, BOTH = "forward", "backward", "both: exp(mean loss)"
PERPLEXITY, BPC, UNK = "perplexity", "bits per character", "<UNK> targets (%)"


def read_paragraphs(path: Path, text: TextRules, max_tokens: int = MAX_TOKENS) -> tuple[list[str], list[str]]:
    """The first paragraphs (lines) holding ``max_tokens`` forward targets, and those targets' words
    (tokenized by ``text``, the model's language rules, as ``perplexity`` tokenizes them)."""
    lines, words, targets = [], [], 0
    with open_text(path) as f:
        for line in f:
            _, forward = paragraph_pairs(line, text)
            if not forward:
                continue
            lines.append(line)
            words += [w for w in forward if w not in (BOS_TOKEN, EOS_TOKEN)]
            targets += len(forward)
            if targets >= max_tokens:
                break
    return lines, words


def run(model: str | Path, data: Path, limit: int | None = None) -> TaskResult:
    """``model``: a model directory or ``default``; ``data``: a text file, one paragraph per line; ``limit``
    caps the paragraphs (within the MAX_TOKENS protocol)."""
    result = TaskResult("perplexity", "per column", [FORWARD, BACKWARD, BOTH], details={"text": str(data)})
    try:
        text = resolve_model(model).text()
        lines, words = read_paragraphs(data, text)
        if limit is not None:
            result.notes.append(f"--limit {limit}: the first {min(limit, len(lines)):,} of {len(lines):,} paragraphs")
            lines = lines[:limit]
            words = [w for line in lines for w in paragraph_pairs(line, text)[1] if w not in (BOS_TOKEN, EOS_TOKEN)]
        scores = perplexity(model, lines)
        vocab = Vocabulary.load(model_folder(model) / VOCAB_FILE)
    except (FileNotFoundError, ValueError) as error:
        result.notes.append(f"not measured: {error}")
        return result
    n, characters = scores["tokens"], sum(len(line.strip()) for line in lines)
    loss = {FORWARD: math.log(scores["forward"]), BACKWARD: math.log(scores["backward"])}
    loss[BOTH] = (loss[FORWARD] + loss[BACKWARD]) / 2  # both directions predict n targets
    unknown = 100.0 * sum(w not in vocab.index for w in words) / n
    result.add(PERPLEXITY, {k: math.exp(v) for k, v in loss.items()})
    result.add(BPC, {k: v * n / math.log(2) / characters for k, v in loss.items()})
    result.decimals[BPC] = 2
    result.add(UNK, {k: unknown for k in loss})
    result.notes.append(
        f"the first {MAX_TOKENS:,} targets per direction of {data.parent.name}/{data.name}; bits per character over "
        f"the {characters:,} characters of those paragraphs (line breaks not counted), so models with other units "
        "or languages compare; the arithmetic mean of the "
        f"two perplexities would be {(scores['forward'] + scores['backward']) / 2:.1f}"
    )
    result.details.update(tokens=n, characters=characters, paragraphs=len(lines), vocab_size=scores["vocab_size"])
    return result
