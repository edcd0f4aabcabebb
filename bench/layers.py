"""What each ELMo layer holds, with probes that are not at ceiling (Peters et al. 2018, §5.3: syntax lower, senses
higher).

    python -m bench.layers [--model default] [--train-sentences 4000]

Syntax: a linear probe per layer (``encoder.eval.probe``, the POS task's), trained on the first ``--train-sentences``
sentences of UD English EWT train and scored on dev (never test):

- UPOS of every token: near ceiling at every layer (most words have one tag), so it cannot tell layers apart;
- UPOS of the tokens of ambiguous words: word types whose train uses carry two tags or more, the second at least
  ``AMBIGUOUS`` of them ("back", "that", "like"): the context must decide, and the word alone cannot;
- XPOS of every token: the Penn tags, finer (tense, number, comparison).

Senses: the sense probe's ROC AUC per layer (``encoder.eval.senses``: 16 words, 2 senses, 5 sentences each), with the
sense readout (``encoder.readout``) beside, plain and centred on each word's mean use. Prints the table as the figure
``layers.table`` (``bench/figures.py``: docs/evaluation.md and the default model's card quote it), with the ambiguous
word types' count, the seconds and the 1-minute load at the start; then the same figures as the ``probes`` entry of the
model's ``layers.json`` (which the About page draws, and ``tests/test_docs.py`` holds the pages to), to put there
when the pages take a new run. Writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from bench.figures import figure, figure_block
from encoder import Elmo
from encoder.eval.embeddings import Embedder
from encoder.eval.pos import read_conllu, split_path, token_stack
from encoder.eval.probe import fit_predict, standardize
from encoder.eval.senses import DATA as PROBE
from encoder.eval.senses import pair_auc, read_senses
from encoder.model_files import model_folder
from encoder.readout import Readout, centred

UD = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud-english-ewt"
AMBIGUOUS = 0.1  # the second most frequent tag of an ambiguous word: at least this share of its train uses


def ambiguous_words(train: list[tuple[list[str], list[str]]]) -> set[str]:
    """Word types (lower case) whose train uses carry two tags or more, the second at least ``AMBIGUOUS`` of them."""
    tags: dict[str, Counter] = defaultdict(Counter)
    for forms, upos in train:
        for form, tag in zip(forms, upos):
            tags[form.lower()][tag] += 1
    return {
        word
        for word, counts in tags.items()
        if len(counts) > 1 and counts.most_common(2)[1][1] >= AMBIGUOUS * sum(counts.values())
    }


def probe_accuracies(train_x: np.ndarray, train_y: list[str], test_x: np.ndarray, test_y: list[str], rows) -> list:
    """Per layer: accuracy (%) on the test tokens ``rows`` (a boolean mask) of a probe trained on all train tokens."""
    labels = {t: i for i, t in enumerate(sorted(set(train_y)))}
    y_train = np.array([labels[t] for t in train_y])
    y_test = np.array([labels.get(t, -1) for t in test_y])
    train_x, test_x = standardize(train_x, test_x)
    scores = []
    for j in range(train_x.shape[1]):
        predicted, _ = fit_predict(train_x[:, j], y_train, test_x[:, j], len(labels))
        scores.append([100 * float(np.mean(predicted[mask] == y_test[mask])) for mask in rows])
    return scores


def sense_aucs(elmo: Elmo, readout: Readout, shrinkage: float) -> list[float]:
    """The sense probe's macro AUC per layer, then the readout's plain and centred."""
    items = read_senses(PROBE, elmo.text)
    outputs = elmo.embed([list(s.tokens) for s in items], context=True)
    stack = np.stack([out[:, s.index] for out, s in zip(outputs, items)])  # (N, L+2, D): layers, then context
    words, senses = np.array([s.word for s in items]), np.array([s.sense for s in items])
    readouts = readout.vectors(stack[:, -1])
    views = [stack[:, j] for j in range(elmo.n_layers)] + [readouts]
    overall = readouts.mean(0)
    centred_readouts = readouts.copy()
    for word in np.unique(words):
        rows = words == word
        centred_readouts[rows] = centred(readouts[rows], readouts[rows].mean(0), int(rows.sum()), overall, shrinkage)
    aucs = []
    for vectors in [*views, centred_readouts]:
        x = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        aucs.append(
            100 * np.mean([pair_auc(x[words == w] @ x[words == w].T, senses[words == w]) for w in np.unique(words)])
        )
    return aucs


def probe_table(
    upos: list[float],
    upos_ambiguous: list[float],
    xpos: list[float],
    sense_auc: list[float],
    readout_auc: float,
    readout_auc_centred: float,
) -> list[str]:
    """The "what each layer holds" table as the pages quote it (figure ``layers.table``): a row per layer (token layer
    first), the readout's sense AUC (plain and centred) beneath, each column's highest figure in bold (the readout's
    counted in the sense column)."""

    def cell(value: float, column: list[float]) -> str:
        return f"**{value:.1f}**" if value == max(column) else f"{value:.1f}"

    senses = [*sense_auc, readout_auc, readout_auc_centred]
    names = ["token layer", *(f"layer {j}" for j in range(1, len(upos)))]
    rows = [
        "| layer | UPOS, every token | UPOS, ambiguous words | XPOS, every token | sense probe AUC |",
        "|---|---:|---:|---:|---:|",
    ]
    for j, name in enumerate(names):
        cells = [cell(upos[j], upos), cell(upos_ambiguous[j], upos_ambiguous), cell(xpos[j], xpos)]
        rows.append(f"| {name} | {' | '.join(cells)} | {cell(sense_auc[j], senses)} |")
    readout = f"{cell(readout_auc, senses)} (centred {cell(readout_auc_centred, senses)})"
    rows.append(f"| sense readout (context prediction) | | | | {readout} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default", help="one of our models (with its LM head); default %(default)s")
    parser.add_argument(
        "--train-sentences", type=int, default=4000, help="EWT train sentences the probes learn from (%(default)s)"
    )
    args = parser.parse_args()
    started, load = time.perf_counter(), os.getloadavg()[0]
    elmo = Elmo.load(args.model)
    readout = Readout.of_model(model_folder(args.model))
    embedder = Embedder(elmo)
    upos_train = list(read_conllu(split_path(UD, "train")))[: args.train_sentences]
    upos_dev = list(read_conllu(split_path(UD, "dev")))
    xpos_train = list(read_conllu(split_path(UD, "train"), column=4))[: args.train_sentences]
    xpos_dev = list(read_conllu(split_path(UD, "dev"), column=4))
    train_x = token_stack(embedder, [forms for forms, _ in upos_train])
    dev_x = token_stack(embedder, [forms for forms, _ in upos_dev])
    ambiguous = ambiguous_words(upos_train)
    dev_forms = [form.lower() for forms, _ in upos_dev for form in forms]
    every = np.ones(len(dev_forms), bool)
    in_ambiguous = np.array([form in ambiguous for form in dev_forms])
    flat = lambda sentences: [tag for _, tags in sentences for tag in tags]  # noqa: E731
    upos = probe_accuracies(train_x, flat(upos_train), dev_x, flat(upos_dev), [every, in_ambiguous])
    xpos = probe_accuracies(train_x, flat(xpos_train), dev_x, flat(xpos_dev), [every])
    aucs = sense_aucs(elmo, readout, readout.settings.shrinkage)
    print(
        f"model {elmo.name}; EWT: {len(upos_train):,} train sentences ({len(train_x):,} tokens), dev "
        f"{len(dev_forms):,} tokens, {int(in_ambiguous.sum()):,} of them of {len(ambiguous):,} ambiguous word types\n"
    )
    probes = {
        "upos": [round(scores[0], 1) for scores in upos],
        "upos_ambiguous": [round(scores[1], 1) for scores in upos],
        "xpos": [round(scores[0], 1) for scores in xpos],
        "sense_auc": [round(auc, 1) for auc in aucs[:-2]],
        "readout_sense_auc": round(aucs[-2], 1),
        "readout_sense_auc_centred": round(aucs[-1], 1),
    }
    figure_block("layers.table", probe_table(*probes.values()))
    figure("layers.ambiguous_types", f"{len(ambiguous):,}")
    figure("layers.seconds", f"{time.perf_counter() - started:.0f}")
    figure("layers.loadavg", f"{load:.1f}")
    measured = {"command": "python -m bench.layers", "measured": str(datetime.datetime.now(datetime.UTC).date())}
    print(f"\nlayers.json, probes: {json.dumps(measured | probes)}")


if __name__ == "__main__":
    main()
