"""The clipping rule (GPU-speed issue, item 2): does a biLM need cell and projection clipping?

Trains the same size twice on the same text, seed, vocabulary and number of tokens: once with the reference's
clips (cell 3.0, projection 3.0: the step-by-step LSTM) and once without (cuDNN's fused LSTM), each with
``encoder train`` and its validation perplexity every ``--valid-every`` steps. Prints both learning curves side
by side, the final perplexities and the rule's verdict: unclipped becomes the default when its final validation
perplexity is within 3 % of the clipped one's. With ``--plot FILE`` it also draws the two curves.

    python -m bench.clip_rule --corpus SHARD [SHARD ...] --valid valid.txt.xz --device cuda
                              [--size medium] [--tokens 20000000] [--batch-size 512] [--work DIR] [--plot FILE]

On one H100 the default (20M tokens each at batch 512) takes a few minutes; on a CPU, ``--size tiny --tokens
20000`` checks that the script runs. The runs go to ``--work`` (default: a temporary folder), never into the
repository.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path

from encoder.run_folder import plot_perplexity, read_log
from encoder.train import SIZES, TrainConfig, train

TOLERANCE = 0.03  # the rule: unclipped within 3 % of clipped validation perplexity


def validation_curve(run: Path) -> list[tuple[int, float]]:
    """(tokens seen, mean validation perplexity) of every validation in a run's log."""
    return [(r["tokens"], r["valid"]["mean"]) for r in read_log(run) if "valid" in r]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", required=True, help="training text files or folders")
    parser.add_argument("--valid", required=True, help="validation text (e.g. corpus-en/valid.txt.xz)")
    parser.add_argument(
        "--size", choices=sorted(SIZES), default="medium", help="the size compared (default %(default)s)"
    )
    parser.add_argument("--tokens", type=int, default=20_000_000, help="tokens per run (default %(default)s)")
    parser.add_argument("--batch-size", type=int, default=512, help="default %(default)s")
    parser.add_argument("--valid-tokens", type=int, default=50_000, help="validation tokens (default %(default)s)")
    parser.add_argument("--valid-every", type=int, default=500, help="steps between validations (default %(default)s)")
    parser.add_argument("--device", default="cuda", help="default %(default)s")
    parser.add_argument("--precision", default="auto", help="auto, fp32 or bf16 (default %(default)s)")
    parser.add_argument("--work", help="folder for the two runs (default: a temporary folder, removed)")
    parser.add_argument("--plot", type=Path, help="write the two validation curves to this PNG")
    args = parser.parse_args()

    size = SIZES[args.size]
    shapes = {
        "clipped": replace(size, cell_clip=3.0, proj_clip=3.0),
        "unclipped": replace(size, cell_clip=None, proj_clip=None),
    }
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(args.work or scratch)
        work.mkdir(parents=True, exist_ok=True)
        curves = {}
        for name, shape in shapes.items():
            config_file = work / f"{name}.json"
            config_file.write_text(json.dumps(shape.to_dict()))
            cfg = TrainConfig(
                corpus=args.corpus,
                out=str(work / name),
                name=f"clip-rule-{name}",
                config=str(config_file),
                batch_size=args.batch_size,
                max_tokens=args.tokens,
                device=args.device,
                precision=args.precision,
                valid=args.valid,
                valid_tokens=args.valid_tokens,
                valid_every=args.valid_every,
                checkpoint_every=10**6,  # one checkpoint, at the end
                overwrite=True,
            )
            print(f"\n## {name}: {json.dumps({k: v for k, v in shape.to_dict().items() if 'clip' in k})}", flush=True)
            train(cfg)
            curves[name] = validation_curve(work / name)

    clipped, unclipped = curves["clipped"], curves["unclipped"]
    print(f"\n## Validation perplexity, size {args.size}, batch {args.batch_size}\n")
    print("| tokens | clipped | unclipped | unclipped / clipped |\n|---:|---:|---:|---:|")
    for (tokens, a), (_, b) in zip(clipped, unclipped):
        print(f"| {tokens:,} | {a:.1f} | {b:.1f} | {b / a:.3f} |")
    ratio = unclipped[-1][1] / clipped[-1][1]
    verdict = "unclipped becomes the default" if ratio <= 1 + TOLERANCE else "clipped stays the default"
    print(f"\nfinal: unclipped / clipped = {ratio:.3f} (rule: within {TOLERANCE:.0%}): {verdict}")
    if args.plot:
        curves = {f"{name} ({args.size})": points for name, points in curves.items()}
        plot_perplexity(curves, args.plot, ylabel="validation perplexity (mean of directions)")
        print(f"curves written to {args.plot}")


if __name__ == "__main__":
    main()
