"""GloVe baseline (Pennington et al. 2014): co-occurrence counting and training, saving, nearest words.

Reading GloVe text files is shared with the encoder's evaluation code (``encoder.eval.glove.Glove``).
Training: symmetric windowed counts weighted 1/d, weighted least squares with f(x) = min(1, (x/x_max)^alpha),
AdaGrad on minibatches of co-occurrence entries, word + context vectors summed. Seeded and vectorised.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from tqdm.auto import tqdm

from encoder.files import atomic_path, iter_lines, open_text, warn_replaced
from encoder.glove import Glove
from encoder.numbers import SEED, NonFiniteError, Number, check_finite, check_memory
from encoder.options import option
from encoder.text import text_rules
from encoder.words import WordFrequencies
from encoder.words import normalize as normalize_word

from .vectors import normalize

__all__ = ["Glove", "GloveTraining", "GloveVectors", "cooccurrence", "train_glove", "train_glove_on_text", "save_glove"]

NUMBERS = {
    "max_tokens": Number(int, 1),
    "vocab_size": Number(int, 1, 10_000_000),
    "min_count": Number(int, 1),
    "window": Number(int, 1, 1_000),
    "dim": Number(int, 1, 10_000),
    "epochs": Number(int, 1, 1_000_000),
    "lr": Number(float, above=0),
    "x_max": Number(float, above=0, at_most=1e6),  # beyond, every pair weighs about 0 and GloVe learns nothing
    "alpha": Number(float, above=0),
    "batch_size": Number(int, 1, 2**26),
    "max_row_hits": Number(float, above=0),
    "seed": SEED,
}
"""The rule of each number GloVe training takes (``train_glove``, ``train_glove_on_text``, ``indexer glove`` and a
build's ``--glove-*`` options)."""
X_MAX = 10.0
"""Where the weight f(x) = min(1, (x/x_max)^0.75) reaches 1. The paper's 100 suits its billions of tokens; on
one 8M-token corpus-en shard glove.c itself scored WordSim-353 33.4 / STS-B test 18.2 with 10 against 28.2 /
9.1 with 100 (the reference's demo script also uses 10 for its 17M-token text8)."""


@dataclass(frozen=True)
class GloveTraining:
    """How GloVe is trained on text, one set of defaults for every way of asking: ``indexer glove``'s options are
    made from these fields, ``build --glove train``'s ``--glove-*`` options take their defaults and rules from them
    (``Settings.glove_training``), and ``train_glove_on_text`` takes one. The defaults suit the corpora this project
    meets, a demo collection to a few million tokens: 50 dimensions, as Stanford's baseline has."""

    vocab_size: int = field(
        default=200_000, metadata=option("most frequent words kept (default: %(default)s)", rule=NUMBERS["vocab_size"])
    )
    min_count: int = field(
        default=2,
        metadata=option("words seen fewer times are left out (default: %(default)s)", rule=NUMBERS["min_count"]),
    )
    window: int = field(
        default=10, metadata=option("co-occurrence window in words (default: %(default)s)", rule=NUMBERS["window"])
    )
    dim: int = field(default=50, metadata=option("vector size (default: %(default)s)", rule=NUMBERS["dim"]))
    epochs: int = field(default=25, metadata=option("AdaGrad epochs (default: %(default)s)", rule=NUMBERS["epochs"]))
    x_max: float = field(
        default=X_MAX,
        metadata=option(
            "co-occurrence count at which a pair's weight reaches 1 (default: %(default)s, for corpora of millions "
            "of tokens; the GloVe paper's 100 is for billions)",
            rule=NUMBERS["x_max"],
        ),
    )
    seed: int = field(default=0, metadata=option("random seed (default: %(default)s)", rule=SEED))

    def __post_init__(self) -> None:
        for name in ("vocab_size", "min_count", "window", "dim", "epochs", "x_max", "seed"):
            NUMBERS[name].check(name, getattr(self, name))


def cooccurrence(sentences: Iterable[np.ndarray], vocab_size: int, window: int = 10) -> sp.csr_matrix:
    """Symmetric counts X[i, j] = sum over pairs at distance d <= window within a sentence of 1/d.

    ``sentences`` yields arrays of word ids (out-of-vocabulary words already removed); they are
    processed in chunks so memory stays bounded by the chunk and the sparse matrix.
    """
    total = sp.csr_matrix((vocab_size, vocab_size), dtype=np.float64)
    batch: list[np.ndarray] = []

    def flush() -> sp.csr_matrix:
        ids = np.concatenate(batch)
        sentence = np.repeat(np.arange(len(batch)), [len(s) for s in batch])
        rows, cols, vals = [], [], []
        for d in range(1, window + 1):
            same = sentence[d:] == sentence[:-d]
            left, right = ids[:-d][same], ids[d:][same]
            rows += [left, right]
            cols += [right, left]
            vals.append(np.full(2 * len(left), 1.0 / d))
        batch.clear()
        return sp.coo_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(vocab_size, vocab_size)
        ).tocsr()

    n_tokens = 0
    for ids in sentences:
        batch.append(np.asarray(ids, dtype=np.int64))
        n_tokens += len(ids)
        if n_tokens >= 1_000_000:
            total = total + flush()
            n_tokens = 0
    if batch:
        total = total + flush()
    return total


def train_glove(
    counts: sp.spmatrix,
    words: Sequence[str],
    dim: int = GloveTraining.dim,
    epochs: int = GloveTraining.epochs,
    lr: float = 0.05,
    x_max: float = GloveTraining.x_max,
    alpha: float = 0.75,
    batch_size: int = 32_768,
    seed: int = 0,
    progress: bool = True,
    max_row_hits: float = 8.0,
) -> Glove:
    """Fit GloVe to a co-occurrence matrix; returns word + context vectors for ``words``.

    AdaGrad as in the reference glove.c: the squared-gradient sums start at 1 and accumulate the squares of
    ``lr`` times the gradient, so a step is ``g / sqrt(1 / lr**2 + sum g**2)`` (about ``lr * g`` at first,
    ``g / sqrt(sum g**2)`` later, not ``lr`` times that). The entries of one minibatch are applied together
    from the state before it, like the reference's lock-free threads (8 by default); a row hit k times in one
    batch takes k stale steps at once, which makes frequent words (``the``, ``,``) overshoot and blow up.
    The batch is therefore capped so that the busiest row expects at most ``max_row_hits`` hits per batch.
    """
    for name, value in dict(
        dim=dim,
        epochs=epochs,
        lr=lr,
        x_max=x_max,
        alpha=alpha,
        batch_size=batch_size,
        seed=seed,
        max_row_hits=max_row_hits,
    ).items():
        NUMBERS[name].check(name, value)
    V = len(words)
    check_memory(4 * 4 * V * (dim + 1), f"GloVe of {V:,} words x {dim} dimensions", "lower the dimension or vocabulary")
    counts = counts.tocoo()
    check_finite("the co-occurrence counts", counts.data)
    generator = torch.Generator().manual_seed(seed)
    i = torch.from_numpy(counts.row.astype(np.int64))
    j = torch.from_numpy(counts.col.astype(np.int64))
    x = torch.from_numpy(counts.data.astype(np.float32))
    log_x, weight = torch.log(x), torch.clamp((x / x_max) ** alpha, max=1.0)
    busiest = max(int(np.bincount(counts.row, minlength=1).max(initial=0)), 1)
    batch_size = max(1, min(batch_size, int(max_row_hits * len(x) / busiest)))
    # One table per side, the bias as a last column: [W | b_w] and [C | b_c], both initialised (rand - 0.5) / dim.
    word, context = [(torch.rand(V, dim + 1, generator=generator) - 0.5) / dim for _ in range(2)]
    word_sq, context_sq = torch.ones_like(word), torch.ones_like(context)
    bar = tqdm(range(epochs), desc="GloVe", unit="epoch", disable=not progress)
    for _ in bar:
        loss = 0.0
        for batch in torch.randperm(len(x), generator=generator).split(batch_size):
            bi, bj = i[batch], j[batch]
            w, c = word[bi], context[bj]  # copies (advanced indexing)
            diff = (w[:, :dim] * c[:, :dim]).sum(1) + w[:, dim] + c[:, dim] - log_x[batch]
            fdiff = weight[batch] * diff
            loss += 0.5 * float((fdiff * diff).sum())
            # d/dw = fdiff * c, d/db_w = fdiff (and symmetrically): set the bias columns to 1 to get both at once.
            w[:, dim], c[:, dim] = 1.0, 1.0
            grad_w, grad_c = (lr * fdiff)[:, None] * c, (lr * fdiff)[:, None] * w
            word.index_add_(0, bi, grad_w / word_sq[bi].sqrt_(), alpha=-1.0)
            context.index_add_(0, bj, grad_c / context_sq[bj].sqrt_(), alpha=-1.0)
            word_sq.index_add_(0, bi, grad_w.square_())
            context_sq.index_add_(0, bj, grad_c.square_())
        bar.set_postfix(loss=f"{loss / max(len(x), 1):.4f}")
        if not math.isfinite(loss):
            raise NonFiniteError(
                f"GloVe training diverged (its loss is {loss}); lower the learning rate or raise x_max, nothing was written"
            )
    return Glove(list(words), (word[:, :dim] + context[:, :dim]).numpy())


def train_glove_on_text(
    paths: Sequence[str | Path],
    max_tokens: int,
    training: GloveTraining = GloveTraining(),
    progress: bool = True,
    language: str = "en",
) -> Glove:
    """GloVe on plain text files (.txt/.gz/.xz, folders): the first ``max_tokens`` tokens, split and
    tokenized by ``language``'s rules as everywhere else in the project (``encoder.text``), lower-cased, the
    ``training.vocab_size`` most frequent words seen ``training.min_count`` times or more."""
    NUMBERS["max_tokens"].check("max_tokens", max_tokens)
    vocab_size, min_count = training.vocab_size, training.min_count
    text = text_rules(language)
    sentences: list[list[str]] = []
    n_tokens = 0
    bar = tqdm(total=max_tokens, unit="tok", desc="reading", disable=not progress)
    replaced: Counter[Path] = Counter()
    for line in iter_lines(paths, replaced):
        for sentence in text.split_and_tokenize(line):
            tokens = [normalize_word(t) for t in sentence.tokens]
            sentences.append(tokens)
            n_tokens += len(tokens)
            bar.update(len(tokens))
        if n_tokens >= max_tokens:
            break
    bar.close()
    for path, count in replaced.items():  # as a build warns: the text read is not the text in the file
        warn_replaced(path, count)
    counts = Counter(t for s in sentences for t in s)
    words = [w for w, n in counts.most_common(vocab_size) if n >= min_count]
    if not words:  # GloVe of no words: an empty file, written as if trained
        said = "no text" if not counts else f"no word {min_count:,} times or more (min_count)"
        raise ValueError(
            f"{', '.join(map(str, paths))} {'holds' if len(paths) == 1 else 'hold'} {said}: nothing to train GloVe on; give more text"
            + (" or lower --min-count" if counts else "")
        )
    ids = {w: i for i, w in enumerate(words)}
    id_arrays = (np.array([ids[t] for t in s if t in ids], dtype=np.int64) for s in sentences)
    counts = cooccurrence(id_arrays, len(words), training.window)
    return train_glove(
        counts, words, training.dim, training.epochs, x_max=training.x_max, seed=training.seed, progress=progress
    )


def save_glove(path: str | Path, glove: Glove) -> None:
    """Write the standard GloVe text format ("word v1 v2 ..."), atomically; xz-compressed for a .xz path."""
    words = sorted(glove.index, key=glove.index.get)
    check_finite(f"the GloVe vectors to write to {path}", glove.matrix)
    with atomic_path(path) as tmp, open_text(tmp, "wt", suffix=Path(path).suffix) as f:
        for word, row in zip(words, glove.matrix):
            f.write(word + " " + " ".join(f"{v:.6f}" for v in row) + "\n")


class GloveVectors:
    """A GloVe table as search uses it: normalised sentence means and nearest words by cosine."""

    def __init__(self, glove: Glove):
        self.glove = glove
        self.words = sorted(glove.index, key=glove.index.get)
        self._unit: np.ndarray | None = None

    @classmethod
    def load(cls, path: str | Path) -> GloveVectors:
        return cls(Glove.load(path))

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        return self.glove.dim

    def sentence_vector(self, tokens: Iterable[str]) -> np.ndarray:
        """Normalised mean of the known words' vectors (zero when none is known)."""
        return normalize(self.glove.mean(tokens).astype(np.float32))

    def pooled(self, tokens: Sequence[str], frequencies: WordFrequencies) -> np.ndarray:
        """Normalised average of the known words' vectors weighted by smooth inverse frequency (zero if none)."""
        pairs = [(v, frequencies.weight(t)) for t in tokens if (v := self.glove.vector(normalize_word(t))) is not None]
        pairs = [(v, w) for v, w in pairs if w > 0]
        if not pairs:
            return np.zeros(self.dim, np.float32)
        vectors, weights = zip(*pairs)
        return normalize(np.asarray(weights, np.float32) @ np.asarray(vectors, np.float32))

    def nearest(self, word: str, k: int = 10) -> list[tuple[str, float]] | None:
        """The k other words with the most similar vectors (cosine), or None if ``word`` has no vector."""
        vector = self.glove.vector(word)
        if vector is None:
            return None
        if self._unit is None:
            self._unit = normalize(self.glove.matrix)
        scores = self._unit @ normalize(vector)
        hits = [(self.words[r], float(scores[r])) for r in np.argsort(-scores)[: k + 1]]
        return [(w, s) for w, s in hits if w not in (word, word.lower())][:k]
