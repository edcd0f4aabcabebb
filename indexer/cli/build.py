"""``python -m indexer build``: an index from a corpus (re-run to resume a killed build)."""

from __future__ import annotations

import argparse
from pathlib import Path

from encoder.mix import POOLINGS
from encoder.numbers import SEED

from ..build import SHARD_TOKENS, Settings, build_index
from ..manifest import SETTING_NUMBERS
from .common import (
    RESUMABLE,
    add_model_options,
    add_ray_options,
    add_reader_options,
    model_spec,
    ray_options,
    reader_options,
)
from .stats import show_stats

DEFAULTS = Settings()


def run(args: argparse.Namespace) -> dict:
    """Build the index; its stats."""
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
        model=model_spec(args) or "default",
        settings=settings,
        device=args.device,
        progress=not args.quiet,
        overwrite=args.overwrite,
        **ray_options(args),
        **reader_options(args),
    )
    return index.stats()


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``build`` sub-command."""
    build = commands.add_parser(
        "build",
        help="build an index from a corpus (re-run to resume a killed build)",
        description="Build an index: split and tokenize the documents, encode them with ELMo in "
        "shards (a killed build resumes from the completed ones when re-run), train "
        "or load GloVe, and write FAISS indexes and metadata.",
    )
    add_reader_options(build)
    build.add_argument("--out", required=True, type=Path, help="the index directory to create")
    add_model_options(build, "default")
    _vector_options(build)
    _glove_and_word_options(build)
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
    add_ray_options(build)
    build.set_defaults(run=run, show=show_stats, json=False, interrupted=RESUMABLE)


def _vector_options(build: argparse.ArgumentParser) -> None:
    """How the vectors are mixed, pooled and indexed (FAISS), and whether exact token vectors are kept."""
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


def _glove_and_word_options(build: argparse.ArgumentParser) -> None:
    """The GloVe baseline (and its training), and which words get token vectors."""
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
