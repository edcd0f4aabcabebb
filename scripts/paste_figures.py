"""Paste the figures a bench printed into every page that quotes them.

    python -m bench.word_in_context | tee /dev/stderr | python scripts/paste_figures.py
    python scripts/paste_figures.py --saved gpu.h100 < ../shared/gpu-figures/bench-gpu-h100.txt

Reads a bench's output (``bench/figures.py``: ``figure NAME = VALUE`` lines and ``figure NAME begin`` ... ``end``
blocks) and replaces what each page holds between ``<!--figure NAME-->`` and ``<!--/figure-->`` in the README,
docs/*.md and the model cards (data/models/*/README*.md). Prints what it changed, and the names of figures that no
page quotes. Pages keep everything else byte for byte (their line endings too). A mark without its pair on any page,
or a value holding a mark, is refused before any page is written: pasting over it would swallow the page's text up
to the next figure's end. ``--saved PREFIX`` reads a bench output saved in ../shared (``SAVED_OUTPUTS``: GPU runs made before
their benches printed figure lines): its sections' tables are the figures (``section_tables``).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAVED_OUTPUTS = {
    "gpu.h100": "gpu-figures/bench-gpu-h100.txt",
    "clip_rule.h100": "gpu-figures/clip-rule-h100.txt",
}
"""Bench outputs kept in ../shared (GPU runs on a lent machine) whose tables the pages quote, by the prefix of their
figures' names: ``tests/test_docs.py`` checks the pages against these files."""
PAGES = ("README.md", "docs/*.md", "data/models/*/README*.md")
MARK = re.compile(r"<!--/?figure\b")
QUOTED = re.compile(r"<!--figure (?P<name>[\w.-]+)-->(?P<value>(?:(?!<!--/?figure\b).)*?)<!--/figure-->", re.DOTALL)
"""A quoted figure: its value holds no other mark, so an opening mark left without its end never reaches into the
next figure."""
LINE = re.compile(r"^figure (?P<name>[\w.-]+) = (?P<value>.*)$")
BLOCK = re.compile(r"^figure (?P<name>[\w.-]+) (?P<edge>begin|end)$")


def printed_figures(output: str) -> dict[str, str]:
    """The figures in a bench's output: name -> value (a block's lines, between line breaks)."""
    figures: dict[str, str] = {}
    block: list[str] | None = None
    name = ""
    for line in output.splitlines():
        edge = BLOCK.match(line)
        if block is not None:
            if edge and edge["name"] == name and edge["edge"] == "end":
                figures[name] = "\n" + "\n".join(block) + "\n"
                block = None
            else:
                block.append(line)
        elif edge and edge["edge"] == "begin":
            name, block = edge["name"], []
        elif found := LINE.match(line):
            figures[found["name"]] = found["value"]
    if block is not None:
        raise SystemExit(f"error: the block figure {name} has no end line (was the bench cut short?)")
    marked = sorted(name for name, value in figures.items() if MARK.search(value))
    if marked:
        raise SystemExit(f"error: the value of figure {marked[0]} holds a figure mark (<!--figure or <!--/figure)")
    return figures


def section_tables(output: str, prefix: str) -> dict[str, str]:
    """The tables of a saved bench output as block figures: each ``## Heading (...)`` section's first table is
    ``prefix.heading`` (the heading before any parenthesis or colon, lower case, words joined by ``_``), e.g.
    ``## Training steps, eager (10 timed ...)`` under ``gpu.h100`` is ``gpu.h100.training_steps_eager``."""
    figures: dict[str, str] = {}
    name, table = "", []
    for line in [*output.splitlines(), ""]:
        if line.startswith("## "):
            heading = re.split(r" \(|:", line[3:], maxsplit=1)[0]
            name, table = f"{prefix}.{'_'.join(re.findall(r'[a-z0-9]+', heading.lower()))}", []
        elif line.startswith("|") and name:
            table.append(line)
        elif table:
            figures.setdefault(name, "\n" + "\n".join(table) + "\n")
            name, table = "", []
    return figures


def pages(root: Path = REPO) -> list[Path]:
    """Every page that may quote a figure."""
    return sorted({page for pattern in PAGES for page in root.glob(pattern)})


def quoted_figures(text: str) -> list[tuple[str, str]]:
    """(name, value) of each figure a page quotes, in order."""
    return [(found["name"], found["value"]) for found in QUOTED.finditer(text)]


def unpaired_mark(text: str) -> int | None:
    """The line of the first figure mark in ``text`` that is not part of a quoted figure (None: all are paired)."""
    quoted = [(found.start(), found.end()) for found in QUOTED.finditer(text)]
    for mark in MARK.finditer(text):
        if not any(start <= mark.start() < end for start, end in quoted):
            return text.count("\n", 0, mark.start()) + 1
    return None


def paste(text: str, figures: dict[str, str]) -> str:
    """``text`` with each quoted figure that ``figures`` holds replaced by its value."""
    return QUOTED.sub(
        lambda found: f"<!--figure {found['name']}-->{figures.get(found['name'], found['value'])}<!--/figure-->", text
    )


def read_page(page: Path) -> str:
    """A page's text with its line endings as they are (no newline translation), so that it is written back so."""
    with open(page, encoding="utf-8", newline="") as f:
        return f.read()


def main(root: Path = REPO, argv: list[str] | None = None) -> None:
    """Paste the figures on standard input into the pages under ``root``."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--saved",
        metavar="PREFIX",
        choices=sorted(SAVED_OUTPUTS),
        help=f"the input is the saved output of PREFIX ({', '.join(f'{k}: ../shared/{v}' for k, v in SAVED_OUTPUTS.items())}):"
        " its sections' tables are pasted as the figures PREFIX.heading",
    )
    args = parser.parse_args(argv)
    output = sys.stdin.read()
    figures = section_tables(output, args.saved) if args.saved else printed_figures(output)
    if not figures:
        raise SystemExit("error: no figure lines in the input (pipe a bench's output into this script)")
    quoted: set[str] = set()
    texts = {page: read_page(page) for page in pages(root)}
    for page, text in texts.items():
        line = unpaired_mark(text)
        if line is not None:
            raise SystemExit(
                f"error: {page}, line {line}: a figure mark without its pair; fix it (no page was changed)"
            )
    for page, text in texts.items():
        names = {name for name, _ in quoted_figures(text)}
        quoted |= names
        pasted = paste(text, figures)
        if pasted != text:
            with open(page, "w", encoding="utf-8", newline="") as f:
                f.write(pasted)
            changed = sorted(name for name in names & figures.keys())
            print(f"{page.relative_to(root)}: {', '.join(changed)}")
    for name in sorted(figures.keys() - quoted):
        print(f"not quoted anywhere: {name}")


if __name__ == "__main__":
    main()
