"""How an index is built (``Settings``): each field's default, its rule and its ``build`` option, declared once.

A field's ``metadata`` (made by ``encoder.options.option``) holds the help of its command-line option, the rule of a
numeric field (``encoder.numbers.Number``: checked by ``Settings.check`` and by the option) and how the option is
spelled when it is not the field's name (a flag that turns a default off). ``indexer.cli.build`` makes the ``build``
options from these fields and the ``Settings`` from the parsed options (``encoder.options``), so adding a setting is
one field here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from encoder.glove import BASELINES, Glove
from encoder.mix import POOLINGS
from encoder.numbers import SEED, Number
from encoder.options import option, rules

from .factory import check_search_params
from .glove import GloveTraining

AUTO = "auto"  # Settings.token_index_factory: chosen by size (see factory.token_factory)
SHARD_TOKENS = 50_000  # tokens per shard: the most work a killed build can lose
TRAIN_GLOVE = "train"  # Settings.glove: train GloVe on the indexed corpus (stored in the index)
GLOVE_NAMES = (AUTO, *BASELINES.values(), TRAIN_GLOVE)  # Settings.glove values that name vectors, not a file


def _glove_training(name: str, with_option: bool = True) -> Any:
    """The ``Settings`` field of ``--glove train``'s ``name``: the default, rule and help of ``GloveTraining``'s."""
    spec = next(f for f in fields(GloveTraining) if f.name == name)
    help = f"GloVe training: {spec.metadata['help']}" if with_option else None
    return field(default=spec.default, metadata=option(help, rule=spec.metadata["rule"]))


@dataclass(frozen=True)
class Settings:
    """How an index is built; fixed for its lifetime (``add`` reuses them) and compared on resume."""

    layers: str = field(
        default="average",
        metadata=option(
            "layer mix of the token index (word in context, senses): token, top, average or weights like "
            "0.2,0.3,0.5 (default: %(default)s)"
        ),
    )
    search_layers: str = field(  # chosen on bench/queries_en.jsonl (bench.search_quality)
        default="token",
        metadata=option(
            "layer mix of passage search (default: %(default)s, the best on bench/queries_en.jsonl; any other mix "
            "can still be asked for at query time, searched exactly)"
        ),
    )
    pooling: str = field(
        default="sif",
        metadata=option(
            "how token vectors become a passage vector, per layer: sif (weighted by smooth inverse word frequency), "
            "mean or max (default: %(default)s)",
            choices=POOLINGS,
        ),
    )
    index_factory: str | None = field(  # None: chosen by size (see factory.choose_factory)
        default=None,
        metadata=option(
            "FAISS index_factory string for all indexes, e.g. Flat, IVF1024,Flat, HNSW32 (default: Flat up to 100k "
            "vectors, IVF beyond)"
        ),
    )
    search_params: str | None = field(  # None: tuned for recall@10 >= 0.95 (see factory.tune_search_params)
        default=None,
        metadata=option(
            "FAISS search parameters, e.g. nprobe=32 or efSearch=128 (default: chosen for recall@10 of about 0.95)"
        ),
    )
    token_index_factory: str = field(
        default=AUTO,
        metadata=option(
            "FAISS index_factory string for the token index (word in context, senses), e.g. IVF1024,PQ32np or "
            "OPQ32,IVF1024,PQ32np (product quantisation: a few dozen bytes a vector; np: no polysemous training, "
            "which is slow); default %(default)s: --index-factory if given, else Flat up to 100k vectors, IVF "
            "beyond, IVF-PQ once float32 vectors would pass 1 GiB",
            metavar="FACTORY",
        ),
    )
    keep_exact_tokens: bool = field(
        default=True,
        metadata=option(
            "do not keep the exact per-layer token vectors: smaller on disk, but a compressed token index then "
            "answers alone (approximate neighbours and senses, no other layer mix); by default they are kept and a "
            "compressed index's candidates are re-ranked with them",
            flag="--no-exact-tokens",
        ),
    )
    skip_stopwords: bool = field(
        default=True, metadata=option("give stopwords token vectors too", flag="--keep-stopwords")
    )
    min_freq: int = field(
        default=1,
        metadata=option("words seen fewer times get no token vectors (default: %(default)s)", rule=Number(int, 1)),
    )
    glove: str = field(  # an index records what "auto" chose; baselines and files are referred to, not copied
        default=AUTO,
        metadata=option(
            "the GloVe baseline: 'auto' (the default: the baseline of the model's language, stanford for English, "
            "korean for Korean), 'stanford' (Stanford's glove.6B 50-d vectors), 'korean' (ours, trained on Korean "
            "Wikipedia, shipped with the Korean model), a GloVe text file (all referred to by the index, not "
            "copied), or 'train' (GloVe trained on the corpus, kept in the index)"
        ),
    )
    glove_dim: int = _glove_training("dim")
    glove_epochs: int = _glove_training("epochs")
    glove_window: int = _glove_training("window")
    glove_min_count: int = _glove_training("min_count")
    glove_max_vocab: int = _glove_training("vocab_size", with_option=False)
    shard_tokens: int = field(
        default=SHARD_TOKENS,
        metadata=option("tokens per shard, the unit of resuming (default: %(default)s)", rule=Number(int, 1, 10**9)),
    )
    seed: int = field(default=0, metadata=option("seed for sampling and GloVe (default: %(default)s)", rule=SEED))

    def glove_training(self) -> GloveTraining:
        """How ``--glove train`` trains GloVe on the indexed corpus (``GloveTraining``, seeded by ``seed``)."""
        return GloveTraining(
            vocab_size=self.glove_max_vocab,
            min_count=self.glove_min_count,
            window=self.glove_window,
            dim=self.glove_dim,
            epochs=self.glove_epochs,
            seed=self.seed,
        )

    def check(self) -> None:
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, not {self.pooling!r}")
        for name, rule in rules(Settings).items():
            rule.check(name, getattr(self, name))
        if self.search_params:
            check_search_params(self.search_params)
        if not isinstance(self.token_index_factory, str) or not self.token_index_factory.strip():
            raise ValueError(f"token_index_factory must be {AUTO!r} or a FAISS index_factory string")
        if self.glove not in GLOVE_NAMES:
            if not Path(self.glove).is_file():
                raise FileNotFoundError(
                    f"GloVe file {self.glove} does not exist (or say one of {', '.join(map(repr, GLOVE_NAMES))})"
                )
            Glove.load(self.glove, max_lines=100)  # a file that is not GloVe fails now, not after the encoding
