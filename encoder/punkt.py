"""Punkt's sentence-splitting parameters: trained on text (``train_punkt``), saved as JSON (``save_punkt``) and
loaded (``punkt_tokenizer``).

``nltk.sent_tokenize`` needs NLTK's downloaded data, which these machines cannot fetch, so we train Punkt on English
Wikipedia ourselves and ship its learned parameters as JSON (``punkt_en.json``) -- plain data that is safe to load,
unlike NLTK's pickles. ``python -m encoder punkt`` (``encoder/cli/punkt.py``) retrains them; ``encoder.text`` splits English text
with them.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .files import atomic_path

if TYPE_CHECKING:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

PUNKT_PATH = Path(__file__).with_name("punkt_en.json")
"""The shipped Punkt parameters, used by ``encoder.text.split_sentences``."""

DEFAULT_MAX_CHARS = 10_000_000
"""Training text for Punkt: 10 M characters of Wikipedia take under a minute and learn the
abbreviations that matter; 20 M take twice as long for little gain (F1 on UD English EWT
0.975 instead of 0.974)."""

MIN_ORTHO_COUNT = 5
"""Keep the capitalisation statistics only of words seen this often, to keep the JSON small.

Punkt treats a word it has no statistics for as a likely name, which is the right guess for rare
words; on Wikipedia text this even avoids a few wrong breaks ("John G. | Trump")."""

MIN_STARTER_LOWERCASE_SHARE = 0.05
"""A frequent sentence starter must be written in lower case at least this often (see
:func:`train_punkt`); in our Wikipedia sample, names are at 0-2 %, "furthermore" at 10 %."""

COMMON_ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof rev hon st sr jr gen col lt capt sgt gov sen rep pres
    jan feb mar apr jun jul aug sep sept oct nov dec
    co corp inc ltd bros dept univ est
    no nos vol fig pp ed eds ch sec ca approx cf viz vs etc al mt ft ave
    e.g i.e u.s u.k""".split()
)
"""Abbreviations added to the learned ones (lower case, without the final period).

Wikipedia often writes "Mr", "Dr", "St" and "Jan" without a period and rarely abbreviates months,
so Punkt does not learn these from it, yet user text and web pages use them all the time."""

COMMON_COLLOCATIONS = frozenset((initial, "##number##") for initial in ["b", "c", "d", "fl"])
"""Pairs never broken, added to the learned ones: "b.", "c.", "d.", "fl." before a number (born,
circa, died, flourished: "(d. 1157)"). Unlike abbreviations, they leave "vitamin C. The" alone."""

_TRAIN_CHUNK_CHARS = 1_000_000  # text handed to PunktTrainer at a time, to bound its memory
_LOWERCASE_WORD = re.compile(r"\b[a-z]+\b")


def train_punkt(lines: Iterable[str], max_chars: int = DEFAULT_MAX_CHARS) -> dict:
    """Learn Punkt parameters from text with one paragraph per line; return them JSON-ready.

    Reads lines until about ``max_chars`` characters have been seen. Each line counts as a
    paragraph, which tells Punkt that a sentence starts there. What Punkt learns is then cleaned
    up (see the comments below) and ``COMMON_ABBREVIATIONS`` and ``COMMON_COLLOCATIONS`` are
    added. Raises ``ValueError`` if there is no text at all.
    """
    from nltk.tokenize.punkt import _ORTHO_LC, PunktTrainer

    trainer = PunktTrainer()
    # Collocations of *any* word ending in a period with the next word (e.g. "history. Ancient",
    # from section headings) would block real sentence breaks; keep only those after initials
    # and numbers ("J. Tolkien", "c. 1500"), NLTK's default.
    trainer.INCLUDE_ALL_COLLOCS = False
    # Wikipedia writes "Mr" and "Mr." alike; by default each "Mr" without a period halves the
    # chance that "mr" is learned as an abbreviation. Without this penalty we learn "mr",
    # "dr", "st", "inc", "vs", ... and sentence splits on UD English EWT get more precise.
    trainer.IGNORE_ABBREV_PENALTY = True

    lowercase_counts: collections.Counter[str] = collections.Counter()
    total_chars = 0
    for paragraphs in _paragraph_chunks(lines, max_chars):
        chunk = "\n\n".join(paragraphs)
        trainer.train(chunk, finalize=False)
        lowercase_counts.update(_LOWERCASE_WORD.findall(chunk))
        total_chars += sum(map(len, paragraphs))
    if total_chars == 0:
        raise ValueError("no text to train Punkt on")
    trainer.finalize_training()
    params = trainer.get_params()
    word_counts = trainer._type_fdist  # NLTK has no public accessor for its word counts

    # Punkt also takes a word seen once before a lower-case word ("leniency. the") for an
    # abbreviation. Keep such one-off finds only if they look like one: "j.r.r", "u.s.s.r".
    abbreviations = {word for word in params.abbrev_types if word_counts[word + "."] >= 2 or "." in word}
    # Names start many sentences in biographies ("Louis was born ..."), but they also follow
    # abbreviations ("St. Louis"), where a frequent sentence starter makes Punkt break the
    # sentence. Real sentence starters ("However", "The") are also often written in lower case.
    sent_starters = {
        word
        for word in params.sent_starters
        if lowercase_counts[word] >= MIN_STARTER_LOWERCASE_SHARE * word_counts[word]
    }
    trainer.freq_threshold(ortho_thresh=MIN_ORTHO_COUNT)
    # A word never seen in lower case gets the same decisions as an unknown word (Punkt takes
    # both for names), so it need not be stored.
    ortho_context = {word: flags for word, flags in params.ortho_context.items() if flags & _ORTHO_LC}
    return {
        "trained_on_chars": total_chars,
        "abbrev_types": sorted(abbreviations | COMMON_ABBREVIATIONS),
        "collocations": sorted(map(list, params.collocations | COMMON_COLLOCATIONS)),
        "sent_starters": sorted(sent_starters),
        "ortho_context": dict(sorted(ortho_context.items())),
    }


def _paragraph_chunks(lines: Iterable[str], max_chars: int) -> Iterator[list[str]]:
    """Non-blank lines, stripped, in lists of about ``_TRAIN_CHUNK_CHARS`` characters, until
    about ``max_chars`` characters: PunktTrainer holds all tokens of the text it is given."""
    chunk: list[str] = []
    chunk_chars = total_chars = 0
    for line in lines:
        if total_chars >= max_chars:
            break
        line = line.strip()
        if not line:
            continue
        chunk.append(line)
        chunk_chars += len(line)
        total_chars += len(line)
        if chunk_chars >= _TRAIN_CHUNK_CHARS:
            yield chunk
            chunk, chunk_chars = [], 0
    if chunk:
        yield chunk


def save_punkt(params: dict, path: str | os.PathLike[str]) -> None:
    """Write parameters from :func:`train_punkt` as JSON (atomically), one entry per line for readable diffs."""
    text = json.dumps(params, ensure_ascii=False, indent=0)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text + "\n", encoding="utf-8")


class _OrthoContext(dict):
    """Punkt's word -> capitalisation-flags table; unseen words read as 0 and are not stored.

    NLTK uses a defaultdict, which would grow with every unseen word looked up while splitting
    a corpus."""

    def __missing__(self, word: str) -> int:
        return 0


@functools.cache
def punkt_tokenizer(path: str | os.PathLike[str] = PUNKT_PATH) -> PunktSentenceTokenizer:
    """The Punkt sentence splitter with the parameters in ``path``, loaded once per path."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    saved = json.loads(Path(path).read_text(encoding="utf-8"))
    params = PunktParameters()
    params.abbrev_types = set(saved["abbrev_types"])
    params.collocations = {(first, second) for first, second in saved["collocations"]}
    params.sent_starters = set(saved["sent_starters"])
    params.ortho_context = _OrthoContext(saved["ortho_context"])
    return PunktSentenceTokenizer(params)
