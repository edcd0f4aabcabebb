"""Training data for the biLM: the softmax vocabulary and the batches of both LMs, built as bilm-tf builds them.

The biLM's input is always characters, so the vocabulary only names the softmax classes: ``<S>``, ``</S>``,
``<UNK>``, then words by descending frequency; other words are predicted as ``<UNK>``.

Text is tokenized once, before training (``encoder/corpus.py``): every file becomes an array of word-type ids
holding its sentences framed as ``<S> w... </S>`` (``TokenizedCorpus``); types are shared by all files, and each
type's character ids and softmax class are looked up once.

A *pass* concatenates the files in an order shuffled from the seed, and cuts the stream into one contiguous
segment per batch row (per rank: rank r takes rows r*B ... r*B+B-1), from a pass-dependent offset so that
passes cut different windows. Each row reads its segment front to back, ``unroll`` tokens a window, and the
LSTM state is carried from one window to the next, as bilm-tf's row streams do. Inputs and targets of a
sentence are s[:-1] and s[1:], so ``</S>`` is only a target and ``<S>`` only an input.

The backward LM reads the same pass reversed word by word (``</S> w_n ... w_1 <S>``, documents in reverse
order) with its own rows, so its carried state comes from the text that follows and at any step it sees other
text than the forward LM. A position is (pass, its files, window): plain JSON, so a checkpoint resumes the
data exactly. Files that appear in the corpus folders while a run goes on (``watch``) join at the next pass.
"""

from __future__ import annotations

import hashlib
import queue
import random
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from .chars import BOS_TOKEN, EOS_TOKEN, MAX_CHARS, batch_to_ids, word_to_ids
from .files import atomic_path
from .text import TextRules

if TYPE_CHECKING:
    from .corpus import TokenizedCorpus

UNK_TOKEN = "<UNK>"
SPECIALS = (BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)
BOS_ID, EOS_ID, UNK_ID = 0, 1, 2
VOCAB_FILE = "vocab.txt"


class Vocabulary:
    """Softmax classes: ``<S>``, ``</S>``, ``<UNK>``, then words by descending count (ties alphabetical)."""

    def __init__(self, words: list[str]):
        if tuple(words[:3]) != SPECIALS:
            raise ValueError(f"a vocabulary starts with {', '.join(SPECIALS)}; got {words[:3]}")
        self.words = words
        self.index = {w: i for i, w in enumerate(words)}
        if len(self.index) < len(words):
            twice = next(w for i, w in enumerate(words) if self.index[w] != i)
            raise ValueError(f"a vocabulary lists each word once; {twice!r} is listed more than once")

    @classmethod
    def from_counts(cls, counts: Counter, size: int) -> Vocabulary:
        """The ``size`` classes (specials included) covering the most frequent words of ``counts``."""
        ranked = sorted((w for w in counts if w not in SPECIALS), key=lambda w: (-counts[w], w))
        return cls([*SPECIALS, *ranked[: max(size - len(SPECIALS), 0)]])

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        """A vocabulary file (one word a line, the specials first); one that is not is a ``ValueError`` naming it."""
        try:
            with open(path, encoding="utf-8") as f:
                return cls([line.rstrip("\n") for line in f])
        except (UnicodeDecodeError, ValueError) as error:
            raise ValueError(f"{path} is not a vocabulary of ours ({error}); restore it") from None

    def hash(self) -> str:
        """SHA-256 of the words in order: what an LM head records of the vocabulary it was trained with."""
        return hashlib.sha256("\n".join(self.words).encode("utf-8")).hexdigest()

    def save(self, path: str | Path) -> None:
        with atomic_path(path) as tmp:
            Path(tmp).write_text("".join(w + "\n" for w in self.words), encoding="utf-8")

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, tokens: Iterable[str]) -> list[int]:
        """Class ids of tokens; unknown words -> ``<UNK>``."""
        index = self.index
        return [index.get(t, UNK_ID) for t in tokens]


def paragraph_sentences(paragraph: str, text: TextRules) -> list[list[str]]:
    """The tokens of each sentence of one paragraph line, by the model's language rules ``text``."""
    return [s.tokens for s in text.split_and_tokenize(paragraph) if s.tokens]


def paragraph_pairs(sentences: list[list[str]], backward: bool = False) -> tuple[list[str], list[str]]:
    """(inputs, targets) of one paragraph (its sentences' tokens): each sentence framed, inputs = s[:-1],
    targets = s[1:]; ``backward``: the paragraph reversed word by word."""
    framed = [[BOS_TOKEN, *s, EOS_TOKEN] for s in sentences if s]
    if backward:
        framed = [s[::-1] for s in reversed(framed)]
    inputs, targets = [], []
    for s in framed:
        inputs.extend(s[:-1])
        targets.extend(s[1:])
    return inputs, targets


@dataclass
class Batch:
    """One training window of both directions (axis 0: forward, backward).

    ``char_ids`` (U, 50) holds each distinct word of the window once; ``token_index`` (2, B, T) points into
    it, so the char CNN runs once per word type rather than once per position (same result, same gradients).
    ``cluster_rows`` (training windows): the positions of the flattened ``targets`` whose class lies in each tail
    cluster of the adaptive softmax, concatenated, ``cluster_sizes`` long each; found on the host with the
    window, so that the softmax need not ask the GPU (see ``LMHead.forward``).
    """

    char_ids: torch.Tensor
    token_index: torch.Tensor
    targets: torch.Tensor
    cluster_rows: torch.Tensor | None = None
    cluster_sizes: tuple[int, ...] = ()

    def _map(self, move) -> Batch:
        rows = None if self.cluster_rows is None else move(self.cluster_rows)
        return Batch(move(self.char_ids), move(self.token_index), move(self.targets), rows, self.cluster_sizes)

    def to(self, device: torch.device | str) -> Batch:
        return self._map(lambda t: t.to(device, non_blocking=True))

    def pin_memory(self) -> Batch:
        """Page-locked copies, so that ``to(cuda)`` overlaps with the GPU's work."""
        return self._map(torch.Tensor.pin_memory)

    def tail_rows(self) -> list[torch.Tensor] | None:
        """The target positions in each tail cluster (None: not found with the window)."""
        return None if self.cluster_rows is None else list(self.cluster_rows.split(self.cluster_sizes))


def target_clusters(targets: torch.Tensor, cutoffs: Sequence[int]) -> torch.Tensor:
    """The adaptive-softmax cluster of each target class: 0 for the head's shortlist (below ``cutoffs[0]``), i for
    tail cluster i (from ``cutoffs[i - 1]`` to ``cutoffs[i]``, the last one to the end of the vocabulary)."""
    return sum((targets >= c).long() for c in cutoffs)


def cluster_rows(targets: np.ndarray | torch.Tensor, cutoffs: Sequence[int]) -> tuple[torch.Tensor, tuple[int, ...]]:
    """Positions of the flattened ``targets`` in each tail cluster (``target_clusters``), concatenated in cluster
    order (in order within each), and how many each. On the host, as windows are made, this costs the GPU no wait."""
    cluster = target_clusters(torch.as_tensor(targets).reshape(-1), cutoffs)
    sizes = torch.bincount(cluster, minlength=len(cutoffs) + 1).tolist()
    return torch.argsort(cluster, stable=True)[sizes[0] :], tuple(sizes[1:])


def make_batch(
    inputs: Sequence[Sequence[Sequence[str]]], targets: Sequence[Sequence[Sequence[str]]], vocab: Vocabulary
) -> Batch:
    """Words -> tensors; ``inputs``/``targets`` are [direction][row][step] with equal row lengths."""
    types: dict[str, int] = {}
    index = [[[types.setdefault(w, len(types)) for w in row] for row in direction] for direction in inputs]
    char_ids = torch.from_numpy(batch_to_ids([list(types)])[0])
    target_ids = [[vocab.ids(row) for row in direction] for direction in targets]
    return Batch(char_ids, torch.tensor(index), torch.tensor(target_ids))


class LMBatches:
    """Endless training windows of both directions for one rank (see the module's docstring).

    Iterating yields ``(batch, position)``; ``position`` is where the next window starts, for ``load_state``.
    """

    def __init__(
        self,
        corpus: TokenizedCorpus,
        vocab: Vocabulary,
        batch_size: int,
        unroll: int,
        seed: int,
        rank: int = 0,
        world_size: int = 1,
        type_multiple: int = 1,
        cutoffs: Sequence[int] | None = None,
    ):
        """``type_multiple`` > 1 pads each window's table of word types with empty rows to a multiple of it, so that
        a captured (compiled) step sees a few shapes only; the padding rows are never looked up. ``cutoffs``: the
        adaptive softmax's, to find each window's ``cluster_rows``."""
        self.corpus, self.vocab = corpus, vocab
        self.type_multiple, self.cutoffs = type_multiple, cutoffs
        self.batch_size, self.unroll, self.seed, self.rank, self.world_size = batch_size, unroll, seed, rank, world_size
        self.position: dict = {"pass": 0, "files": None, "window": 0}
        self._chars = np.zeros((0, MAX_CHARS), dtype=np.int64)  # per word type, filled on first use
        self._classes = np.zeros(0, dtype=np.int64)
        self._known = np.zeros(0, dtype=bool)

    def state(self) -> dict:
        return dict(self.position)

    def load_state(self, state: dict) -> None:
        missing = [name for name in state["files"] or [] if name not in self.corpus.files]
        if missing:
            raise FileNotFoundError(f"resuming needs the corpus files it was reading: {', '.join(missing)}")
        self.position = dict(state)

    def check_size(self) -> None:
        """Refuse now a corpus too small for one batch (else the first pass would, after the run has begun)."""
        self._check_length(sum(int((a != 1).sum()) for a in self.corpus.files.values()))

    def _check_length(self, n_inputs: int) -> int:
        """The row length of a pass of ``n_inputs`` tokens, or a ``ValueError`` when a row would be shorter than a window."""
        rows = self.batch_size * self.world_size
        if n_inputs // rows < self.unroll:
            raise ValueError(f"the corpus holds {n_inputs:,} tokens: too few for {rows} rows of {self.unroll}")
        return n_inputs // rows

    def _pass_rows(self, pass_no: int, names: list[str]) -> list[np.ndarray]:
        """Forward inputs, forward targets, backward inputs, backward targets of a pass: (rows, length) each."""
        stream = np.concatenate([self.corpus.files[name] for name in names])
        inputs, targets = stream[stream != 1], stream[stream != 0]  # s[:-1] and s[1:] of every sentence
        rows = self.batch_size * self.world_size
        length = self._check_length(len(inputs))
        shift = random.Random(self.seed * 1_000_003 + pass_no).randrange(len(inputs))
        arrays = [np.roll(inputs, -shift), np.roll(targets, -shift)]
        arrays += [arrays[1][::-1], arrays[0][::-1]]  # reversed text: the targets become inputs and vice versa
        mine = slice(self.rank * self.batch_size, (self.rank + 1) * self.batch_size)
        return [a[: rows * length].reshape(rows, length)[mine] for a in arrays]

    def _lookup(self, type_ids: np.ndarray) -> None:
        """Make sure the character ids and softmax classes of these types are known."""
        n_types = len(self.corpus.types)
        if len(self._known) < n_types:
            grow = n_types - len(self._known)
            self._chars = np.concatenate([self._chars, np.zeros((grow, MAX_CHARS), dtype=np.int64)])
            self._classes = np.concatenate([self._classes, np.zeros(grow, dtype=np.int64)])
            self._known = np.concatenate([self._known, np.zeros(grow, dtype=bool)])
        for t in type_ids[~self._known[type_ids]].tolist():
            word = self.corpus.types[t]
            self._chars[t] = word_to_ids(word)
            self._classes[t] = self.vocab.index.get(word, UNK_ID)
            self._known[t] = True

    def __iter__(self) -> Iterator[tuple[Batch, dict]]:
        T = self.unroll
        while True:
            pass_no = self.position["pass"]
            names = self.position["files"]
            if names is None:  # a new pass: the files there are now, in this pass's order
                names = self.corpus.names()
                random.Random(self.seed * 1_000_003 + pass_no).shuffle(names)
            rows = self._pass_rows(pass_no, names)
            n_windows = rows[0].shape[1] // T
            for window in range(self.position["window"], n_windows):
                steps = slice(window * T, (window + 1) * T)
                inputs = np.stack([rows[0][:, steps], rows[2][:, steps]])  # (2, B, T) type ids
                targets = np.stack([rows[1][:, steps], rows[3][:, steps]])
                types, index = np.unique(inputs, return_inverse=True)
                self._lookup(np.union1d(types, targets))
                chars = np.zeros((-(-len(types) // self.type_multiple) * self.type_multiple, MAX_CHARS), np.int64)
                chars[: len(types)] = self._chars[types]
                classes = self._classes[targets]
                in_tails, sizes = cluster_rows(classes, self.cutoffs) if self.cutoffs is not None else (None, ())
                batch = Batch(
                    torch.from_numpy(chars),
                    torch.from_numpy(index.reshape(inputs.shape).astype(np.int64)),
                    torch.from_numpy(classes),
                    in_tails,
                    sizes,
                )
                self.position = {"pass": pass_no, "files": names, "window": window + 1}
                yield batch, dict(self.position)
            self.position = {"pass": pass_no + 1, "files": None, "window": 0}


def prefetch(batches: Iterable, depth: int = 4, pin_memory: bool = False) -> Iterator:
    """Items of ``batches`` made ahead in a background thread (numpy and torch release the GIL for their work).

    ``(Batch, position)`` items have their batch pinned when ``pin_memory``. An error in the thread is raised here.
    """
    items: queue.Queue = queue.Queue(depth)
    done = object()

    def produce() -> None:
        try:
            for item in batches:
                if pin_memory:
                    item = (item[0].pin_memory(), item[1])
                items.put(item)
        except BaseException as error:  # handed to the consumer
            items.put(error)
        items.put(done)

    threading.Thread(target=produce, name="batches", daemon=True).start()
    while True:
        item = items.get()
        if item is done:
            return
        if isinstance(item, BaseException):
            raise item
        yield item
