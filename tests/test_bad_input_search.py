"""Bad input and faults: `python -m indexer search|neighbors|senses|stats` and the Python API behind them (``Index.open``, ``search``,
``search_sentences``, ``neighbors``, ``senses``): opening an index and asking it.

The rows of this command's tables; tests/bad_input.py runs them and says what each outcome means.
"""

from __future__ import annotations

import shutil
import socket

from bad_input import (
    BIG_QUERY,
    CONTROL,
    EMOJI,
    ERROR,
    ESCAPES,
    HOSTILE,
    NO_MATCH,
    USAGE,
    WORKS,
    Case,
    Cmd,
    api_test,
    cli_test,
    edit_json,
    faiss_file,
    flip_last_byte,
    found,
    is_hits,
    is_json,
    json_exact,
    lines,
    lock,
    manifest,
    no_escapes,
    q,
    searched_with,
    shard,
    truncate,
    without,
)

from indexer import CorruptIndexError, Index, IndexFormatError, IndexMismatchError, QueryError

API = [
    Case("search an empty query", lambda c: c.opened.search(""), QueryError, "empty"),
    Case("search whitespace only", lambda c: c.opened.search(" \t\n\u3000 "), QueryError, "empty"),
    Case("search None", lambda c: c.opened.search(None), QueryError, "empty"),
    Case("search a number", lambda c: c.opened.search(42), QueryError, "the query is of type int, not text"),
    Case("search bytes", lambda c: c.opened.search(b"river bank"), QueryError, "the query is of type bytes, not text"),
    Case(
        "neighbors in a sentence of bytes",
        lambda c: c.opened.neighbors(b"the river bank", "bank"),
        QueryError,
        "the sentence is of type bytes, not text",
    ),
    Case("search punctuation only", lambda c: c.opened.search("?!... ;", method="keywords"), WORKS, check=is_hits),
    Case(
        "search control characters", lambda c: c.opened.search(CONTROL, k=3, method="keywords"), WORKS, check=found(3)
    ),
    Case("search emoji", lambda c: c.opened.search(EMOJI, k=3, method="keywords"), WORKS, check=found(3)),
    Case("search a 1 MB query", lambda c: c.opened.search(BIG_QUERY, k=2), WORKS, "first 10,000", found(2)),
    Case(
        "search unknown words",
        lambda c: c.opened.search("qwxzt blorft vrrmm", k=3),
        WORKS,
        "relevance is not shown",
        found(3),
    ),
    Case(
        "search one 5,000-letter word",
        lambda c: c.opened.search("a" * 5000, k=1, method="keywords"),
        WORKS,
        NO_MATCH,
        found(0),
    ),
    Case(
        "search right-to-left text", lambda c: c.opened.search("ضفة النهر", k=2, method="glove"), WORKS, check=found(0)
    ),
    Case("search k=0", lambda c: c.opened.search("bank", k=0), QueryError, "k must be a whole number from 1"),
    Case("search k=-1", lambda c: c.opened.search("bank", k=-1), QueryError, "k must be .* not -1"),
    Case("search a huge k", lambda c: c.opened.search("bank", k=10**12), QueryError, "from 1 to 1,000"),
    Case("search k=2.5", lambda c: c.opened.search("bank", k=2.5), QueryError, "not 2.5"),
    Case("search k=True", lambda c: c.opened.search("bank", k=True), QueryError, "not true"),
    Case("search k as text", lambda c: c.opened.search("bank", k="3"), QueryError, "not '3'"),
    Case(
        "search k above the documents",
        lambda c: c.opened.search("bank", k=1000, method="keywords"),
        WORKS,
        check=found(24),
    ),
    Case(
        "search spelling='no'", lambda c: c.opened.search("bank", spelling="no"), QueryError, "True or False, not 'no'"
    ),
    Case("search an unknown method", lambda c: c.opened.search("bank", method="magic"), QueryError, "one of hybrid"),
    Case("search layers with nan", lambda c: c.opened.search("bank", layers="nan,nan,nan"), QueryError, "finite"),
    Case("search layers with inf", lambda c: c.opened.search("bank", layers="1,inf,0"), QueryError, "finite"),
    Case("search negative layers", lambda c: c.opened.search("bank", layers="-1,-1,-1"), QueryError, "non-negative"),
    Case("search all-zero layers", lambda c: c.opened.search("bank", layers="0,0,0"), QueryError, "not all zero"),
    Case("search 2 layer weights for 3", lambda c: c.opened.search("bank", layers="1,1"), QueryError, "3 layers"),
    Case("search a layer mix name", lambda c: c.opened.search("bank", layers="bottom"), QueryError, "bad layer mix"),
    Case(
        "search layers as a list",
        lambda c: c.opened.search("muddy river bank", k=2, method="elmo", layers=[1, 0, 0]),
        WORKS,
        check=found(2),
    ),
    Case("sentences k=0", lambda c: c.opened.search_sentences("bank", k=0), QueryError, "k must be"),
    Case("sentences by hybrid", lambda c: c.opened.search_sentences("bank", method="hybrid"), QueryError, "'elmo'"),
    Case(
        "sentences by glove, unknown words",
        lambda c: c.opened.search_sentences("qwxzt blorft", method="glove"),
        WORKS,
        "none of the query's words has a GloVe vector",
        found(0),
    ),
    Case("sentences of emoji", lambda c: c.opened.search_sentences(EMOJI, k=4), WORKS, check=found(4)),
    Case("neighbors of an empty sentence", lambda c: c.opened.neighbors("", "bank"), QueryError, "sentence is empty"),
    Case(
        "neighbors of an empty word", lambda c: c.opened.neighbors("the river bank", " "), QueryError, "word is empty"
    ),
    Case(
        "neighbors of a word not in the sentence",
        lambda c: c.opened.neighbors("the river bank", "money"),
        QueryError,
        "'money' is not a word of the sentence; its words are: the | river | bank",
    ),
    Case(
        "neighbors position past the end",
        lambda c: c.opened.neighbors("the river bank", "bank", position=99),
        QueryError,
        "outside the sentence",
    ),
    Case(
        "neighbors position -1",
        lambda c: c.opened.neighbors("the river bank", "bank", position=-1),
        QueryError,
        "position must be a whole number of at least 0, not -1",
    ),
    Case(
        "neighbors position of another word",
        lambda c: c.opened.neighbors("the river bank", "bank", position=1),
        QueryError,
        "token 1 of the sentence is 'river'",
    ),
    Case("neighbors k=0", lambda c: c.opened.neighbors("the bank", "bank", k=0), QueryError, "k must be"),
    Case(
        "neighbors same word, unknown word",
        lambda c: c.opened.neighbors("a qwxzt here", "qwxzt", same_word=True),
        QueryError,
        "does not occur in the indexed documents",
    ),
    Case(
        "neighbors same word, a stopword",
        lambda c: c.opened.neighbors("the bank", "the", same_word=True),
        QueryError,
        "stopwords are not indexed",
    ),
    Case(
        "neighbors of an emoji",
        lambda c: c.opened.neighbors(EMOJI, "🌊", k=3),
        WORKS,
        check=lambda n: len(n.hits) == 3 and n.query_tokens[n.position] == "🌊" and "not in the GloVe" in n.glove_note,
    ),
    Case(
        "neighbors of a word twice",
        lambda c: c.opened.neighbors("bank to bank", "bank", k=2),
        WORKS,
        check=lambda n: n.position == 0 and "occurs 2 times" in n.notices[0],
    ),
    Case(
        "neighbors in a 1 MB sentence",
        lambda c: c.opened.neighbors(BIG_QUERY, "bank", k=2),
        WORKS,
        "first 10,000",
        lambda n: n.position == 1 and len(n.hits) == 2,
    ),
    Case(
        "neighbors with bad layers",
        lambda c: c.opened.neighbors("the bank", "bank", layers="1,2,3,4"),
        QueryError,
        "bad layer mix",
    ),
    Case("senses of an empty word", lambda c: c.opened.senses(""), QueryError, "word is empty"),
    Case("senses of an unknown word", lambda c: c.opened.senses("qwxzt"), QueryError, "does not occur"),
    Case("senses of punctuation", lambda c: c.opened.senses("."), QueryError, "punctuation is not indexed"),
    Case("senses of a stopword", lambda c: c.opened.senses("The"), QueryError, "stopwords are not indexed"),
    Case("senses k=0", lambda c: c.opened.senses("bank", k=0), QueryError, "k must be 'auto' or a whole number"),
    Case("senses k=51", lambda c: c.opened.senses("bank", k=51), QueryError, "from 1 to 50"),
    Case("senses k as text", lambda c: c.opened.senses("bank", k="three"), QueryError, "not 'three'"),
    Case(
        "senses of no occurrences",
        lambda c: c.opened.senses("bank", max_occurrences=0),
        QueryError,
        "max_occurrences must be",
    ),
    Case(
        "senses of one sampled occurrence",
        lambda c: c.opened.senses("bank", max_occurrences=1),
        WORKS,
        check=lambda s: s.n_occurrences == 1 and len(s.clusters) == 1 and "sample of 1" in s.notices[0],
    ),
    Case("senses with NaN layers", lambda c: c.opened.senses("bank", layers="nan,1,1"), QueryError, "finite"),
    Case(
        "senses with more clusters than uses",
        lambda c: c.opened.senses("glaciers", k=5),
        WORKS,
        check=lambda s: s.n_occurrences == 1 and len(s.clusters) == 1,
    ),
    Case("open a missing folder", lambda c: Index.open(c.tmp / "nowhere"), IndexFormatError, "does not exist"),
    Case("open a file", lambda c: Index.open(c.file("notes.txt", "hi")), IndexFormatError, "not an index"),
    Case("open an empty folder", lambda c: Index.open(c.tmp), IndexFormatError, "not an index"),
    Case("open the corpus folder", lambda c: Index.open(c.corpus), IndexFormatError, "not an index"),
    Case(
        "open a folder whose manifest.json is the user's",
        lambda c: Index.open(c.file("manifest.json", '{"mine": 1}').parent),
        IndexFormatError,
        "manifest.json is not an index manifest .*no build wrote.*move it away",
    ),
    Case(
        "open a manifest cut short",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "manifest.json cannot be read \\(.*no build wrote, or a damaged index",
        setup=lambda c: truncate(manifest(c), 50),
    ),
    Case(
        "open a manifest that is a JSON list",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "manifest.json is not an index manifest",
        setup=lambda c: manifest(c).write_text("[]"),
    ),
    Case(
        "open a manifest without shards",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "manifest.json is not an index manifest .*shards",
        setup=lambda c: edit_json(manifest(c), lambda m: without(m, "shards")),
    ),
    Case(
        "open a manifest of a newer format",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "newer",
        setup=lambda c: edit_json(manifest(c), lambda m: {**m, "format_version": 99}),
    ),
    Case(
        "open a manifest of an older format",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "rebuild",
        setup=lambda c: edit_json(manifest(c), lambda m: {**m, "format_version": 1}),
    ),
    Case(
        "open an index missing a shard",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "missing",
        setup=lambda c: shutil.rmtree(shard(c, number=1)),
    ),
    Case(
        "open a truncated parquet",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "docs.parquet .*truncated|docs.parquet.*size",
        setup=lambda c: truncate(shard(c, "docs.parquet")),
    ),
    Case(
        "open a truncated npy",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "token_layers.npy",
        setup=lambda c: truncate(shard(c, "token_layers.npy")),
    ),
    Case(
        "open a truncated faiss",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "faiss",
        setup=lambda c: truncate(faiss_file(c)),
    ),
    Case(
        "open an altered npy",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "sha256",
        setup=lambda c: flip_last_byte(shard(c, "sentence_layers.npy")),
    ),
    Case(
        "open a garbled faiss unverified",
        lambda c: Index.open(c.index, verify=False),
        CorruptIndexError,
        "not a readable FAISS index",
        setup=lambda c: faiss_file(c).write_bytes(b"\0" * faiss_file(c).stat().st_size),
    ),
    Case(
        "open a garbled parquet unverified",
        lambda c: Index.open(c.index, verify=False),
        CorruptIndexError,
        "docs.parquet cannot be read",
        setup=lambda c: shard(c, "docs.parquet").write_bytes(b"\0" * shard(c, "docs.parquet").stat().st_size),
    ),
    Case(
        "open without its trained GloVe",
        lambda c: Index.open(c.index),
        CorruptIndexError,
        "glove.txt is missing",
        setup=lambda c: (c.index / "glove.txt").unlink(),
    ),
    Case(
        "open an interrupted build",
        lambda c: Index.open(c.index),
        IndexFormatError,
        "interrupted",
        setup=lambda c: manifest(c).rename(c.index / "build-state.json"),
    ),
    Case("open with another model", lambda c: Index.open(c.shared_index, model=c.other_model), IndexMismatchError),
    Case("open with a missing model", lambda c: Index.open(c.shared_index, model=c.tmp / "nope"), IndexMismatchError),
    Case("open on an unknown device", lambda c: Index.open(c.shared_index, device="tpu"), ValueError, "device"),
    Case(
        "open with a truncated model",
        lambda c: Index.open(c.shared_index, model=c.model_copy),
        IndexMismatchError,
        "model.safetensors is not a readable safetensors file",
        setup=lambda c: truncate(c.model_copy / "model.safetensors", 200),
    ),
    Case(
        "open an index whose manifest sets efSearch 0",
        lambda c: Index.open(c.index),
        ValueError,
        "efSearch must be a whole number from 1 to 1,048,576, not '0'",
        setup=lambda c: edit_json(manifest(c), lambda m: searched_with(m, "efSearch=0")),
    ),
]


CLI = [
    Cmd("search an empty query", lambda c: q(c, "search", ""), ERROR, "the query is empty"),
    Cmd(
        "search k 0", lambda c: q(c, "search", "bank", "--k", "0"), USAGE, "--k: must be a whole number from 1 to 1,000"
    ),
    Cmd("search k -1", lambda c: q(c, "search", "bank", "--k", "-1"), USAGE, "--k: .*not '-1'"),
    Cmd("search k huge", lambda c: q(c, "search", "bank", "--k", "99999999999"), USAGE, "from 1 to 1,000"),
    Cmd("search k abc", lambda c: q(c, "search", "bank", "--k", "abc"), USAGE, "--k: must be .*, not 'abc'"),
    Cmd(
        "search an unknown method",
        lambda c: q(c, "search", "bank", "--method", "magic"),
        USAGE,
        "--method: invalid choice",
    ),
    Cmd(
        "search nan layers", lambda c: q(c, "search", "bank", "--layers", "nan,nan,nan"), ERROR, "bad layer mix.*finite"
    ),
    Cmd("search layers of wrong count", lambda c: q(c, "search", "bank", "--layers", "1,2"), ERROR, "3 layers"),
    Cmd(
        "search a missing index",
        lambda c: ["indexer", "search", "--index", str(c.tmp / "no"), "bank"],
        ERROR,
        "does not exist",
    ),
    Cmd(
        "search a file as index",
        lambda c: ["indexer", "search", "--index", lines(c, "x"), "bank"],
        ERROR,
        "not an index",
    ),
    Cmd(
        "search a damaged index",
        lambda c: ["indexer", "search", "--index", str(c.index), "bank"],
        ERROR,
        "sentence_layers.npy .*rebuild|sentence_layers.npy",
        setup=lambda c: truncate(shard(c, "sentence_layers.npy")),
    ),
    Cmd(
        "search with another model",
        lambda c: q(c, "search", "bank", "--model", str(c.other_model)),
        ERROR,
        "built with model 'tiny'",
    ),
    Cmd(
        "search with --weights only",
        lambda c: q(c, "search", "bank", "--weights", "w.hdf5"),
        ERROR,
        "--weights needs --model",
    ),
    Cmd(
        "search unknown words as JSON",
        lambda c: q(c, "search", "qwxzt blorft", "--json", "--k", "2", "--method", "keywords"),
        WORKS,
        check=is_json(lambda r: r["results"] == [] and r["notices"] == [NO_MATCH]),
    ),
    Cmd(
        "search a 1 MB query as JSON",
        lambda c: q(c, "search", BIG_QUERY, "--json", "--k", "1", "--method", "keywords"),
        WORKS,
        check=is_json(lambda r: len(r["query"]) == 10_000 and any("first 10,000" in n for n in r["notices"])),
    ),
    Cmd(
        "search emoji and control characters",
        lambda c: q(c, "search", EMOJI + CONTROL + " bank", "--k", "2", "--baseline", "--method", "keywords"),
        WORKS,
        "GloVe baseline",
    ),
    Cmd(
        "search sentences of unknown words with the baseline",
        lambda c: q(c, "search", "qwxzt", "--sentences", "--baseline", "--json", "--k", "3"),
        WORKS,
        check=is_json(lambda r: len(r["results"]) == 3 and r["glove"] == []),
    ),
    Cmd(
        "search unverified",
        lambda c: q(c, "search", "bank", "--no-verify", "--k", "1", "--method", "keywords"),
        WORKS,
        "  1\\. \\[",  # 34 documents: ranked without relevance
    ),
    Cmd(
        "neighbors of a word not there",
        lambda c: q(c, "neighbors", "--sentence", "a b c", "--word", "bank"),
        ERROR,
        "'bank' is not a word",
    ),
    Cmd(
        "neighbors position -1",
        lambda c: q(c, "neighbors", "--sentence", "the bank", "--word", "bank", "--position", "-1"),
        USAGE,
        "--position: must be a whole number of at least 0, not '-1'",
    ),
    Cmd(
        "neighbors position abc",
        lambda c: q(c, "neighbors", "--sentence", "the bank", "--word", "bank", "--position", "x"),
        USAGE,
        "--position: must be a whole number of at least 0, not 'x'",
    ),
    Cmd(
        "neighbors an empty sentence",
        lambda c: q(c, "neighbors", "--sentence", " ", "--word", "bank"),
        ERROR,
        "sentence is empty",
    ),
    Cmd(
        "neighbors of emoji as JSON",
        lambda c: q(c, "neighbors", "--sentence", EMOJI, "--word", "🏦", "--k", "2", "--json"),
        WORKS,
        check=is_json(lambda r: r["position"] == 0 and len(r["hits"]) == 2 and r["glove_note"]),
    ),
    Cmd(
        "senses k abc",
        lambda c: q(c, "senses", "--word", "bank", "--k", "abc"),
        USAGE,
        "--k: must be auto or a whole number from 1 to 50, not 'abc'",
    ),
    Cmd(
        "senses k 0",
        lambda c: q(c, "senses", "--word", "bank", "--k", "0"),
        USAGE,
        "--k: must be auto or a whole number from 1 to 50, not '0'",
    ),
    Cmd(
        "senses k -2",
        lambda c: q(c, "senses", "--word", "bank", "--k", "-2"),
        USAGE,
        "--k: must be auto or .*, not '-2'",
    ),
    Cmd(
        "senses no occurrences",
        lambda c: q(c, "senses", "--word", "bank", "--max-occurrences", "0"),
        USAGE,
        "--max-occurrences: must be a whole number of at least 1, not '0'",
    ),
    Cmd("senses of an unknown word", lambda c: q(c, "senses", "--word", "qwxzt"), ERROR, "'qwxzt' does not occur"),
    Cmd(
        "senses as JSON",
        lambda c: q(c, "senses", "--word", "bank", "--k", "2", "--json"),
        WORKS,
        check=is_json(lambda r: len(r["clusters"]) == 2),
    ),
    Cmd(
        "stats as JSON",
        lambda c: q(c, "stats", "--json"),
        WORKS,
        check=is_json(lambda r: r["counts"]["documents"] == 34),
    ),
    Cmd(
        "stats of a newer format",
        lambda c: ["indexer", "stats", "--index", str(c.index)],
        ERROR,
        "newer",
        setup=lambda c: edit_json(manifest(c), lambda m: {**m, "format_version": 99}),
    ),
    Cmd(
        "stats of a manifest that is not JSON",
        lambda c: ["indexer", "stats", "--index", str(c.index)],
        ERROR,
        "manifest.json cannot be read \\(Expecting.*no build wrote, or a damaged index",
        setup=lambda c: manifest(c).write_text("{oops"),
    ),
    Cmd("stats on an unknown device", lambda c: q(c, "stats", "--device", "tpu"), ERROR, "device"),
    Cmd(
        "search an index whose manifest sets efSearch 0",
        lambda c: ["indexer", "search", "--index", str(c.index), "bank"],
        ERROR,
        "efSearch must be a whole number from 1 to 1,048,576, not '0'",
        setup=lambda c: edit_json(manifest(c), lambda m: searched_with(m, "efSearch=0")),
    ),
    Cmd(
        "search documents holding escape sequences",
        lambda c: ["indexer", "search", "--index", str(c.hostile), "bank", "--k", "2", "--method", "keywords"],
        WORKS,
        check=lambda out: no_escapes(out) and "[h0\\x1b]0;pwned" in out,  # the ids too
    ),
    Cmd(
        "search them as JSON, exactly",
        lambda c: [
            "indexer",
            "search",
            "--index",
            str(c.hostile),
            "bank",
            "--k",
            "1",
            "--method",
            "keywords",
            "--json",
        ],
        WORKS,
        check=lambda out: is_json(lambda r: r["results"][0]["title"].startswith(HOSTILE))(out) and json_exact(out),
    ),
    Cmd(
        "neighbors in them",
        lambda c: ["indexer", "neighbors", "--index", str(c.hostile), "--sentence", "the bank", "--word", "bank"],
        WORKS,
        check=no_escapes,
    ),
    Cmd(
        "senses in them",
        lambda c: ["indexer", "senses", "--index", str(c.hostile), "--word", "bank", "--k", "1"],
        WORKS,
        check=no_escapes,
    ),
    Cmd(
        "a path holding escape sequences in an error",
        lambda c: ["indexer", "stats", "--index", str(c.tmp / f"x{ESCAPES}")],
        ERROR,
        "x\\\\x1b\\]0;pwned\\\\x07.* does not exist",
    ),
    # ---- injection (JSON output: C1 controls and direction overrides escaped, values exact)
    Cmd(
        "neighbors in them as JSON, exactly",
        lambda c: [
            "indexer",
            "neighbors",
            "--index",
            str(c.hostile),
            "--sentence",
            "the bank",
            "--word",
            "bank",
            "--json",
        ],
        WORKS,
        check=lambda out: (
            "\\u202e" in out
            and is_json(lambda r: any(ESCAPES in h["sentence"] + h["title"] + h["doc_id"] for h in r["hits"]))(out)
        ),
    ),
    Cmd(
        "senses in them as JSON, exactly",
        lambda c: ["indexer", "senses", "--index", str(c.hostile), "--word", "bank", "--k", "1", "--json"],
        WORKS,
        check=lambda out: (
            "\\u009b" in out and is_json(lambda r: any(ESCAPES in e for e in r["clusters"][0]["examples"]))(out)
        ),
    ),
    Cmd(
        "stats --docs of them",
        lambda c: ["indexer", "stats", "--index", str(c.hostile), "--docs"],
        WORKS,
        check=no_escapes,
    ),
    # ---- dead ends: a search during a rebuild says when to try again
    Cmd(
        "search an index while a build --overwrite rewrites it",
        lambda c: ["indexer", "search", "--index", str(c.index), "bank"],
        ERROR,
        "an index is being built in .*index right now .*try again when that build has finished",
        setup=lambda c: (manifest(c).rename(c.index / "build-state.json"), lock(c.index)),
    ),
    # ---- a search parameter that would allocate terabytes
    Cmd(
        "search an index whose manifest sets nprobe 10^12",
        lambda c: ["indexer", "search", "--index", str(c.index), "bank"],
        ERROR,
        "nprobe must be a whole number from 1 to 1,048,576, not '1000000000000'",
        setup=lambda c: edit_json(manifest(c), lambda m: searched_with(m, "nprobe=1000000000000")),
    ),
    Cmd(
        "stats of a manifest whose format_version is text",
        lambda c: ["indexer", "stats", "--index", str(c.index)],
        ERROR,
        "manifest.json is not an index manifest this code reads \\(its format_version is '4', not a whole number\\)",
        setup=lambda c: edit_json(manifest(c), lambda m: {**m, "format_version": "4"}),
    ),
    Cmd(
        "search sentences by keywords",  # they are ranked by ELMo: not a silently ignored --method
        lambda c: q(c, "search", "bank", "--sentences", "--method", "keywords"),
        ERROR,
        "sentences are ranked by ELMo cosine, not by method keywords",
    ),
    Cmd(
        "search with an unknown argument holding escapes",  # argparse's usage error quotes it
        lambda c: q(c, "search", "bank", ESCAPES),
        USAGE,
        "unrecognized arguments: .*pwned",
    ),
    Cmd(
        "search with an option only another command takes",  # the usage was the program's, no search option shown
        lambda c: q(c, "search", "bank", "--word", "bank"),
        USAGE,
        "(?<=indexer search: error: )unrecognized arguments: --word bank",  # the command's error, and its usage
    ),
    Cmd(
        "serve on a port in use",
        lambda c: q(c, "serve", "--port", str(c.busy.getsockname()[1])),
        ERROR,
        "cannot listen on 127.0.0.1:\\d+: Address already in use \\(--host, --port\\)",
        setup=lambda c: setattr(c, "busy", socket.create_server(("127.0.0.1", 0))),
        after=lambda c: c.busy.close(),
    ),
    Cmd(
        "serve with an empty token file",
        lambda c: q(c, "serve", "--token-file", str(c.file("token", "\n"))),
        ERROR,
        "token holds no token; put a long random one there",
    ),
    Cmd(
        "serve with a token no header carries as it is",
        lambda c: q(c, "serve", "--token-file", str(c.file("token", "s3cret-tök\n"))),
        ERROR,
        "the token in .*token holds 'ö' \\(U\\+00F6\\), which a Bearer token cannot hold as it is",
    ),
    Cmd(
        "serve with a token file that is not UTF-8",
        lambda c: q(c, "serve", "--token-file", str(c.file("token", b"s3cret-\xff\n"))),
        ERROR,
        "the token in .*token holds .* \\(U\\+FFFD\\)",
    ),
    Cmd(
        "serve with a token file that is not there",
        lambda c: q(c, "serve", "--token-file", str(c.tmp / "no-token")),
        ERROR,
        "no-token",
    ),
]


test_api = api_test(API)


test_cli = cli_test(CLI)
