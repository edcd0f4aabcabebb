"""The docs name the code as it is: every module of the four packages has its line in docs/development.md's map, and
every command line the docs show is one the programs take."""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import io
import json
import re
import shlex
import statistics
from pathlib import Path

import pytest
from helpers import SHARED

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("encoder", "indexer", "app", "demo")


def test_the_module_map_names_every_module_and_no_other():
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    modules = text.split("## Modules", 1)[1].split("\n## ", 1)[0]
    named: set[str] = set()
    for section in re.split(r"^\*\*(\w+)/\*\*$", modules, flags=re.MULTILINE)[1:]:
        if section in PACKAGES:
            package = section
            continue
        named |= {f"{package}/{name}" for name in re.findall(r"`([\w/]+\.py)`", section)}
    actual = {str(p.relative_to(REPO)) for package in PACKAGES for p in (REPO / package).rglob("*.py")}
    assert named == actual, f"missing: {sorted(actual - named)}; not modules: {sorted(named - actual)}"


LONG_MODULE = 600
"""Lines a module may hold without a reason stated on its line of the module map ("over 600 lines: why")."""


def test_a_module_over_600_lines_says_why_on_the_module_map():
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    modules = text.split("## Modules", 1)[1].split("\n## ", 1)[0]
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            if len(path.read_text(encoding="utf-8").splitlines()) <= LONG_MODULE:
                continue
            name = str(path.relative_to(REPO / package))
            section = modules.split(f"**{package}/**", 1)[1].split("\n**", 1)[0]
            (entry,) = [e for e in re.split(r"\n(?=- )", section) if f"`{name}`" in e]
            assert f"over {LONG_MODULE} lines:" in entry, f"{package}/{name} is long: say why on its line of the map"


# ------------------------------------------------------------------------------------------ commands in the docs
COMMAND_DOCS = ("README.md", "docs/*.md")
PROGRAM = re.compile(
    r"(?:python -m (?P<module>encoder|indexer|app)(?![\w.])"
    r"|(?:(?<=\s)|(?<=^)|(?<=`)|(?<=bin/))elmo-(?P<script>encoder|indexer|search)(?![\w.-]))"
)
SCRIPTS = {"encoder": "encoder", "indexer": "indexer", "search": "app"}
OPTION = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")
BENCH = re.compile(r"python -m bench\.(\w+)")


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Each program's real parser, built as its command line builds it (nothing runs)."""
    from app.__main__ import make_parser as app_parser
    from encoder.__main__ import build_parser as encoder_parser
    from indexer.__main__ import make_parser as indexer_parser

    return {"encoder": encoder_parser(), "indexer": indexer_parser(), "app": app_parser()}


def sub_commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def code(markdown: str) -> tuple[list[tuple[str, bool]], str]:
    """The logical lines of the fenced blocks (a line continued by ``\\`` or by an indented line, as synopses wrap),
    each with whether its block is ``bash``; and the prose with the blocks taken out (for inline code)."""
    lines: list[tuple[str, bool]] = []
    prose, block, opened = [], None, 0
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            block, opened = (line.strip()[3:].strip(), len(lines)) if block is None else (None, opened)
        elif block is None:
            prose.append(line)
        elif len(lines) > opened and (lines[-1][0].endswith("\\") or (line[:1].isspace() and not PROGRAM.search(line))):
            lines[-1] = (lines[-1][0].removesuffix("\\") + " " + line.strip(), lines[-1][1])
        else:
            lines.append((line, block == "bash"))
    return lines, "\n".join(prose)


def commands(markdown: str) -> list[tuple[str, str, bool]]:
    """Every command of the three programs the text shows: (program, what follows it, whether to parse it whole).
    Fenced lines are cut at their comment and at the next command; inline code is taken as it is."""
    lines, prose = code(markdown)
    found = []
    for text, bash in lines:
        text = re.sub(r"\s#\s.*$", "", text)
        starts = list(PROGRAM.finditer(text))
        for start, end in zip(starts, [*starts[1:], None]):
            rest = text[start.end() : end.start() if end else None]
            found.append((start["module"] or SCRIPTS[start["script"]], rest, bash))
    for span in re.findall(r"`([^`]+)`", prose):
        for start in PROGRAM.finditer(span):
            found.append((start["module"] or SCRIPTS[start["script"]], span[start.end() :], False))
    return found


def command_problems(markdown: str) -> list[str]:
    """What is wrong with the commands a markdown text shows: a sub-command that does not exist, an option its
    sub-command does not have, a ``bash`` line the parser refuses, a ``python -m bench.NAME`` that names no module."""
    programs, problems = parsers(), []
    for program, rest, bash in commands(markdown):
        parser, words = programs[program], rest.split()
        choices = sub_commands(parser)
        if choices and words and not words[0].startswith("-"):  # else the program's own options (--help)
            if words[0] not in choices:
                problems.append(f"{program} has no sub-command {words[0]!r}: {rest.strip()}")
                continue
            parser = choices[words[0]]
        for option in OPTION.findall(rest):
            if option not in parser._option_string_actions:
                problems.append(f"{parser.prog} has no option {option}: {rest.strip()}")
        if bash:
            try:
                with contextlib.redirect_stderr(io.StringIO()) as said:
                    programs[program].parse_args(shlex.split(rest))
            except SystemExit:
                problems.append(f"{program} refuses {rest.strip()!r}: {said.getvalue().strip().splitlines()[-1]}")
    for name in BENCH.findall(markdown):
        if not (REPO / "bench" / f"{name}.py").is_file():
            problems.append(f"python -m bench.{name}: there is no bench/{name}.py")
    return problems


def test_every_command_in_the_docs_is_one_the_programs_take():
    """Every command line in the docs names a sub-command and options the program has (``bash`` lines parse whole)
    and every benchmark it runs exists: a renamed or removed option fails here, not in a reader's terminal."""
    docs = sorted({p for pattern in COMMAND_DOCS for p in REPO.glob(pattern)})
    shown = {str(p.relative_to(REPO)): commands(p.read_text(encoding="utf-8")) for p in docs}
    assert sum(map(len, shown.values())) > 50 and all(shown[name] for name in ("README.md", "docs/indexer.md"))
    problems = {name: command_problems((REPO / name).read_text(encoding="utf-8")) for name in shown}
    assert not {name: found for name, found in problems.items() if found}


QUERY_OPTIONS = "[query options]"
"""What docs/indexer.md's synopsis writes for the options every command that opens an index to answer shares."""


def undocumented_options(markdown: str) -> dict[str, list[str]]:
    """The indexer's options that the synopsis of their sub-command (the non-``bash`` lines that show it) leaves
    out, by sub-command; ``[query options]`` stands for those of ``search``'s that ``stats`` shares."""
    shared = set(sub_commands(parsers()["indexer"])["stats"]._option_string_actions) - {"--docs"}
    shown: dict[str, set[str]] = {}
    for program, rest, bash in commands(markdown):
        words = rest.split()
        if program == "indexer" and not bash and words:
            shown.setdefault(words[0], set()).update(OPTION.findall(rest), shared if QUERY_OPTIONS in rest else ())
    missing = {}
    for name, parser in sub_commands(parsers()["indexer"]).items():
        options = {o for o in parser._option_string_actions if o.startswith("--") and o != "--help"}
        missing[name] = sorted(options - shown.get(name, set()))
    return {name: options for name, options in missing.items() if options}


def test_the_indexer_reference_shows_every_option_of_every_command():
    """docs/indexer.md's synopsis is the whole command line: a new option or sub-command fails here until it is
    documented."""
    assert undocumented_options((REPO / "docs" / "indexer.md").read_text(encoding="utf-8")) == {}
    assert undocumented_options("```text\npython -m indexer stats --index DIR [query options]\n```\n")["stats"] == [
        "--docs"
    ]


def test_the_command_check_catches_a_wrong_option_command_and_benchmark():
    good = '```bash\npython -m indexer search --index my-index --k 5 "volcanoes"   # the top 5\n```\n'
    assert command_problems(good) == []
    bad = (
        '```bash\npython -m indexer search --index my-index --no-such-option 3 "volcanoes"\n```\n'
        "```text\npython -m encoder embed --input FILE\n    [--made-up N]\n```\n"
        "Run `elmo-indexer frobnicate --index DIR` or `python -m bench.no_such_bench`.\n"
    )
    found = command_problems(bad)
    assert any("has no option --no-such-option" in p for p in found)
    assert any("refuses" in p and "--no-such-option" in p for p in found)
    assert any("has no option --made-up" in p for p in found)  # on a synopsis's wrapped line
    assert any("no sub-command 'frobnicate'" in p for p in found)
    assert any("bench/no_such_bench.py" in p for p in found)


def test_the_layer_figures_in_the_docs_and_the_card_are_those_of_layers_json():
    """docs/evaluation.md and the default model's card quote ``bench/layers.py``'s table (the figure ``layers.table``,
    pasted from its run) and the README two of its figures; the learned mixes are the evaluation's. The About page
    draws all of them from ``layers.json``: the table the bench makes of that file's figures is the one the pages
    quote, so the file and the pages cannot disagree."""
    from app.model_card import layer_findings
    from bench.layers import probe_table
    from scripts.paste_figures import quoted_figures

    folder = REPO / "data" / "models" / "default"
    found = layer_findings(folder)
    evaluation = (REPO / "docs" / "evaluation.md").read_text(encoding="utf-8")
    card = (folder / "README.md").read_text(encoding="utf-8")
    mixes = ", ".join(f"{w:.2f}" for w in found.wic_mix)
    assert f"Learned mix weights (token, 1, 2): {mixes} " in evaluation  # the WiC table's
    assert f"Learned mix weights: {', '.join(f'{w:.2f}' for w in found.pos_mix)}." in evaluation  # POS's
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert f"(sense probe ROC AUC {found.sense_auc[2]:.1f} against " in readme
    assert f"what its LM expects in the word's place ({found.readout_sense_auc_centred:.1f})" in readme
    table = probe_table(
        found.upos,
        found.upos_ambiguous,
        found.xpos,
        found.sense_auc,
        found.readout_sense_auc,
        found.readout_sense_auc_centred,
    )
    for markdown in (evaluation, card):
        assert dict(quoted_figures(markdown))["layers.table"] == "\n" + "\n".join(table) + "\n"


# ------------------------------------------------------------------------------------------ training figures
CURVE_HEAD = "| step | tokens | minutes | forward | backward | mean |"
"""The header of a card's learning-curve tables: validation perplexity against the run's progress."""


def log_lines(model: str) -> list[dict]:
    """A shipped model's training log (``log.jsonl``, which ``encoder ship`` copies from the run), line by line."""
    text = (REPO / "data" / "models" / model / "log.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


def training_record(model: str) -> tuple[dict, dict[int, dict]]:
    """A shipped model's training counters (its ``config.json``) and its validation log lines by step: what its
    card's training figures are read from."""
    counters = json.loads((REPO / "data" / "models" / model / "config.json").read_text(encoding="utf-8"))["training"]
    return counters, {line["step"]: line for line in log_lines(model) if "valid" in line}


def curve_rows(card: str) -> list[list[str]]:
    """The rows of every learning-curve table (``CURVE_HEAD``) of a card, as their cells (``table_lines``)."""
    return [row for at in re.finditer(re.escape(CURVE_HEAD), card) for row in table_lines(card[at.start() :])[1:]]


def curve_row(record: dict) -> list[str]:
    """A validation log line as a learning-curve table shows it."""
    valid = record["valid"]
    perplexities = [f"{valid[direction]:.1f}" for direction in ("forward", "backward", "mean")]
    return [f"{record['step']:,}", f"{record['tokens']:,}", f"{record['train_seconds'] / 60:.1f}", *perplexities]


def test_the_training_figures_of_the_cards_and_the_readme_are_those_of_the_models_logs():
    """The training figures the cards, the README and the model table give (learning-curve tables, tokens, steps,
    minutes, validation perplexity) are read from the models' ``config.json`` and ``log.jsonl``; checked against
    them, so a model trained again under an old card fails here."""
    pages = {
        name: " ".join((REPO / name).read_text(encoding="utf-8").split())
        for name in ("README.md", "docs/models.md", "docs/korean.md", "data/models/ko/README.ko.md")
    }
    en_card = (REPO / "data" / "models" / "default" / "README.md").read_text(encoding="utf-8")
    ko_card = (REPO / "data" / "models" / "ko" / "README.md").read_text(encoding="utf-8")
    en_counters, en_valid = training_record("default")
    ko_counters, ko_valid = training_record("ko")
    rows = curve_rows(en_card)
    assert len(rows) == 15 and all(row == curve_row(en_valid[int(row[0].replace(",", ""))]) for row in rows)
    en_card, ko_card = " ".join(en_card.split()), " ".join(ko_card.split())
    en_tokens = f"{en_counters['tokens'] / 1e6:.0f}M tokens"
    assert f"**{en_tokens}**" in en_card and f"{en_tokens} of Wikipedia" in pages["README.md"]
    assert f"| {en_tokens} of English Wikipedia |" in pages["docs/models.md"]
    start, end, more = re.search(r"Steps ([\d,]+) -> ([\d,]+), (\d+)M more tokens", en_card).groups()
    start, end = int(start.replace(",", "")), int(end.replace(",", ""))
    assert end == en_counters["step"] and more == f"{(en_valid[end]['tokens'] - en_valid[start]['tokens']) / 1e6:.0f}"
    first_minutes = en_valid[start]["train_seconds"] / 60
    more_minutes = (en_counters["train_seconds"] - en_valid[start]["train_seconds"]) / 60
    first_tokens = f"{en_valid[start]['tokens'] / 1e6:.0f}M tokens"
    assert f"**{first_tokens} in {first_minutes:.1f} minutes** of training" in en_card
    assert f"to **{en_tokens}** in {more_minutes:.1f} more minutes" in en_card
    assert f", {more}M more tokens in {more_minutes:.1f} minutes of training," in en_card
    ids = float(re.search(r"([\d.]+)M ids in all", en_card).group(1)) * 1e6  # the corpus, as prepared for the run
    passes = int(en_counters["tokens"] / ids)
    assert f"what {ids / 1e6:.0f}M distinct tokens of Wikipedia (read {passes}-{passes + 1} times)" in en_card
    after = min(step for step in en_valid if step > start)
    mean = lambda valid, step: f"{valid[step]['valid']['mean']:.1f}"  # noqa: E731
    assert f"({mean(en_valid, after)} at step {after:,}, above the {mean(en_valid, start)} it started" in en_card
    lines = log_lines("default")
    resumed = max(i for i, line in enumerate(lines) if line["step"] == start)  # the carried-on run's first line
    speeds = [
        [line["tokens_per_second"] for line in part if "tokens_per_second" in line]
        for part in (lines[:resumed], lines[resumed:])
    ]
    assert f"{round(statistics.mean(speeds[0]), -3):,.0f} tokens/s on average" in en_card
    assert f"a median of {statistics.median(speeds[1]) / 1000:.0f}k tokens/s over the log lines" in en_card
    ko_tokens, ko_minutes = f"{ko_counters['tokens'] / 1e6:.1f}M", f"{ko_counters['train_seconds'] / 60:.1f}"
    ko_speed = f"{round(ko_counters['tokens'] / ko_counters['train_seconds'], -4) / 1000:.0f}k"
    assert f"about {ko_speed} tokens/s over the whole run" in ko_card
    assert f"전체 평균 초당 약 {ko_speed} 토큰" in pages["data/models/ko/README.ko.md"]
    first, last = min(ko_valid), ko_counters["step"]
    assert f"**{ko_tokens} tokens in {ko_minutes} minutes" in ko_card and f"; {last:,} steps," in ko_card
    assert f"{mean(ko_valid, first)} at step {first:,}, {mean(ko_valid, last)} at the end" in ko_card
    assert f"{ko_minutes}분 동안 토큰 {ko_tokens}개" in pages["data/models/ko/README.ko.md"]
    said = (
        f"{ko_minutes}분 동안 토큰 {ko_tokens}개를 학습한 `medium` 모델입니다(검증 퍼플렉서티 {mean(ko_valid, last)},"
    )
    assert said in pages["docs/korean.md"]
    assert f" {last:,}단계," in pages["data/models/ko/README.ko.md"]
    assert (
        f"{first:,}단계에서 {mean(ko_valid, first)}, 끝에서 {mean(ko_valid, last)}"
        in pages["data/models/ko/README.ko.md"]
    )
    assert f"토큰 {ko_tokens}개를 학습했고(검증 퍼플렉서티 {mean(ko_valid, last)})" in pages["README.md"]


def test_a_cards_sizes_are_those_of_its_folder():
    """ "Total N MB" and the weights' size on a card are the files beside it, in MB of 10^6 bytes."""
    for model, cards in (("default", ("README.md",)), ("ko", ("README.md", "README.ko.md"))):
        folder = REPO / "data" / "models" / model
        total = sum(path.stat().st_size for path in folder.iterdir() if path.is_file()) / 1e6
        weights = (folder / "model.safetensors").stat().st_size / 1e6
        for card in cards:
            text = (folder / card).read_text(encoding="utf-8")
            assert re.search(rf"(Total|모두) {total:.1f} MB", text), f"{model}/{card}: the folder holds {total:.1f} MB"
            assert f"({weights:.1f} MB)" in text, f"{model}/{card}: model.safetensors is {weights:.1f} MB"


# ------------------------------------------------------------------------------------------ figures from benches
def name_pattern(argument: ast.expr) -> str | None:
    """The names a bench's ``figure(NAME, ...)`` call can print, as a regular expression (None: not a string): an
    f-string's fields match one name part, or either branch of a conditional of two strings."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return re.escape(argument.value)
    if not isinstance(argument, ast.JoinedStr):
        return None
    parts = []
    for part in argument.values:
        if isinstance(part, ast.Constant):
            parts.append(re.escape(str(part.value)))
        elif isinstance(part.value, ast.IfExp) and all(
            isinstance(branch, ast.Constant) for branch in (part.value.body, part.value.orelse)
        ):
            parts.append(f"(?:{re.escape(part.value.body.value)}|{re.escape(part.value.orelse.value)})")
        else:
            parts.append(r"[\w-]+")
    return "".join(parts)


def printed_names() -> dict[str, re.Pattern]:
    """Each figure name a bench prints (``bench/figures.py``'s ``figure`` and ``figure_block``), as a pattern, by
    the bench's module, read from its source."""
    names: dict[str, re.Pattern] = {}
    for bench in sorted((REPO / "bench").glob("*.py")):
        calls = [
            node
            for node in ast.walk(ast.parse(bench.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("figure", "figure_block")
            and node.args
        ]
        patterns = [pattern for call in calls if (pattern := name_pattern(call.args[0])) is not None]
        if patterns:
            names[bench.stem] = re.compile("|".join(f"(?:{pattern})" for pattern in patterns))
    return names


def quoted_values() -> dict[str, set[str]]:
    """Every figure the pages quote: name -> the values it holds on the pages that quote it."""
    from scripts.paste_figures import pages, quoted_figures

    values: dict[str, set[str]] = {}
    for page in pages(REPO):
        for name, value in quoted_figures(page.read_text(encoding="utf-8")):
            values.setdefault(name, set()).add(value)
    return values


def test_a_figure_quoted_on_several_pages_says_the_same_on_each_and_a_bench_prints_it():
    """The pages quote a bench's figure between marks (``bench/figures.py``) that ``scripts/paste_figures.py`` fills
    in: each figure has one value wherever it is quoted, and its bench (the name's first part) prints that name, so
    that a run of the bench pastes it; a mark no bench prints would keep its value forever."""
    from scripts.paste_figures import SAVED_OUTPUTS

    values, printed = quoted_values(), printed_names()
    assert values, "no page quotes a figure"
    assert printed["word_in_context"].fullmatch("word_in_context.ko.met_count")
    assert not printed["word_in_context"].fullmatch("word_in_context.ko.met_total")
    for name, found in values.items():
        assert len(found) == 1, f"figure {name} differs between pages: {sorted(found)}"
        if name.rsplit(".", 1)[0] in SAVED_OUTPUTS:
            continue  # a saved output's table: checked against the file below
        bench = name.split(".")[0]
        assert bench in printed and printed[bench].fullmatch(name), f"figure {name}: bench/{bench}.py never prints it"


CELL_SPLIT = re.compile(r"(?<!\\)\|")
"""A markdown table's cell border (a pipe escaped by a backslash is text in a cell)."""


def table_lines(table: str) -> list[list[str]]:
    """The first markdown table in ``table`` as its lines' cells: the header's, then each row's."""
    lines = [line.strip() for line in table.strip("\n").split("\n\n")[0].splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in CELL_SPLIT.split(line.strip("|"))] for line in lines[:1] + lines[2:]]


def table_rows(table: str) -> list[dict[str, str]]:
    """The rows of the first markdown table in ``table``, each as {column header: cell}."""
    header, *rows = table_lines(table)
    return [dict(zip(header, cells)) for cells in rows]


def table_cells(table: str) -> dict[str, dict[str, str]]:
    """The first markdown table in ``table`` as {row label: {column header: cell}}."""
    return {next(iter(row.values())): row for row in table_rows(table)}


CARD_EVALUATION = {
    "perplexity, first 100k": [("perplexity", "perplexity", "both: exp(mean loss)")],
    "bits per character": [
        ("perplexity", "bits per character", "both: exp(mean loss)"),
        ("perplexity", r"bits per character, \<UNK> spelled out", "both: exp(mean loss)"),
    ],
    "sense probe ROC AUC": [("senses", "ROC AUC, same- vs different-sense pairs", c) for c in ("layer 2", "average")],
    "sense probe 1-NN": [("senses", "1-NN accuracy, nearest sentence same sense", c) for c in ("layer 2", "average")],
    "WiC dev, cosine": [("wic", "cosine, threshold tuned on train", "layer 2")],
    "WiC dev, logistic": [("wic", r"logistic regression [u,v,u*v,\|u-v\|]", "layer 2")],
    "WSD ALL": [("wsd", "ALL + first-sense fallback", "layer 2")],
    "POS (UD EWT)": [("pos", "linear probe", c) for c in ("layer 1", "learned mix")],
    "STS-B test": [("sts", "test", c) for c in ("token", "layer 2")],
    "SimLex-999 / WordSim-353": [("wordsim", row, "token") for row in ("SimLex-999", "WordSim-353")],
}
"""The default model's card: its evaluation table's rows (by how each starts) and the cells of ``bench.evaluation``'s
tables (task, row, column) that its "this model" column gives, in order; the GloVe column gives the same rows'
"GloVe" cells."""


def test_the_default_cards_evaluation_column_is_that_of_the_pasted_evaluation_tables():
    """The card's side-by-side table (this model beside the model it replaced) cannot be a figure of its own: its
    column for this model and the GloVe column are checked against ``bench.evaluation``'s tables that
    docs/evaluation.md quotes, so the card and that page cannot disagree; so are the sentences that quote them."""
    values = quoted_values()
    tables = {
        task: table_cells(next(iter(values[f"evaluation.default.{task}"])))
        for task, _, _ in sum(CARD_EVALUATION.values(), [])
    }
    said = " ".join((REPO / "data" / "models" / "default" / "README.md").read_text(encoding="utf-8").split())
    perplexity, probe = tables["perplexity"]["perplexity"]["both: exp(mean loss)"], tables["senses"]
    auc, nn = probe["ROC AUC, same- vs different-sense pairs"], probe["1-NN accuracy, nearest sentence same sense"]
    wic, wsd = tables["wic"][r"logistic regression [u,v,u*v,\|u-v\|]"], tables["wsd"]["ALL + first-sense fallback"]
    sts = tables["sts"]["test"]
    published = re.search(r"ELMo (\d+\.\d) \(1B-word benchmark", said).group(1)  # the card's table, from the paper
    for sentence in (
        f"Perplexity is {float(perplexity) / float(published):.1f}x the published ELMo's",
        f"(below: perplexity {perplexity} against ",
        f", sense probe AUC on layer 2 {auc['layer 2']} against ",
        f"(AUC {auc['GloVe']} against {auc['layer 2']}; 1-NN {nn['GloVe']} against {nn['layer 2']})",
        f"wins WiC's logistic regression ({wic['GloVe']} against {wic['layer 2']})",
        f"({wsd['layer 2']} against {wsd['GloVe']}) but not SemCor's most frequent sense ({wsd['SemCor MFS']})",
        f"(STS-B test {sts['token']} at best against TF-IDF's {sts['TF-IDF']})",
    ):
        assert sentence in said, sentence
    card = (REPO / "data" / "models" / "default" / "README.md").read_text(encoding="utf-8")
    rows = table_cells(card[card.index("| task | 697M tokens (this model) |") :])
    number = re.compile(r"\d+\.\d+")
    for begins, cells in CARD_EVALUATION.items():
        (label,) = [label for label in rows if label.startswith(begins)]
        ours, glove = rows[label]["697M tokens (this model)"], rows[label]["GloVe baseline"]
        assert number.findall(ours) == [tables[task][row][column] for task, row, column in cells], label
        expected = [tables[task][row]["GloVe"] for task, row, _ in cells if tables[task][row].get("GloVe")]
        assert number.findall(glove) == list(dict.fromkeys(expected)), label


ENGLISH_SENSE_ROWS = (
    "ELMo layer mix (paper): the average",
    "ELMo layer 2",
    "substitutes, 10k words, p^0.25, sketch 256 (encoder.readout), centred",
)
"""The rows of ``bench.sense_readout``'s table that the default card's sense table gives, in its order (then GloVe)."""


def test_the_default_cards_sense_table_is_that_of_the_pasted_tables():
    """The default card's sense table puts together what ``bench.sense_readout`` printed (AUC on the demo and SemCor,
    WiC dev), the evaluation's sense probe and the readout's probe AUC (``layers.json``, held to ``bench.layers``'s
    table above): each cell is checked against the table docs/evaluation.md quotes, or that file."""
    from app.model_card import layer_findings

    values = quoted_values()
    readings = table_cells(next(iter(values["sense_readout.en"])))
    probe = table_cells(next(iter(values["evaluation.default.senses"])))["ROC AUC, same- vs different-sense pairs"]
    wic = table_cells(next(iter(values["evaluation.default.wic"])))["cosine, threshold tuned on train"]
    folder = REPO / "data" / "models" / "default"
    readout_probe = f"{layer_findings(folder).readout_sense_auc_centred:.1f}"
    expected = [
        [readings[name][column] for column in ("AUC demo", "AUC SemCor", "WiC dev acc")] for name in ENGLISH_SENSE_ROWS
    ]
    for row, auc in zip(expected, (probe["average"], probe["layer 2"], readout_probe)):
        row.append(auc)
    expected.append([wic["GloVe"], probe["GloVe"]])
    card = (folder / "README.md").read_text(encoding="utf-8")
    rows = table_lines(card[card.index("| reading | demo bank/play AUC |") :])[1:]
    assert [[cell.strip("*") for cell in cells[1:5] if cell] for cells in rows] == expected
    counts = table_rows(next(iter(values["word_in_context.en.counts"])))  # how many examples reach 5 of 8 uses
    met = [sum(int(row[f"{column} sense / POS"].split(" / ")[0]) >= 5 for row in counts) for column in ("mix", "h2")]
    assert [cells[5] for cells in rows[:2]] == [f"{n} of {len(counts)}" for n in met]


def test_what_the_default_card_says_it_still_gets_wrong_is_what_the_yardstick_measured():
    """The card's "What it still gets wrong" gives the demo's failing examples in figures: the money "bank"'s and
    Table 4's sports "play"'s same-sense neighbours and chance rates, as ``bench.word_in_context`` measured them
    (the yardstick table docs/app.md quotes), and how many uses of each sense of "bank" the demo labels."""
    from demo.labels import LABELS_FILE

    yardstick = {
        row["example sentence (sense)"]: row
        for row in table_rows(next(iter(quoted_values()["word_in_context.en.yardstick"])))
    }
    money, sport = yardstick["bank: river vs money (money)"], yardstick["play: the paper's Table 4 (sport)"]
    count = lambda cell: cell.split()[0]  # noqa: E731  "2 **below**" -> "2"
    with (REPO / "data" / "demo" / LABELS_FILE).open(encoding="utf-8", newline="") as lines:
        rows = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)  # rows of "example": the app's sentences
        bank_senses = [row["sense"] for row in rows if row["word"] == "bank" and row["doc_id"] != "example"]
    card = " ".join((REPO / "data" / "models" / "default" / "README.md").read_text(encoding="utf-8").split())
    words = {"0": "no", "1": "one"}  # how the card writes a count in a sentence
    for sentence in (
        f'the money "bank" finds {count(money["context prediction"])} money uses among its 8 nearest',
        f"({bank_senses.count('money')} money uses, {bank_senses.count('river')} river)",
        f"finds {words.get(count(sport['mix']), count(sport['mix']))} sports use among 8 under the mix and "
        f"{count(sport['context prediction'])} under context prediction",
        f'beside chance, {money["chance"]} for the money "bank" and {sport["chance"]} for the sports "play"',
    ):
        assert sentence in card, sentence
    assert count(money["mix"]) == count(money["context prediction"])  # "under the ELMo layer mix and ... alike"


KOREAN_SENSE_ROWS = (
    "ELMo layer 1",
    "ELMo layer 2",
    "ELMo layer mix (paper): the average",
    "substitutes, 10k words, p^0.25, sketch 512 (encoder.readout), centred",
)
"""The rows of ``bench.sense_readout --model ko``'s table that the Korean card's sense table gives, in its order."""


def test_the_korean_cards_figures_of_this_model_are_those_of_its_log_and_the_pasted_tables():
    """The Korean card (and its translation) gives this model's perplexities, sense AUCs and Word in context counts
    beside the first model's: this model's figures are checked against its ``log.jsonl`` (validation) and the tables
    ``bench.evaluation``, ``bench.sense_readout`` and ``bench.word_in_context`` printed, which docs/evaluation.md
    quotes."""
    values = quoted_values()
    perplexity = table_cells(next(iter(values["evaluation.ko.perplexity"])))
    both = "both: exp(mean loss)"
    tested = [perplexity["perplexity"][both], perplexity["bits per character"][both]]
    tested.append(perplexity[r"bits per character, \<UNK> spelled out"][both])
    counts = table_rows(next(iter(values["word_in_context.ko.counts"])))
    in_sense = [row["context prediction sense / POS"].split(" / ")[0] for row in counts]
    readings = table_cells(next(iter(values["sense_readout.ko"])))
    aucs = [[readings[name]["AUC demo"], readings[name]["AUC sense probe"]] for name in KOREAN_SENSE_ROWS]
    _, valid = training_record("ko")
    last = f"{valid[max(valid)]['valid']['mean']:.1f}"
    unknown = perplexity[r"\<UNK> targets (%)"][both]
    (pear,) = [row for row in counts if row["sentence's sense (part of speech)"].startswith("과일")]
    pear = pear["context prediction sense / POS"].split(" / ")[0]
    layers = [float(auc) for _, auc in aucs[:3]]  # the ELMo layers' and their mix's sense probe AUC
    low, high = int(min(layers)), int(max(layers))
    said = {
        "README.md": [
            f"`<UNK>` as targets ({unknown} % of the test targets)",
            f"{pear} of its 8 nearest uses are fruit ones",
            f"little better than chance ({low}-{high} AUC)",
        ],
        "README.ko.md": [f"목표의 {unknown} %)", f"가까운 용례 8개 중 {pear}개만 과일", f"(AUC {low}-{high})"],
    }
    korean_page = " ".join((REPO / "docs" / "korean.md").read_text(encoding="utf-8").split())
    assert f"(뜻 탐침 ROC AUC {low}-{high}, 우연 수준 50)" in korean_page
    assert f"*문맥 예측*은 {aucs[3][1]}이고" in korean_page  # context prediction's sense probe AUC
    for card, this_model in (("README.md", "this model"), ("README.ko.md", "이 모델")):
        text = (REPO / "data" / "models" / "ko" / card).read_text(encoding="utf-8")
        for sentence in said[card]:
            assert sentence in " ".join(text.split()), (card, sentence)
        measured = table_rows(text[text.index(f"| | {this_model} |") :])
        figures = [re.findall(r"\d+\.\d+", row[this_model]) for row in measured]
        assert figures == [[last], tested[:1], tested[1:]], card
        (row,) = [cells for cells in table_lines(text[text.index("| | 배 ") :]) if cells[0] == this_model]
        assert [n for cell in row[1:] for n in re.findall(r"\d+", cell)] == in_sense, card
        senses = table_lines(text[text.index("| | demo-ko |") :])[1:]
        assert [[cell.strip("*") for cell in cells[1:3]] for cells in senses] == aucs, card


def test_a_saved_outputs_tables_on_the_pages_are_those_of_the_file():
    """GPU figures come from runs on a lent machine, kept in ../shared (``SAVED_OUTPUTS``): each table a page quotes
    under such a prefix is that file's table, and every file has one quoted."""
    from scripts.paste_figures import SAVED_OUTPUTS, section_tables

    values = quoted_values()
    for prefix, saved in SAVED_OUTPUTS.items():
        quoted = {name: value for name, value in values.items() if name.rsplit(".", 1)[0] == prefix}
        assert quoted, f"no page quotes a table of {saved}"
        if not (SHARED / saved).exists():
            pytest.skip(f"../shared/{saved} is absent (CI has it)")
        tables = section_tables((SHARED / saved).read_text(encoding="utf-8"), prefix)
        for name, (value,) in quoted.items():
            assert name in tables, f"figure {name}: ../shared/{saved} has no such section"
            assert value == tables[name], f"figure {name} differs from ../shared/{saved}: paste it again"


def test_a_saved_outputs_sections_are_read_as_their_tables():
    from scripts.paste_figures import section_tables

    output = (
        "tokenized 1 file\n\n## Training steps, eager (10 timed)\n\n| a | b |\n|---|---:|\n| x | 1 |\n\n"
        '## clipped: {"cell_clip": 3}\nstep 500: perplexity 7\n\n## Deviation from fp32: per layer\n| c |\n|---|'
    )
    assert section_tables(output, "gpu.h100") == {
        "gpu.h100.training_steps_eager": "\n| a | b |\n|---|---:|\n| x | 1 |\n",
        "gpu.h100.deviation_from_fp32": "\n| c |\n|---|\n",
    }


MARKED_ONLY = {
    "thread_rule.table": ("bench.thread_rule", "TABLE_HEAD"),
    "demo_time.table": ("bench.demo_time", "TABLE_HEAD"),
    "serve_speed.table": ("bench.serve_speed", "TABLE_HEAD"),
    "storage.table": ("bench.storage", "TABLE_HEAD"),
    "search_speed.start": ("bench.search_speed", "START_HEAD"),
    "search_speed.stages": ("bench.search_speed", "STAGES_HEAD"),
    "search_speed.processes": ("bench.search_speed", "PROCESSES_HEAD"),
    "published_models.speed": ("bench.published_models", "SPEED_HEAD"),
    "published_models.elmo-original.demo": ("bench.published_models", "DEMO_HEAD"),
    "embed_process.table": ("bench.embed_process", "TABLE_HEAD"),
    "scale.steps": ("bench.scale", "STEPS_HEAD"),
    "scale.bytes": ("bench.scale", "BYTES_HEAD"),
    "scale.token_indexes": ("bench.scale", "FACTORIES_HEAD"),
    "scale.projection": ("bench.scale", "PROJECTION_HEAD"),
}
"""Tables of benches too slow to re-run at each change (module, header constant): the pages keep the last run's
table, which must have the header the bench prints now, so that the bench's next run pastes over a table of the
same form."""


def test_every_quoted_table_is_whole_and_a_slow_benchs_has_the_header_it_prints():
    import importlib

    values = quoted_values()
    for name, (value,) in values.items():
        lines = value.strip("\n").splitlines()
        if not value.startswith("\n") or not lines[0].startswith("|"):
            continue
        widths = {len(re.findall(r"(?<!\\)\|", line)) for line in lines if line.startswith("|")}  # escaped: in a cell
        assert len(widths) == 1 and all(line.startswith("|") for line in lines), f"figure {name}: a broken table"
    for name, (module, constant) in MARKED_ONLY.items():
        head = getattr(importlib.import_module(module), constant)
        assert name in values, f"figure {name}: no page quotes it"
        (value,) = values[name]
        assert tuple(value.strip("\n").splitlines()[: len(head)]) == head, f"figure {name}: not {module}'s header"


def test_pasting_replaces_the_quoted_figures_and_nothing_else():
    from scripts.paste_figures import paste, printed_figures

    output = "a table\nfigure b.met = 9 of 10\nfigure b.table begin\n| x |\n|---|\nfigure b.table end\nfigure b.n = 3\n"
    figures = printed_figures(output)
    assert figures == {"b.met": "9 of 10", "b.table": "\n| x |\n|---|\n", "b.n": "3"}
    page = "Met: <!--figure b.met-->5 of 10<!--/figure-->, <!--figure other-->1<!--/figure-->.\n<!--figure b.table-->\n| y |\n<!--/figure-->\n"
    assert paste(page, figures) == (
        "Met: <!--figure b.met-->9 of 10<!--/figure-->, <!--figure other-->1<!--/figure-->.\n"
        "<!--figure b.table-->\n| x |\n|---|\n<!--/figure-->\n"
    )


def test_pasting_never_damages_a_page(tmp_path, monkeypatch, capsys):
    """A page with an opening mark left without its end (a hand edit gone wrong) would have had everything up to
    the next figure's end replaced: the run is refused and no page changes; a page's CRLF line endings stay."""
    from scripts.paste_figures import main, paste

    (tmp_path / "docs").mkdir()
    broken = "<!--figure b.n-->1\r\n## A section\r\nkept text\r\n<!--figure b.met-->5<!--/figure-->\r\n"
    assert paste(broken, {"b.n": "3"}) == broken
    crlf = "Met: <!--figure b.met-->5 of 10<!--/figure-->\r\nnext line\r\n"
    (tmp_path / "docs" / "a.md").write_bytes(crlf.encode())
    (tmp_path / "docs" / "b.md").write_bytes(broken.encode())
    monkeypatch.setattr("sys.stdin", io.StringIO("figure b.met = 9 of 10\nfigure b.n = 3\n"))
    with pytest.raises(SystemExit, match=r"b\.md, line 1: a figure mark without its pair"):
        main(tmp_path, [])
    assert (tmp_path / "docs" / "a.md").read_bytes() == crlf.encode()
    assert (tmp_path / "docs" / "b.md").read_bytes() == broken.encode()
    (tmp_path / "docs" / "b.md").unlink()
    monkeypatch.setattr("sys.stdin", io.StringIO("figure b.met = 9 of 10\n"))
    main(tmp_path, [])
    assert (tmp_path / "docs" / "a.md").read_bytes() == crlf.replace("5 of 10", "9 of 10").encode()
    monkeypatch.setattr("sys.stdin", io.StringIO("figure b.met = 9 <!--/figure--> 10\n"))
    with pytest.raises(SystemExit, match="holds a figure mark"):
        main(tmp_path, [])
