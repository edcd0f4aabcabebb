"""WordNet 3.0 sense inventory for WSD, read from the ``index.sense`` file of a WordNet database directory.

Debian's ``wordnet-base`` + ``wordnet-sense-index`` put WordNet 3.0 in /usr/share/wordnet, but without the
``lexnames`` file that nltk's ``WordNetCorpusReader`` insists on (and nltk 3.10 also refuses paths outside
its data roots). WSD needs only the senses of a lemma in WordNet's order, which ``index.sense`` lists
directly (``sense_key offset sense_number tag_count``), so it is read here.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

DEFAULT_DIR = Path("/usr/share/wordnet")
# the ss_type digit after '%' in a sense key; adjective satellites (5) count as adjectives, as in Raganato's data
POS_OF_SS_TYPE = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}


class SenseInventory:
    """Sense keys of each (lemma, pos) in WordNet's sense order: the first is WordNet's first sense."""

    def __init__(self, senses: dict[tuple[str, str], list[str]]):
        self._senses = senses
        self.keys = {key for keys in senses.values() for key in keys}

    @classmethod
    def load(cls, directory: str | Path = DEFAULT_DIR) -> SenseInventory:
        path = Path(directory) / "index.sense"
        if not path.is_file():
            raise FileNotFoundError(
                f"WordNet 3.0 sense index not found at {path}: install Debian's wordnet-base and "
                "wordnet-sense-index (apt-get install wordnet-base wordnet-sense-index) or pass --wordnet DIR"
            )
        numbered: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, _, number, _ = line.split()
                lemma, lex_sense = key.split("%", 1)
                numbered[lemma, POS_OF_SS_TYPE[lex_sense[0]]].append((int(number), key))
        return cls({lemma_pos: [key for _, key in sorted(pairs)] for lemma_pos, pairs in numbered.items()})

    def senses(self, lemma: str, pos: str) -> list[str]:
        """All sense keys of ``lemma`` (lowercase, multi-word joined by _) as ``pos`` (n, v, a, r)."""
        return self._senses.get((lemma.lower(), pos), [])

    def first_sense(self, lemma: str, pos: str) -> str | None:
        senses = self.senses(lemma, pos)
        return senses[0] if senses else None
