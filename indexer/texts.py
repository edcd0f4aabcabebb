"""An index of a list of strings, as its peers make one (``Index.from_texts``): built in a temporary folder that
lives as long as the ``Index`` does, written to a folder of the user's only when asked (``Index.save``).

The strings go through the same pipeline as a corpus on disk (one JSONL file, written beside the index in the
temporary folder, never inside it; the manifest records them as given texts, not by that file's name), so such an
index is an index like any other: ``add`` and ``upsert`` extend it, and a saved copy opens with ``Index.open``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Container, Sequence
from pathlib import Path
from typing import Any

from encoder.text import composed
from encoder.words import is_word

from . import layout
from .errors import CorpusError
from .readers import GivenTexts, is_empty

LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def checked(texts: Any, ids: Any, first_id: int = 0, taken: Container[str] = ()) -> tuple[list[str], list[str]]:
    """The texts and their ids (default: their positions, from ``first_id``, as strings, passing over the ids
    ``taken`` by documents the index holds), refused with one clear error when they are not a non-empty list of
    strings that are not blank, or the ids not as many unique strings that none of ``taken`` is."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence) or not texts:
        raise CorpusError("texts must be a non-empty list of strings (one document each)")
    wrong = next((i for i, text in enumerate(texts) if not isinstance(text, str)), None)
    if wrong is not None:
        raise CorpusError(f"text {wrong} is a {type(texts[wrong]).__name__}, not a string")
    _refuse_lone_surrogates("text", texts)
    empty = next((i for i, text in enumerate(texts) if is_empty(text)), None)
    if empty is not None:  # a corpus's empty documents are skipped: given one by one, each text must be a document
        raise CorpusError(f"text {empty} is empty: every text becomes a document, and a document needs text")
    if not any(is_word(text) for text in texts):  # as a build refuses such a corpus, said without its file options
        raise CorpusError("no text holds a word (a letter or digit: punctuation and symbols only): nothing to index")
    if ids is None:
        free = (str(number) for number in itertools.count(first_id) if str(number) not in taken)
        return list(texts), list(itertools.islice(free, len(texts)))
    if isinstance(ids, str) or not isinstance(ids, Sequence) or len(ids) != len(texts):
        raise CorpusError(f"ids must be a list of {len(texts)} strings, one per text")
    wrong = next((i for i, doc_id in enumerate(ids) if not isinstance(doc_id, str) or not doc_id.strip()), None)
    if wrong is not None:
        raise CorpusError(f"id {wrong} ({ids[wrong]!r}) is not a non-empty string")
    _refuse_lone_surrogates("id", ids)
    ids = [composed(doc_id) for doc_id in ids]  # as a corpus's ids are read: "café" typed either way is one id
    if len(set(ids)) != len(ids):
        raise CorpusError("ids must be unique; the list repeats one")
    held = next((i for i, doc_id in enumerate(ids) if doc_id in taken), None)
    if held is not None:
        raise CorpusError(f"id {held} ({ids[held]!r}) is already in the index; upsert replaces that document")
    return list(texts), ids


def _refuse_lone_surrogates(what: str, strings: Sequence[str]) -> None:
    """A lone surrogate is no Unicode text: no file can hold it (UTF-8 cannot encode it), so it is refused here
    rather than by a codec's message from the build."""
    for i, string in enumerate(strings):
        lone = LONE_SURROGATE.search(string)
        if lone:
            raise CorpusError(f"{what} {i} is not valid Unicode: a lone surrogate ({lone.group()!r}) at {lone.start()}")


def write_jsonl(folder: Path, texts: list[str], ids: list[str]) -> GivenTexts:
    """The texts as a JSONL corpus (fields id and text) in a new file of ``folder``, to be read as given texts."""
    handle, name = tempfile.mkstemp(dir=folder, prefix="texts-", suffix=".jsonl")
    with open(handle, "w", encoding="utf-8") as f:
        for doc_id, text in zip(ids, texts):
            f.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    return GivenTexts(Path(name))


def save(source: Path, target: str | Path) -> Path:
    """Copy the index at ``source`` to ``target``, a new or empty folder (a folder holding anything is refused:
    nothing of the user's is replaced)."""
    if not isinstance(target, (str, os.PathLike)):
        raise TypeError(f"save to a folder's path (a string or a Path), not {target!r}")
    target = Path(target)
    if target.resolve().is_relative_to(source.resolve()):  # the copy would copy itself, without end
        raise FileExistsError(f"{target} is inside the index being saved ({source}); choose a folder outside it")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FileExistsError(f"{target} already exists and is not an empty folder; choose a new folder to save to")
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(source.iterdir()):
        if entry.name == layout.LOCK:
            continue
        if entry.is_dir():
            shutil.copytree(entry, target / entry.name)
        else:
            shutil.copy2(entry, target / entry.name)
    return target
