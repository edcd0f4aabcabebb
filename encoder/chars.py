"""Character ids: the 262-symbol UTF-8 byte scheme of the reference ELMo.

Raw symbols 0-255 are the token's UTF-8 bytes, 256/257 begin/end of sentence, 258/259 begin/end of word
and 260 the pad character inside a token. Every id fed to the model is raw + 1, so id 0 means
"no token here" (a padded position) and gets a zero embedding.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

MAX_CHARS = 50  # characters per token, begin/end-of-word markers included
N_CHARACTERS = 262  # 256 bytes + 5 markers + the "no token" id 0

BOS_CHAR, EOS_CHAR, BOW_CHAR, EOW_CHAR, PAD_CHAR = 256, 257, 258, 259, 260
BOS_TOKEN, EOS_TOKEN = "<S>", "</S>"


def _framed(symbols: list[int]) -> np.ndarray:
    ids = np.full(MAX_CHARS, PAD_CHAR + 1, dtype=np.int64)
    framed = [BOW_CHAR, *symbols, EOW_CHAR]
    ids[: len(framed)] = np.asarray(framed) + 1
    return ids


@lru_cache(maxsize=1 << 16)
def _word_ids_cached(token: str) -> bytes:
    return word_to_ids(token).tobytes()


def word_to_ids(token: str) -> np.ndarray:
    """The 50 model ids of one token; tokens over 48 UTF-8 bytes are cut (a multi-byte char may be split)."""
    if token == BOS_TOKEN:
        return _framed([BOS_CHAR])
    if token == EOS_TOKEN:
        return _framed([EOS_CHAR])
    data = token.encode("utf-8", errors="ignore")[: MAX_CHARS - 2]
    return _framed(list(data))


def batch_to_ids(sentences: list[list[str]]) -> np.ndarray:
    """(B, T, 50) int64 ids of tokenized sentences, right-padded with all-zero rows; no BOS/EOS added."""
    longest = max((len(s) for s in sentences), default=0)
    ids = np.zeros((len(sentences), longest, MAX_CHARS), dtype=np.int64)
    for b, sentence in enumerate(sentences):
        for t, token in enumerate(sentence):
            ids[b, t] = np.frombuffer(_word_ids_cached(token), dtype=np.int64)
    return ids
