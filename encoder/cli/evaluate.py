"""``python -m encoder evaluate TASK``: run evaluation tasks (``encoder.eval``) on a model; print tables, JSON or a
report."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from ..commands import path_argument
from ..device import add_device_option
from ..elmo import BATCH_SIZE, Elmo
from ..errors import fail
from ..eval import DEFAULT_DATA_ROOT, perplexity, pos, senses, sts, wic, wordsim, wsd
from ..eval.embeddings import Embedder
from ..eval.results import TaskResult
from ..glove import BASELINES, NONE, Glove
from ..model_files import add_model_options
from ..numbers import Number
from ..threads import add_threads_option

TASKS = {"wic": wic, "wsd": wsd, "pos": pos, "sts": sts, "wordsim": wordsim, "perplexity": perplexity, "senses": senses}
DATA = {
    "en": {name: task.DATA for name, task in TASKS.items()},
    "ko": {"perplexity": perplexity.DATA_KO, "senses": senses.DATA_KO},  # the other tasks' data sets are English
}
"""Each language's default data per task (relative to the data root, or absolute when shipped with the code)."""
NO_GLOVE = "GloVe column absent: --glove none"


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``evaluate`` sub-command."""
    p = commands.add_parser(
        "evaluate",
        help="score a model's layers on WiC, WSD, POS, STS-B, word similarity, perplexity and a word-sense probe",
        description="Evaluate ELMo layer by layer (token, each biLSTM layer, their average, a learned scalar mix "
        "where the task trains a classifier) beside baselines that need no biLM (GloVe, bag of context, "
        "first / most frequent sense, bag of words, majority class). Data default to the shared "
        f"data sets in {DEFAULT_DATA_ROOT} (the sense probe's sentences ship with the code).",
    )
    p.add_argument("task", choices=[*TASKS, "all"], help="one task, or all of them in this order")
    add_model_options(p)
    p.add_argument(
        "--data",
        type=path_argument,
        help="one task: its data (folder, or file for perplexity and senses); all: the folder holding "
        f"them ({', '.join(f'{n}: {path}' for n, path in DATA['en'].items() if n != 'senses')}; "
        f"a Korean model: perplexity {DATA['ko']['perplexity']}, the other English tasks are skipped; "
        "with all, senses reads the language's TSV shipped with the code)",
    )
    p.add_argument(
        "--glove",
        help="the GloVe column: the model language's baseline by default ('stanford', Stanford's glove.6B 50-d "
        "vectors, for English; 'korean', ours, for Korean), another of those names, a GloVe text file (.txt, "
        ".gz or .xz), or 'none'",
    )
    p.add_argument(
        "--limit",
        type=Number(int, 1),
        metavar="N",
        help="quick run: score at most N test items per task (WiC dev pairs, STS-B dev and test pairs, POS "
        "test sentences, WSD test sentences per part, SimLex/WordSim pairs, perplexity paragraphs, sense-probe "
        "words); training data (WiC train, UD train, SemCor) are never limited; each table says what was cut",
    )
    p.add_argument(
        "--wordnet",
        type=path_argument,
        default=wsd.DEFAULT_WORDNET,
        help="WordNet 3.0 dict folder, for wsd (default %(default)s)",
    )
    p.add_argument("--batch-size", type=BATCH_SIZE, default=64, help="sentences per batch (default %(default)s)")
    add_device_option(p)
    add_threads_option(p)
    p.add_argument(
        "--json",
        action="store_true",
        help='print the results as JSON instead of tables: {"model", "glove", "limit", "commands", "results"}',
    )
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bar (one per task on stderr, shown on a terminal)"
    )
    p.add_argument(
        "--report", type=path_argument, metavar="DIR", help="with 'all': write report.md, results.json and plots"
    )
    p.set_defaults(run=run, show=show_tables)


def run_task(name: str, args: argparse.Namespace, embedder: Embedder, data: Path, glove: Glove | None) -> TaskResult:
    """One task, timed; the GloVe note is added here so every task says the same."""
    started = time.perf_counter()
    if name == "perplexity":
        result = perplexity.run(args.weights or args.model, data, args.limit)  # published weights: no LM head
    else:
        extra = {"wordnet": args.wordnet} if name == "wsd" else {}
        with embedder.progress(name, show=not args.no_progress and sys.stderr.isatty()):
            result = TASKS[name].run(embedder, data, glove, args.limit, **extra)
        if glove is None:
            result.notes.append(NO_GLOVE)
    result.seconds = round(time.perf_counter() - started, 1)
    return result


def command_line(args: argparse.Namespace, task: str) -> str:
    """The command that reproduces ``task`` (a task name or ``all``) as run now."""
    words = ["python", "-m", "encoder", "evaluate", task]
    words += ["--model", str(args.model)] + (["--weights", str(args.weights)] if args.weights else [])
    if args.data:
        words += [
            "--data",
            str(args.data / DATA[args.language][task] if args.task == "all" and task != "all" else args.data),
        ]
    words += ["--glove", str(args.glove)] if args.glove != BASELINES[args.language] else []
    words += ["--limit", str(args.limit)] if args.limit is not None else []
    words += ["--wordnet", str(args.wordnet)] if task in ("wsd", "all") and args.wordnet != wsd.DEFAULT_WORDNET else []
    words += ["--report", str(args.report)] if task == "all" and args.report else []
    return shlex.join(words)


def run(args: argparse.Namespace) -> dict:
    """Load the model (and GloVe), run the task asked for or every task (a line on stderr as each ends), write the
    report; the results."""
    if args.report and args.task != "all":
        fail("--report goes with the task 'all'")
    if args.report:
        from ..eval.report import check_report_folder

        check_report_folder(args.report)  # before the tasks, which take minutes
    try:
        elmo = Elmo.load(args.model, args.weights, device=args.device)
        model_hash = elmo.model_hash  # of the files as they are now, before the tasks' minutes
        args.language = elmo.text.language
        args.glove = args.glove or BASELINES[args.language]
        glove = Glove.open(args.glove) if args.glove != NONE else None
    except (FileNotFoundError, ValueError) as error:
        fail(str(error))
    results = run_tasks(args, Embedder(elmo, args.batch_size), glove)
    model = {"name": elmo.name, "hash": model_hash, "layers": elmo.n_layers, "dim": elmo.dim}
    output = {
        "model": model,
        "glove": str(args.glove) if args.glove != NONE else None,
        "limit": args.limit,
        "commands": [command_line(args, n) for n in results],
        "results": {n: r.to_json() for n, r in results.items()},
    }
    if args.report:
        from ..eval.report import write_report

        write_report(args.report, output, results, command_line(args, "all"))
        print(f"wrote {args.report / 'report.md'}", file=sys.stderr)
    return output


def run_tasks(args: argparse.Namespace, embedder: Embedder, glove: Glove | None) -> dict[str, TaskResult]:
    """The task ``args.task`` names, or with ``all`` each task with a data set in the model's language (a task
    whose data are missing or malformed is then reported, not run, and the others still run)."""
    defaults = DATA[args.language]
    names = [name for name in TASKS if name in defaults] if args.task == "all" else [args.task]
    if args.task not in (*defaults, "all") and not args.data:
        fail(f"{args.task} has no {args.language} data set; give one with --data")
    if skipped := [name for name in TASKS if args.task == "all" and name not in defaults]:
        print(f"skipped (no {args.language} data set): {', '.join(skipped)}", file=sys.stderr)
    root = args.data if args.task == "all" and args.data else DEFAULT_DATA_ROOT
    results = {}
    for name in names:
        data = args.data if args.task != "all" and args.data else root / defaults[name]
        try:
            results[name] = run_task(name, args, embedder, data, glove)
        except (FileNotFoundError, ValueError) as error:  # missing or malformed data
            if args.task != "all":
                fail(f"{name}: {error}")
            results[name] = TaskResult(name, "", [], notes=[f"not run: {error}"])  # the other tasks still run
        embedder.clear()  # tasks share no sentences; keep memory flat
        print(f"{name}: {results[name].seconds:.1f} s", file=sys.stderr, flush=True)
    return results


def show_tables(result: dict, args: argparse.Namespace) -> None:
    """Each task's table, under its name and time."""
    for name, scores in result["results"].items():
        task = TaskResult(**scores)
        print(f"== {name} ({task.seconds:.1f} s) ==\n{task.table()}\n")
