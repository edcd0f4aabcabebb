"""What weight storage costs (issue 29, item 4): a model stored in float16 and in int8 against its float32 weights.

For each storage of ``encoder/weights.py`` (``STORAGES``) the model's biLM is written to a temporary folder and
loaded back (the loader restores float32), then compared with the model as loaded now: bytes on disk, the
largest absolute deviation of every layer's vectors and their lowest cosine over ``--sentences`` sentences of
``--text``, and the perplexity (both directions, exp of the mean loss) over the first ``--tokens`` targets of
``--text`` with the model's own head. A shipped model is stored in float16 already, so for it the float32 row
is those float16 weights restored, and the int8 row shows what int8 adds.

    python -m bench.storage [--model default] [--text corpus-en/test.txt.xz] [--sentences 200] [--tokens 100000]

Prints a table (a figure for the docs, ``bench/figures.py``); the temporary folders are removed.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from bench.figures import figure_block
from encoder import Elmo
from encoder.files import open_text
from encoder.lm_data import paragraph_sentences
from encoder.lm_head import evaluate, load_language_model
from encoder.model_files import model_folder
from encoder.weights import STORAGES, load_model, save_model, weight_files

SHARED_TEST = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus-en" / "test.txt.xz"
TABLE_HEAD = (
    "| storage | biLM bytes | max abs deviation, token / layer 1 / layer 2 | lowest cosine | perplexity |",
    "|---|---:|---|---:|---:|",
)
"""The table's header, as docs/training.md quotes it (tests/test_docs.py checks the page's copy against it)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default", help="one of our models (default %(default)s)")
    parser.add_argument("--text", type=Path, default=SHARED_TEST, help="held-out text, one paragraph per line")
    parser.add_argument("--sentences", type=int, default=200, help="sentences compared vector by vector")
    parser.add_argument("--tokens", type=int, default=100_000, help="targets per direction for perplexity")
    args = parser.parse_args()

    folder = model_folder(args.model)
    reference = Elmo.load(folder)
    text = reference.text
    with open_text(args.text) as f:
        lines = [line for line, _ in zip(f, range(20_000)) if line.strip()]
    paragraphs = [paragraph_sentences(line, text) for line in lines]
    sentences = [s for p in paragraphs for s in p][: args.sentences]
    expected = reference.embed(sentences)
    lm, vocab = load_language_model(folder)

    print(f"model {folder}, {len(sentences)} sentences, perplexity over the first {args.tokens:,} targets\n")
    table = list(TABLE_HEAD)
    for storage in STORAGES:
        with tempfile.TemporaryDirectory() as scratch:
            save_model(reference.model, scratch, storage=storage)
            size = sum(p.stat().st_size for p in weight_files(scratch))
            stored = load_model(scratch)
        got = Elmo(stored, text=text).embed(sentences)
        deviation = [max(float(np.abs(a[j] - b[j]).max()) for a, b in zip(got, expected)) for j in range(3)]
        flat_a = np.concatenate([a.reshape(-1, a.shape[-1]) for a in got])
        flat_b = np.concatenate([b.reshape(-1, b.shape[-1]) for b in expected])
        cosine = (flat_a * flat_b).sum(1) / (np.linalg.norm(flat_a, axis=1) * np.linalg.norm(flat_b, axis=1))
        lm.bilm = stored
        ppl = evaluate(lm, vocab, paragraphs, args.tokens)["mean"]
        deviations = " / ".join(f"{d:.3g}" for d in deviation)
        table.append(f"| {storage} | {size:,} | {deviations} | {cosine.min():.5f} | {ppl:.2f} |")
    figure_block("storage.table", table)


if __name__ == "__main__":
    main()
