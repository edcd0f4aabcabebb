"""Whole-process CPU comparison: ``python -m encoder embed`` vs AllenNLP 2.10's ``_ElmoBiLm``, start-up included.

    python -m bench.embed_process --allennlp DIR [--sentences 1024] [--batch-size 32] [--repeats 3] [--threads N]

Writes random weights of the published "small" shape (seeded, reference options.json + hdf5 layout) and the first
1,024 WikiText-2 sentences (one per line, tokens joined by spaces) into a temporary folder, then times, each as its
own process from start to exit (wall clock around ``subprocess.run``), alternating ours, AllenNLP, ours, ...:

  ours      python -m encoder embed --model options.json --weights weights.hdf5 --input FILE --output OUT.hdf5
            --batch-size 32 --quiet   (the command line as shipped; stateless, exact fp32, CPU)
  allennlp  this file as a worker: import AllenNLP's real modules (bench/allennlp_baseline.py's loader), build
            ``_ElmoBiLm`` from the same files (stateless, eval, no_grad), ``batch_to_ids`` + forward over the same
            sentences in consecutive batches of 32, and write the same hdf5 layout as ours (dataset "i" =
            float32 (L+1, n, 2P) per line, minus BOS/EOS, plus "sentence_to_index").

Both processes get the same threads: torch's default for the machine, or ``--threads N`` (OMP_NUM_THREADS and
MKL_NUM_THREADS in both environments). One untimed warm-up of each (32 sentences) fills the file cache first. The two
outputs are compared value by value at the end (the same work was done). The disk is synced before every process
(untimed), so that none pays for writing back the output of the one before. Then one extra, untimed run of our command
under a driver that stamps its phases (import, model load, reading, embedding, writing) and one
``python -X importtime`` of ``encoder.__main__`` show where our process spends its time.

``--checkout DIR`` (repeatable) adds to every round ``python -m encoder embed`` run from another copy of the repository
(a change under test, or the code before one), with its own row and ratio, so that a change is measured side by side.

Prints a table; writes nothing outside its temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench.figures import figure_block

ROOT = Path(__file__).resolve().parents[1]
OURS = "ours: python -m encoder embed"
TABLE_HEAD = (
    "| whole process, start to exit | median s | min s | tokens/s (median) | AllenNLP / this (median) | runs s |",
    "|---|---:|---:|---:|---:|---|",
)
"""The table's header: the pages keep the last run's table (``tests/test_docs.py``, ``MARKED_ONLY``)."""
ALLENNLP = "AllenNLP _ElmoBiLm (same work)"

# The instrumented run of our command: `python -m encoder`'s own cli() (its frame freezes the imports' objects and
# ends the process after embed), with its phases stamped and printed just before that end.
_DRIVER = r"""
import json, sys, time
t0 = time.perf_counter()
import encoder.__main__ as cli
import encoder.cli.frame as frame
cli.build_parser(sys.argv[1:])  # the command's module, which the CLI imports when it builds its parser
t_import = time.perf_counter()
import torch
from encoder.elmo import Elmo
stamps = {}
def timed(name, function):
    def call(*args, **kwargs):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        stamps[name] = (start, time.perf_counter())
        return result
    return call
load = Elmo.load.__func__
Elmo.load = classmethod(timed("load", load))
Elmo.embed = timed("embed", Elmo.embed)
def report_then(exit_now):
    t_end = time.perf_counter()
    print(json.dumps({
        "import encoder (package + CLI modules)": t_import - t0,
        "model load (Elmo.load)": stamps["load"][1] - stamps["load"][0],
        "read + split input lines": stamps["embed"][0] - stamps["load"][1],
        "embed (Elmo.embed)": stamps["embed"][1] - stamps["embed"][0],
        "write hdf5": t_end - stamps["embed"][1],
        "in-process total": t_end - t0,
        "threads": torch.get_num_threads(),
    }), flush=True)
    exit_now()
frame.exit_now = lambda exit_now=frame.exit_now: report_then(exit_now)
cli.cli()
"""


def prepare(folder: Path, n_sentences: int, shape: str) -> tuple[Path, Path, Path, int]:
    """Seeded random weights of ``shape`` and the first ``n_sentences`` WikiText-2 sentences, one per line."""
    from bench.encoder_speed import SHAPES, load_sentences
    from encoder.model import BiLM
    from encoder.weights import save_hdf5

    sentences = load_sentences(n_sentences)
    if len(sentences) < n_sentences:
        raise SystemExit(f"only {len(sentences)} sentences in WikiText-2 valid")
    model = BiLM(SHAPES[shape])
    model.reset_parameters(seed=0)
    options, weights, text = folder / "options.json", folder / "weights.hdf5", folder / "sentences.txt"
    save_hdf5(model, options, weights)
    text.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
    return options, weights, text, sum(len(s) for s in sentences)


def our_command(options: Path, weights: Path, text: Path, output: Path, batch_size: int) -> list[str]:
    return [
        *("-m", "encoder", "embed", "--model", str(options), "--weights", str(weights)),
        *("--input", str(text), "--output", str(output), "--batch-size", str(batch_size), "--quiet"),
    ]


def allennlp_command(
    allennlp_dir: str, options: Path, weights: Path, text: Path, output: Path, batch_size: int
) -> list[str]:
    return [
        *(
            "-m",
            "bench.embed_process",
            "--worker",
            "--allennlp",
            allennlp_dir,
            "--options",
            str(options),
            "--weights",
            str(weights),
        ),
        *("--input", str(text), "--output", str(output), "--batch-size", str(batch_size)),
    ]


def run_process(arguments: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, str]:
    """Wall seconds of one process from start to exit, and its stdout. The disk is synced first (untimed), so
    that no process pays for writing back what the one before it wrote."""
    os.sync()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *arguments], cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(arguments[:4])} ... failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, done.stdout


def import_shares(env: dict[str, str], top: int = 8) -> list[tuple[str, float]]:
    """Self import time per top-level package of ``import encoder.__main__`` and its parser's sub-command modules
    (``python -X importtime``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", 'import encoder.__main__ as cli; cli.build_parser(["embed"])'],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    per_package: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "imported package" in line:
            continue
        self_us, _, name = line.split(":", 1)[1].split("|")
        per_package[name.strip().split(".")[0]] += int(self_us) / 1e6
    total = sum(per_package.values())
    ranked = sorted(per_package.items(), key=lambda kv: -kv[1])
    return [("(all)", total)] + ranked[:top]


def compare_outputs(ours: Path, theirs: Path) -> tuple[int, float]:
    import h5py
    import numpy as np

    diff = 0.0
    with h5py.File(ours, "r") as a, h5py.File(theirs, "r") as b:
        names = [k for k in a.keys() if k != "sentence_to_index"]
        if set(names) != {k for k in b.keys() if k != "sentence_to_index"}:
            raise SystemExit("the two outputs hold different sentences")
        for name in names:
            x, y = a[name][()], b[name][()]
            if x.shape != y.shape:
                raise SystemExit(f"sentence {name}: shape {x.shape} (ours) vs {y.shape} (allennlp)")
            diff = max(diff, float(np.abs(x - y).max()))
        if json.loads(a["sentence_to_index"][0]) != json.loads(b["sentence_to_index"][0]):
            raise SystemExit("sentence_to_index differs")
    return len(names), diff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--allennlp", required=True, metavar="DIR", help="folder holding AllenNLP 2.10's allennlp/")
    parser.add_argument("--sentences", type=int, default=1024, help="WikiText-2 sentences (default 1024)")
    parser.add_argument("--batch-size", type=int, default=32, help="sentences per batch, both sides (default 32)")
    parser.add_argument("--repeats", type=int, default=3, help="timed processes per side, alternating (default 3)")
    parser.add_argument("--threads", type=int, help="threads for both (OMP/MKL_NUM_THREADS); default: torch's")
    parser.add_argument("--shape", default="small", help="model shape from bench/encoder_speed.py (default small)")
    parser.add_argument(
        "--checkout",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="also time `python -m encoder embed` run from this other copy of the repository (e.g. with a change "
        "under test), alternating with the others; repeatable",
    )
    # worker mode: the AllenNLP process (not for direct use)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--options", help=argparse.SUPPRESS)
    parser.add_argument("--weights", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return allennlp_worker(args)

    import torch

    from encoder.threads import THREADS_ENV

    env = dict(os.environ)
    if args.threads:
        env.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    # our command's count: the same as AllenNLP's (--threads, else torch's default), not the project's thread rule
    env[THREADS_ENV] = str(args.threads or torch.get_num_threads())
    for checkout in args.checkout:
        if not (checkout / "encoder" / "__main__.py").is_file():
            parser.error(f"--checkout {checkout}: no encoder/__main__.py there")
    with tempfile.TemporaryDirectory(prefix="embed-process-") as tmp:
        folder = Path(tmp)
        options, weights, text, tokens = prepare(folder, args.sentences, args.shape)

        def processes(sentences: Path, tag: str) -> dict[str, tuple[list[str], Path, Path]]:
            """label -> (arguments, working directory, output): ours first, AllenNLP last."""
            found = {OURS: (ROOT, folder / f"{tag}ours.hdf5")}
            for k, checkout in enumerate(args.checkout):
                found[f"ours from {checkout}"] = (checkout.resolve(), folder / f"{tag}checkout{k}.hdf5")
            result = {
                label: (our_command(options, weights, sentences, output, args.batch_size), cwd, output)
                for label, (cwd, output) in found.items()
            }
            output = folder / f"{tag}allennlp.hdf5"
            theirs = allennlp_command(args.allennlp, options, weights, sentences, output, args.batch_size)
            return result | {ALLENNLP: (theirs, ROOT, output)}

        warm_text = folder / "warm.txt"
        warm_text.write_text("".join(text.read_text(encoding="utf-8").splitlines(True)[: args.batch_size]))
        for arguments, cwd, _ in processes(warm_text, "warm-").values():  # untimed: fills the file cache
            run_process(arguments, env, cwd)

        sides = processes(text, "")
        times: dict[str, list[float]] = {label: [] for label in sides}
        worker_phases: list[dict] = []
        for _ in range(args.repeats):
            for label, (arguments, cwd, _) in sides.items():
                seconds, out = run_process(arguments, env, cwd)
                times[label].append(seconds)
                if label == ALLENNLP:
                    worker_phases.append(json.loads(out.strip().splitlines()[-1]))
        agreement = {label: compare_outputs(output, sides[ALLENNLP][2]) for label, (_, _, output) in sides.items()}
        del agreement[ALLENNLP]

        wall, out = run_process(["-c", _DRIVER, *sides[OURS][0][2:]], env)
        phases = json.loads(out.strip().splitlines()[-1])
        shares = import_shares(env)

    load = os.getloadavg()
    threads = f"--threads {args.threads}" if args.threads else "torch default"
    print(
        f"{args.sentences} WikiText-2 sentences, {tokens} tokens; shape {args.shape}; batches of {args.batch_size}; "
        f"CPU, {threads} (ours {phases['threads']}, allennlp {worker_phases[0]['threads']} threads); "
        f"{args.repeats} processes each, alternating; allennlp {worker_phases[0]['allennlp_version']}; "
        f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    table = list(TABLE_HEAD)
    allennlp_median = statistics.median(times[ALLENNLP])
    for label, seconds in times.items():
        median = statistics.median(seconds)
        runs = ", ".join(f"{t:.2f}" for t in seconds)
        table.append(
            f"| {label} | {median:.2f} | {min(seconds):.2f} | {tokens / median:.0f} | "
            f"{allennlp_median / median:.2f}x | {runs} |"
        )
    figure_block("embed_process.table", table)
    print(
        f"ratio AllenNLP time / ours: {allennlp_median / statistics.median(times[OURS]):.2f}x (medians), "
        f"{min(times[ALLENNLP]) / min(times[OURS]):.2f}x (minimums)"
    )
    for label, (n, diff) in agreement.items():
        print(f"outputs agree ({label} vs AllenNLP): {n} sentences, all layers, max |diff| = {diff:.1e}")

    print(f"\nours, where the time goes (one extra instrumented run, wall {wall:.2f} s):")
    print(f"  interpreter start + exit: {wall - phases['in-process total']:.2f} s")
    for name, seconds in phases.items():
        if name not in ("in-process total", "threads"):
            print(f"  {name}: {seconds:.2f} s")
    print(
        "  import encoder.__main__, self import time by package (python -X importtime, one more run): "
        + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in shares)
    )
    keys = [k for k in worker_phases[0] if k.endswith(" s")]
    print(
        "allennlp, median phases of the timed runs: "
        + ", ".join(f"{k[:-2]} {statistics.median(p[k] for p in worker_phases):.2f} s" for k in keys)
    )


def allennlp_worker(args: argparse.Namespace) -> None:
    """The AllenNLP process: load, embed in consecutive batches (stateless, no_grad), write our hdf5 layout."""
    t0 = time.perf_counter()
    import h5py
    import torch

    from bench.allennlp_baseline import build_bilm, load_allennlp

    t_import = time.perf_counter()
    load_allennlp(args.allennlp)
    t_allennlp = time.perf_counter()
    elmo, bilm = build_bilm(args.options, args.weights, args.allennlp)
    t_load = time.perf_counter()
    with open(args.input, encoding="utf-8") as f:
        lines = [line.strip() for line in f]  # as AllenNLP's `elmo` command (0.9) read them
    sentences = [line.split() for line in lines]
    vectors = []
    with torch.no_grad():
        for start in range(0, len(sentences), args.batch_size):
            batch = sentences[start : start + args.batch_size]
            activations = bilm(elmo.batch_to_ids(batch))["activations"]
            stacked = torch.stack(activations, dim=1).numpy()  # (B, L+1, T+2, 2P), BOS and EOS included
            vectors.extend(stacked[b, :, 1 : 1 + len(s)].copy() for b, s in enumerate(batch))
    t_embed = time.perf_counter()
    with h5py.File(args.output, "w") as out:
        sentence_to_index = {}
        for i, (line, layers) in enumerate(zip(lines, vectors)):
            out.create_dataset(str(i), data=layers.astype("float32"))
            sentence_to_index[line] = str(i)  # a repeated line: its last
        out.create_dataset("sentence_to_index", data=[json.dumps(sentence_to_index)])
    t_end = time.perf_counter()
    phases = {
        "import torch + h5py s": t_import - t0,
        "import allennlp modules s": t_allennlp - t_import,
        "build _ElmoBiLm (model load) s": t_load - t_allennlp,
        "read + embed s": t_embed - t_load,
        "write s": t_end - t_embed,
    }
    print(json.dumps({**phases, "threads": torch.get_num_threads(), "allennlp_version": elmo.ALLENNLP_VERSION}))


if __name__ == "__main__":
    main()
