"""The recipe rule (issue 29, item 2): which recipe and shape learn the most per GPU minute?

Trains every recipe of ``encoder.train_config.RECIPES`` (or those named by ``--recipes``) from scratch for the same
minutes (``--minutes``, each run's ``--time-budget``: reading the corpus and, for a compiled step, compiling are
part of what a recipe costs) on the same corpus, seed and vocabulary size, with ``encoder train``. Each run is
then scored twice: validation perplexity (the mean of both directions on the first ``--valid-tokens`` of
``--valid``) and our sense probe (``encoder/eval/sense_probe_en.tsv``: ROC AUC of same- against different-sense
pairs of an ambiguous word's vectors, x 100), because the point of ELMo is senses and perplexity alone does not
show them.

The rule (``verdict``): candidates whose final perplexity is more than ``PPL_TOLERANCE`` above the lowest cannot
win; among the rest, the highest layer-2 sense AUC wins (layer 2 carries senses, Peters et al. 2018 §5.3), and
AUCs within ``AUC_TIE`` points of it count as a tie, which the lower perplexity breaks. A winner of another shape
than the shipped default's means training that shape from scratch: it becomes the default only once it measures
better than the shipped model (docs/training.md, "The recipe rule").

    python -m bench.recipe_rule --corpus SHARDS|PREPARED --valid valid.txt.xz --device cuda [--minutes 4]
                                [--recipes NAME ...] [--work DIR] [--results FILE] [--plot FILE]

Each finished candidate's row is appended to ``--results`` (JSON lines) at once, so a run cut short keeps what
it measured. On a CPU, ``--device cpu --minutes 0.3 --size tiny`` checks that the script runs. The runs go to
``--work`` (default: a temporary folder), never into the repository.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from encoder import Elmo
from encoder.eval.embeddings import Embedder
from encoder.eval.senses import AUC_ROW, DATA
from encoder.eval.senses import run as sense_probe
from encoder.run_folder import plot_perplexity, read_log
from encoder.train import train
from encoder.train_config import DEFAULT_RECIPE, RECIPES, SIZES, TrainConfig

PPL_TOLERANCE = 0.05  # a candidate more than 5 % above the lowest validation perplexity cannot win
AUC_TIE = 1.0  # sense AUCs (x 100) this close to the best count as a tie, broken by perplexity


def score(run: Path) -> dict:
    """A finished run's figures: tokens, speed, validation curve and last perplexity, sense-probe AUC per layer."""
    log = read_log(run)
    valid = [r for r in log if "valid" in r]
    speeds = [r["tokens_per_second"] for r in log if "tokens_per_second" in r]
    senses = sense_probe(Embedder(Elmo.load(run)), DATA).rows[AUC_ROW]
    return {
        "tokens": log[-1]["tokens"],
        "minutes": log[-1]["train_seconds"] / 60,
        "tokens_per_second": sorted(speeds)[len(speeds) // 2] if speeds else None,
        "curve": [(r["train_seconds"] / 60, r["valid"]["mean"]) for r in valid],
        "perplexity": valid[-1]["valid"]["mean"] if valid else None,
        "auc": {view: round(value, 1) for view, value in senses.items()},
    }


def verdict(results: dict[str, dict]) -> tuple[str, str]:
    """(the winning recipe, why), by the rule in the module's docstring."""
    best_ppl = min(r["perplexity"] for r in results.values())
    eligible = {name: r for name, r in results.items() if r["perplexity"] <= best_ppl * (1 + PPL_TOLERANCE)}
    best_auc = max(r["auc"]["layer 2"] for r in eligible.values())
    tied = {name: r for name, r in eligible.items() if r["auc"]["layer 2"] >= best_auc - AUC_TIE}
    winner = min(tied, key=lambda name: tied[name]["perplexity"])
    left_out = sorted(set(results) - set(eligible))
    why = (
        f"layer-2 sense AUC {results[winner]['auc']['layer 2']:.1f} (best {best_auc:.1f}, ties within {AUC_TIE}: "
        f"{', '.join(sorted(tied))}), perplexity {results[winner]['perplexity']:.1f} (lowest {best_ppl:.1f}"
        + (f"; over the {PPL_TOLERANCE:.0%} line: {', '.join(left_out)}" if left_out else "")
        + ")"
    )
    return winner, why


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", required=True, help="training text or prepared files, or folders")
    parser.add_argument("--valid", required=True, help="validation text or prepared file (e.g. corpus-en/valid.txt.xz)")
    parser.add_argument("--minutes", type=float, default=4.0, help="minutes per candidate (default %(default)s)")
    parser.add_argument(
        "--recipes", nargs="+", choices=list(RECIPES), default=list(RECIPES), help="candidates (default: all)"
    )
    parser.add_argument("--size", choices=sorted(SIZES), help="train every candidate at this size (a CPU smoke run)")
    parser.add_argument("--valid-tokens", type=int, default=50_000, help="validation tokens (default %(default)s)")
    parser.add_argument("--valid-every", type=int, default=1000, help="steps between validations (default %(default)s)")
    parser.add_argument("--device", default="cuda", help="default %(default)s")
    parser.add_argument("--seed", type=int, default=0, help="default %(default)s")
    parser.add_argument("--work", help="folder for the runs (default: a temporary folder, removed)")
    parser.add_argument("--results", type=Path, help="append each candidate's figures to this JSON-lines file")
    parser.add_argument("--plot", type=Path, help="write the validation curves (perplexity against minutes) here")
    args = parser.parse_args()

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(args.work or scratch)
        work.mkdir(parents=True, exist_ok=True)
        for name in args.recipes:
            size = f" at size {args.size}" if args.size else ""
            print(f"\n## {name}: {RECIPES[name]}{size}, {args.minutes:g} minutes", flush=True)
            cfg = TrainConfig.from_recipe(
                name,
                corpus=args.corpus,
                out=str(work / name),
                name=f"recipe-rule-{name}",
                **({"size": args.size} if args.size else {}),
                time_budget=args.minutes,
                device=args.device,
                seed=args.seed,
                valid=args.valid,
                valid_tokens=args.valid_tokens,
                valid_every=args.valid_every,
                checkpoint_every=10**6,  # one checkpoint, at the end
                overwrite=True,
                progress=False,
            )
            train(cfg)
            results[name] = score(work / name)
            print(json.dumps({"recipe": name, **results[name]}), flush=True)
            if args.results:
                with open(args.results, "a") as f:
                    f.write(json.dumps({"recipe": name, "minutes_each": args.minutes, **results[name]}) + "\n")

    print(f"\n## {args.minutes:g} minutes each on {args.device}\n")
    print("| recipe | tokens | tokens/s | validation perplexity | sense AUC layer 1 | layer 2 | average |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        speed = f"{r['tokens_per_second']:,}" if r["tokens_per_second"] else "—"
        print(
            f"| {name} ({RECIPES[name]}) | {r['tokens']:,} | {speed} | {r['perplexity']:.1f} | "
            f"{r['auc']['layer 1']:.1f} | {r['auc']['layer 2']:.1f} | {r['auc']['average']:.1f} |"
        )
    winner, why = verdict(results)
    shape = "the same shape as" if RECIPES[winner].size == RECIPES[DEFAULT_RECIPE].size else "another shape than"
    print(f"\nwinner: {winner}, {why}; {shape} the default recipe {DEFAULT_RECIPE!r}")
    if args.plot:
        curves = {f"{name} ({RECIPES[name]})": r["curve"] for name, r in results.items()}
        plot_perplexity(curves, args.plot, ylabel="validation perplexity (mean of directions)", xlabel="minutes")
        print(f"curves written to {args.plot}")


if __name__ == "__main__":
    main()
