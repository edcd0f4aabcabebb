"""Corpus readers: documents from .txt, .jsonl, .csv, .parquet, .md and .rst files (.gz/.xz/.bz2 too), and folders of
them.

A Markdown or reStructuredText file is one document: its markup stripped (markdown-it-py, docutils), its headings
kept as text, the first one its title. Markup that would lose text or not finish in time is refused with its
reason: lists and quotes nested past what the parser follows (``MARKUP_NESTING``: markdown-it would drop the rest
of the file, docutils would exhaust Python's recursion), substitutions that add more than ``MAX_SUBSTITUTED``
characters (each level multiplies the last: under 1 KB can ask for millions). A folder's files of other types, and
hidden ones, are skipped, and a warning sums them up by kind; a corpus file that is a link to nothing is refused.

Every reader yields ``Document``s in a fixed order, so two passes over a corpus see the same documents
(a build counts and validates first, then encodes, and a resumed build skips what is done).
Empty documents are skipped and counted; undecodable bytes become U+FFFD and are counted per file.
"""

from __future__ import annotations

import json
import numbers
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from docutils import nodes
from docutils.core import publish_doctree
from docutils.readers import standalone
from docutils.transforms import references
from markdown_it import MarkdownIt

from encoder.files import DECODE_ERRORS, RepeatedKeyError, open_text, unique_keys, warn_replaced
from encoder.options import check_keywords
from encoder.terminal import counted
from encoder.text import composed

from . import layout
from .errors import CorpusError

FORMATS = ("txt", "jsonl", "csv", "parquet", "md", "rst")
MARKUP = ("md", "rst")  # one document per file, read as text
COMPRESSED = (".gz", ".xz", ".bz2")
CSV_CHUNK = 10_000
MARKUP_NESTING = 100
"""Levels of Markdown block markup (each list, item and quote one) a file may hold: markdown-it's ``maxNesting``,
past which it skips the rest of the file."""
MAX_SUBSTITUTED = 100_000
"""Characters reStructuredText substitutions may add to a document beyond the length of its own text."""


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    text: str
    source: str  # the corpus file, as named in the manifest


@dataclass(frozen=True)
class ReaderOptions:
    """How to read documents: columns of tabular files, and whether a .txt file is one document."""

    text_column: str = "text"
    id_column: str | None = None  # default: "id" when the file has it, else file name + line/row number
    title_column: str | None = None  # default: "title" when the file has it, else none
    doc_per_file: bool = False

    @classmethod
    def from_kwargs(cls, **options: Any) -> ReaderOptions:
        check_keywords(cls, options, "reader option")
        return cls(**options)


GIVEN_TEXTS = "(texts given as strings)"
"""The corpus name of documents given as strings (``Index.from_texts``, ``add``, ``upsert``, the HTTP API): no file
of the user's holds them, so the manifest records them with no path."""


@dataclass(frozen=True)
class GivenTexts:
    """Documents given as strings, in a temporary JSONL file (fields id and text) read like any corpus file and
    recorded as ``GIVEN_TEXTS``: its path would name a file that is gone once the call returns."""

    file: Path


def recorded_path(path: Path, name: str) -> str:
    """Where the manifest says a corpus file was: its path, or "" for documents given as strings."""
    return "" if name == GIVEN_TEXTS else str(path)


def file_format(path: Path) -> str | None:
    """``txt``/``jsonl``/``csv``/``parquet`` from the suffix (after .gz/.xz), or None if unsupported."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in COMPRESSED:
        suffixes = suffixes[:-1]
    fmt = suffixes[-1].lstrip(".") if suffixes else ""
    if fmt == "parquet" and path.suffix.lower() in COMPRESSED:
        return None  # parquet compresses internally
    return fmt if fmt in FORMATS else None


def corpus_files(paths: str | os.PathLike | Sequence[str | Path | GivenTexts]) -> list[tuple[Path, str]]:
    """(file, display name) for every corpus file; folders are searched recursively in sorted order. One path given
    alone (a string or a Path) is that path, not a sequence of one-letter paths ("/" among them)."""
    found: dict[Path, str] = {}
    for given in [paths] if isinstance(paths, (str, os.PathLike)) else list(paths):
        if isinstance(given, GivenTexts):
            found.setdefault(given.file.resolve(), GIVEN_TEXTS)
            continue
        given = Path(given)
        if given.is_dir() and _holds_index(given):
            raise CorpusError(f"{given} is an index folder, not a corpus; give the folder or files of the documents")
        if given.is_dir():
            walked = list(_walk(given))
            hidden = [p for p in walked if any(part.startswith(".") for part in p.relative_to(given).parts)]
            _refuse_broken_links([p for p in walked if p not in set(hidden)])
            candidates = [p for p in walked if p.is_file()]
            hidden = [p for p in hidden if p.is_file()]
            files = sorted(p for p in candidates if file_format(p) and p not in set(hidden))
            _warn_skipped(given, [p for p in candidates if not file_format(p) and p not in set(hidden)], hidden)
            if not files:
                raise CorpusError(
                    f"{given} holds no corpus files (.txt, .jsonl, .csv, .parquet, .md, .rst, or .gz/.xz/.bz2 of them)"
                )
            for p in files:
                found.setdefault(p.resolve(), str(Path(given.name) / p.relative_to(given)))
        elif given.is_file():
            if not file_format(given):
                raise CorpusError(
                    f"{given}: unsupported file type; use .txt, .jsonl, .csv, .parquet, .md or .rst (text ones may be "
                    ".gz/.xz/.bz2)"
                )
            found.setdefault(given.resolve(), given.name)
        elif given.exists():
            raise CorpusError(f"{given} is not a file or folder (a device or a pipe?); give corpus files or folders")
        else:
            raise CorpusError(f"{given} does not exist")
    return [(path, name) for path, name in found.items()]


def _refuse_broken_links(paths: list[Path]) -> None:
    """A corpus file of a folder that is a link to nothing is an error: it was left out without a word, and its
    documents with it."""
    for path in paths:
        if file_format(path) and path.is_symlink() and not path.exists():
            raise CorpusError(
                f"{path} is a link to {os.readlink(path)}, which does not exist; fix the link or remove it"
            )


def _warn_skipped(folder: Path, unsupported: list[Path], hidden: list[Path]) -> None:
    """One warning summing up the files of ``folder`` that are not read: by type, then the hidden ones."""
    if not unsupported and not hidden:
        return
    kinds = Counter(p.suffix.lower() or "no suffix" for p in unsupported)
    said = [f"{n} {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))]
    parts = [f"{', '.join(said)} (not a type it reads)"] if unsupported else []
    parts += [f"{len(hidden)} hidden (a name or folder starting with '.')"] if hidden else []
    warnings.warn(
        f"{folder}: skipped {counted(len(unsupported) + len(hidden), 'file')}: {'; '.join(parts)}", stacklevel=3
    )


def _walk(folder: Path) -> Iterator[Path]:
    """Every file under ``folder``, through linked folders too (a folder reached again, by a loop of links, once),
    but those of an index in it (a folder holding an index's manifest or build state: an index built inside its
    corpus folder is not read as documents when it is built again); a subfolder that cannot be listed is an error
    (``rglob`` skips it silently, which would leave its documents out of the index without a word)."""

    def refuse(error: OSError) -> None:
        raise CorpusError(f"{error.filename} cannot be read ({error.strerror}); fix its permissions or leave it out")

    seen = {folder.resolve()}  # a linked folder is read like any other, and a folder reached again (a loop) once
    for root, folders, names in os.walk(folder, onerror=refuse, followlinks=True):
        kept = []
        for name in folders:
            path = Path(root) / name
            if not _holds_index(path) and path.resolve() not in seen:
                seen.add(path.resolve())
                kept.append(name)
        folders[:] = kept
        yield from (Path(root) / name for name in names)


def _holds_index(folder: Path) -> bool:
    return (folder / layout.MANIFEST).is_file() or (folder / layout.STATE).is_file()


@dataclass
class ReadStats:
    """What reading skipped or repaired."""

    documents: int = 0
    empty: int = 0
    empty_ids: list[str] = field(default_factory=list)  # the empty documents' ids, in order
    replaced: dict[str, int] = field(default_factory=dict)  # file -> U+FFFD characters (undecodable bytes)


def is_empty(text: str) -> bool:
    """Whether a document's text is empty (blank space only): such a document is skipped, never indexed."""
    return not text.strip()


def stored_ids(doc_ids: Iterable[str]) -> dict[str, str]:
    """An index's ``doc_ids`` by the form ids are read in (``composed``), each to the id as stored: an index written
    before ids were composed may hold one decomposed, which a composed id typed or read now must still find."""
    return {composed(doc_id): doc_id for doc_id in doc_ids}


def read_corpus(
    files: list[tuple[Path, str]], options: ReaderOptions, stats: ReadStats | None = None, warn: bool = False
) -> Iterator[Document]:
    """All non-empty documents of ``files`` in order, their ids, titles and texts ``composed`` as queries are read;
    ``warn`` warns once per file with undecodable bytes."""
    stats = stats if stats is not None else ReadStats()
    for path, name in files:
        replaced = 0
        for doc in _read_file(path, name, options):
            doc = replace(doc, doc_id=composed(doc.doc_id), title=composed(doc.title), text=composed(doc.text))
            replaced += doc.text.count("\ufffd") + doc.title.count("\ufffd")
            if is_empty(doc.text):
                stats.empty += 1
                stats.empty_ids.append(doc.doc_id)
                continue
            stats.documents += 1
            yield doc
        if replaced:
            stats.replaced[name] = replaced
            if warn:
                warn_replaced(path, replaced)


def _read_file(path: Path, name: str, options: ReaderOptions) -> Iterator[Document]:
    fmt = file_format(path)
    try:
        if fmt == "txt":
            yield from _read_txt(path, name, options)
        elif fmt in MARKUP:
            with open_text(path) as f:
                title, text = (markdown_text if fmt == "md" else rst_text)(f.read())
            yield Document(name, title, text, name)
        elif fmt == "jsonl":
            yield from _read_jsonl(path, name, options)
        else:
            yield from _read_table(path, name, options, fmt)
    except (*DECODE_ERRORS, ValueError, pd.errors.ParserError) as error:
        if isinstance(error, CorpusError):
            raise
        raise CorpusError(f"{path} cannot be read as {fmt}: {error}") from None


def _read_txt(path: Path, name: str, options: ReaderOptions) -> Iterator[Document]:
    with open_text(path) as f:
        if options.doc_per_file:
            yield Document(name, Path(name).name.split(".")[0], f.read(), name)
            return
        for number, line in enumerate(f, start=1):
            yield Document(f"{name}:{number}", "", line.rstrip("\n"), name)


def markdown_text(source: str) -> tuple[str, str]:
    """(title, text) of a Markdown document: its first heading, and its blocks as paragraphs of plain text (headings,
    paragraphs, list items, quotes and code kept; emphasis, links' targets, images and HTML dropped)."""
    tokens = MarkdownIt("commonmark", {"maxNesting": MARKUP_NESTING}).parse(source)
    if max((token.level for token in tokens), default=0) >= MARKUP_NESTING - 1:  # markdown-it skipped the rest
        raise ValueError(f"its lists and quotes are nested too deeply ({MARKUP_NESTING} levels): text would be lost")
    blocks, title, in_heading = [], "", False
    for token in tokens:
        if token.type == "heading_open":
            in_heading = True
        elif token.type == "inline":
            words = [
                _INLINE.get(child.type, child.content if child.type in ("text", "code_inline") else "")
                for child in token.children or []
            ]
            text = "".join(words).strip()
            if text:
                blocks.append(text)
                title = title or (text if in_heading else "")
            in_heading = False
        elif token.type in ("fence", "code_block") and token.content.strip():
            blocks.append(token.content.strip())
    return title, "\n\n".join(blocks)


_INLINE = {"softbreak": " ", "hardbreak": "\n"}  # line breaks inside a Markdown paragraph


def rst_text(source: str) -> tuple[str, str]:
    """(title, text) of a reStructuredText document: its first title, and its text with the markup stripped
    (docutils; no file inclusion, no raw output, no messages about the markup)."""
    settings = {"report_level": 5, "halt_level": 5, "file_insertion_enabled": False, "raw_enabled": False}
    try:
        tree = publish_doctree(source, reader=_BoundedReader(), settings_overrides=settings)
        for message in list(tree.findall(nodes.system_message)):  # what docutils says of the markup is not text
            message.parent.remove(message)
        title = next(iter(tree.findall(nodes.title)), None)
        return (title.astext() if title is not None else ""), tree.astext()
    except RecursionError:
        raise ValueError(
            "its markup nests deeper than can be followed (lists, quotes or substitutions within each other)"
        ) from None


class _BoundedSubstitutions(references.Substitutions):
    """docutils' substitutions, once the text they would add is within ``MAX_SUBSTITUTED``: each definition's
    expanded length is summed from the lengths of those it names, each computed once (linear work, where expanding
    them multiplies at each level)."""

    def apply(self) -> None:
        definitions, names = self.document.substitution_defs, self.document.substitution_names
        lengths: dict[str, int] = {}

        def definition(reference: nodes.substitution_reference) -> str | None:
            name = reference["refname"]
            return name if name in definitions else names.get(name.lower())

        def expanded(name: str) -> int:  # a circular definition counts 0 here; docutils reports it
            if name not in lengths:
                lengths[name] = 0
                node = definitions[name]
                named = [definition(reference) for reference in node.findall(nodes.substitution_reference)]
                lengths[name] = len(node.astext()) + sum(expanded(d) for d in named if d is not None)
            return lengths[name]

        added = sum(
            expanded(name)
            for reference in self.document.findall(nodes.substitution_reference)
            if (name := definition(reference)) is not None
        )
        allowed = MAX_SUBSTITUTED + len(self.document.astext())
        if added > allowed:
            raise ValueError(f"its substitutions would add {added:,} characters; at most {allowed:,}")
        super().apply()


class _BoundedReader(standalone.Reader):
    def get_transforms(self) -> list:
        swap = {references.Substitutions: _BoundedSubstitutions}
        return [swap.get(transform, transform) for transform in super().get_transforms()]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, numbers.Real) and value != value)  # None, or NaN (an empty cell)


def _field_text(value: Any, field_name: str, where: str) -> str:
    """A text or title field as the document's text: a string (a number is written out); an empty cell is "". A
    list, a dict, bytes or a truth value is refused, never written as its Python repr."""
    if _missing(value):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return str(value)
    raise CorpusError(
        f"{where}: the {field_name!r} field is {_kind(value)}, not text; give each document its text as one string"
    )


def _field_id(value: Any, field_name: str, where: str) -> str:
    """A document id: a string or a whole number ("7" and 7 are one id); an empty cell is none (the default id).
    Any other value (2.5, a list, a dict, bytes, a truth value) is refused, never kept as its repr."""
    if _missing(value):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and float(value).is_integer():
        return str(int(value))  # a column of whole numbers with a gap, read as floats
    raise CorpusError(f"{where}: the {field_name!r} field is {_kind(value)}, not an id (a string or a whole number)")


def _kind(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return "binary data"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "a list"
    if isinstance(value, dict):
        return "a dict"
    return f"a {type(value).__name__} ({value!r})"[:80]


def _read_jsonl(path: Path, name: str, options: ReaderOptions) -> Iterator[Document]:
    with open_text(path) as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line, object_pairs_hook=unique_keys)
            except json.JSONDecodeError as error:
                raise CorpusError(f"{path}, line {number}: not valid JSON ({error.msg})") from None
            except RepeatedKeyError as error:
                raise CorpusError(f"{path}, line {number}: {error}") from None
            if not isinstance(record, dict):
                raise CorpusError(f"{path}, line {number}: expected a JSON object per line")
            yield _record_document(record, f"{name}:{number}", name, options, f"{path}, line {number}")


def _record_document(record: dict, default_id: str, name: str, options: ReaderOptions, where: str) -> Document:
    if options.text_column not in record:
        raise CorpusError(
            f"{where} has no {options.text_column!r} field (fields: {', '.join(map(str, record))}); "
            "name the text field with --text-column"
        )
    for column in (options.id_column, options.title_column):
        if column is not None and column not in record:
            raise CorpusError(f"{where} has no {column!r} field (fields: {', '.join(map(str, record))})")
    text = _field_text(record[options.text_column], options.text_column, where)
    title = _field_text(record.get(options.title_column or "title"), options.title_column or "title", where)
    doc_id = _field_id(record.get(options.id_column or "id"), options.id_column or "id", where) or default_id
    return Document(doc_id, title, text, name)


def _read_table(path: Path, name: str, options: ReaderOptions, fmt: str) -> Iterator[Document]:
    """CSV (pandas, in chunks) or parquet (pyarrow record batches), one document per row."""
    if fmt == "csv":
        handle = open_text(path)
        chunks = pd.read_csv(handle, chunksize=CSV_CHUNK, dtype=str, keep_default_na=False)
    else:
        handle = None
        chunks = (batch.to_pandas() for batch in pq.ParquetFile(path).iter_batches(batch_size=CSV_CHUNK))
    try:
        row = 0
        for frame in chunks:
            for record in frame.to_dict("records"):
                row += 1
                yield _record_document(record, f"{name}:{row}", name, options, f"{path}, row {row}")
    finally:
        if handle is not None:
            handle.close()
