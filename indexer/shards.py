"""Reading and encoding a corpus: a first pass that validates and counts, then shards of whole documents.

Each shard is encoded and written as a directory that appears atomically, with its own record (``Shard``)
inside; a re-run finds the shards already on disk, checks them against the corpus and encodes only the rest.
``encode_shards`` plans every shard (its documents and the sentence and token ids it starts at) before any is
encoded, so the shards can be written in any order and anywhere: here, one after the other (``write_here``), or
by workers of a Ray cluster (``indexer.distributed``, ``--ray``), which call the same ``write_shard``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from encoder import Elmo
from encoder.files import atomic_directory
from encoder.mix import pool
from encoder.readout import Readout
from encoder.terminal import counted
from encoder.text import Sentence, TextRules
from encoder.words import WordFrequencies, is_content_word, is_word, normalize

from . import layout, storage
from .errors import CorpusError, IndexFormatError
from .manifest import Shard, StoredFile
from .ranking import DRAWN_PER_DOCUMENT
from .readers import Document, ReaderOptions, ReadStats, read_corpus
from .settings import Settings
from .vectors import normalize as normalize_rows

ENCODE_TOKENS = 8_192  # tokens embedded at once: bounds the float32 layer outputs held in memory


@dataclass
class Scan:
    """What a first pass over the corpus found; it runs before anything is written."""

    stats: ReadStats
    per_file: dict[str, int] = field(default_factory=dict)
    sentences: int = 0
    tokens: int = 0
    counts: Counter = field(default_factory=Counter)  # normalised word -> occurrences
    drawn: Counter = field(default_factory=Counter)  # the same, each document's capped (``ranking.random_queries``)
    doc_ids: list[str] = field(default_factory=list)  # the documents' ids, in order


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
            advice = "; to replace the document, add with --replace (an upsert)" if doc.doc_id in taken else ""
            raise CorpusError(
                f"document id {doc.doc_id!r} {where} (seen again in {doc.source}); "
                f"document ids must be unique; fix the id column or leave ids to the file/line default{advice}"
            )
        seen.add(doc.doc_id)
        scan.doc_ids.append(doc.doc_id)
        scan.per_file[doc.source] = scan.per_file.get(doc.source, 0) + 1
        words: Counter = Counter()
        for sentence in text.split_and_tokenize(doc.text):
            scan.sentences += bool(sentence.tokens)
            scan.tokens += len(sentence.tokens)
            words.update(normalize(t) for t in sentence.tokens if is_word(t))
        scan.counts.update(words)
        scan.drawn.update({word: min(n, DRAWN_PER_DOCUMENT) for word, n in words.items()})
    if scan.sentences == 0:
        raise CorpusError(
            "the corpus holds no text: every document is empty"
            if scan.stats.documents == 0
            else "the corpus holds no sentences with words"
        )
    if not scan.counts:  # their passages' vectors would pool nothing, and every search would find them
        raise CorpusError(
            f"the {counted(scan.stats.documents, 'document')} hold{'s' if scan.stats.documents == 1 else ''} no words (no token with a letter or digit: punctuation "
            "and symbols only), so there is nothing to index; check the text column (--text-column)"
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


def _embed(elmo: Elmo, token_lists: Sequence[list[str]], context: bool = False) -> Iterator[np.ndarray]:
    """(L+1, n, dim) layers of each token list (with ``context``, (L+2, n, dim): the context states last),
    embedded about ``ENCODE_TOKENS`` tokens at a time."""
    start = 0
    while start < len(token_lists):
        end, budget = start, 0
        while end < len(token_lists) and (end == start or budget + len(token_lists[end]) <= ENCODE_TOKENS):
            budget += len(token_lists[end])
            end += 1
        yield from elmo.embed(list(token_lists[start:end]), context=context)
        start = end


@dataclass
class Encoding:
    """What encoding a shard needs besides its documents: the model and its sense readout, the settings, the word
    counts that weigh pooling, and the words that get token vectors (None: all)."""

    elmo: Elmo
    readout: Readout
    settings: Settings
    frequencies: WordFrequencies
    keep: set[str] | None


def kept_words(counts: Mapping[str, int], settings: Settings) -> set[str] | None:
    """The words frequent enough for token vectors (``min_freq``) among normalised word -> occurrences (None: all
    of them)."""
    return None if settings.min_freq <= 1 else {word for word, n in counts.items() if n >= settings.min_freq}


def gets_vector(stopwords: frozenset[str], settings: Settings, keep: set[str] | None) -> Callable[[str], bool]:
    """Whether a token gets a token vector: a content word (stopwords too with --keep-stopwords), one of the words
    frequent enough (``keep``: ``kept_words``). The one rule: shards are written by it, and a build plans its token
    index by it."""
    skip = stopwords if settings.skip_stopwords else frozenset()
    return lambda token: is_content_word(token, skip) and (keep is None or normalize(token) in keep)


def _gets_vector(encoding: Encoding) -> Callable[[str], bool]:
    return gets_vector(encoding.elmo.text.stopwords, encoding.settings, encoding.keep)


def write_shard(
    path: Path,
    group: list[Parsed],
    first_sentence: int,
    first_token: int,
    encoding: Encoding,
    on_document: Callable[[], object] | None = None,
) -> Shard:
    """Encode one shard and write it as a directory that appears atomically; returns its record. ``on_document`` is
    called as each document's sentences are encoded (a progress bar moves per document, not per shard)."""
    elmo, settings, frequencies = encoding.elmo, encoding.settings, encoding.frequencies
    gets_vector = _gets_vector(encoding)
    flat = [s for p in group for s in p.sentences]
    dims = (elmo.n_layers, elmo.dim)
    sentence_layers = np.zeros((len(flat), *dims), np.float16)
    sentence_rows, token_rows, token_layers, token_context = [], [], [], []
    per_doc: dict[str, list[int]] = {p.doc.doc_id: [0, 0, 0] for p in group}  # sentences, tokens, vectors
    embedded = _embed(elmo, [s.tokens for s in flat], context=True)  # each sentence of ``flat``, in order
    row = 0
    for p in group:
        doc, counts = p.doc, per_doc[p.doc.doc_id]
        for s in p.sentences:
            *layers, context = next(embedded)
            layers = np.stack(layers)
            sentence_id = first_sentence + row
            sentence_layers[row] = pool(layers, settings.pooling, frequencies.weights(s.tokens))
            starts = [a - s.start for a, _ in s.token_spans]
            ends = [b - s.start for _, b in s.token_spans]
            sentence_rows.append((sentence_id, doc.doc_id, doc.title, s.text, s.start, s.end, s.tokens, starts, ends))
            counts[0] += 1
            counts[1] += len(s.tokens)
            for position, token in enumerate(s.tokens):
                if gets_vector(token):
                    token_rows.append(
                        (first_token + len(token_rows), sentence_id, position, token, starts[position], ends[position])
                    )
                    token_layers.append(layers[:, position].astype(np.float16))
                    token_context.append(context[position])
                    counts[2] += 1
            row += 1
        if on_document is not None:
            on_document()
    title_layers = _title_layers(group, encoding)
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
    context = np.stack(token_context) if token_context else np.zeros((0, elmo.dim), np.float32)
    readout = encoding.readout
    readouts, substitutes, probabilities = readout.read(context, readout.settings.kept_substitutes)
    parts = {  # what goes into each of the shard's files (layout.SHARD_FILES)
        "docs": docs,
        "sentences": sentences,
        "tokens": tokens,
        "sentence_layers": sentence_layers,
        "token_layers": vectors,
        "title_layers": title_layers,
        "token_readout": normalize_rows(readouts)[:, None].astype(np.float16),  # cosines are all it is used for
        "token_substitutes": substitutes,
        "token_substitute_probs": probabilities,
    }
    return _write_parts(path, parts)


def _title_layers(group: list[Parsed], encoding: Encoding) -> np.ndarray:
    """Each document's title, pooled per layer (zeros where it has none: it then matches nothing)."""
    elmo, settings, frequencies = encoding.elmo, encoding.settings, encoding.frequencies
    title_layers = np.zeros((len(group), elmo.n_layers, elmo.dim), np.float16)
    titled = [(i, p) for i, p in enumerate(group) if p.title_tokens]
    for (i, p), layers in zip(titled, _embed(elmo, [p.title_tokens for _, p in titled])):
        title_layers[i] = pool(layers, settings.pooling, frequencies.weights(p.title_tokens))
    return title_layers


def _write_parts(path: Path, parts: dict) -> Shard:
    """The shard's files (``parts``: ``layout.SHARD_FILES``' names to their data) and its record, as a directory
    that appears atomically."""
    docs = parts["docs"]
    with atomic_directory(path) as tmp:
        for part, data in parts.items():
            write = storage.write_parquet if isinstance(data, pd.DataFrame) else storage.write_npy
            write(tmp / layout.SHARD_FILES[part], data)
        shard = Shard(
            name=path.name,
            documents=len(docs),
            first_doc_id=docs["doc_id"].iloc[0],
            sentences=len(parts["sentences"]),
            tokens=int(docs["tokens"].sum()),
            token_vectors=len(parts["tokens"]),
            files=tuple(StoredFile.of(tmp, layout.SHARD_FILES[part]) for part in parts),
        )
        storage.write_json(tmp / layout.SHARD_RECORD, shard.to_json())
    return shard


@dataclass
class ShardJob:
    """One shard to encode: where it goes, its documents, and the ids its sentences and token vectors start at."""

    path: Path
    group: list[Parsed]
    first_sentence: int
    first_token: int


ShardWriter = Callable[[Iterable[ShardJob]], Iterator[Shard]]
"""Encodes and writes the shards of the jobs it is given (each with ``write_shard``), yielding their records as they
are written, in any order; it takes the next job only when it can start on it."""


def write_here(encoding: Encoding, on_document: Callable[[], object] | None = None) -> ShardWriter:
    """The local writer: one shard after the other, in this process (``on_document`` as for ``write_shard``)."""

    def write(jobs: Iterable[ShardJob]) -> Iterator[Shard]:
        for job in jobs:
            yield write_shard(job.path, job.group, job.first_sentence, job.first_token, encoding, on_document)

    return write


def _planned(group: list[Parsed], gets_vector: Callable[[str], bool]) -> tuple[int, str, int, int]:
    """What a shard of ``group`` holds: documents, first document id, sentences and token vectors."""
    sentences = [s for p in group for s in p.sentences]
    vectors = sum(gets_vector(t) for s in sentences for t in s.tokens)
    return len(group), group[0].doc.doc_id, len(sentences), vectors


def _holds(shard: Shard) -> tuple[int, str, int, int]:
    return shard.documents, shard.first_doc_id, shard.sentences, shard.token_vectors


def encode_shards(
    out: Path,
    files: list[tuple[Path, str]],
    options: ReaderOptions,
    scan: Scan,
    encoding: Encoding,
    base: Sequence[Shard],
    progress: bool,
    writer: ShardWriter | None = None,
) -> list[Shard]:
    """Encode every shard of the corpus that is not on disk yet, numbered after the ``base`` index's shards (and
    its sentence and token ids after theirs), with ``writer`` (default: ``write_here``); returns the records of all
    the corpus's shards, in order."""
    first_shard = max((int(s.name) for s in base), default=-1) + 1
    first_sentence, first_token = sum(s.sentences for s in base), sum(s.token_vectors for s in base)
    gets_vector = _gets_vector(encoding)
    planned: dict[str, tuple[int, str, int, int]] = {}  # shard name -> what it must hold
    shards: dict[str, Shard] = {}
    bar = tqdm(total=scan.stats.documents, desc="encoding", unit="doc", disable=not progress)
    encoded_tokens, sentences, documents, started = 0, first_sentence, 0, time.perf_counter()

    def finished(shard: Shard, encoded: bool) -> None:
        nonlocal encoded_tokens, sentences, documents
        shards[shard.name] = shard
        encoded_tokens += shard.tokens if encoded else 0
        sentences += shard.sentences
        documents += shard.documents
        bar.update(documents - bar.n)  # the shard's documents the local writer has not counted one by one already
        bar.set_postfix(
            shards=len(shards),
            sentences=sentences,
            tok_s=f"{encoded_tokens / max(time.perf_counter() - started, 1e-9):.0f}",
        )

    def missing() -> Iterator[ShardJob]:
        """The shards not on disk yet; the ones on disk are checked against the corpus and counted as finished."""
        nonlocal first_sentence, first_token
        groups = _shard_groups(read_corpus(files, options), encoding.elmo.text, encoding.settings.shard_tokens)
        for number, group in enumerate(groups, start=first_shard):
            path = layout.shard_dir(out, layout.shard_name(number))
            planned[path.name] = _planned(group, gets_vector)
            job = ShardJob(path, group, first_sentence, first_token)
            first_sentence += planned[path.name][2]
            first_token += planned[path.name][3]
            if not path.is_dir():
                yield job
                continue
            shard = Shard.from_json(storage.read_json(path / layout.SHARD_RECORD))
            if _holds(shard) != planned[path.name]:
                raise IndexFormatError(
                    f"{path} does not match the corpus; the corpus changed since the build "
                    "started: re-run with --overwrite to start over"
                )
            finished(shard, encoded=False)

    for shard in (writer or write_here(encoding, on_document=bar.update))(missing()):
        if _holds(shard) != planned[shard.name]:  # only a worker running other code can get here
            raise IndexFormatError(
                f"shard {shard.name} was encoded with {shard.sentences} sentences and {shard.token_vectors} token "
                f"vectors where {planned[shard.name][2]} and {planned[shard.name][3]} were planned; does every "
                "worker run the same version of this code? Delete that shard folder and re-run to resume"
            )
        finished(shard, encoded=True)
    bar.close()
    return [shards[name] for name in planned]
