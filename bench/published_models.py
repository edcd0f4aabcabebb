"""Size and CPU speed of AllenNLP's published biLMs (``encoder download NAME``) beside our shipped default, and the
paper's model on the demo.

Speed depends only on a model's shape, not on its weights' values, so each published model is built with random
weights of its published shape (``PUBLISHED[name].options()``, the same options.json): nothing is downloaded.
elmo-original-5.5b has elmo-original's shape, so one row stands for both.

    python -m bench.published_models [--sentences 256] [--threads 2]

Embedding speed: the first --sentences of the English demo corpus, embedded stateless in batches of 32
(``Elmo.embed``'s defaults), after one warm-up batch.

    python -m bench.published_models --demo [--shape elmo-original] [--threads 2] [--queries 20] [--documents N]

The paper's model on the demo (``python -m app --model elmo-original``): random weights of the shape written as a
folder of published weights (options.json + weights.hdf5), then each demo corpus (English, then Korean: the app
builds only the English one with a published model; the Korean one is here for its size) built by a whole
``python -m indexer build`` process with the demo's GloVe baseline, as the app builds it: its wall time and peak
memory (the child's maximum resident set). ``--documents N`` builds only the first N documents of each corpus and
adds the whole corpus's time projected from the part's, in proportion to the documents' characters (a projection,
not a measurement: the build's fixed costs are scaled too). Then the English index is opened in this process and a
Word in context question (``Index.neighbors``, the page's Table 4 "play") is asked once to warm up and --queries
times more: the median, and this process's peak memory.

Prints tables; writes nothing outside a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.figures import figure_block
from demo.corpora import DEMOS, demo_corpus
from demo.examples import EXAMPLES, TABLE4
from encoder import PUBLISHED, BiLM, BiLMConfig, Elmo
from encoder.files import shipped_data
from encoder.text import text_rules
from encoder.threads import apply_threads
from encoder.weights import save_hdf5

ROOT = Path(__file__).resolve().parents[1]


def demo_sentences(n: int) -> list[list[str]]:
    rules, found = text_rules("en"), []
    for path in sorted((shipped_data() / "demo").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            found.extend(s.tokens for s in rules.split_and_tokenize(json.loads(line)["text"]))
            if len(found) >= n:
                return found[:n]
    return found


def random_model(name: str) -> BiLM:
    """Seeded random weights of the published model ``name``'s shape."""
    model = BiLM(BiLMConfig.from_options(PUBLISHED[name].options()))
    model.reset_parameters(seed=0)
    return model


def measure(elmo: Elmo, sentences: list[list[str]]) -> float:
    """Tokens per second embedding ``sentences`` (after one warm-up batch)."""
    elmo.embed(sentences[:32])
    started = time.perf_counter()
    elmo.embed(sentences, batch_size=32)
    return sum(map(len, sentences)) / (time.perf_counter() - started)


SPEED_HEAD = (
    "| model | weights | parameters | fp32 MB | output dim | CPU tokens/s |",
    "|---|---|---:|---:|---:|---:|",
)
"""The speed table's header, as docs/models.md quotes it (tests/test_docs.py checks the page's copy against it)."""


def speed_table(args: argparse.Namespace) -> None:
    sentences = demo_sentences(args.sentences)
    shapes = [name for name in PUBLISHED if name != "elmo-original-5.5b"]
    print(f"{len(sentences)} sentences, {sum(map(len, sentences)):,} tokens; {args.threads} threads")
    table = list(SPEED_HEAD)
    for name in ["default", *shapes]:
        elmo = Elmo.load("default") if name == "default" else Elmo(random_model(name), name=name)
        weights = "shipped" if name == "default" else "random, published shape"
        parameters = sum(p.numel() for p in elmo.model.parameters())
        speed = measure(elmo, sentences)
        table.append(
            f"| `{name}` | {weights} | {parameters:,} | {parameters * 4 / 1e6:.1f} | {elmo.dim} | {speed:,.0f} |"
        )
        del elmo
    figure_block("published_models.speed", table)


def build_process(corpus: list[Path], out: Path, model: Path, glove: str, threads: int) -> tuple[float, float]:
    """Wall seconds and peak resident GiB of one ``python -m indexer build`` process."""
    command = [sys.executable, "-m", "indexer", "build", "--corpus", *map(str, corpus), "--out", str(out)]
    command += ["--model", str(model), "--glove", glove, "--threads", str(threads), "--quiet"]
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"error: the build of {corpus[0].parent} failed ({' '.join(command)})")
    return seconds, usage.ru_maxrss / 2**20


def first_documents(demo: str, n: int | None, folder: Path) -> tuple[list[Path], float]:
    """The demo's corpus files, or (``n``) a file of its first ``n`` documents written into ``folder``; and the
    share of the whole corpus's characters they hold."""
    files = demo_corpus(demo)
    if n is None:
        return files, 1.0
    lines = [line for path in files for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    part = folder / f"first-{n}-{demo}.jsonl"
    part.write_text("".join(line + "\n" for line in lines[:n]), encoding="utf-8")
    return [part], sum(map(len, lines[:n])) / sum(map(len, lines))


DEMO_HEAD = (
    "| demo corpus | documents | tokens | build s | tokens/s | peak GiB | whole corpus s (projected) |",
    "|---|---:|---:|---:|---:|---:|---:|",
)
"""The demo table's header, as docs/models.md quotes it (tests/test_docs.py checks the page's copy against it)."""


def demo_table(args: argparse.Namespace) -> None:
    from indexer import Index
    from indexer.manifest import Manifest

    part = "whole corpora" if args.documents is None else f"first {args.documents} documents of each corpus"
    print(f"{args.shape}: random weights of the published shape; {args.threads} threads; {part}")
    table = list(DEMO_HEAD)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / args.shape
        folder.mkdir()
        save_hdf5(random_model(args.shape), folder / "options.json", folder / "weights.hdf5")
        for demo in ("en", "ko"):
            out = Path(tmp) / f"index-{demo}"
            corpus, share = first_documents(demo, args.documents, Path(tmp))
            seconds, peak = build_process(corpus, out, folder, DEMOS[demo].glove, args.threads)
            counts = Manifest.read(out).counts
            projected = f"{seconds / share:.0f}" if share < 1 else "(measured: whole)"
            table.append(
                f"| {DEMOS[demo].name} | {counts.documents:,} | {counts.tokens:,} | {seconds:.1f} | "
                f"{counts.tokens / seconds:.0f} | {peak:.2f} | {projected} |"
            )
        figure_block(f"published_models.{args.shape}.demo", table)
        started = time.perf_counter()
        index = Index.open(Path(tmp) / "index-en")
        opened = time.perf_counter() - started
        (sentence, word), _ = EXAMPLES[TABLE4]
        index.neighbors(sentence, word, k=10)  # warm-up
        times = []
        for _ in range(args.queries):
            started = time.perf_counter()
            index.neighbors(sentence, word, k=10)
            times.append(time.perf_counter() - started)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(
            f"English index: opened in {opened:.1f} s; Word in context neighbours of {word!r} (k=10, warm): median "
            f"{statistics.median(times) * 1000:.0f} ms of {args.queries}; this process's peak {peak:.2f} GiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=256, help="demo sentences embedded (default 256)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    parser.add_argument("--demo", action="store_true", help="build the demo indexes with --shape instead")
    parser.add_argument(
        "--shape", default="elmo-original", choices=list(PUBLISHED), help="(--demo) default %(default)s"
    )
    parser.add_argument("--queries", type=int, default=20, help="(--demo) timed neighbours questions (default 20)")
    parser.add_argument(
        "--documents", type=int, help="(--demo) build only each corpus's first N documents, and project the whole"
    )
    args = parser.parse_args()
    apply_threads(args.threads)
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f}")
    demo_table(args) if args.demo else speed_table(args)
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
