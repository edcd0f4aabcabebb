"""The paper's Table 4, live: GloVe's nearest words to "play" beside the biLM's nearest uses of "play" in context.

Peters et al. (2018), Table 4: a static vector of "play" has neighbours about games whatever the sentence,
while the biLM's vector of "play" in a sentence about baseball finds other sports uses, and in a sentence
about Broadway finds other stage uses. Here the two sentences are ours (the app's Word-in-context preset,
``demo/examples.py``),
the uses come from an index of the demo corpus, and each use carries the sense we labelled it with
(``data/demo/labels.tsv``, as the app's layer-by-layer table), so the share of the nearest uses that match the
sentence's sense can be counted.

    python -m bench.table4 [--index indexes/demo-index] [--k 5] [--layers top]

Prints a table and the figures the docs quote (``bench/figures.py``); writes nothing. The app's page is ``Word in context``, example "play: the paper's Table 4".
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from bench.figures import figure
from demo.examples import EXAMPLES, TABLE4
from demo.labels import demo_labels
from indexer import Index
from indexer.results import Neighbors


@dataclass
class Row:
    sense: str
    sentence: str
    result: Neighbors
    senses: list[str]  # of the nearest uses

    @property
    def same_sense(self) -> int:
        """How many of the nearest uses share the sentence's sense."""
        return sum(s == self.sense for s in self.senses)

    @property
    def share(self) -> float:
        return self.same_sense / max(len(self.senses), 1)


def sense_of(sentence: str, position: int) -> str:
    """Our label of a use of "play" (``data/demo/labels.tsv``); "unlabelled" for a use from any other text."""
    label = demo_labels().get((sentence, position))
    return label.sense if label else "unlabelled"


def table4(index: Index, k: int = 5, layers: str = "top") -> list[Row]:
    """Each query sentence's nearest uses of "play" (same word only), their senses, GloVe's nearest words."""
    rows = []
    for sentence, word in EXAMPLES[TABLE4]:
        position = index.elmo.text.tokenize(sentence).index(word)
        result = index.neighbors(sentence, word, position=position, k=k, same_word=True, layers=layers)
        senses = [sense_of(hit.sentence, hit.token_index) for hit in result.hits]
        rows.append(Row(sense_of(sentence, position), sentence, result, senses))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=Path("indexes/demo-index"), help="default %(default)s")
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
    figure(f"table4.{args.layers}.k{args.k}.glove", glove)
    for row in rows:
        figure(f"table4.{args.layers}.k{args.k}.{row.sense}", f"{row.same_sense} of {len(row.senses)}")


if __name__ == "__main__":
    main()
