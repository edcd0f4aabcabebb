"""The Word-in-context examples, counted: for each example sentence, how many of its word's nearest uses share its
sense and its part of speech, layer by layer (the paper's §5.3: layer 1 should lead on part of speech, layer 2 on
sense) and in the index's sense readout ("context prediction", ``encoder.readout``), by the hand labels of the demo
corpora (``data/demo*/labels.tsv``, ``demo/labels.py``), each count against its yardstick (``demo.yardstick``: chance,
the best possible, the verdict, as the page shows them), each example's two uses compared beside the word's typical
cosines (the page's "Compare the two uses"), then how long a warm neighbours query takes.

    python -m bench.word_in_context [--index indexes/demo-index] [--k 8]

The examples are the app's for the index's language (``demo/examples.py``); the counts are what the app's "Layer by
layer" section shows. Prints tables, and the figures the docs quote (``bench.figures``: pipe the output into
``scripts/paste_figures.py`` to paste them); writes nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bench.figures import figure, figure_block
from demo.examples import EXAMPLES, EXAMPLES_KO, Pairs
from demo.labels import UseLabel, agreement, demo_labels
from demo.yardstick import Use, Yardstick, labelled_senses, typical_cosines, yardstick
from encoder import LayerMix
from indexer import Index
from indexer.representations import SenseReadout

MET = 5  # an example is met when this many of its 8 nearest uses share its sense (issue targets, model cards)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=Path("indexes/demo-index"), help="default %(default)s")
    parser.add_argument("--k", type=int, default=8, help="nearest uses per sentence (default %(default)s)")
    args = parser.parse_args()
    index = Index.open(args.index)
    n = index.elmo.n_layers
    mixes = [(f"h{j}", LayerMix.parse([float(i == j) for i in range(n)], n).weights) for j in range(n)]
    mixes += [
        ("mix", index.layer_mix.weights),
        (index.representation_name(SenseReadout()), None),
    ]  # None: the sense readout
    language = index.elmo.text.language
    examples = EXAMPLES_KO if language == "ko" else EXAMPLES
    labels = demo_labels()
    print(f"model {index.elmo.name}, index {args.index}, {args.k} nearest uses of the same word\n")
    counts_table = [
        "| example | sentence's sense (part of speech) | " + " | ".join(f"{m} sense / POS" for m, _ in mixes) + " |"
    ]
    counts_table.append("|---|---|" + "---:|" * len(mixes))
    shown = [mixes[-1], mixes[-2], *mixes[1:-2]]  # the yardstick table: the default reading first, h0 (tied) left out
    yardstick_table = [
        "| example sentence (sense) | chance | best possible | " + " | ".join(name for name, _ in shown) + " |",
        "|---|---:|---:|" + "---:|" * len(shown),
    ]
    met = total = 0
    for name, pairs in examples.items():
        for sentence, word in pairs:
            tokens = index.query(sentence, "sentence").tokens
            position = tokens.index(word)
            query = labels.get((sentence, position))
            if query is None:
                continue
            in_collection = labelled_senses(index.use_vectors(word, representation="elmo")[0], labels, query.word)
            cells, sticks = [], {}
            for mix_name, weights in mixes:
                representation = "readout" if weights is None else "elmo"
                hits = index.neighbors(
                    sentence, word, position, k=args.k, same_word=True, layers=weights, representation=representation
                ).hits
                found = [labels.get((h.sentence, h.token_index)) for h in hits]
                counts = agreement(query, found)
                cells.append(f"{counts.same_sense} / {counts.same_pos} of {counts.labelled}")
                sticks[mix_name] = yardstick(query, found, in_collection)
            counts_table.append(f"| {name} | {query.sense} ({query.pos}) | " + " | ".join(cells) + " |")
            default = sticks[mixes[-1][0]]
            total += 1
            met += default is not None and default.same_sense >= MET
            if default is not None:
                verdicts = [verdict_cell(sticks[mix_name]) for mix_name, _ in shown]
                yardstick_table.append(
                    f"| {name} ({query.sense}) | {default.chance:.1f} | {default.best} | " + " | ".join(verdicts) + " |"
                )
    figure_block(f"word_in_context.{language}.counts", counts_table)
    print(f"\nagainst the yardstick (demo.yardstick: chance, the best possible, the verdict), {args.k} nearest uses:\n")
    figure_block(f"word_in_context.{language}.yardstick", yardstick_table)
    figure(f"word_in_context.{language}.met", f"{met} of {total}")
    figure(f"word_in_context.{language}.met_count", met)
    print("\nthe two sentences of an example compared, beside the word's typical cosines (context prediction):\n")
    figure_block(f"word_in_context.{language}.compared", compared_table(index, examples, labels))
    warm = []  # the app's question, asked again once it has been asked (the index's parts built, the model loaded)
    for pairs in examples.values():
        for sentence, word in pairs:
            for _ in range(3):
                start = time.perf_counter()
                index.neighbors(sentence, word, k=args.k, same_word=True, explain=True)
                warm.append(time.perf_counter() - start)
    print(
        f"\na warm neighbours query (context prediction, same word, explained): median {1000 * statistics.median(warm):.0f} ms, "
        f"slowest {1000 * max(warm):.0f} ms over {len(warm)}, load average {os.getloadavg()[0]:.1f}"
    )


def compared_table(index: Index, examples: dict[str, Pairs], labels: dict[Use, UseLabel]) -> list[str]:
    """Each example's two uses' cosine in context prediction (``Index.compare``, as the page's "Compare the two
    uses" shows it) beside the median cosines of the word's same-sense and other-sense labelled uses in the
    collection (``demo.yardstick.typical_cosines``: the page's reference point)."""
    readout = SenseReadout()
    table = ["| example | the two uses | typical, same sense | typical, other senses |", "|---|---:|---:|---:|"]
    for name, pairs in examples.items():
        (sentence_a, word), (sentence_b, word_b) = pairs
        if word_b != word:
            continue  # two words: no typical cosines of one word to compare against
        cosine = index.compare(sentence_a, word, sentence_b, word).cosines[index.representation_name(readout)]
        uses, vectors = index.use_vectors(word, **readout.question(index.layer_mix.weights))
        typical = typical_cosines(vectors, labelled_senses(uses, labels, word))
        same, other = (f"{c:.3f}" if c is not None else "-" for c in (typical.same_sense, typical.other_sense))
        table.append(f"| {name} | {cosine:.3f} | {same} | {other} |")
    return table


def verdict_cell(stick: Yardstick | None) -> str:
    """A count with its verdict, as the page shows it ("2 **below**"); "-" where no neighbour is labelled."""
    if stick is None:
        return "-"
    return f"{stick.same_sense} **below**" if stick.verdict == "below" else f"{stick.same_sense} {stick.verdict}"


if __name__ == "__main__":
    main()
