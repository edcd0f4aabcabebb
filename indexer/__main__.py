"""``python -m indexer``: build|add|delete|search|neighbors|senses|stats, thin wrappers over the Python API.

Query commands print readable text, or with ``--json`` one JSON object (schemas in indexer/README.md);
``search --queries FILE`` answers many queries in one process, one JSON object per line. Errors are one line on
stderr (exit status 2); notices (e.g. a truncated query) go to stderr, or into the JSON ``notices`` list.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

from encoder import LayerMix, ownership
from encoder.commands import parser_for
from encoder.device import add_device_option
from encoder.errors import REPORTED, describe, fail, reported
from encoder.mix import POOLINGS
from encoder.model_files import add_model_options
from encoder.numbers import SEED, THREADS, Number
from encoder.terminal import json_text, show, show_json
from encoder.text import LANGUAGES

from . import folder
from .build import SHARD_TOKENS, Settings, add_documents, build_index, delete_documents
from .errors import IndexerError
from .export import FORMATS, export
from .glove import NUMBERS as GLOVE_NUMBERS
from .glove import X_MAX, save_glove, train_glove_on_text
from .index import MAX_QUERY_CHARS, OCCURRENCES, REPRESENTATIONS, SENSES_K, Index, K
from .manifest import SETTING_NUMBERS
from .ranking import METHODS, RELEVANCE_LINE, method_name
from .serve import Limits, serve

DEFAULTS = Settings()


def _model(args: argparse.Namespace) -> Any:
    if args.weights is not None:
        if args.model is None:
            fail("--weights needs --model OPTIONS.json (the published options file)")
        return [args.model, args.weights]
    return args.model


def _set_threads(args: argparse.Namespace) -> None:
    """``--threads``, for the commands that run the model or train GloVe."""
    if args.threads:
        import torch  # the indexer's modules import it anyway; here only to set its threads

        torch.set_num_threads(args.threads)


def _open(args: argparse.Namespace) -> Index:
    _set_threads(args)
    return Index.open(args.index, model=_model(args), device=args.device, verify=not args.no_verify)


def _reader_options(args: argparse.Namespace) -> dict:
    return {
        "text_column": args.text_column,
        "id_column": args.id_column,
        "title_column": args.title_column,
        "doc_per_file": args.doc_per_file,
    }


def _ray_options(args: argparse.Namespace) -> dict:
    if args.ray_workers is not None and args.ray is False:
        fail("--ray-workers needs --ray")
    return {"ray": args.ray, "ray_workers": args.ray_workers}


def _highlight(sentence: str, start: int, end: int) -> str:
    return f"{sentence[:start]}[{sentence[start:end]}]{sentence[end:]}"


# ------------------------------------------------------------------------------------------ commands
def build_command(args: argparse.Namespace) -> dict:
    settings = Settings(
        layers=args.layers,
        search_layers=args.search_layers,
        pooling=args.pooling,
        index_factory=args.index_factory,
        search_params=args.search_params,
        token_index_factory=args.token_index_factory,
        keep_exact_tokens=not args.no_exact_tokens,
        skip_stopwords=not args.keep_stopwords,
        min_freq=args.min_freq,
        glove=args.glove,
        glove_dim=args.glove_dim,
        glove_epochs=args.glove_epochs,
        glove_window=args.glove_window,
        glove_min_count=args.glove_min_count,
        shard_tokens=args.shard_tokens,
        seed=args.seed,
    )
    index = build_index(
        args.corpus,
        args.out,
        model=_model(args) or "default",
        settings=settings,
        device=args.device,
        progress=not args.quiet,
        overwrite=args.overwrite,
        **_ray_options(args),
        **_reader_options(args),
    )
    return index.stats()


def add_command(args: argparse.Namespace) -> dict:
    return add_documents(
        args.index,
        args.corpus,
        model=_model(args),
        device=args.device,
        progress=not args.quiet,
        replace=args.replace,
        **_ray_options(args),
        **_reader_options(args),
    ).stats()


def delete_command(args: argparse.Namespace) -> dict:
    return {"deleted": args.doc_id, "counts": asdict(delete_documents(args.index, args.doc_id))}


def stats_command(args: argparse.Namespace) -> dict:
    index = _open(args)
    return {**index.stats(), **({"documents": index.documents()} if args.docs else {})}


def search_command(args: argparse.Namespace) -> dict:
    return answers(_open(args), [args.query], args)[0]


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
        index = _open(args)
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
        together = _answer(lambda: {"answers": answers(index, [o.query for _, o in group], group[0][1])})
        if "error" in together:  # one of them is at fault: find which
            found = [_answer(lambda o=o: answers(index, [o.query], o)[0]) for _, o in group]
        else:
            found = together["answers"]
        for (number, options), answer in zip(group, found):
            answered[number] = {"id": options.id, **answer} if options.id is not None else answer
    return [(number, answered[number]) for number, _ in batch]


def neighbors_command(args: argparse.Namespace) -> dict:
    found = _open(args).neighbors(
        args.sentence,
        args.word,
        position=args.position,
        k=args.k,
        same_word=args.same_word,
        layers=args.layers,
        representation=args.representation,
        explain=args.explain,
    )
    return {"sentence": args.sentence[:MAX_QUERY_CHARS], "word": args.word, **asdict(found)}


def senses_command(args: argparse.Namespace) -> dict:
    found = _open(args).senses(
        args.word,
        k=args.k,
        max_occurrences=args.max_occurrences,
        layers=args.layers,
        representation=args.representation,
    )
    return asdict(found)


def export_command(args: argparse.Namespace) -> dict:
    return export(_open(args), args.out, args.format, args.tokens, args.layers)


def _print_export(result: dict) -> None:
    tokens = f" and {result['tokens']['count']:,} token vectors" if "tokens" in result else ""
    show(
        f"wrote {result['documents']['count']:,} document vectors{tokens} ({result['dim']} dims) as {result['format']}"
    )


def serve_command(args: argparse.Namespace) -> int:
    """Open the index (an error is one line, as for any command), then serve it until interrupted."""
    index = _open(args)
    show(f"serving {index.path} on http://{args.host}:{args.port} (API page: /docs; Ctrl+C stops it)", file=sys.stderr)
    serve(index, args.host, args.port, Limits(args.max_body_bytes, args.max_batch, args.max_k))
    return 0


def _senses_k(text: str) -> int | str:
    """``--k`` of senses: auto, or a number of senses (``SENSES_K``)."""
    if text == "auto":
        return text
    if SENSES_K.text_problem(text) is not None:
        raise argparse.ArgumentTypeError(f"must be auto or {SENSES_K.describe()}, not {text!r}")
    return SENSES_K(text)


GLOVE_KIND = "glove"  # what ``glove --out`` records it wrote (``ownership.record_written``)


def glove_command(args: argparse.Namespace) -> dict:
    if args.out.is_dir():
        fail(f"--out {args.out} is a folder; give the GloVe file to write, e.g. {args.out / 'glove.txt'}")
    if folder.owner_of(args.out.resolve().parent) is not None:
        fail(
            f"--out {args.out} is in the index {args.out.parent}, whose files only its build writes; write the GloVe "
            "file elsewhere (and build an index with --glove FILE to use it)"
        )
    ownership.check_replace(args.out, GLOVE_KIND, args.overwrite, "--out", "a GloVe file")
    for path in args.corpus:
        if not path.exists():
            fail(f"--corpus {path} does not exist")
    _set_threads(args)
    glove = train_glove_on_text(
        args.corpus,
        max_tokens=args.max_tokens,
        vocab_size=args.vocab_size,
        min_count=args.min_count,
        window=args.window,
        language=args.language,
        dim=args.dim,
        epochs=args.epochs,
        x_max=args.x_max,
        seed=args.seed,
    )
    save_glove(args.out, glove)
    ownership.record_written(args.out, GLOVE_KIND)
    return {"out": str(args.out), "words": len(glove.index), "dim": glove.dim}


def _print_stats(result: dict) -> None:
    counts, model = result["counts"], result["model"]
    show(f"index     {result['path']}  (format {result['format_version']}, updated {result['updated_at']})")
    show(f"model     {model['name']}  hash {model['hash']}  dim {model['dim']}  layers {model['n_layers']}")
    show(f"vectors   {result['layers']['description']}, {result['pooling']} pooling, backend {result['backend']}")
    show(
        f"documents {counts['documents']:,}  sentences {counts['sentences']:,}  tokens {counts['tokens']:,}  "
        f"token vectors {counts['token_vectors']:,}  deleted documents {counts['deleted_documents']:,}"
    )
    show(
        f"skipped   {counts['skipped_empty_documents']:,} empty documents; "
        f"{counts['replaced_characters']:,} undecodable characters replaced"
    )
    for kind, entry in result["indexes"].items():
        show(
            f"faiss     {kind:9s} {entry['factory']:16s} {entry['ntotal']:>10,} x {entry['dim']}  {entry['search_params']}"
        )
    tokens = result["token_vectors"]
    if tokens["compressed"]:
        how = "re-ranked with the exact vectors" if tokens["reranked"] else "no exact vectors kept: approximate"
        show(f"tokens    compressed, {tokens['index_bytes_per_vector']:.0f} bytes a vector in FAISS; {how}")
    show(
        f"glove     {result['glove']['source']}, dim {result['glove']['dim']}, {result['glove']['vocab_size']:,} words"
    )
    show(f"disk      {result['disk_bytes'] / 2**20:.1f} MiB in {result['shards']} shard(s)")
    if "documents" in result:  # stats --docs
        _print_documents(result["documents"])


def _print_documents(documents: list[dict]) -> None:
    """One line per document: its id (what ``delete --doc-id`` takes), then its title."""
    print()
    show(f"{len(documents):,} document(s), id and title:")
    width = min(max((len(d["doc_id"]) for d in documents), default=0), 40)
    for doc in documents:
        show(f"  {doc['doc_id']:<{width}}  {doc['title']}".rstrip())


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


def _print_search(result: dict, why: bool = False) -> None:
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
        _print_hits(hits, why)
        if not hits:
            print("     (no results)")


def _print_neighbors(result: dict) -> None:
    word = result["query_tokens"][result["position"]]
    for expectation in result["expected"]:
        side = "the words before" if expectation["direction"] == "forward" else "the words after"
        show(f"the model expects here, from {side}: " + ", ".join(f"{w} {p:.1%}" for w, p in expectation["words"]))
    show(f"uses in context nearest to {word!r} (token {result['position']}), by {result['representation']}:")
    for hit in result["hits"]:
        show(
            f"{hit['rank']:3d}. {hit['score']:.3f}  [{hit['doc_id']}] "
            f"{_highlight(hit['sentence'], hit['char_start'], hit['char_end'])}"
        )
    if result["glove_note"]:
        show(f"GloVe: {result['glove_note']}")
    else:
        show("GloVe nearest words: " + ", ".join(f"{w} ({s:.2f})" for w, s in result["glove"]))


def _print_senses(result: dict) -> None:
    silhouette = f", silhouette {result['silhouette']:.2f}" if result["silhouette"] is not None else ""
    show(
        f"{result['word']!r}: {result['n_occurrences']} occurrences, {len(result['clusters'])} sense(s){silhouette}, "
        f"by {result['representation']}"
    )
    for number, cluster in enumerate(result["clusters"]):
        show(f"sense {number}  ({cluster['size']} uses; marked by: {cluster['label'] or 'no distinctive words'})")
        for example in cluster["examples"]:
            show(f"    - {example}")


# ------------------------------------------------------------------------------------------ parser
def _add_model_options(parser: argparse.ArgumentParser, default: str | None) -> None:
    where = "default: the model named in the index manifest" if default is None else "default: %(default)s"
    add_model_options(parser, default, where)
    add_device_option(parser)


def _add_reader_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        type=Path,
        metavar="PATH",
        help="files (.txt, .jsonl, .csv, .parquet, .md, .rst; text ones also .gz/.xz/.bz2) or folders (searched "
        "recursively, in sorted order)",
    )
    parser.add_argument("--text-column", default="text", help="column/field holding the text (default: text)")
    parser.add_argument("--id-column", help="column/field with document ids (default: 'id' if present, else FILE:LINE)")
    parser.add_argument("--title-column", help="column/field with titles (default: 'title' if present, else none)")
    parser.add_argument(
        "--doc-per-file", action="store_true", help=".txt files are one document each (default: one document per line)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _add_ray_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ray",
        nargs="?",
        const=True,
        default=False,
        metavar="ADDRESS",
        help="encode the shards on a Ray cluster: the one at ADDRESS (HOST:PORT, ray://HOST:PORT, or auto: the one "
        "RAY_ADDRESS or `ray start` names), or with no ADDRESS that one if there is one, else a new one on this "
        "machine. The index folder must be on storage every node mounts at the same path (checked)",
    )
    parser.add_argument(
        "--ray-workers",
        type=Number(int, 1, 100_000),
        metavar="N",
        help="Ray actors, each holding one model (default: one per GPU of the cluster, else one per CPU)",
    )


def _add_query_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--index", required=True, type=Path, help="the index directory")
    _add_model_options(parser, None)
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="skip checking file hashes on open (sizes are still checked); faster for huge indexes",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object (schema in indexer/README.md)")
    _add_threads_option(parser)


def _add_threads_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threads",
        type=THREADS,
        help="torch CPU threads (default: torch's choice, one per core; 1 is several times faster on a machine busy "
        "with other work: measured in bench/search_speed.py)",
    )


def _add_layers_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--layers",
        help="layer mix for this query: token, top, average or weights like 0.2,0.3,0.5 "
        "(default: the index's mix for this kind of question; other mixes search exactly)",
    )


def _add_representation_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--representation",
        choices=REPRESENTATIONS,
        help="how a use of the word is read: 'readout', the index's sense readout (context prediction: the words the "
        "language model expects there; the default unless --layers is given), or 'elmo', the ELMo layers at the word "
        "mixed as --layers says (the paper's way)",
    )


def make_parser() -> argparse.ArgumentParser:
    parser = parser_for(
        "indexer",
        "ELMo Search indexes: build them from a corpus, then find similar sentences, uses of a word in context, and "
        "word senses; serve them over HTTP, or export their vectors.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    build = commands.add_parser(
        "build",
        help="build an index from a corpus (re-run to resume a killed build)",
        description="Build an index: split and tokenize the documents, encode them with ELMo in "
        "shards (a killed build resumes from the completed ones when re-run), train "
        "or load GloVe, and write FAISS indexes and metadata.",
    )
    _add_reader_options(build)
    build.add_argument("--out", required=True, type=Path, help="the index directory to create")
    _add_model_options(build, "default")
    build.add_argument(
        "--layers",
        default=DEFAULTS.layers,
        help="layer mix of the token index (word in context, senses): token, top, average or weights like "
        "0.2,0.3,0.5 (default: %(default)s)",
    )
    build.add_argument(
        "--search-layers",
        default=DEFAULTS.search_layers,
        help="layer mix of passage search (default: %(default)s, the best on bench/queries_en.jsonl; any other "
        "mix can still be asked for at query time, searched exactly)",
    )
    build.add_argument(
        "--pooling",
        default=DEFAULTS.pooling,
        choices=POOLINGS,
        help="how token vectors become a passage vector, per layer: sif (weighted by smooth inverse word "
        "frequency), mean or max (default: %(default)s)",
    )
    build.add_argument(
        "--index-factory",
        help="FAISS index_factory string for all indexes, e.g. Flat, IVF1024,Flat, "
        "HNSW32 (default: Flat up to 100k vectors, IVF beyond)",
    )
    build.add_argument(
        "--token-index-factory",
        default=DEFAULTS.token_index_factory,
        metavar="FACTORY",
        help="FAISS index_factory string for the token index (word in context, senses), e.g. IVF1024,PQ32np or "
        "OPQ32,IVF1024,PQ32np (product quantisation: a few dozen bytes a vector; np: no polysemous training, which "
        "is slow); default %(default)s: --index-factory if given, else Flat up to 100k vectors, IVF beyond, "
        "IVF-PQ once float32 vectors would pass 1 GiB",
    )
    build.add_argument(
        "--no-exact-tokens",
        action="store_true",
        help="do not keep the exact per-layer token vectors: smaller on disk, but a compressed token index then "
        "answers alone (approximate neighbours and senses, no other layer mix); by default they are kept and a "
        "compressed index's candidates are re-ranked with them",
    )
    build.add_argument(
        "--search-params",
        help="FAISS search parameters, e.g. nprobe=32 or efSearch=128 (default: chosen for recall@10 of about 0.95)",
    )
    build.add_argument(
        "--glove",
        default=DEFAULTS.glove,
        help="the GloVe baseline: 'auto' (the default: the baseline of the model's language, stanford for English, "
        "korean for Korean), 'stanford' (Stanford's glove.6B 50-d vectors), 'korean' (ours, trained on Korean "
        "Wikipedia, shipped with the Korean model), a GloVe text file (all referred to by the index, not copied), or "
        "'train' (GloVe trained on the corpus, kept in the index)",
    )
    build.add_argument("--keep-stopwords", action="store_true", help="give stopwords token vectors too")
    build.add_argument(
        "--min-freq",
        type=SETTING_NUMBERS["min_freq"],
        default=DEFAULTS.min_freq,
        help="words seen fewer times get no token vectors (default: %(default)s)",
    )
    build.add_argument(
        "--glove-dim",
        type=SETTING_NUMBERS["glove_dim"],
        default=DEFAULTS.glove_dim,
        help="GloVe training: vector size (default: %(default)s)",
    )
    build.add_argument(
        "--glove-epochs",
        type=SETTING_NUMBERS["glove_epochs"],
        default=DEFAULTS.glove_epochs,
        help="GloVe training: epochs (default: %(default)s)",
    )
    build.add_argument(
        "--glove-window",
        type=SETTING_NUMBERS["glove_window"],
        default=DEFAULTS.glove_window,
        help="GloVe training: co-occurrence window in words (default: %(default)s)",
    )
    build.add_argument(
        "--glove-min-count",
        type=SETTING_NUMBERS["glove_min_count"],
        default=DEFAULTS.glove_min_count,
        help="GloVe training: words seen fewer times are left out (default: %(default)s)",
    )
    build.add_argument(
        "--shard-tokens",
        type=SETTING_NUMBERS["shard_tokens"],
        default=SHARD_TOKENS,
        help="tokens per shard, the unit of resuming (default: %(default)s)",
    )
    build.add_argument(
        "--seed", type=SEED, default=DEFAULTS.seed, help="seed for sampling and GloVe (default: %(default)s)"
    )
    build.add_argument(
        "--overwrite", action="store_true", help="replace an existing index or interrupted build in --out"
    )
    _add_ray_options(build)
    build.set_defaults(run=build_command, show=_print_stats, json=False)

    add = commands.add_parser(
        "add",
        help="add documents to an index",
        description="Append documents to an index (resumable like build). The FAISS indexes keep "
        "their type and training; GloVe is not retrained. The id of a deleted document can be used again.",
    )
    add.add_argument("--index", required=True, type=Path, help="the index directory")
    add.add_argument(
        "--replace",
        action="store_true",
        help="a document whose id the index holds replaces it, in the same commit (an upsert); by default such a "
        "document is refused",
    )
    _add_reader_options(add)
    _add_model_options(add, None)
    _add_ray_options(add)
    add.set_defaults(run=add_command, show=_print_stats, json=False)

    delete = commands.add_parser(
        "delete",
        help="remove documents from an index",
        description="Remove documents from all results. Their vectors stay on disk until the index is rebuilt. "
        "`stats --docs` lists the documents' ids.",
    )
    delete.add_argument("--index", required=True, type=Path, help="the index directory")
    delete.add_argument("--doc-id", nargs="+", required=True, help="ids of the documents to remove")
    delete.set_defaults(
        run=delete_command,
        show=lambda r: show(f"deleted {len(r['deleted'])} document(s); {r['counts']['documents']:,} remain"),
        json=False,
    )

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
    _add_layers_option(search)
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
    _add_query_options(search)
    search.set_defaults(run=search_command, show=_print_search)

    neighbors = commands.add_parser(
        "neighbors",
        help="nearest uses in context of a word in a sentence",
        description="Other uses of words in the collection nearest to WORD as used in "
        "SENTENCE, and GloVe's nearest words (context-free) for contrast.",
    )
    neighbors.add_argument("--sentence", required=True, help="a sentence containing the word")
    neighbors.add_argument("--word", required=True, help="the word (as it appears in the sentence; case-insensitive)")
    neighbors.add_argument(
        "--position", type=Number(int, 0), help="its token position (0-based) if it occurs more than once"
    )
    neighbors.add_argument("--k", type=K, default=10, help="number of uses to show (default: 10)")
    neighbors.add_argument("--same-word", action="store_true", help="only uses of the same word")
    neighbors.add_argument(
        "--explain",
        action="store_true",
        help="also print what the model expects at the word: the forward LM's 10 likeliest words given the words "
        "before it and the backward LM's given the words after it, with their probabilities",
    )
    _add_layers_option(neighbors)
    _add_representation_option(neighbors)
    _add_query_options(neighbors)
    neighbors.set_defaults(run=neighbors_command, show=_print_neighbors)

    senses = commands.add_parser(
        "senses",
        help="cluster a word's uses into senses",
        description="Cluster the uses of WORD in the collection by their ELMo vectors (k-means, "
        "k by silhouette when auto) and give each cluster's typical sentences and "
        "2-D (PCA) coordinates for plotting.",
    )
    senses.add_argument("--word", required=True, help="the word")
    senses.add_argument(
        "--k", type=_senses_k, default="auto", help="number of senses, or auto (default: auto, at most 8)"
    )
    senses.add_argument(
        "--max-occurrences",
        type=OCCURRENCES,
        default=2000,
        help="cluster a random sample of this many uses at most (default: %(default)s)",
    )
    _add_layers_option(senses)
    _add_representation_option(senses)
    _add_query_options(senses)
    senses.set_defaults(run=senses_command, show=_print_senses)

    stats = commands.add_parser(
        "stats", help="what an index holds", description="Counts, settings and sizes of an index."
    )
    stats.add_argument(
        "--docs", action="store_true", help="also list every document's id (what delete --doc-id takes) and title"
    )
    _add_query_options(stats)
    stats.set_defaults(run=stats_command, show=_print_stats)

    glove = commands.add_parser(
        "glove",
        help="train GloVe vectors on a plain-text corpus (a baseline to pass to build --glove)",
        description="Train GloVe (Pennington et al. 2014) on the first --max-tokens tokens of plain-text files "
        "(.txt/.gz/.xz, folders), lower-cased, and write the standard GloVe text format.",
    )
    glove.add_argument("--corpus", nargs="+", required=True, type=Path, help="text files or folders")
    glove.add_argument("--out", required=True, type=Path, help="GloVe text file to write (.xz compresses it)")
    glove.add_argument(
        "--max-tokens", type=GLOVE_NUMBERS["max_tokens"], default=5_000_000, help="tokens to read (default 5,000,000)"
    )
    glove.add_argument(
        "--vocab-size",
        type=GLOVE_NUMBERS["vocab_size"],
        default=30_000,
        help="most frequent words kept (default 30,000)",
    )
    glove.add_argument(
        "--min-count", type=GLOVE_NUMBERS["min_count"], default=5, help="drop words seen fewer times (default 5)"
    )
    glove.add_argument("--window", type=GLOVE_NUMBERS["window"], default=10, help="co-occurrence window (default 10)")
    glove.add_argument("--dim", type=GLOVE_NUMBERS["dim"], default=100, help="vector size (default 100)")
    glove.add_argument("--epochs", type=GLOVE_NUMBERS["epochs"], default=15, help="AdaGrad epochs (default 15)")
    glove.add_argument(
        "--x-max",
        type=GLOVE_NUMBERS["x_max"],
        default=X_MAX,
        help="co-occurrence count at which a pair's weight reaches 1 (default %(default)s, for corpora of millions "
        "of tokens; the GloVe paper's 100 is for billions)",
    )
    glove.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    _add_threads_option(glove)
    glove.add_argument(
        "--language",
        choices=list(LANGUAGES),
        default="en",
        help="how the text is split into sentences and words: en (Punkt + NLTK), ko (Kiwi morphemes) or ko-eojeol "
        "(eojeol); "
        "the same rules as a model of that language (default en)",
    )
    glove.add_argument(
        "--overwrite",
        action="store_true",
        help="replace --out even when this command did not write it (a file it wrote, as recorded in "
        f"{ownership.OUTPUTS} beside it, is replaced anyway); never a file of an index",
    )
    glove.add_argument("--json", action="store_true", help="print one JSON object: out, words, dim")
    glove.set_defaults(
        run=glove_command,
        show=lambda result: show(f"wrote {result['words']} words x {result['dim']} dims to {result['out']}"),
    )

    export = commands.add_parser(
        "export",
        help="write an index's document (and token) vectors and ids as .npy or Parquet",
        description="Write the vectors of an index's documents, and with --tokens of its word occurrences, with their "
        "ids, into a new folder, for another vector store. Layout: indexer/README.md (export.json in the folder says "
        "what it holds). A document's vector is the mean of its sentences' vectors, L2-normalised.",
    )
    export.add_argument("--out", required=True, type=Path, help="folder to write (an earlier export is replaced)")
    export.add_argument("--format", choices=FORMATS, default="npy", help="npy (NumPy arrays) or parquet (default npy)")
    export.add_argument("--tokens", action="store_true", help="also every indexed word occurrence's vector")
    _add_layers_option(export)
    _add_query_options(export)
    export.set_defaults(run=export_command, show=_print_export)

    serve = commands.add_parser(
        "serve",
        help="answer search, neighbours and embed requests over HTTP (JSON)",
        description="Serve an index as a JSON HTTP API: POST /search, /neighbors, /embed; GET /stats; the OpenAPI "
        "page at /docs. Requests over the limits below are answered 4xx with a message.",
    )
    serve.add_argument("--index", required=True, type=Path, help="the index directory")
    _add_model_options(serve, None)
    serve.add_argument("--no-verify", action="store_true", help="skip checking file hashes on open")
    _add_threads_option(serve)
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: only this machine can connect)"
    )
    serve.add_argument("--port", type=Number(int, 1, 65_535), default=8000, help="port (default 8000)")
    serve.add_argument(
        "--max-body-bytes",
        type=Number(int, 1),
        default=Limits.body_bytes,
        help="largest request body accepted (default %(default)s)",
    )
    serve.add_argument(
        "--max-batch",
        type=Number(int, 1, 10_000),
        default=Limits.batch,
        help="queries or sentences in one request at most (default %(default)s)",
    )
    serve.add_argument("--max-k", type=K, default=Limits.k, help="largest k a request may ask (default %(default)s)")
    serve.set_defaults(run=serve_command)
    return parser


SHOWN_NOTICES = ("searched_for", "no_good_match")
"""Notices a search's text output says itself (on standard output, where the results are)."""


def _answer(question: Callable[[], dict]) -> dict:
    """A question's result with its ``notices`` (an empty list for a command that has none), or
    ``{"error": ...}``."""
    try:
        result = question()
    except (IndexerError, *REPORTED) as error:
        if not isinstance(error, IndexerError) and not reported(error):
            raise
        return {"error": describe(error)}
    return {**result, "notices": result.get("notices", [])}


def _show_warning(message: Warning | str, *_: Any, **__: Any) -> None:
    """A library's warning (an undecodable byte read from a corpus) as the command line says it: one line."""
    show(f"warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    with warnings.catch_warnings():  # puts showwarning back when the command ends (tests call main in-process)
        warnings.showwarning = _show_warning
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    batch = args.command == "search" and args.queries is not None
    if args.command == "search" and batch == (args.query is not None):
        fail("give one query, or --queries FILE (- for standard input) for many, not both")
    try:
        if batch:
            return search_many(args)
        if args.command == "serve":
            return serve_command(args)
        result = _answer(lambda: args.run(args))
    except (IndexerError, *REPORTED) as error:  # opening the index or the queries for --queries
        if not isinstance(error, IndexerError) and not reported(error):
            raise
        show(f"error: {describe(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "interrupted" + ("; re-run the same command to resume" if args.command in ("build", "add") else ""),
            file=sys.stderr,
        )
        return 130
    if "error" in result:
        show(f"error: {result['error']}", file=sys.stderr)
        return 2
    if args.json:
        show_json(result, indent=2)
        return 0
    notices = result.pop("notices")
    for notice in notices:
        if args.command != "search" or getattr(notice, "key", None) not in SHOWN_NOTICES:
            show(f"notice: {notice}", file=sys.stderr)
    if args.command == "search":
        _print_search(result, args.why)
    else:
        args.show(result)
    return 0


def cli() -> None:
    """``python -m indexer`` and the ``elmo-indexer`` command."""
    try:
        sys.exit(main())
    except BrokenPipeError:  # `... | head` closed the pipe: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)


if __name__ == "__main__":
    cli()
