"""GloVe training on a planted corpus: topics recovered, function words not dominating, as the reference does.

The corpus has three topics of twelve words and six "function words" that make up half of every sentence
and co-occur with everything; one content word in ten comes from another topic, so across-topic counts are
small but not zero (GloVe ignores zero counts, so only observed counts can pull topics apart).
"""

from __future__ import annotations

import numpy as np
import pytest

from indexer.glove import X_MAX, cooccurrence, train_glove

FUNCTION, TOPICS, PER_TOPIC = 6, 3, 12
WORDS = [f"f{i}" for i in range(FUNCTION)] + [f"t{t}w{i}" for t in range(TOPICS) for i in range(PER_TOPIC)]
GROUP = np.arange(TOPICS * PER_TOPIC) // PER_TOPIC  # topic of each content word
DIM, EPOCHS = 16, 25


def planted_sentences(n: int = 3000, length: int = 12, mix: float = 0.1, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    sentences = []
    for s in range(n):
        topic = np.where(rng.random(length) < mix, rng.integers(0, TOPICS, size=length), s % TOPICS)
        content = FUNCTION + topic * PER_TOPIC + rng.integers(0, PER_TOPIC, size=length)
        function = rng.integers(0, FUNCTION, size=length)
        sentences.append(np.where(rng.random(length) < 0.5, function, content))
    return sentences


def reference_glove(counts, dim: int, epochs: int, lr: float = 0.05, x_max: float = X_MAX, alpha: float = 0.75):
    """Sequential GloVe as glove.c computes it (one thread): one entry at a time, AdaGrad sums from 1 that
    accumulate (lr * gradient) squared; word + context vectors."""
    counts = counts.tocoo()
    V = counts.shape[0]
    rng = np.random.default_rng(0)
    table = (rng.random((2 * V, dim + 1)) - 0.5) / dim  # words then contexts, bias last
    squares = np.ones_like(table)
    for _ in range(epochs):
        for k in rng.permutation(counts.nnz):
            a, b, x = counts.row[k], counts.col[k] + V, counts.data[k]
            diff = table[a, :dim] @ table[b, :dim] + table[a, dim] + table[b, dim] - np.log(x)
            step = lr * min(1.0, (x / x_max) ** alpha) * diff
            grad_a = step * np.append(table[b, :dim], 1.0)
            grad_b = step * np.append(table[a, :dim], 1.0)
            table[a] -= grad_a / np.sqrt(squares[a])
            table[b] -= grad_b / np.sqrt(squares[b])
            squares[a] += grad_a**2
            squares[b] += grad_b**2
    return table[:V, :dim] + table[V:, :dim]


@pytest.fixture(scope="module")
def counts():
    return cooccurrence(planted_sentences(), len(WORDS), window=5)


@pytest.fixture(scope="module")
def trained(counts) -> np.ndarray:
    return np.asarray(train_glove(counts, WORDS, dim=DIM, epochs=EPOCHS, progress=False).matrix)


def content_cosines(matrix: np.ndarray) -> np.ndarray:
    content = matrix[FUNCTION:]
    unit = content / np.linalg.norm(content, axis=1, keepdims=True)
    return unit @ unit.T


def test_planted_topics_are_recovered(trained):
    """Same-topic words clearly closer than different-topic ones, and every word's nearest neighbour shares
    its topic (a trainer that collapses the vectors makes them all parallel: cosine 0.999 within and across topics)."""
    assert np.isfinite(trained).all()
    similarity = content_cosines(trained)
    same = np.equal.outer(GROUP, GROUP)
    within, across = similarity[same & ~np.eye(len(GROUP), dtype=bool)].mean(), similarity[~same].mean()
    assert within > 0.8 and across < 0.3 and within - across > 0.5, (within, across)
    np.fill_diagonal(similarity, -np.inf)
    assert (GROUP[similarity.argmax(1)] == GROUP).all()


def test_function_words_do_not_dominate(trained):
    """Words that co-occur with everything carry little topical direction: their vectors must not be longer
    than the content words' (a trainer that weighs co-occurrences wrongly makes them about twice as long)."""
    norms = np.linalg.norm(trained, axis=1)
    assert norms[:FUNCTION].mean() < norms[FUNCTION:].mean(), (norms[:FUNCTION].mean(), norms[FUNCTION:].mean())


def test_matches_sequential_reference(counts, trained):
    """The vectorised minibatch trainer finds the same geometry as a one-entry-at-a-time reference."""
    reference = reference_glove(counts, DIM, EPOCHS)
    ours, theirs = content_cosines(trained), content_cosines(reference)
    upper = np.triu_indices(len(GROUP), 1)
    assert np.corrcoef(ours[upper], theirs[upper])[0, 1] > 0.95
    ratio = np.linalg.norm(trained, axis=1)[FUNCTION:].mean() / np.linalg.norm(reference, axis=1)[FUNCTION:].mean()
    assert 0.7 < ratio < 1.4, ratio


def test_one_batch_does_not_blow_up(counts):
    """A batch larger than the whole matrix is capped, so frequent rows are not given dozens of stale steps."""
    glove = train_glove(counts, WORDS, dim=DIM, epochs=EPOCHS, batch_size=10**6, progress=False)
    norms = np.linalg.norm(glove.matrix, axis=1)
    assert np.isfinite(norms).all() and norms.max() < 10


def test_every_way_of_training_glove_has_one_set_of_defaults():
    """``indexer glove``, ``build --glove train`` (its ``--glove-*`` settings) and the Python API train with the same
    defaults: those of ``GloveTraining``."""
    from indexer import Settings
    from indexer.__main__ import make_parser
    from indexer.glove import GloveTraining

    args = make_parser().parse_args(["glove", "--corpus", "text.txt", "--out", "glove.txt"])
    command = GloveTraining(**{f: getattr(args, f) for f in GloveTraining.__dataclass_fields__})
    assert command == GloveTraining() == Settings().glove_training()
    build = make_parser().parse_args(["build", "--corpus", "c", "--out", "o"])
    assert (build.glove_dim, build.glove_epochs, build.glove_window, build.glove_min_count) == (
        GloveTraining.dim,
        GloveTraining.epochs,
        GloveTraining.window,
        GloveTraining.min_count,
    )
