"""The paper's Table 4, live: GloVe's nearest words to "play" beside the biLM's nearest uses of "play" in context.

Peters et al. (2018), Table 4: a static vector of "play" has neighbours about games whatever the sentence,
while the biLM's vector of "play" in a sentence about baseball finds other sports uses, and in a sentence
about Broadway finds other stage uses. Here the two sentences are ours (the app's Word-in-context preset,
``app/examples.py``),
the uses come from an index of the demo corpus, and each use carries the sense we labelled it with
(``DEMO_PLAY_SENSES``), so the share of the nearest uses that match the sentence's sense can be counted.

    python bench/table4.py [--index build/demo-index] [--k 5] [--layers top]

Prints a table; writes nothing. The app's page is ``Word in context``, example "play: the paper's Table 4".
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.examples import EXAMPLES, TABLE4  # noqa: E402
from indexer import Index  # noqa: E402
from indexer.results import Neighbors  # noqa: E402

QUERIES = dict(zip(("sport", "stage"), (sentence for sentence, _ in EXAMPLES[TABLE4])))  # sense -> sentence

DEMO_PLAY_SENSES = {  # (document, start of the sentence) -> sense, for every use of "play" in data/demo
    ("a-sport-01", "A light bat helps them play"): "sport",
    ("a-sport-02", "In baseball, every play begins"): "sport",
    ("a-sport-10", "Players must not touch the net"): "sport",
    ("a-sport-19", "Play starts at two"): "sport",
    ("a-sport-19", "When the light begins to fade"): "sport",
    ("b-technology-15", "Cheaper models use a flimsy stick"): "sport",
    ("b-home-08", "Explain the rules briefly"): "sport",
    ("b-home-09", "Let the children play outside"): "sport",
    ("b-home-16", "Above all, keep it fun"): "sport",
    ("b-home-22", "Play with your cat"): "sport",
    ("a-theatre-16", "Members play warm-up games"): "sport",
    ("a-theatre-01", "Staging a play"): "stage",
    ("a-theatre-01", "First the director chooses a play"): "stage",
    ("a-theatre-01", "Early rehearsals focus on reading the play"): "stage",
    ("a-theatre-08", "Read the whole play"): "stage",
    ("a-theatre-13", "The play runs until"): "stage",
    ("a-theatre-14", "This year the programme includes"): "stage",
    ("a-theatre-16", "Over the year, the club usually puts on"): "stage",
    ("b-history-02", "Audiences of every class"): "stage",
    ("b-history-02", "A popular play might be performed"): "stage",
    ("b-history-02", "The most famous playwright"): "stage",
    ("b-history-02", "Modern reconstructions"): "stage",
    ("b-history-23", "A single play might deal"): "stage",
    ("b-history-23", "Many a Greek play"): "stage",
    ("a-theatre-11", "Producers want to know"): "acting a role",
    ("a-music-05", "Many pianists play scales"): "music",
    ("a-music-06", "During rehearsals, the conductor"): "music",
    ("a-music-06", "Small chamber groups often play"): "music",
    ("a-music-09", "Learning to hear the key"): "music",
    ("a-music-15", "Headline rock bands play"): "music",
    ("a-music-17", "The group learns to play a scale"): "music",
    ("a-music-18", "These instruments play"): "music",
    ("b-technology-11", "When you review the footage"): "press play",
    ("b-technology-11", "Then press play again"): "press play",
    ("b-technology-12", "Press play to start"): "press play",
    ("b-technology-12", "To watch on a television"): "press play",
}


def sense_of(doc_id: str, sentence: str) -> str:
    """Our label of a use of "play" in the demo corpus; "unlabelled" for a use from any other text."""
    return next(
        (sense for (doc, start), sense in DEMO_PLAY_SENSES.items() if doc == doc_id and sentence.startswith(start)),
        "unlabelled",
    )


@dataclass
class Row:
    sense: str
    sentence: str
    result: Neighbors
    senses: list[str]  # of the nearest uses

    @property
    def share(self) -> float:
        return sum(s == self.sense for s in self.senses) / max(len(self.senses), 1)


def table4(index: Index, k: int = 5, layers: str = "top") -> list[Row]:
    """Each query sentence's nearest uses of "play" (same word only), their senses, GloVe's nearest words."""
    rows = []
    for sense, sentence in QUERIES.items():
        result = index.neighbors(sentence, "play", k=k, same_word=True, layers=layers)
        rows.append(Row(sense, sentence, result, [sense_of(h.doc_id, h.sentence) for h in result.hits]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=Path("build/demo-index"), help="default %(default)s")
    parser.add_argument("--k", type=int, default=5, help="nearest uses per sentence (default %(default)s)")
    parser.add_argument("--layers", default="top", help="ELMo layer mix of the query (default %(default)s)")
    args = parser.parse_args()
    index = Index.open(args.index)
    rows = table4(index, args.k, args.layers)
    glove = ", ".join(w for w, _ in rows[0].result.glove[: args.k])
    print(f"model {index.elmo.name}, index {args.index}, layers {args.layers}\n")
    print("| | source | nearest neighbours |\n|---|---|---|")
    print(f"| GloVe | play | {glove} |")
    for row in rows:
        uses = "; ".join(f"[{s}] {h.sentence}" for s, h in zip(row.senses, row.result.hits))
        print(f"| biLM | {row.sentence} ({row.sense}) | {uses} |")
    print(
        "\n"
        + ", ".join(
            f"{row.sense}: {row.share:.0%} of the {len(row.senses)} nearest uses share its sense" for row in rows
        )
    )


if __name__ == "__main__":
    main()
