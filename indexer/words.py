"""Which tokens are words worth indexing: a built-in English stopword list and a punctuation test."""

from __future__ import annotations

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
