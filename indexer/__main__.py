"""``python -m indexer``: build|add|delete|search|neighbors|senses|stats, thin wrappers over the Python API.

Query commands print readable text, or with ``--json`` one JSON object (schemas in indexer/README.md).
Errors are one line on stderr (exit status 2); notices (e.g. a truncated query) go to stderr, or into
the JSON ``notices`` list.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

from encoder.elmo import add_model_options
from encoder.errors import describe, fail
from encoder.text import LANGUAGES

from .build import SHARD_TOKENS, Settings, add_documents, build_index, delete_documents
from .errors import IndexerError, QueryNotice
from .glove import X_MAX, save_glove, train_glove_on_text
from .index import MAX_QUERY_CHARS, Index
from .ranking import METHODS
from .vectors import POOLINGS

DEFAULTS = Settings()


def _model(args: argparse.Namespace) -> Any:
    if args.weights is not None:
        if args.model is None:
            fail("--weights needs --model OPTIONS.json (the published options file)")
        return [args.model, args.weights]
    return args.model


def _open(args: argparse.Namespace) -> Index:
    return Index.open(args.index, model=_model(args), device=args.device, verify=not args.no_verify)


def _reader_options(args: argparse.Namespace) -> dict:
    return {
        "text_column": args.text_column,
        "id_column": args.id_column,
        "title_column": args.title_column,
        "doc_per_file": args.doc_per_file,
    }


def _ray_options(args: argparse.Namespace) -> dict:
    if args.ray_workers is not None and args.ray_workers < 1:
        fail(f"--ray-workers must be at least 1, not {args.ray_workers}")
    if args.ray_workers is not None and args.ray is False:
        fail("--ray-workers needs --ray")
    return {"ray": args.ray, "ray_workers": args.ray_workers}


def _highlight(sentence: str, start: int, end: int) -> str:
    return f"{sentence[:start]}[{sentence[start:end]}]{sentence[end:]}"


# ------------------------------------------------------------------------------------------ commands
def build_command(args: argparse.Namespace) -> dict:
    settings = Settings(
        skip_stopwords=not args.keep_stopwords,
        min_freq=args.min_freq,
        search_params=args.search_params,
        token_index_factory=args.token_index_factory,
        keep_exact_tokens=not args.no_exact_tokens,
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
        layers=args.layers,
        search_layers=args.search_layers,
        pooling=args.pooling,
        index_factory=args.index_factory,
        glove=args.glove,
        device=args.device,
        progress=not args.quiet,
        overwrite=args.overwrite,
        settings=settings,
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
        **_ray_options(args),
        **_reader_options(args),
    ).stats()


def delete_command(args: argparse.Namespace) -> dict:
    return {"deleted": args.doc_id, "counts": asdict(delete_documents(args.index, args.doc_id))}


def stats_command(args: argparse.Namespace) -> dict:
    return _open(args).stats()


def search_command(args: argparse.Namespace) -> dict:
    index = _open(args)
    result = {
        "query": args.query[:MAX_QUERY_CHARS],
        "k": args.k,
        "method": args.method,
        "layers": args.layers or index.manifest.search_layers.spec,
        "sentences": args.sentences,
    }
    if args.sentences:
        result["results"] = [asdict(h) for h in index.search_sentences(args.query, args.k, "elmo", args.layers)]
        if args.baseline:
            result["glove"] = [asdict(h) for h in index.search_sentences(args.query, args.k, "glove")]
    else:
        result["results"] = [asdict(h) for h in index.search(args.query, args.k, args.method, args.layers)]
        if args.baseline:
            result["glove"] = [asdict(h) for h in index.search(args.query, args.k, "glove")]
    return result


def neighbors_command(args: argparse.Namespace) -> dict:
    found = _open(args).neighbors(
        args.sentence, args.word, position=args.position, k=args.k, same_word=args.same_word, layers=args.layers
    )
    return {"sentence": args.sentence[:MAX_QUERY_CHARS], "word": args.word, **asdict(found)}


def senses_command(args: argparse.Namespace) -> dict:
    k = args.k if args.k == "auto" else int(args.k)
    return asdict(_open(args).senses(args.word, k=k, max_occurrences=args.max_occurrences, layers=args.layers))


# ------------------------------------------------------------------------------------------ text output
def glove_command(args: argparse.Namespace) -> dict:
    for option in ("max_tokens", "vocab_size", "min_count", "window", "dim", "epochs", "x_max", "threads"):
        if getattr(args, option) is not None and getattr(args, option) < 1:
            fail(f"--{option.replace('_', '-')} must be at least 1, not {getattr(args, option)}")
    if args.out.is_dir():
        fail(f"--out {args.out} is a folder; give the GloVe file to write, e.g. {args.out / 'glove.txt'}")
    for path in args.corpus:
        if not path.exists():
            fail(f"--corpus {path} does not exist")
    if args.threads:
        import torch  # the indexer's modules import it anyway; here only to set its threads

        torch.set_num_threads(args.threads)
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
    return {"out": str(args.out), "words": len(glove.index), "dim": glove.dim}


def _print_stats(result: dict) -> None:
    counts, model = result["counts"], result["model"]
    print(f"index     {result['path']}  (format {result['format_version']}, updated {result['updated_at']})")
    print(f"model     {model['name']}  hash {model['hash']}  dim {model['dim']}  layers {model['n_layers']}")
    print(f"vectors   {result['layers']['description']}, {result['pooling']} pooling, backend {result['backend']}")
    print(
        f"documents {counts['documents']:,}  sentences {counts['sentences']:,}  tokens {counts['tokens']:,}  "
        f"token vectors {counts['token_vectors']:,}  deleted documents {counts['deleted_documents']:,}"
    )
    print(
        f"skipped   {counts['skipped_empty_documents']:,} empty documents; "
        f"{counts['replaced_characters']:,} undecodable characters replaced"
    )
    for kind, entry in result["indexes"].items():
        print(
            f"faiss     {kind:9s} {entry['factory']:16s} {entry['ntotal']:>10,} x {entry['dim']}  {entry['search_params']}"
        )
    tokens = result["token_vectors"]
    if tokens["compressed"]:
        how = "re-ranked with the exact vectors" if tokens["reranked"] else "no exact vectors kept: approximate"
        print(f"tokens    compressed, {tokens['index_bytes_per_vector']:.0f} bytes a vector in FAISS; {how}")
    print(
        f"glove     {result['glove']['source']}, dim {result['glove']['dim']}, {result['glove']['vocab_size']:,} words"
    )
    print(f"disk      {result['disk_bytes'] / 2**20:.1f} MiB in {result['shards']} shard(s)")


def _print_hits(hits: list[dict], title: str) -> None:
    """Sentence hits (``--sentences``) or document hits: relevance, title, best passage, matched words."""
    print(title)
    for hit in hits:
        if "sentence" in hit:
            print(f"{hit['rank']:3d}. {hit['score']:.3f}  [{hit['doc_id']}] {hit['title']}\n      {hit['sentence']}")
            continue
        matched = f"  (matched: {', '.join(hit['matched_words'])})" if hit["matched_words"] else ""
        print(f"{hit['rank']:3d}. relevance {hit['relevance']:.2f}  [{hit['doc_id']}] {hit['title']}{matched}")
        for passage in hit["passages"][:1]:
            print(f"      {passage['text']}")
    if not hits:
        print("     (no results)")


def _print_search(result: dict) -> None:
    what = "sentences" if result["sentences"] else f"documents, {result['method']}"
    _print_hits(result["results"], f"ELMo search ({what}; layers {result['layers']}):")
    if "glove" in result:
        _print_hits(result["glove"], "GloVe baseline:")


def _print_neighbors(result: dict) -> None:
    word = result["query_tokens"][result["position"]]
    print(f"uses in context nearest to {word!r} (token {result['position']}):")
    for hit in result["hits"]:
        print(
            f"{hit['rank']:3d}. {hit['score']:.3f}  [{hit['doc_id']}] "
            f"{_highlight(hit['sentence'], hit['char_start'], hit['char_end'])}"
        )
    if result["glove_note"]:
        print(f"GloVe: {result['glove_note']}")
    else:
        print("GloVe nearest words: " + ", ".join(f"{w} ({s:.2f})" for w, s in result["glove"]))


def _print_senses(result: dict) -> None:
    silhouette = f", silhouette {result['silhouette']:.2f}" if result["silhouette"] is not None else ""
    print(f"{result['word']!r}: {result['n_occurrences']} occurrences, {len(result['clusters'])} sense(s){silhouette}")
    for number, cluster in enumerate(result["clusters"]):
        print(f"sense {number}  ({cluster['size']} uses; context: {cluster['label'] or 'no distinctive words'})")
        for example in cluster["examples"]:
            print(f"    - {example}")


# ------------------------------------------------------------------------------------------ parser
def _add_model_options(parser: argparse.ArgumentParser, default: str | None) -> None:
    where = "default: the model named in the index manifest" if default is None else "default: %(default)s"
    add_model_options(parser, default, where)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto (default: cpu)")


def _add_reader_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        type=Path,
        metavar="PATH",
        help="files (.txt, .jsonl, .csv, .parquet; text ones also .gz/.xz/.bz2) or folders (searched "
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
        type=int,
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


def _add_layers_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--layers",
        help="layer mix for this query: token, top, average or weights like 0.2,0.3,0.5 "
        "(default: the index's mix for this kind of question; other mixes search exactly)",
    )


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m indexer",
        description="ELMo Search indexes: build them from a corpus, then find similar sentences, "
        "uses of a word in context, and word senses.",
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
        help="the GloVe baseline: 'stanford' (Stanford's glove.6B 50-d vectors, the default), 'korean' (ours, trained "
        "on Korean Wikipedia, shipped with the Korean model), a GloVe text file (all referred to by the index, not "
        "copied), or 'train' (GloVe trained on the corpus, kept in the index)",
    )
    build.add_argument("--keep-stopwords", action="store_true", help="give stopwords token vectors too")
    build.add_argument(
        "--min-freq",
        type=int,
        default=DEFAULTS.min_freq,
        help="words seen fewer times get no token vectors (default: %(default)s)",
    )
    build.add_argument(
        "--glove-dim", type=int, default=DEFAULTS.glove_dim, help="GloVe training: vector size (default: %(default)s)"
    )
    build.add_argument(
        "--glove-epochs", type=int, default=DEFAULTS.glove_epochs, help="GloVe training: epochs (default: %(default)s)"
    )
    build.add_argument(
        "--glove-window",
        type=int,
        default=DEFAULTS.glove_window,
        help="GloVe training: co-occurrence window in words (default: %(default)s)",
    )
    build.add_argument(
        "--glove-min-count",
        type=int,
        default=DEFAULTS.glove_min_count,
        help="GloVe training: words seen fewer times are left out (default: %(default)s)",
    )
    build.add_argument(
        "--shard-tokens",
        type=int,
        default=SHARD_TOKENS,
        help="tokens per shard, the unit of resuming (default: %(default)s)",
    )
    build.add_argument(
        "--seed", type=int, default=DEFAULTS.seed, help="seed for sampling and GloVe (default: %(default)s)"
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
        "their type and training; GloVe is not retrained.",
    )
    add.add_argument("--index", required=True, type=Path, help="the index directory")
    _add_reader_options(add)
    _add_model_options(add, None)
    _add_ray_options(add)
    add.set_defaults(run=add_command, show=_print_stats, json=False)

    delete = commands.add_parser(
        "delete",
        help="remove documents from an index",
        description="Remove documents from all results. Their vectors stay on disk until the index is rebuilt.",
    )
    delete.add_argument("--index", required=True, type=Path, help="the index directory")
    delete.add_argument("--doc-id", nargs="+", required=True, help="ids of the documents to remove")
    delete.set_defaults(
        run=delete_command,
        show=lambda r: print(f"deleted {len(r['deleted'])} document(s); {r['counts']['documents']:,} remain"),
        json=False,
    )

    search = commands.add_parser(
        "search",
        help="documents (or sentences) that answer a query",
        description="Find the documents that answer the query, each with its best passage, the query words it "
        "contains and a relevance from 0 to 1 (the share of random-word queries whose best document scores "
        f"lower; below 0.5 is chance). Queries over {MAX_QUERY_CHARS:,} characters are truncated.",
    )
    search.add_argument("query", help="the query text")
    search.add_argument("--k", type=int, default=10, help="number of results (default: 10)")
    search.add_argument(
        "--method",
        default=METHODS[0],
        choices=METHODS,
        help="hybrid: ELMo passages fused with BM25 keywords (default, the best measured); elmo: ELMo passages "
        "only; keywords: BM25 over documents; glove: mean GloVe vectors (the static baseline)",
    )
    _add_layers_option(search)
    search.add_argument(
        "--sentences", action="store_true", help="rank single sentences by ELMo cosine instead of documents"
    )
    search.add_argument("--baseline", action="store_true", help="also list the GloVe baseline's results")
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
    neighbors.add_argument("--position", type=int, help="its token position (0-based) if it occurs more than once")
    neighbors.add_argument("--k", type=int, default=10, help="number of uses to show (default: 10)")
    neighbors.add_argument("--same-word", action="store_true", help="only uses of the same word")
    _add_layers_option(neighbors)
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
    senses.add_argument("--k", default="auto", help="number of senses, or auto (default: auto, at most 8)")
    senses.add_argument(
        "--max-occurrences",
        type=int,
        default=2000,
        help="cluster a random sample of this many uses at most (default: %(default)s)",
    )
    _add_layers_option(senses)
    _add_query_options(senses)
    senses.set_defaults(run=senses_command, show=_print_senses)

    stats = commands.add_parser(
        "stats", help="what an index holds", description="Counts, settings and sizes of an index."
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
    glove.add_argument("--max-tokens", type=int, default=5_000_000, help="tokens to read (default 5,000,000)")
    glove.add_argument("--vocab-size", type=int, default=30_000, help="most frequent words kept (default 30,000)")
    glove.add_argument("--min-count", type=int, default=5, help="drop words seen fewer times (default 5)")
    glove.add_argument("--window", type=int, default=10, help="co-occurrence window (default 10)")
    glove.add_argument("--dim", type=int, default=100, help="vector size (default 100)")
    glove.add_argument("--epochs", type=int, default=15, help="AdaGrad epochs (default 15)")
    glove.add_argument(
        "--x-max",
        type=float,
        default=X_MAX,
        help="co-occurrence count at which a pair's weight reaches 1 (default %(default)s, for corpora of millions "
        "of tokens; the GloVe paper's 100 is for billions)",
    )
    glove.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    glove.add_argument(
        "--threads",
        type=int,
        help="torch CPU threads (default: torch's choice; 1 is fastest on a machine busy with other work)",
    )
    glove.add_argument(
        "--language",
        choices=list(LANGUAGES),
        default="en",
        help="how the text is split into sentences and words: en (Punkt + NLTK), ko (Kiwi morphemes) or ko-eojeol "
        "(eojeol); "
        "the same rules as a model of that language (default en)",
    )
    glove.add_argument("--json", action="store_true", help="print one JSON object: out, words, dim")
    glove.set_defaults(
        run=glove_command,
        show=lambda result: print(f"wrote {result['words']} words x {result['dim']} dims to {result['out']}"),
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    if args.command == "senses" and args.k != "auto" and not args.k.isdigit():
        fail(f"--k must be auto or a number, not {args.k!r}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = args.run(args)
        except (IndexerError, ValueError, OSError) as error:
            print(f"error: {describe(error)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(
                "interrupted" + ("; re-run the same command to resume" if args.command in ("build", "add") else ""),
                file=sys.stderr,
            )
            return 130
    notices = result.pop("notices", []) + [str(w.message) for w in caught if issubclass(w.category, QueryNotice)]
    warned = [
        str(w.message)
        for w in caught
        if issubclass(w.category, UserWarning) and not issubclass(w.category, QueryNotice)
    ]
    for message in warned:
        print(f"warning: {message}", file=sys.stderr)
    if args.json:
        print(json.dumps({**result, "notices": notices}, ensure_ascii=False, indent=2))
    else:
        for notice in notices:
            print(f"notice: {notice}", file=sys.stderr)
        args.show(result)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `... | head` closed the pipe: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
