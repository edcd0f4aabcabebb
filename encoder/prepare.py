"""``python -m encoder prepare``: tokenize a training corpus once, into prepared files that ``train --corpus`` reads.

A GPU machine then trains without the tokenizer (Kiwi and its 88 MB model for Korean) and without spending its
minutes tokenizing. Each text file becomes one or more ``*.tokens.xz`` files (``corpus.write_prepared``: a
safetensors archive, compressed by xz, of the ids, the word types and a record of the text rules that made them),
cut between paragraphs and each under 16 MB. ``prepared.json`` beside them records what was asked and written,
after every source, so that a killed prepare run again finishes what it started; ``.lock`` is its lock. Only files
prepare wrote are ever replaced (``ownership``). ``train`` refuses prepared files made by other rules than the
model's, those of an unfinished prepare and those the record does not list (``corpus.py`` reads them).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from . import locks, ownership
from .corpus import (
    IN_PROCESS_BYTES,
    MANIFEST_FILE,
    PREPARED_FORMAT,
    PREPARED_SUFFIX,
    WORKERS,
    TokenizedText,
    default_workers,
    is_complete,
    read_record,
    tokenize_file,
    worker_pool,
    write_prepared,
)
from .files import atomic_path, made_folder, open_text, sha256_of, temporary_target, text_files
from .locks import LOCK
from .numbers import Number
from .ownership import NotOwnedError
from .terminal import counted, show, visible
from .text import TextRules, text_rules

MAX_FILE_BYTES = 16 * 1024 * 1024  # what one file may weigh (a GPU machine's transfers take files up to this)
PART_TOKENS = 8_000_000  # ids per prepared file: about 9-10 MB compressed (xz packs an id into 1.1-1.2 bytes)
PART_TOKENS_RULE = Number(int, 1, 2**31)  # ids of one file: its paragraphs' offsets are int64, its ids uint32


def _part_name(source: Path, number: int) -> str:
    return f"{_stem(source)}.{number:03d}{PREPARED_SUFFIX}"


def _stem(source: str | Path) -> str:
    stem = Path(source).name
    for suffix in (".gz", ".xz", ".bz2", ".txt"):
        stem = stem.removesuffix(suffix)
    return stem


def _write_parts(out: Path, source: Path, tokenized: TokenizedText, record: dict, part_tokens: int) -> list[dict]:
    """The file's pieces, each under ``MAX_FILE_BYTES`` (a piece that compresses worse is cut again)."""
    written, pending = [], tokenized.parts(part_tokens)
    while pending:
        piece = pending.pop(0)
        name = _part_name(source, len(written))
        size = write_prepared(out / name, piece, {**record, "part": len(written)})
        if size > MAX_FILE_BYTES:
            halves = piece.parts(max(len(piece.ids) // 2, 1))
            if len(halves) < 2:
                raise ValueError(f"{source}: one paragraph of {len(piece.ids):,} tokens exceeds a prepared file")
            (out / name).unlink()
            pending[:0] = halves
            continue
        written.append({"file": name, "source": str(source), "tokens": int(len(piece.ids)), "bytes": size})
    return written


def _written_by(out: Path, record: dict | None) -> ownership.Owned:
    """What ``prepare`` writes in ``out`` (``ownership``): its lock, its record (and the temporary of one a kill cut
    short) and, once it has a record, the parts of the sources it names (or, for a record older than ``sources``,
    the files it lists), and their temporaries."""
    sources = [s["path"] for s in record.get("sources", [])] if record is not None else []
    listed = {f["file"] for f in record["files"]} if record is not None else set()
    parts = re.compile("|".join(re.escape(_stem(s)) + r"\.\d{3}" + re.escape(PREPARED_SUFFIX) for s in sources) or "$^")

    def ours(path: Path) -> bool:
        temporary = temporary_target(path.name)
        name = temporary or path.name
        if path.parent != out or not path.is_file():
            return False
        if name == LOCK or (temporary and name == MANIFEST_FILE):  # a record being written when prepare was killed
            return True
        return record is not None and (name == MANIFEST_FILE or name in listed or bool(parts.fullmatch(name)))

    return ours


def _plan(sources: Sequence[Path], rules: TextRules, part_tokens: int) -> dict:
    """What a prepare is asked to do: its format and rules, its part size and its sources (path, size, sha256)."""
    return {
        "format": PREPARED_FORMAT,
        "rules": rules.name,
        "rules_identity": rules.identity,
        "part_tokens": part_tokens,
        "sources": [{"path": str(p.resolve()), "size": p.stat().st_size, "sha256": sha256_of(p)} for p in sources],
    }


def _check_out(out: Path, plan: dict, overwrite: bool) -> tuple[dict | None, ownership.Owned]:
    """Refuse an ``--out`` that is not this prepare's to write: a folder of someone else's files, a finished prepare
    without ``--overwrite``, an unfinished one of another plan without ``--overwrite``. Returns its record (None:
    it has none) and what prepare wrote there."""
    record = read_record(out) if (out / MANIFEST_FILE).is_file() else None
    ours = _written_by(out, record)
    if record is None:
        strangers = ownership.foreign(out, ours)
        if strangers:
            raise NotOwnedError(
                f"--out {out} holds files prepare did not write ({ownership.listing(out, strangers)}): give a new "
                "or empty folder"
            )
    elif is_complete(record) and not overwrite:
        raise NotOwnedError(
            f"--out {out} holds a prepared corpus already: pass --overwrite to replace it, or give a new folder"
        )
    elif not is_complete(record) and not _same_plan(record, plan) and not overwrite:
        raise NotOwnedError(
            f"--out {out} holds an unfinished prepare of other files or options: run that prepare again to finish "
            "it, pass --overwrite to start over, or give a new folder"
        )
    return record, ours


def _same_plan(record: dict, plan: dict) -> bool:
    return {k: record.get(k) for k in plan} == plan


def _claim_out(out: Path, plan: dict, overwrite: bool) -> list[dict]:
    """Make ``--out`` this prepare's (under its lock; ``_check_out`` says what is refused); returns the files of the
    sources that a killed run of the same prepare finished, which are kept. Only files prepare wrote are removed
    (``ownership``): a finished prepare's with ``--overwrite``, the unfinished rest of a killed one."""
    record, ours = _check_out(out, plan, overwrite)
    if record is None:
        ownership.remove(out, [p for p in sorted(out.iterdir()) if ours(p) and p.name != LOCK], ours)
        return []
    resumed = not is_complete(record) and _same_plan(record, plan) and not overwrite
    done = record["files"] if resumed else []
    kept = {MANIFEST_FILE, LOCK, *(f["file"] for f in done)}
    ownership.remove(out, [p for p in sorted(out.iterdir()) if ours(p) and p.name not in kept], ours)
    return done


def _write_record(out: Path, record: dict) -> None:
    with atomic_path(out / MANIFEST_FILE) as tmp:
        Path(tmp).write_text(json.dumps(record, indent=1, ensure_ascii=False))


def _holds_text(source: Path) -> bool:
    """Whether a text file holds anything but blank space (read up to its first line that does)."""
    with open_text(source) as f:
        return any(line.strip() for line in f)


def prepare(
    paths: Sequence[str | Path],
    out: str | Path,
    language: str = "en",
    workers: int | None = None,
    part_tokens: int = PART_TOKENS,
    overwrite: bool = False,
    progress: bool = True,
) -> dict:
    """Tokenize the text files under ``paths`` by ``language``'s rules into prepared files in ``out`` (one or
    more per text file); returns the record written beside them. Run again after it was killed, it finishes
    what it started (the sources done are kept)."""
    from tqdm.auto import tqdm

    rules = text_rules(language)
    sources = list(text_files(paths))
    if not sources:
        raise FileNotFoundError(f"no text files in {', '.join(map(str, paths))}")
    names = [_part_name(p, 0) for p in sources]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise ValueError(f"two text files would share the prepared name {clashes[0]}: rename one or prepare them apart")
    PART_TOKENS_RULE.check("--part-tokens", part_tokens)
    if not any(map(_holds_text, sources)):  # else "prepared 0 ids", and train then found "no text files" in --out
        raise ValueError(f"the corpus holds no text (blank lines only) in {', '.join(map(str, paths))}")
    if workers is not None:
        WORKERS.check("--workers", workers)
    out = Path(out)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise NotOwnedError(f"--out {out} is not a folder; give a new or empty folder")
    given = ownership.input_holding(out, paths)
    if given is not None:
        raise ValueError(
            f"--out {out} is inside --corpus {given}: training on {given} would read its text twice, as text and as "
            "the prepared files; choose an --out outside the corpus folders"
        )
    plan = _plan(sources, rules, part_tokens)
    if out.is_dir():
        _check_out(out, plan, overwrite)  # a refusal leaves no lock behind; checked again under the lock
    busy = locks.FolderBusy(f"another prepare is writing {out}; wait for it to finish, or give another --out")
    with made_folder(out), locks.locked(out / LOCK, busy):
        record = {**plan, "files": _claim_out(out, plan, overwrite), "complete": False}
        _write_record(out, record)
        listed = {f["file"] for f in record["files"]}
        todo = [p for p in sources if _part_name(p, 0) not in listed]  # a source's files are listed when all written
        workers = default_workers() if workers is None else workers
        if sum(p.stat().st_size for p in todo) < IN_PROCESS_BYTES:
            workers = 0
        started = time.monotonic()
        pool = worker_pool(workers) if workers else None
        try:
            for source in todo:
                bar = tqdm(desc=visible(source.name), unit=" paragraphs", disable=not progress, mininterval=2.0)
                tokenized = tokenize_file(source, rules.name, pool, bar)
                bar.close()
                made_by = {k: plan[k] for k in ("format", "rules", "rules_identity")}
                parts = _write_parts(out, source, tokenized, {**made_by, "source": source.name}, part_tokens)
                record["files"].extend(parts)
                _write_record(out, record)  # after every source: what is on disk, always listed
                if progress:
                    show(
                        f"{source}: {len(tokenized.ids):,} ids, {len(tokenized.types):,} word types -> "
                        f"{counted(len(parts), 'file')}, {sum(p['bytes'] for p in parts) / 1e6:.1f} MB",
                        file=sys.stderr,
                    )
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        record.update(complete=True, seconds=round(time.monotonic() - started, 1))
        _write_record(out, record)
    return record
