"""``python -m indexer search``: the documents (or sentences) that answer a query, or with ``--queries`` many
queries in one process, one JSON object per line."""

from __future__ import annotations

import argparse
import json
import os
import select
import stat
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import BinaryIO, NamedTuple

from encoder.commands import path_argument
from encoder.errors import fail
from encoder.files import RepeatedKeyError, unique_keys
from encoder.options import add_options, given, option_fields
from encoder.terminal import json_text, show

from ..answers import search_answers, search_each
from ..errors import QueryError
from ..index import QUERY_BATCH, Index
from ..options import SearchOptions
from ..queries import MAX_QUERY_CHARS
from ..ranking import RELEVANCE_LINE, shows_relevance
from .common import add_query_options, open_index

SHOWN_NOTICES = ("searched_for", "no_good_match")
"""Notices a search's text output says itself (on standard output, where the results are)."""


def run(args: argparse.Namespace) -> dict | int:
    """The answer to the query; with ``--queries``, the exit status of answering them all (``search_many``)."""
    if (args.queries is not None) == (args.query is not None):
        fail(
            "give one query, or --queries FILE (- for standard input) for many, "
            + ("not both" if args.query is not None else "e.g. search --index DIR 'river bank'")
        )
    options = SearchOptions(**given(args, SearchOptions))
    if args.queries is not None:
        return search_many(args, options)
    return search_answers(open_index(args), [args.query], options)[0]


QUERY_FIELDS = ("query", "id", *(option.name for option in option_fields(SearchOptions)))
"""What a line of ``--queries`` may set (a JSON object): the query, an id to find its answer by, and its options."""
QUERY_OBJECT = "{" + ", ".join(f'"{name}": ...' for name in QUERY_FIELDS) + "}"
"""A line's JSON object as ``--help`` shows it."""


class QueryLine(NamedTuple):
    """A line of ``--queries``: its query, the id its answer carries (None: none), its options."""

    query: str
    id: str | int | None
    options: SearchOptions


class LineError(NamedTuple):
    """A line of ``--queries`` that cannot be searched: why, and the id its answer carries (None: none, or unread)."""

    error: str
    id: str | int | None = None


class ArrivingLines:
    """The lines of a pipe or a terminal as they arrive, and whether another has arrived (``ready``), so that a batch
    of ``--queries -`` is answered when the writer pauses: a program that writes a query and waits for its answer
    gets it. (A file's lines are all there: its batches are whole.)"""

    def __init__(self, fd: int):
        self.fd, self.lines, self.rest, self.ended = fd, deque(), b"", False

    def _read(self) -> None:
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.ended = True
            self.lines.extend([self.rest] if self.rest else [])
            self.rest = b""
            return
        *whole, self.rest = (self.rest + chunk).split(b"\n")
        self.lines.extend(line + b"\n" for line in whole)

    def ready(self) -> bool:
        """Whether a line can be had without waiting."""
        while not self.lines and not self.ended and select.select([self.fd], [], [], 0)[0]:
            self._read()
        return bool(self.lines)

    def __iter__(self) -> Iterator[bytes]:
        while True:
            while not self.lines and not self.ended:
                self._read()
            if not self.lines:
                return
            yield self.lines.popleft()


def _lines_of(source: BinaryIO) -> tuple[Iterable[bytes], Callable[[], bool]]:
    """The lines of ``--queries``'s source and whether another can be had without waiting: a pipe or terminal's as
    they arrive (``ArrivingLines``), any other's (a file) always."""
    try:
        fd = source.fileno()
    except (AttributeError, OSError, ValueError):  # no file descriptor (a test's stream): all there
        return source, lambda: True
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return source, lambda: True
    arriving = ArrivingLines(fd)
    return arriving, arriving.ready


def _query_lines(
    source: Iterable[bytes], defaults: SearchOptions
) -> Iterator[tuple[int, QueryLine | LineError | None]]:
    """``--queries``: (line number, that line's query and options, or why it cannot be read; None for a blank
    line, which is skipped). A line is the query itself, or a JSON object with "query" and any of ``QUERY_FIELDS``
    (the others: ``defaults``); a byte-order mark before the first line is not part of it."""
    for number, raw in enumerate(source, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            yield number, LineError(f"byte 0x{raw[error.start]:02x} at column {error.start + 1} is not UTF-8")
            continue
        line = line.removeprefix("\ufeff") if number == 1 else line
        if not line.strip():
            yield number, None
            continue
        if not line.lstrip().startswith("{"):
            yield number, QueryLine(line.rstrip("\r\n"), None, defaults)
            continue
        try:
            fields = json.loads(line, object_pairs_hook=unique_keys)
        except json.JSONDecodeError as error:
            yield number, LineError(f'not a JSON object ({error.msg}); give the query text, or {{"query": ...}}')
            continue
        except RepeatedKeyError as error:
            yield number, LineError(str(error))
            continue
        unknown = sorted(set(fields) - set(QUERY_FIELDS)) if isinstance(fields, dict) else []
        if not isinstance(fields, dict) or not isinstance(fields.get("query"), str) or unknown:
            what = (
                f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}" if unknown else 'no "query" text'
            )
            yield number, LineError(f'{what}; a line\'s object has "query" and any of {", ".join(QUERY_FIELDS[1:])}')
            continue
        query, line_id = fields.pop("query"), fields.pop("id", None)
        if line_id is not None and (isinstance(line_id, bool) or not isinstance(line_id, (str, int))):
            yield number, LineError(f"id must be text or a whole number, not {json.dumps(line_id)}")
            continue
        try:
            yield number, QueryLine(query, line_id, replace(defaults, **fields))
        except QueryError as error:
            yield number, LineError(str(error), line_id)


def search_many(args: argparse.Namespace, defaults: SearchOptions) -> int:
    """``search --queries``: every query of the file (or standard input) against one opened index, one JSON
    object per line in the input's order, written in one write as each batch is answered: ``QUERY_BATCH`` lines, or
    from a pipe those that have arrived when its writer pauses (queries of the same options searched together). A
    line that cannot be answered gets an object with its ``error`` (and the line's number on stderr), the others
    their answers; the exit status is then 2."""
    source = sys.stdin.buffer if str(args.queries) == "-" else open(args.queries, "rb")
    failed = False
    with source:
        index = open_index(args)
        raw_lines, ready = _lines_of(source)
        lines = _query_lines(raw_lines, defaults)
        while batch := _next_batch(lines, ready):
            written = []
            for number, answer in _answer_batch(index, batch):
                if "error" in answer:
                    answer = {"line": number, **answer}
                    failed = True
                    show(f"error: line {number}: {answer['error']}", file=sys.stderr)
                written.append(json_text(answer) + "\n")
            sys.stdout.write("".join(written))
            sys.stdout.flush()
    return 2 if failed else 0


def _next_batch(
    lines: Iterator[tuple[int, QueryLine | LineError | None]], ready: Callable[[], bool]
) -> list[tuple[int, QueryLine | LineError]]:
    """The next lines to answer together (blank ones left out): up to ``QUERY_BATCH``, as many as are ``ready``
    after the first, which is waited for."""
    batch, first = [], True
    while len(batch) < QUERY_BATCH and (first or ready()):
        line = next(lines, None)
        if line is None:
            break
        first = line[1] is None and first  # after a blank line, the next is still waited for
        if line[1] is not None:
            batch.append(line)
    return batch


def _answer_batch(index: Index, batch: list[tuple[int, QueryLine | LineError]]) -> list[tuple[int, dict]]:
    """The answer of each line of ``batch``, in order: lines of the same options searched together
    (``search_each``: only the lines at fault get an error)."""
    answered: dict[int, dict] = {}
    groups: dict[str, list[tuple[int, QueryLine]]] = {}
    for number, line in batch:
        if isinstance(line, LineError):
            answered[number] = {"error": line.error} if line.id is None else {"id": line.id, "error": line.error}
        else:
            groups.setdefault(repr(line.options), []).append((number, line))
    for group in groups.values():
        found = search_each(index, [line.query for _, line in group], group[0][1].options)
        for (number, line), answer in zip(group, found):
            answered[number] = {"id": line.id, **answer} if line.id is not None else answer
    return [(number, answered[number]) for number, _ in batch]


PART_NAMES = {"elmo": "ELMo cosine", "keywords": "BM25", "glove": "GloVe cosine"}


def _print_hits(hits: list[dict], why: bool = False) -> None:
    """Sentence hits (``--sentences``) or document hits: relevance, title, best passage, why it came up; a line
    where the weaker matches (not clearly better than chance) begin. Relevance and the line only where the list
    shows them (``ranking.shows_relevance``): else the hits are ranked without them."""
    graded = bool(hits) and shows_relevance(hits[0].get("above_line"))
    for hit in hits:
        if "sentence" in hit:
            show(f"{hit['rank']:3d}. {hit['score']:.3f}  [{hit['doc_id']}] {hit['title']}")
            show(f"      {hit['sentence']}")
            continue
        if graded and not hit["above_line"] and hits[hit["rank"] - 2]["above_line"]:
            print(
                f"     --- weaker matches below: not clearly better than random words (relevance under "
                f"{RELEVANCE_LINE:.0%}) ---"
            )
        found = [f"matched: {', '.join(hit['matched_words'])}"] if hit["matched_words"] else []
        found += ["found by meaning"] if hit["by_meaning"] else []
        reason = f"  ({'; '.join(found)})" if found else ""
        relevance = f"{hit['relevance']:4.0%}  " if graded else ""
        show(f"{hit['rank']:3d}. {relevance}[{hit['doc_id']}] {hit['title']}{reason}")
        for passage in hit["passages"][:1]:
            show(f"      {passage['text']}")
        if why:
            parts = hit["parts"].items()
            said = [f"{PART_NAMES[n]} {p['score']:.3f}: {p['above_chance']:+.2f} from chance" for n, p in parts]
            total = " + ".join(f"{p['weight']:g} × {p['above_chance']:.2f}" for _, p in parts)
            print(f"      why: {'; '.join(said)}" + (f"; score = {total}" if len(parts) > 1 else ""))


def show_search(result: dict, args: argparse.Namespace) -> None:
    """The lists of hits as text (``--why``: with each document's part scores)."""
    if result["sentences"]:
        lists = [("results", f"sentences nearest in meaning (ELMo, layers {result['layers']}):")]
    else:
        lists = [("results", f"documents, most relevant first ({result['method_name']}):")]
    if result["searched_for"]:
        show(f"searched for: {result['searched_for']} (to search for {result['query']!r} as typed: --as-typed)")
    for name, title in lists + [("glove", "GloVe baseline:")] * ("glove" in result):
        hits = result[name]
        print(title)
        if hits and hits[0].get("above_line") is False:
            print("     no good match: even the best document scores no better than random words typically do;")
            print("     the nearest documents, by score:")
        _print_hits(hits, args.why)
        if not hits:
            print("     (no results)")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``search`` sub-command."""
    search = commands.add_parser(
        "search",
        help="documents (or sentences) that answer a query, or many queries (--queries)",
        description="Find the documents that answer the query, most relevant first, each with its best passage, "
        "the words it shares with the query (stemmed: 'flooding' matches 'flooded'), or that it was found by meaning, "
        "and its relevance: the share of random-word queries whose best document it beats by a clear margin (under "
        "50%: not clearly better than chance; 100% beats them all by the margin; the list is sorted by it). The top k "
        "are listed; a line marks where the weaker matches begin. When even the best is under 50% ('no good match'), "
        "or the index has under 50 documents (too few to tell a good match from chance: a note says so), the "
        "documents are listed by score without relevance. A query word that is no word at all (unknown to the index, the model and GloVe) is replaced "
        "by the word fewest edits away (a word of the collection or, in English, a common word of the model's "
        "vocabulary), the most frequent of those, ELMo's character model breaking ties ('monney' -> 'money', "
        "'moviie' -> 'movie'), and the output says what was searched "
        f"for. Queries over {MAX_QUERY_CHARS:,} characters are truncated.",
    )
    search.add_argument("query", nargs="?", help="the query text (or --queries)")
    search.add_argument(
        "--queries",
        type=path_argument,
        metavar="FILE",
        help="answer every query of FILE ('-': standard input) in this one process: one query per line, as text or "
        f'as a JSON object {QUERY_OBJECT} (each field but "query" optional, default: this command\'s options); prints one JSON result per line, in order, queries searched in batches (exit status 2 '
        "if a line failed: its object then holds the error, the other lines their answers)",
    )
    add_options(search, SearchOptions)
    search.add_argument(
        "--why", action="store_true", help="show each document's part scores (ELMo cosine, BM25) against chance"
    )
    add_query_options(search)
    search.set_defaults(run=run, show=show_search, shown_notices=SHOWN_NOTICES)
