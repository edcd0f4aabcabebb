"""Reading and encoding a corpus: a first pass that validates and counts, then shards of whole documents.

Each shard is encoded and written as a directory that appears atomically, with its own record (``Shard``)
inside; a re-run finds the shards already on disk, checks them against the corpus and encodes only the rest.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from encoder import Elmo
from encoder.text import Sentence, TextRules

from . import storage
from .errors import CorpusError, IndexFormatError
from .manifest import SHARD_FILES, SHARD_RECORD, SHARDS, Settings, Shard, StoredFile
from .readers import Document, ReaderOptions, ReadStats, read_corpus
from .vectors import pool
from .words import WordFrequencies, is_content_word, is_word, normalize

ENCODE_TOKENS = 8_192  # tokens embedded at once: bounds the float32 layer outputs held in memory


@dataclass
class Scan:
    """What a first pass over the corpus found; it runs before anything is written."""

    stats: ReadStats
    per_file: dict[str, int] = field(default_factory=dict)
    sentences: int = 0
    tokens: int = 0
    counts: Counter = field(default_factory=Counter)  # normalised word -> occurrences


def scan_corpus(
    files: list[tuple[Path, str]], options: ReaderOptions, text: TextRules, taken: set[str], progress: bool
) -> Scan:
    """Validate and count: every document parses, ids are unique (also against ``taken``), words counted (as the
    model's language rules, ``text``, tokenize them)."""
    scan = Scan(ReadStats())
    seen = set(taken)
    for doc in tqdm(
        read_corpus(files, options, scan.stats, warn=True), desc="reading", unit="doc", disable=not progress
    ):
        if doc.doc_id in seen:
            where = "is already in the index" if doc.doc_id in taken else "appears more than once"
            raise CorpusError(
                f"document id {doc.doc_id!r} {where} (seen again in {doc.source}); "
                "document ids must be unique; fix the id column or leave ids to the file/line default"
            )
        seen.add(doc.doc_id)
        scan.per_file[doc.source] = scan.per_file.get(doc.source, 0) + 1
        for sentence in text.split_and_tokenize(doc.text):
            scan.sentences += bool(sentence.tokens)
            scan.tokens += len(sentence.tokens)
            scan.counts.update(normalize(t) for t in sentence.tokens if is_word(t))
    if scan.sentences == 0:
        raise CorpusError(
            "the corpus holds no text: every document is empty"
            if scan.stats.documents == 0
            else "the corpus holds no sentences with words"
        )
    return scan


@dataclass
class Parsed:
    """A document split into sentences, and its title's tokens (empty when it has none)."""

    doc: Document
    sentences: list[Sentence]
    title_tokens: list[str]


def _shard_groups(docs: Iterable[Document], text: TextRules, shard_tokens: int) -> Iterator[list[Parsed]]:
    """Whole documents grouped into shards of about ``shard_tokens`` tokens (deterministic)."""
    group, tokens = [], 0
    for doc in docs:
        sentences = [s for s in text.split_and_tokenize(doc.text) if s.tokens]
        title_tokens = text.tokenize(doc.title)
        group.append(Parsed(doc, sentences, title_tokens))
        tokens += sum(len(s.tokens) for s in sentences)
        if tokens >= shard_tokens:
            yield group
            group, tokens = [], 0
    if group:
        yield group


def _embed(elmo: Elmo, token_lists: Sequence[list[str]]) -> Iterator[np.ndarray]:
    """(L+1, n, dim) layers of each token list, embedded about ``ENCODE_TOKENS`` tokens at a time."""
    start = 0
    while start < len(token_lists):
        end, budget = start, 0
        while end < len(token_lists) and (end == start or budget + len(token_lists[end]) <= ENCODE_TOKENS):
            budget += len(token_lists[end])
            end += 1
        yield from elmo.embed(list(token_lists[start:end]))
        start = end


@dataclass
class Encoding:
    """What encoding a shard needs besides its documents: the model, the settings, the word counts that
    weigh pooling, and the words that get token vectors (None: all)."""

    elmo: Elmo
    settings: Settings
    frequencies: WordFrequencies
    keep: set[str] | None


def write_shard(path: Path, group: list[Parsed], first_sentence: int, first_token: int, encoding: Encoding) -> Shard:
    """Encode one shard and write it as a directory that appears atomically; returns its record."""
    elmo, settings, frequencies, keep = encoding.elmo, encoding.settings, encoding.frequencies, encoding.keep
    stopwords = elmo.text.stopwords if settings.skip_stopwords else frozenset()
    flat = [(p.doc, s) for p in group for s in p.sentences]
    dims = (elmo.n_layers, elmo.dim)
    sentence_layers = np.zeros((len(flat), *dims), np.float16)
    sentence_rows, token_rows, token_layers = [], [], []
    per_doc: dict[str, list[int]] = {p.doc.doc_id: [0, 0, 0] for p in group}  # sentences, tokens, vectors
    for row, ((doc, s), layers) in enumerate(zip(flat, _embed(elmo, [s.tokens for _, s in flat]))):
        sentence_id = first_sentence + row
        sentence_layers[row] = pool(layers, settings.pooling, frequencies.weights(s.tokens))
        starts = [a - s.start for a, _ in s.token_spans]
        ends = [b - s.start for _, b in s.token_spans]
        sentence_rows.append((sentence_id, doc.doc_id, doc.title, s.text, s.start, s.end, s.tokens, starts, ends))
        counts = per_doc[doc.doc_id]
        counts[0] += 1
        counts[1] += len(s.tokens)
        for position, token in enumerate(s.tokens):
            if is_content_word(token, stopwords) and (keep is None or normalize(token) in keep):
                token_rows.append(
                    (first_token + len(token_rows), sentence_id, position, token, starts[position], ends[position])
                )
                token_layers.append(layers[:, position].astype(np.float16))
                counts[2] += 1
    titled = [p for p in group if p.title_tokens]
    title_layers = np.zeros((len(group), *dims), np.float16)  # zeros: no title (it then matches nothing)
    title_rows = {id(p): i for i, p in enumerate(group)}
    for p, layers in zip(titled, _embed(elmo, [p.title_tokens for p in titled])):
        title_layers[title_rows[id(p)]] = pool(layers, settings.pooling, frequencies.weights(p.title_tokens))
    docs = pd.DataFrame(
        [(p.doc.doc_id, p.doc.title, p.title_tokens, p.doc.source, *per_doc[p.doc.doc_id]) for p in group],
        columns=["doc_id", "title", "title_tokens", "source", "sentences", "tokens", "token_vectors"],
    )
    sentences = pd.DataFrame(
        sentence_rows,
        columns=["sentence_id", "doc_id", "title", "text", "start", "end", "tokens", "token_starts", "token_ends"],
    )
    tokens = pd.DataFrame(token_rows, columns=["token_id", "sentence_id", "position", "word", "char_start", "char_end"])
    vectors = np.stack(token_layers) if token_layers else np.zeros((0, *dims), np.float16)
    with storage.atomic_directory(path) as tmp:
        storage.write_parquet(tmp / "docs.parquet", docs)
        storage.write_parquet(tmp / "sentences.parquet", sentences)
        storage.write_parquet(tmp / "tokens.parquet", tokens)
        storage.write_npy(tmp / "sentence_layers.npy", sentence_layers)
        storage.write_npy(tmp / "token_layers.npy", vectors)
        storage.write_npy(tmp / "title_layers.npy", title_layers)
        shard = Shard(
            name=path.name,
            documents=len(group),
            first_doc_id=group[0].doc.doc_id,
            sentences=len(flat),
            tokens=int(docs["tokens"].sum()),
            token_vectors=len(tokens),
            files=tuple(StoredFile.of(tmp, name) for name in SHARD_FILES),
        )
        storage.write_json(tmp / SHARD_RECORD, shard.to_json())
    return shard


def encode_shards(
    out: Path,
    files: list[tuple[Path, str]],
    options: ReaderOptions,
    scan: Scan,
    encoding: Encoding,
    base: Sequence[Shard],
    progress: bool,
) -> list[Shard]:
    """Encode every shard of the corpus that is not on disk yet, numbered after the ``base`` index's shards (and
    its sentence and token ids after theirs); returns the records of all the corpus's shards."""
    first_shard = max((int(s.name) for s in base), default=-1) + 1
    first_sentence, first_token = sum(s.sentences for s in base), sum(s.token_vectors for s in base)
    shards: list[Shard] = []
    bar = tqdm(total=scan.stats.documents, desc="encoding", unit="doc", disable=not progress)
    encoded_tokens, started = 0, time.perf_counter()
    groups = _shard_groups(read_corpus(files, options), encoding.elmo.text, encoding.settings.shard_tokens)
    for number, group in enumerate(groups, start=first_shard):
        path = out / SHARDS / f"{number:05d}"
        if path.is_dir():
            shard = Shard.from_json(storage.read_json(path / SHARD_RECORD))
            if shard.documents != len(group) or shard.first_doc_id != group[0].doc.doc_id:
                raise IndexFormatError(
                    f"{path} does not match the corpus; the corpus changed since the build "
                    "started: re-run with --overwrite to start over"
                )
        else:
            shard = write_shard(path, group, first_sentence, first_token, encoding)
            encoded_tokens += shard.tokens
        shards.append(shard)
        first_sentence += shard.sentences
        first_token += shard.token_vectors
        bar.update(shard.documents)
        bar.set_postfix(
            shards=len(shards),
            sentences=first_sentence,
            tok_s=f"{encoded_tokens / max(time.perf_counter() - started, 1e-9):.0f}",
        )
    bar.close()
    return shards
