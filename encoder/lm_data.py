"""Training data for the biLM: the softmax vocabulary and streaming batches built as bilm-tf builds them.

The biLM's input is always characters, so the vocabulary only names the softmax classes: ``<S>``, ``</S>``,
``<UNK>``, then words by descending frequency (counted over a sample); other words are predicted as ``<UNK>``.

A *source* reads the paragraph lines of the corpus files in a deterministic order (files shuffled per pass
from the seed; rank r of a distributed run keeps lines r, r+W, r+2W, ...). Each batch row is its own
stream: when it runs dry it takes the next paragraph from the source, splits it into sentences and appends
them framed as ``<S> w... </S>``. For every sentence the inputs are tokens[:-1] and the targets tokens[1:],
so ``</S>`` is only ever a target. A training window is the next ``unroll`` (input, target) pairs of every
row; the LSTM state is carried from one window to the next.

The backward LM gets its own stream (files in the opposite order, so different text at each step) whose
paragraphs are reversed word by word: it reads ``</S> w_n ... w_1 <S>`` and its carried state comes from the
sentences that follow. Everything a stream holds (source position, the rest of each row) is plain JSON, so a
checkpoint resumes the data exactly; the resumed source skips lines without tokenizing them.
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from .chars import BOS_TOKEN, EOS_TOKEN, batch_to_ids
from .text import (
    text_files,
    open_text,
    sentences,
    tokenize,
)
from .weights import atomic_path

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

    @classmethod
    def from_counts(cls, counts: Counter, size: int) -> Vocabulary:
        """The ``size`` classes (specials included) covering the most frequent words of ``counts``."""
        ranked = sorted((w for w in counts if w not in SPECIALS), key=lambda w: (-counts[w], w))
        return cls([*SPECIALS, *ranked[: max(size - len(SPECIALS), 0)]])

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        with open(path, encoding="utf-8") as f:
            return cls([line.rstrip("\n") for line in f])

    def save(self, path: str | Path) -> None:
        with atomic_path(path) as tmp:
            Path(tmp).write_text("".join(w + "\n" for w in self.words), encoding="utf-8")

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, tokens: Iterable[str]) -> list[int]:
        """Class ids of tokens; unknown words -> ``<UNK>``."""
        index = self.index
        return [index.get(t, UNK_ID) for t in tokens]


def corpus_files(paths: Sequence[str | Path]) -> list[Path]:
    """The text files named by ``paths`` (folders searched as ``text.iter_lines`` searches them), at least one."""
    files = list(text_files(paths))
    if not files:
        raise FileNotFoundError(f"no text files in {', '.join(map(str, paths))}")
    return files


def paragraph_pairs(paragraph: str, backward: bool = False) -> tuple[list[str], list[str]]:
    """(inputs, targets) of one paragraph line: each sentence framed, inputs = s[:-1], targets = s[1:]."""
    framed = [[BOS_TOKEN, *tokens, EOS_TOKEN] for tokens in map(tokenize, sentences(paragraph)) if tokens]
    if backward:
        framed = [s[::-1] for s in reversed(framed)]
    inputs, targets = [], []
    for s in framed:
        inputs.extend(s[:-1])
        targets.extend(s[1:])
    return inputs, targets


def count_words(files: Sequence[Path], max_tokens: int) -> Counter:
    """Word counts over about ``max_tokens`` tokens, taken from the start of every file in equal shares."""
    counts: Counter = Counter()
    share = max(max_tokens // len(files), 1)
    for path in files:
        seen = 0
        with open_text(path) as f:
            for line in f:
                for sentence in sentences(line):
                    tokens = tokenize(sentence)
                    counts.update(tokens)
                    seen += len(tokens)
                if seen >= share:
                    break
    return counts


class ParagraphSource:
    """Endless, deterministic, resumable stream of the non-empty paragraph lines of ``files``."""

    def __init__(self, files: Sequence[Path], seed: int, rank: int = 0, world_size: int = 1, reverse: bool = False):
        self.files, self.seed, self.rank, self.world_size, self.reverse = list(files), seed, rank, world_size, reverse
        self.pass_no = self.file_no = self.line_no = 0
        self._file = None

    def _order(self) -> list[int]:
        order = list(range(len(self.files)))
        random.Random(self.seed * 1_000_003 + self.pass_no).shuffle(order)
        return order[::-1] if self.reverse else order

    def _open(self) -> None:
        self._file = open_text(self.files[self._order()[self.file_no]])
        for _ in range(self.line_no):  # resuming: skip what was already read
            self._file.readline()

    def next(self) -> str:
        # a pass that starts at its beginning and finds no line for this rank would loop forever
        lines_this_pass = 0 if (self.file_no, self.line_no) == (0, 0) else 1
        while True:
            if self._file is None:
                self._open()
            line = self._file.readline()
            if not line:
                self._file.close()
                self._file = None
                self.file_no, self.line_no = self.file_no + 1, 0
                if self.file_no == len(self.files):
                    if not lines_this_pass:
                        raise ValueError(f"rank {self.rank} gets no text from {', '.join(map(str, self.files))}")
                    self.pass_no, self.file_no, lines_this_pass = self.pass_no + 1, 0, 0
                continue
            self.line_no += 1
            if (self.line_no - 1) % self.world_size == self.rank and line.strip():
                lines_this_pass += 1
                return line

    def state(self) -> dict:
        return {"pass": self.pass_no, "file": self.file_no, "line": self.line_no}

    def load_state(self, state: dict) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self.pass_no, self.file_no, self.line_no = state["pass"], state["file"], state["line"]


class RowStreams:
    """``batch_size`` rows of (input, target) word pairs for one direction, refilled paragraph by paragraph."""

    def __init__(self, source: ParagraphSource, batch_size: int, backward: bool):
        self.source, self.backward = source, backward
        self.rows: list[tuple[list[str], list[str]]] = [([], []) for _ in range(batch_size)]

    def window(self, unroll: int) -> tuple[list[list[str]], list[list[str]]]:
        """The next ``unroll`` inputs and targets of every row."""
        inputs, targets = [], []
        for b, (row_in, row_out) in enumerate(self.rows):
            while len(row_in) < unroll:
                more_in, more_out = paragraph_pairs(self.source.next(), self.backward)
                row_in, row_out = row_in + more_in, row_out + more_out
            inputs.append(row_in[:unroll])
            targets.append(row_out[:unroll])
            self.rows[b] = (row_in[unroll:], row_out[unroll:])
        return inputs, targets

    def state(self) -> dict:
        return {"source": self.source.state(), "rows": [list(row) for row in self.rows]}

    def load_state(self, state: dict) -> None:
        self.source.load_state(state["source"])
        self.rows = [(list(i), list(t)) for i, t in state["rows"]]


@dataclass
class Batch:
    """One training window of both directions (axis 0: forward, backward).

    ``char_ids`` (U, 50) holds each distinct word of the window once; ``token_index`` (2, B, T) points into
    it, so the char CNN runs once per word type rather than once per position (same result, same gradients).
    """

    char_ids: torch.Tensor
    token_index: torch.Tensor
    targets: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        return Batch(self.char_ids.to(device), self.token_index.to(device), self.targets.to(device))


def make_batch(inputs: Sequence[Sequence[Sequence[str]]], targets: Sequence[Sequence[Sequence[str]]],
               vocab: Vocabulary) -> Batch:
    """Words -> tensors; ``inputs``/``targets`` are [direction][row][step] with equal row lengths."""
    types: dict[str, int] = {}
    index = [[[types.setdefault(w, len(types)) for w in row] for row in direction] for direction in inputs]
    char_ids = torch.from_numpy(batch_to_ids([list(types)])[0])
    target_ids = [[vocab.ids(row) for row in direction] for direction in targets]
    return Batch(char_ids, torch.tensor(index), torch.tensor(target_ids))


class LMBatches:
    """Endless training windows for both directions of one rank; ``state``/``load_state`` for checkpoints."""

    def __init__(self, files: Sequence[Path], vocab: Vocabulary, batch_size: int, unroll: int, seed: int,
                 rank: int = 0, world_size: int = 1):
        self.vocab, self.unroll = vocab, unroll
        self.streams = [
            RowStreams(ParagraphSource(files, seed, rank, world_size, reverse=backward), batch_size, backward)
            for backward in (False, True)
        ]

    def __iter__(self) -> Iterator[Batch]:
        while True:
            windows = [stream.window(self.unroll) for stream in self.streams]
            yield make_batch([w[0] for w in windows], [w[1] for w in windows], self.vocab)

    def state(self) -> dict:
        return {"forward": self.streams[0].state(), "backward": self.streams[1].state()}

    def load_state(self, state: dict) -> None:
        self.streams[0].load_state(state["forward"])
        self.streams[1].load_state(state["backward"])

