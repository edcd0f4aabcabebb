"""Which tokens are words worth indexing (a built-in English stopword list, a punctuation test), and how much
each word weighs when vectors are pooled."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

# A compact English stopword list (function words only), so no nltk data has to be downloaded.
STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more
most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same
shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
themselves then there there's these they they'd they'll they're they've this those through to too under
until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
while who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself
yourselves 's 're 've 'd 'll 'm n't also may might must shall will just
""".split()
)


def normalize(token: str) -> str:
    """The form used for counting, GloVe lookup, BM25 and same-word matching."""
    return token.lower()


def is_word(token: str) -> bool:
    """A token with at least one letter or digit (so not punctuation)."""
    return any(ch.isalnum() for ch in token)


def is_content_word(token: str, skip_stopwords: bool = True) -> bool:
    """Indexed in the token index: a word, and not a stopword unless stopwords are kept."""
    return is_word(token) and not (skip_stopwords and normalize(token) in STOPWORDS)


SIF_A = 1e-3
"""Smooth inverse frequency constant a (Arora et al. 2017): a word of probability p weighs a / (a + p)."""


class WordFrequencies:
    """Word counts of an index's text, and the smooth-inverse-frequency weights that pool vectors by them.

    Frequent words ("the", "of") weigh little and rare ones about 1, so a sentence's pooled vector is
    mostly its content words; punctuation weighs 0. Words the counts have not seen weigh 1.
    """

    def __init__(self, counts: Mapping[str, int]):
        self.counts = counts
        self.total = max(sum(counts.values()), 1)

    def weight(self, token: str) -> float:
        if not is_word(token):
            return 0.0
        return SIF_A / (SIF_A + self.counts.get(normalize(token), 0) / self.total)

    def weights(self, tokens: Sequence[str]) -> np.ndarray:
        """One weight per token; all ones when no token is a word (so pooling stays defined)."""
        w = np.array([self.weight(t) for t in tokens], np.float32)
        return w if w.sum() > 0 else np.ones(len(tokens), np.float32)
