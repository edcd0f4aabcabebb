"""The Word-in-context examples, counted: for each example sentence, how many of its word's nearest uses share its
sense and its part of speech, layer by layer (the paper's §5.3: layer 1 should lead on part of speech, layer 2 on
sense) and in the index's sense readout ("context prediction", ``encoder.readout``), by the hand labels of the demo
corpora (``data/demo*/labels.tsv``, ``demo/labels.py``), then how long a warm neighbours query takes.

    python -m bench.word_in_context [--index build/demo-index] [--k 8]

The examples are the app's for the index's language (``demo/examples.py``); the counts are what the app's "Layer by
layer" section shows. Prints a table; writes nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from demo.examples import EXAMPLES, EXAMPLES_KO
from demo.labels import agreement, demo_labels
from encoder import LayerMix
from indexer import Index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=Path("build/demo-index"), help="default %(default)s")
    parser.add_argument("--k", type=int, default=8, help="nearest uses per sentence (default %(default)s)")
    args = parser.parse_args()
    index = Index.open(args.index)
    n = index.elmo.n_layers
    mixes = [(f"h{j}", LayerMix.parse([float(i == j) for i in range(n)], n).weights) for j in range(n)]
    mixes += [("mix", index.layer_mix.weights), (index.representation_name(None), None)]  # None: the sense readout
    examples = EXAMPLES_KO if index.elmo.text.language == "ko" else EXAMPLES
    labels = demo_labels()
    print(f"model {index.elmo.name}, index {args.index}, {args.k} nearest uses of the same word\n")
    print("| example | sentence's sense (part of speech) | " + " | ".join(f"{m} sense / POS" for m, _ in mixes) + " |")
    print("|---|---|" + "---:|" * len(mixes))
    for name, pairs in examples.items():
        for sentence, word in pairs:
            tokens = index.query(sentence, "sentence").tokens
            position = tokens.index(word)
            query = labels.get((sentence, position))
            if query is None:
                continue
            cells = []
            for _, weights in mixes:
                representation = "readout" if weights is None else "elmo"
                hits = index.neighbors(
                    sentence, word, position, k=args.k, same_word=True, layers=weights, representation=representation
                ).hits
                counts = agreement(query, [labels.get((h.sentence, h.token_index)) for h in hits])
                cells.append(f"{counts.same_sense} / {counts.same_pos} of {counts.labelled}")
            print(f"| {name} | {query.sense} ({query.pos}) | " + " | ".join(cells) + " |")
    warm = []  # the app's question, asked again once it has been asked (the index's parts built, the model loaded)
    for pairs in examples.values():
        for sentence, word in pairs:
            for _ in range(3):
                start = time.perf_counter()
                index.neighbors(sentence, word, k=args.k, same_word=True, explain=True)
                warm.append(time.perf_counter() - start)
    print(
        f"\na warm neighbours query (context prediction, same word, explained): median {1000 * statistics.median(warm):.0f} ms, "
        f"slowest {1000 * max(warm):.0f} ms over {len(warm)}"
    )


if __name__ == "__main__":
    main()
