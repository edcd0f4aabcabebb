"""``python -m indexer search``: the documents (or sentences) that answer a query, or with ``--queries`` many
queries in one process, one JSON object per line."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import BinaryIO

from encoder import LayerMix
from encoder.errors import fail
from encoder.terminal import json_text, show

from ..index import MAX_QUERY_CHARS, Index, K
from ..ranking import METHODS, RELEVANCE_LINE, method_name
from .common import add_layers_option, add_query_options, answer_or_error, open_index

SHOWN_NOTICES = ("searched_for", "no_good_match")
"""Notices a search's text output says itself (on standard output, where the results are)."""


def run(args: argparse.Namespace) -> dict | int:
    """The answer to the query; with ``--queries``, the exit status of answering them all (``search_many``)."""
    if (args.queries is not None) == (args.query is not None):
        fail("give one query, or --queries FILE (- for standard input) for many, not both")
    if args.queries is not None:
        return search_many(args)
    return answers(open_index(args), [args.query], args)[0]


QUERY_FIELDS = ("query", "id", "k", "method", "layers", "sentences", "baseline", "as_typed")
"""What a line of ``--queries`` may set (a JSON object): the query, an id to find its answer by, and options."""


def answers(index: Index, queries: list[str], options: argparse.Namespace) -> list[dict]:
    """The answers to ``queries`` under one set of options, as the command prints them: the top k documents
    (``above_line`` marks those better than chance), or with ``options.sentences`` the nearest sentences. Documents
    are searched as one batch (``Index.search`` of a list)."""
    lists = [("results", "elmo" if options.sentences else options.method)] + [("glove", "glove")] * options.baseline
    found: dict[str, list] = {}
    for name, method in lists:
        if options.sentences:
            layers = options.layers if method == "elmo" else None
            found[name] = [index.search_sentences(query, options.k, method, layers) for query in queries]
        else:  # one query alone: its errors are its own, not "query 0 of the list"
            asked = queries if len(queries) > 1 else queries[0]
            searched = index.search(asked, options.k, method, options.layers, spelling=not options.as_typed)
            found[name] = searched if len(queries) > 1 else [searched]
    weights = (  # valid: the searches checked them
        LayerMix.parse(options.layers, index.elmo.n_layers).weights if options.layers else index.search_mix.weights
    )
    result = []
    for i, query in enumerate(queries):
        answer = {
            "query": query[:MAX_QUERY_CHARS],
            "k": options.k,
            "method": options.method,
            "layers": options.layers or index.manifest.search_layers.spec,
            "sentences": options.sentences,
        }
        if not options.sentences:  # documents: the method in words, and the query as searched (respelled)
            respelled = (found[name][i].searched_for for name, _ in lists if found[name][i].searched_for)
            answer |= {"method_name": method_name(options.method, weights), "searched_for": next(respelled, None)}
        notices: dict[str, None] = {}  # each notice once, in order: both lists search the same query
        for name, _ in lists:
            answer[name] = [asdict(h) for h in found[name][i]]
            notices.update(dict.fromkeys(found[name][i].notices))
        result.append({**answer, "notices": list(notices)})
    return result


def _query_lines(
    source: BinaryIO, name: str, defaults: argparse.Namespace
) -> Iterator[tuple[int, argparse.Namespace | str]]:
    """``--queries``: (line number, the options of that line's query, or why it cannot be read), blank lines
    skipped. A line is the query itself, or a JSON object with "query" and any of ``QUERY_FIELDS``; a byte-order
    mark before the first line is not part of it."""
    for number, raw in enumerate(source, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            yield (
                number,
                f"{name}, line {number}: byte 0x{raw[error.start]:02x} at column {error.start + 1} is not UTF-8",
            )
            continue
        line = line.removeprefix("\ufeff") if number == 1 else line
        if not line.strip():
            continue
        if not line.lstrip().startswith("{"):
            yield number, argparse.Namespace(**{**vars(defaults), "query": line.rstrip("\r\n"), "id": None})
            continue
        try:
            fields = json.loads(line)
        except json.JSONDecodeError as error:
            yield number, f'not a JSON object ({error.msg}); give the query text, or {{"query": ...}}'
            continue
        unknown = sorted(set(fields) - set(QUERY_FIELDS)) if isinstance(fields, dict) else []
        if not isinstance(fields, dict) or not isinstance(fields.get("query"), str) or unknown:
            what = f"unknown field(s) {', '.join(unknown)}" if unknown else 'no "query" text'
            yield number, f'{what}; a line\'s object has "query" and any of {", ".join(QUERY_FIELDS[1:])}'
            continue
        options = argparse.Namespace(**{**vars(defaults), "id": None, **fields})
        problem = _problem(options)
        yield number, problem if problem is not None else options


def _problem(options: argparse.Namespace) -> str | None:
    """Why a ``--queries`` line's options are refused where the command line would refuse them (None: they are
    not)."""
    if options.method not in METHODS:
        return f"method must be one of {', '.join(METHODS)}, not {options.method!r}"
    if K.problem(options.k) is not None:
        return f"k {K.problem(options.k)}"
    if options.layers is not None and not isinstance(options.layers, str):
        return f'layers must be text such as "top" or "0.2,0.3,0.5", not {options.layers!r}'
    if options.id is not None and not isinstance(options.id, (str, int)):
        return f"id must be text or a number, not {options.id!r}"
    for flag in ("sentences", "baseline", "as_typed"):
        if not isinstance(getattr(options, flag), bool):
            return f"{flag} must be true or false, not {getattr(options, flag)!r}"
    return None


QUERY_BATCH = 64  # lines of --queries read, then answered in batches of the same options


def search_many(args: argparse.Namespace) -> int:
    """``search --queries``: every query of the file (or standard input) against one opened index, one JSON
    object per line in the input's order, written as each batch of lines is answered (queries of the same options
    searched together). A line that cannot be answered gets an object with its ``error`` (and the line's number
    on stderr), the others their answers; the exit status is then 2."""
    name = "standard input" if str(args.queries) == "-" else str(args.queries)
    source = sys.stdin.buffer if str(args.queries) == "-" else open(args.queries, "rb")
    failed = False
    with source:
        index = open_index(args)
        lines = _query_lines(source, name, args)
        while batch := list(itertools.islice(lines, QUERY_BATCH)):
            for number, answer in _answer_batch(index, batch):
                if "error" in answer:
                    answer = {"line": number, **answer}
                    failed = True
                    show(f"error: line {number}: {answer['error']}", file=sys.stderr)
                print(json_text(answer), flush=True)
    return 2 if failed else 0


def _answer_batch(index: Index, batch: list[tuple[int, argparse.Namespace | str]]) -> list[tuple[int, dict]]:
    """The answer of each line of ``batch``, in order: lines of the same options searched together; a group that
    fails is answered line by line, so that only the lines at fault get an error."""
    answered: dict[int, dict] = {}
    groups: dict[tuple, list[tuple[int, argparse.Namespace]]] = {}
    for number, options in batch:
        if isinstance(options, str):
            answered[number] = {"error": options}
        else:
            key = tuple((k, repr(v)) for k, v in sorted(vars(options).items()) if k not in ("query", "id"))
            groups.setdefault(key, []).append((number, options))
    for group in groups.values():
        together = answer_or_error(lambda: {"answers": answers(index, [o.query for _, o in group], group[0][1])})
        if "error" in together:  # one of them is at fault: find which
            found = [answer_or_error(lambda o=o: answers(index, [o.query], o)[0]) for _, o in group]
        else:
            found = together["answers"]
        for (number, options), answer in zip(group, found):
            answered[number] = {"id": options.id, **answer} if options.id is not None else answer
    return [(number, answered[number]) for number, _ in batch]


PART_NAMES = {"elmo": "ELMo cosine", "keywords": "BM25", "glove": "GloVe cosine"}


def _print_hits(hits: list[dict], why: bool = False) -> None:
    """Sentence hits (``--sentences``) or document hits: relevance, title, best passage, why it came up; a line
    where the weaker matches (no better than chance) begin."""
    for hit in hits:
        if "sentence" in hit:
            show(f"{hit['rank']:3d}. {hit['score']:.3f}  [{hit['doc_id']}] {hit['title']}")
            show(f"      {hit['sentence']}")
            continue
        if not hit["above_line"] and (hit["rank"] == 1 or hits[hit["rank"] - 2]["above_line"]):
            print(
                f"     --- weaker matches below: no better than random words (relevance under {RELEVANCE_LINE:.0%}) ---"
            )
        found = [f"matched: {', '.join(hit['matched_words'])}"] if hit["matched_words"] else []
        found += ["found by meaning"] if hit["by_meaning"] else []
        reason = f"  ({'; '.join(found)})" if found else ""
        show(f"{hit['rank']:3d}. {hit['relevance']:4.0%}  [{hit['doc_id']}] {hit['title']}{reason}")
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
        if hits and "above_line" in hits[0] and not hits[0]["above_line"]:
            print("     no good match: even the best document scores no better than random words typically do")
        _print_hits(hits, args.why)
        if not hits:
            print("     (no results)")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``search`` sub-command."""
    search = commands.add_parser(
        "search",
        help="documents (or sentences) that answer a query, or many queries (--queries)",
        description="Find the documents that answer the query, most relevant first, each with its best passage, "
        "the words it shares with the query (stemmed: 'flooding' matches 'flooded') and its relevance: how its score "
        "compares with the best documents of random-word queries (50% is chance, 100% beats them all; the list is "
        "sorted by it). The top k are listed; a line marks where the weaker matches begin, those no better than chance. "
        "A query word that is no word at all (unknown to the index, the model and GloVe) is replaced by the nearest "
        "indexed spelling (ELMo's character model: 'vulcanos' -> 'volcanoes'), and the output says what was searched "
        f"for. Queries over {MAX_QUERY_CHARS:,} characters are truncated.",
    )
    search.add_argument("query", nargs="?", help="the query text (or --queries)")
    search.add_argument(
        "--queries",
        type=Path,
        metavar="FILE",
        help="answer every query of FILE ('-': standard input) in this one process: one query per line, as text or "
        'as a JSON object {"query": ..., "id": ..., "k": ..., "method": ..., "layers": ..., '
        '"as_typed": ..., "sentences": ..., "baseline": ...} (each field but "query" optional, default: this '
        "command's options); prints one JSON result per line, in order, queries searched in batches (exit status 2 "
        "if a line failed: its object then holds the error, the other lines their answers)",
    )
    search.add_argument("--k", type=K, default=10, help="number of results (default: 10)")
    search.add_argument(
        "--method",
        default=METHODS[0],
        choices=METHODS,
        help="hybrid: BM25 keywords + ELMo passage similarity under the index's search layers, both measured "
        "against chance and added (default, the best measured; the demo's search layer is the token layer, ELMo's "
        "context-free char-CNN); elmo: ELMo passages only; keywords: BM25 over documents; glove: mean GloVe vectors "
        "(the static baseline)",
    )
    add_layers_option(search)
    search.add_argument(
        "--sentences", action="store_true", help="rank single sentences by ELMo cosine instead of documents"
    )
    search.add_argument("--baseline", action="store_true", help="also list the GloVe baseline's results")
    search.add_argument(
        "--why", action="store_true", help="show each document's part scores (ELMo cosine, BM25) against chance"
    )
    search.add_argument(
        "--as-typed",
        action="store_true",
        help="search the words as typed: no word is replaced by a nearest indexed spelling (respelling off)",
    )
    add_query_options(search)
    search.set_defaults(run=run, show=show_search, shown_notices=SHOWN_NOTICES)
