"""Korean word units, measured: models trained alike on surface morphemes (``ko``) and on eojeol (``ko-eojeol``).

The Korean issue asks to choose the unit by sense separation and bits per character, the two measures that
compare across units. Each model is scored on the **same** paragraphs of ``corpus-ko/test`` (those holding
``--max-tokens`` targets under the default ``ko`` rules), so bits per character count the same characters;
"<UNK> spelled out" also charges every unknown target the spelling of its characters, since an eojeol
vocabulary leaves far more words unknown. The sense probe (``encoder/eval/sense_probe_ko.tsv``) is read with
each model's own rules: the vector of 배 is that of 배 for the morpheme model and of 배를 for the eojeol model.

    python -m bench.korean_units --models /tmp/ko-units/run-ko /tmp/ko-units/run-ko-eojeol

The training commands behind its table are in docs/korean.md ("Word units, measured"). Prints a table;
writes nothing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from encoder import Elmo
from encoder.eval import DEFAULT_DATA_ROOT, perplexity, senses
from encoder.eval.embeddings import Embedder
from encoder.text import text_rules
from encoder.threads import apply_threads
from encoder.weights import read_config

DECIMALS = {"tokens per character (test)": 3, "bits per character": 2, "bits per character, <UNK> spelled out": 2}


def measure(model: Path, lines: list[str], test: Path) -> dict[str, float]:
    """One model's row: training tokens, units per character, the perplexity task's rows and the sense probe."""
    scored = perplexity.score(model, lines, test)
    both = {row: values[perplexity.BOTH] for row, values in scored.rows.items()}
    probe = senses.run(Embedder(Elmo.load(model)), senses.DATA_KO)
    return {
        "training tokens": read_config(model)["training"]["tokens"],
        "tokens per character (test)": scored.details["tokens"] / scored.details["characters"],
        "perplexity (own units, not comparable)": both[perplexity.PERPLEXITY],
        "bits per character": both[perplexity.BPC],
        "bits per character, <UNK> spelled out": both[perplexity.BPC_SPELLED],
        "<UNK> targets (%)": both[perplexity.UNK],
        **{f"sense AUC, {view}": auc for view, auc in probe.rows[senses.AUC_ROW].items()},
        **{f"sense 1-NN, {view}": nn for view, nn in probe.rows[senses.NN_ROW].items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", required=True, type=Path, help="model folders or training runs")
    parser.add_argument(
        "--test",
        type=Path,
        default=DEFAULT_DATA_ROOT / perplexity.DATA_KO,
        help="held-out text, one paragraph per line (default: corpus-ko/test.txt.xz)",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=perplexity.MAX_TOKENS,
        help="the first paragraphs holding this many targets under the ko rules (default %(default)s)",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default %(default)s)")
    args = parser.parse_args()
    apply_threads(args.threads)

    started = time.perf_counter()
    lines = perplexity.read_paragraphs(args.test, text_rules("ko"), args.max_tokens)
    columns = {f"{m.name} ({read_config(m).get('language', 'en')})": measure(m, lines, args.test) for m in args.models}
    characters = sum(len(line.strip()) for line in lines)
    print(
        f"{len(lines):,} paragraphs of {args.test} ({characters:,} characters), {time.perf_counter() - started:.0f} s"
    )
    rows = list(next(iter(columns.values())))
    width = max(map(len, rows))
    print(f"| {'':{width}} | " + " | ".join(columns) + " |")
    print(f"|{'-' * (width + 2)}|" + "|".join("-" * (len(name) + 1) + ":" for name in columns) + "|")
    for row in rows:
        cells = []
        for name, values in columns.items():
            value = values[row]
            text = f"{value:,}" if isinstance(value, int) else f"{value:.{DECIMALS.get(row, 1)}f}"
            cells.append(f"{text:>{len(name)}}")
        print(f"| {row:{width}} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
