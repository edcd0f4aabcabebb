"""Building an index: one pipeline for a new index (``write_index``) and for more documents (``write_additions``);
``index.build_index`` and ``index.add_documents`` run them and open the result (this module never imports ``Index``).

    check the inputs -> lock the folder -> scan the corpus -> encode shards -> finalize -> write the manifest

An index directory is committed by writing ``manifest.json`` last. Until then ``build-state.json``
records what is being built; re-running the same build resumes from the completed shards (each
shard directory appears atomically), and everything after the shards is deterministic, so a resumed
build equals an uninterrupted one. ``add`` is a build on an existing base: it appends shards the same way and
commits a new manifest that points at new FAISS files (a killed ``add`` leaves the old index intact);
``delete`` only rewrites the manifest (deleted documents are filtered out of every result).
Reading and encoding are in ``shards.py``, FAISS and GloVe in ``finalize.py``, what a build may delete in
``folder.py``. With ``ray`` (``--ray``) the shards are encoded by workers of a Ray cluster (``distributed.py``,
imported only then); everything else is the same code.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from encoder import Elmo, LayerMix, ownership
from encoder.commands import program
from encoder.device import resolve_device
from encoder.glove import BASELINES, STANFORD
from encoder.options import check_keywords
from encoder.readout import Readout, ReadoutSettings
from encoder.terminal import counted
from encoder.text import composed
from encoder.words import WordFrequencies

from . import folder, layout, storage
from .errors import CorpusError, IndexFormatError, QueryError
from .factory import check_factory, check_trainable
from .finalize import (
    build_indexes,
    check_token_index,
    describe_glove,
    drop_exact_tokens,
    exact_token_records,
    glove_source,
    planned_token_vectors,
    vocabulary,
    write_calibration,
    write_vocabulary,
)
from .live import removed_copies
from .manifest import FORMAT_VERSION, MIXES, CorpusFile, Counts, Manifest, MixRecord, ModelRecord, ModelSpec
from .parts import load_model, model_source, open_glove, open_model
from .readers import GivenTexts, ReaderOptions, corpus_files, recorded_path, stored_ids
from .settings import AUTO, GLOVE_NAMES, SHARD_TOKENS, TRAIN_GLOVE, Settings
from .shards import Encoding, Scan, ShardWriter, encode_shards, kept_words, scan_corpus

__all__ = ["SHARD_TOKENS", "Settings", "Written", "write_index", "write_additions", "delete_documents"]

COUNTED = ("documents", "sentences", "tokens", "token_vectors")


@dataclass
class Job:
    """Everything one build or add works from, checked before the folder is touched."""

    out: Path
    files: list[tuple[Path, str]]  # (corpus file, display name)
    options: ReaderOptions
    elmo: Elmo
    model: ModelRecord
    settings: Settings
    mixes: dict[str, MixRecord]  # MIXES -> the mix as recorded in the manifest
    state: dict  # build-state.json while it runs; a build's manifest keeps it to recognise a re-run
    progress: bool
    ray: bool | str = False  # encode the shards on a Ray cluster (the caller is connected: ``_connected``)
    ray_workers: int | None = None  # Ray actors (None: one per GPU, else one per CPU of the cluster)
    model_spec: ModelSpec | None = None  # where Ray workers load the model from (None: ``model.source``)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _fingerprint(files: list[tuple[Path, str]]) -> list[dict]:
    """Name, size and sha256 of every corpus file: what tells one build's inputs from another's."""
    return [{"name": name, **storage.file_record(path)} for path, name in files]


def _mix_record(spec: str, mix: LayerMix) -> MixRecord:
    return MixRecord(spec, tuple(mix.weights), mix.describe())


def _counts(shards: Sequence, base: Manifest | None, scan: Scan) -> Counts:
    """Live counts (the base's deleted documents left out), stored ones, and what reading skipped."""
    stored = {key: sum(getattr(s, key) for s in shards) for key in COUNTED}
    before = base.counts if base is not None else None
    deleted = {key: getattr(before, f"stored_{key}") - getattr(before, key) if before else 0 for key in COUNTED}
    return Counts(
        **{key: stored[key] - deleted[key] for key in COUNTED},
        **{f"stored_{key}": value for key, value in stored.items()},
        deleted_documents=deleted["documents"],
        skipped_empty_documents=(before.skipped_empty_documents if before else 0) + scan.stats.empty,
        replaced_characters=(before.replaced_characters if before else 0) + sum(scan.stats.replaced.values()),
    )


def _uses_ray(ray: bool | str | None) -> bool:
    return ray is not False and ray is not None


def _connected(ray: bool | str) -> AbstractContextManager:
    """A connection to the Ray cluster ``ray`` names (True: the usual one, see ``distributed.connected``) for the
    block; nothing, and Ray not imported, when ``ray`` is False."""
    if not _uses_ray(ray):
        return nullcontext()
    from . import distributed

    return distributed.connected(None if ray is True else str(ray))


def _check_ray(ray: bool | str, model: ModelSpec | None, record: ModelRecord) -> None:
    """Ray workers load the model themselves: it must be named (``model``, else the record's source)."""
    if _uses_ray(ray) and (isinstance(model, Elmo) or (model is None and record.source is None)):
        raise ValueError(
            "with Ray, give the model as a name or a path (every worker loads it itself), not a loaded Elmo"
        )


@contextmanager
def _shard_writer(job: Job, encoding: Encoding) -> Iterator[ShardWriter | None]:
    """Who encodes the shards: this process (None: ``encode_shards``' default) or Ray actors (``--ray``)."""
    if not _uses_ray(job.ray):
        yield None
        return
    from . import distributed

    with distributed.encoders(job.out, job.model, job.model_spec, encoding, job.ray_workers) as writer:
        yield writer


def _encode_and_commit(job: Job, base: Manifest | None, scan: Scan, replaced: pd.DataFrame | None = None) -> Manifest:
    """The shared second half of build and add: encode the new shards on top of ``base`` (None: a new index),
    finalize the next generation and commit its manifest; the documents ``replaced`` (live documents of ``base``,
    by id, that the new ones replace) are deleted in the same commit."""
    out, settings = job.out, job.settings
    vocab = vocabulary(out, base, scan.counts, scan.drawn)
    frequencies = WordFrequencies(dict(zip(vocab["word"], vocab["count"].tolist())))
    readout = Readout.of_model(job.elmo.folder, base.readout if base else None, job.elmo.model)
    encoding = Encoding(
        job.elmo, readout, settings, frequencies, kept_words(dict(zip(vocab["word"], vocab["count"])), settings)
    )
    with _shard_writer(job, encoding) as writer:
        new = encode_shards(
            out, job.files, job.options, scan, encoding, base.shards if base else (), job.progress, writer
        )
    generation = base.generation + 1 if base else 1
    shards = (*(base.shards if base else ()), *new)
    vocab_file = write_vocabulary(out, vocab, generation)
    calibration = write_calibration(out, job.elmo, vocab, frequencies, settings, generation)
    source = base.glove_source if base else glove_source(out, settings, vocab, shards, job.progress)
    glove = open_glove(out, source)
    weights = {name: mix.weights for name, mix in job.mixes.items()}
    dims = (job.elmo.n_layers, job.elmo.dim)
    indexes = build_indexes(out, base, shards, new, settings, weights, glove, dims, generation)
    shards = exact_token_records(shards, settings)  # without token_layers.npy unless keep_exact_tokens
    corpus = tuple(
        CorpusFile(
            **record,
            path=recorded_path(path, name),
            documents=scan.per_file.get(name, 0),
            replaced_characters=scan.stats.replaced.get(name, 0),
        )
        for (path, name), record in zip(job.files, job.state["corpus"])
    )
    now = _now()
    changes = dict(
        generation=generation,
        updated_at=now,
        shards=shards,
        indexes=indexes,
        counts=_counts(shards, base, scan),
        vocab=vocab_file,
        calibration=calibration,
    )
    if base is not None:
        manifest = base.replace(**changes, corpus=base.corpus + corpus)
    else:
        manifest = Manifest(
            **changes,
            created_at=now,
            model=job.model,
            **job.mixes,
            pooling=settings.pooling,
            settings=settings,
            corpus=corpus,
            glove_source=source,
            glove=describe_glove(source, glove),
            build=job.state,
            readout=readout.settings,
        )
    if replaced is not None and len(replaced):
        manifest = _without(manifest, replaced)
    manifest.write(out)
    drop_exact_tokens(out, manifest)
    (out / layout.STATE).unlink()
    return manifest


def _target_status(out: Path, contents: folder.Contents, state: dict, overwrite: bool) -> str:
    """``done`` (the same build already finished), ``resume`` (it was interrupted) or ``fresh``; refuses to
    replace an index or an interrupted build of something else unless allowed, and any folder holding files a
    build did not write (even with --overwrite: a build deletes only its own files)."""
    manifest, previous, foreign = contents.manifest, contents.state, contents.foreign
    if contents.older is not None and not overwrite:
        Manifest.read(out)  # refused with the advice to rebuild it, which --overwrite follows
    if foreign:
        what = "an index with other files in it" if contents.owner is not None else "not empty and not an index"
        raise FileExistsError(
            f"{out} is {what} ({', '.join(foreign[:5])}{' …' if len(foreign) > 5 else ''}); a build never "
            "deletes files it did not write: choose an empty or new directory, or move them away"
        )
    if manifest is not None and not overwrite:
        if manifest.build == state:
            return "done"
        raise FileExistsError(
            f"{out} already holds an index built from other inputs or settings; use "
            "`add` to add documents, choose another --out, or pass --overwrite to replace it"
        )
    if previous is not None and previous != state and not overwrite:
        raise IndexFormatError(
            f"{out} holds an interrupted build with other inputs or settings; re-run that "
            "build to resume it, or pass --overwrite to start over"
        )
    return "resume" if previous == state and not overwrite else "fresh"


def _refuse_lookalikes(out: Path, contents: folder.Contents) -> None:
    """Refuse an ``add`` to a folder holding a user's file named as one of a later generation's: each commit moves
    the generations the index may claim (``folder.is_ours``), so the add's clean-up, or a later one, would take it
    for its own and delete it. Other files of the user's are never touched, and stay."""
    lookalikes = [out / name for name in contents.foreign if "/" not in name and layout.role(name) is not None]
    if lookalikes:
        raise FileExistsError(
            f"{out} holds {ownership.listing(out, lookalikes)}, named as the index's own files but not written by it; "
            "move them out of the index folder, then add again"
        )


# ------------------------------------------------------------------------------------------ public
def build_settings(settings: Settings | None = None, **fields: Any) -> Settings:
    """The settings of a build: ``settings``, or the defaults with ``fields`` (``Settings`` fields as keywords), never
    both (``dataclasses.replace(settings, pooling="mean")`` changes some fields of one). A layer mix may be given as
    weights (a sequence of numbers); a GloVe file is recorded by its absolute path."""
    if settings is not None and not isinstance(settings, Settings):  # "x" failed deep in the build, "" was the defaults
        raise TypeError(f"settings must be an indexer.Settings (or its fields as keywords), not {settings!r}")
    if settings is not None and fields:
        raise TypeError(
            f"give settings= or {', '.join(f'{name}=' for name in fields)}, not both: settings= sets every field "
            "(dataclasses.replace(settings, ...) changes some)"
        )
    check_keywords(Settings, fields, "setting")
    settings = settings or Settings(**fields)
    spec = {name: _mix_spec(getattr(settings, name)) for name in MIXES}
    glove = str(settings.glove)
    return dataclasses.replace(settings, **spec, glove=glove if glove in GLOVE_NAMES else str(Path(glove).resolve()))


def _mix_spec(mix: str | Sequence[float]) -> str:
    return mix if isinstance(mix, str) else ",".join(map(str, mix))


class Written(NamedTuple):
    """What a build or an add wrote, as ``index.build_index`` and ``index.add_documents`` open it: the folder, the
    model it was written with, the device, and whether its files are to be checked by hash (not when just written)."""

    folder: Path
    model: Elmo
    device: str
    verify: bool


def write_index(
    corpus: str | Path | Sequence[str | Path | GivenTexts],
    out: str | Path,
    model: ModelSpec = "default",
    *,
    settings: Settings | None = None,
    device: str = "auto",
    progress: bool = True,
    overwrite: bool = False,
    ray: bool | str = False,
    ray_workers: int | None = None,
    demo: str | None = None,
    **options: Any,
) -> Written:
    """Build (or resume building) an index of ``corpus`` in ``out``: ``build_index`` returns it opened.

    How: ``settings`` (a ``Settings``), or its fields as keywords (``pooling="mean"``, ``glove="train"``, ...), never
    both. Reader options, also keywords: ``text_column``, ``id_column``, ``title_column``, ``doc_per_file``.
    Re-running a finished build with the same inputs just opens it.
    ``ray``: encode the shards on a Ray cluster (True: this process's Ray connection, else the cluster
    ``RAY_ADDRESS`` or ``ray start`` names, else a new local one; or an address, "auto" for an existing
    cluster only), with ``ray_workers`` actors (default one per GPU, else per CPU); ``out`` must then be on
    storage every node sees. The index is the same as without Ray (vectors up to float rounding). ``demo``: the
    app's demo collection this index is (``python -m app`` marks the indexes it builds, and rebuilds only those;
    the manifest's ``build`` record keeps it, ``FolderInfo.demo`` reads it).
    """
    out, device = Path(out), resolve_device(device)
    unknown = sorted(set(options) - set(Settings.__dataclass_fields__) - set(ReaderOptions.__dataclass_fields__))
    if unknown:  # not "unknown reader option": a setting would have been as welcome
        raise TypeError(
            f"unknown option{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}; known: the settings "
            f"{', '.join(Settings.__dataclass_fields__)} and the reader options "
            f"{', '.join(ReaderOptions.__dataclass_fields__)}"
        )
    fields = {name: value for name, value in options.items() if name in Settings.__dataclass_fields__}
    reader_options = {name: value for name, value in options.items() if name not in fields}
    settings = build_settings(settings, **fields)
    settings.check()
    options = ReaderOptions.from_kwargs(**reader_options)
    elmo, model_record = load_model(model, device)
    if settings.glove == AUTO:  # the baseline of the model's language: a Korean collection gets Korean GloVe
        settings = dataclasses.replace(settings, glove=BASELINES.get(elmo.text.language, STANFORD))
    _check_ray(ray, None, model_record)
    mixes = {
        name: _mix_record(getattr(settings, name), LayerMix.parse(getattr(settings, name), elmo.n_layers))
        for name in MIXES
    }
    if settings.index_factory:
        check_factory(settings.index_factory, elmo.dim)
    check_token_index(settings, elmo.dim)
    ReadoutSettings.of_folder(elmo.folder)  # a damaged readout.json beside the model: said before anything is written
    files = corpus_files(corpus)
    state = {
        "kind": "build",
        "format_version": FORMAT_VERSION,
        "settings": asdict(settings),
        "model": asdict(model_record),
        "reader": asdict(options),
        "corpus": _fingerprint(files),
        **({"demo": demo} if demo is not None else {}),
    }
    if settings.glove not in GLOVE_NAMES and Path(settings.glove).is_relative_to(out.resolve()):
        raise ValueError(f"the GloVe file {settings.glove} is inside --out; keep it elsewhere (the index refers to it)")
    job = Job(out, files, options, elmo, model_record, settings, mixes, state, progress, ray, ray_workers)
    # the lock before the folder is looked at, so two builds into one folder cannot both start
    with _connected(ray), folder.locked(out):
        contents = folder.read(out)
        status = _target_status(out, contents, state, overwrite)
        if status == "done":
            return Written(out, elmo, device, verify=True)
        # the whole corpus is validated before anything is written
        scan = scan_corpus(files, options, elmo.text, set(), progress)
        if settings.index_factory:
            check_trainable(settings.index_factory, elmo.dim, scan.sentences)
        check_token_index(settings, elmo.dim, planned_token_vectors(scan.counts, elmo.text.stopwords, settings))
        if settings.glove == TRAIN_GLOVE and max(scan.counts.values()) < settings.glove_min_count:
            raise CorpusError(
                f"no word occurs {settings.glove_min_count} times, too little text to train GloVe; "
                "lower --glove-min-count or give GloVe vectors with --glove"
            )
        if status == "fresh" and contents.owner is not None:  # what an earlier index or build wrote; nothing else
            folder.clear(out, contents.owner)
        storage.write_json(out / layout.STATE, state)
        kept = contents.shards if status == "resume" else ()  # the interrupted build's finished shards
        folder.remove_unreferenced(out, None, state, keep_shards=kept)
        _encode_and_commit(job, None, scan)
    return Written(out, elmo, device, verify=False)  # just written: sizes are checked, not hashes


def write_additions(
    path: str | Path,
    corpus: str | Path | Sequence[str | Path | GivenTexts],
    model: ModelSpec | None = None,
    device: str = "auto",
    progress: bool = True,
    *,
    ray: bool | str = False,
    ray_workers: int | None = None,
    replace: bool = False,
    **reader_options: Any,
) -> Written:
    """Append the documents of ``corpus`` to the index at ``path`` (resumable like a build): ``add_documents``
    returns it opened.

    New documents get token vectors under the index's settings; GloVe is not retrained (words it does
    not know do not count in GloVe sentence means), and FAISS indexes keep their type and training.
    A document whose id is in the index is refused, unless ``replace`` (an upsert): it then replaces that
    document, in the same commit as the additions (a killed upsert leaves the index as it was). The id of a
    deleted document can be used again. ``ray`` and ``ray_workers`` as for ``write_index``.
    """
    out, device = Path(path), resolve_device(device)
    with _connected(ray), folder.locked(out, create=False):
        contents = folder.read(out)
        base = contents.manifest or Manifest.read(out)  # Manifest.read says why there is none
        _refuse_lookalikes(out, contents)
        base.check_files(out, verify_hashes=False)  # never commit a new generation over a damaged index
        elmo = open_model(base.model, model, device)
        options = ReaderOptions.from_kwargs(**reader_options)
        files = corpus_files(corpus)
        state = {"kind": "add", "generation": base.generation, "reader": asdict(options), "corpus": _fingerprint(files)}
        state |= {"replace": True} if replace else {}  # an add written before upserts existed reads the same
        mixes = {name: getattr(base, name) for name in MIXES}
        _check_ray(ray, model, base.model)
        spec = model_source(model) if model is not None and not isinstance(model, Elmo) else model
        job = Job(out, files, options, elmo, base.model, base.settings, mixes, state, progress, ray, ray_workers, spec)
        previous = contents.state
        keep_shards = []
        if previous == state:
            first_new = max((int(s.name) for s in base.shards), default=-1) + 1
            keep_shards = [name for name in contents.shards if layout.shard_number(name) >= first_new]
        elif previous is not None and previous.get("generation") == base.generation:
            raise IndexFormatError(
                f"{out} holds an interrupted `add` of other files; re-run that add to finish it "
                f"(or delete {out / layout.STATE} to discard it)"
            )
        live = _live_documents(out, base)
        stored = stored_ids(live.index)  # the ids as read now (composed), each to the id a document holds
        taken = set() if replace else set(stored)
        scan = scan_corpus(files, options, elmo.text, taken, progress)  # the new documents, before any writing
        if replace:
            _refuse_empty_replacements([doc_id for doc_id in scan.stats.empty_ids if doc_id in stored])
        replaced = live.loc[[stored[doc_id] for doc_id in scan.doc_ids if doc_id in stored]] if replace else None
        folder.remove_unreferenced(out, base, base, keep_shards)
        storage.write_json(out / layout.STATE, state)
        manifest = _encode_and_commit(job, base, scan, replaced)
        folder.remove_unreferenced(out, manifest, manifest)
    return Written(out, elmo, device, verify=False)


def _refuse_empty_replacements(doc_ids: list[str]) -> None:
    """An upsert's empty documents are skipped as a build's are, so one whose id the index holds would leave the
    indexed text in place while the user believes it replaced: refused, naming them, before anything is written."""
    if doc_ids:
        shown = ", ".join(map(repr, doc_ids[:5])) + (", ..." if len(doc_ids) > 5 else "")
        raise CorpusError(
            f"{counted(len(doc_ids), 'document')} to replace {'is' if len(doc_ids) == 1 else 'are'} empty ({shown}): "
            "an empty text replaces nothing (empty documents are skipped); give it text, or delete the document"
        )


def _live_documents(out: Path, manifest: Manifest) -> pd.DataFrame:
    """The documents results can come from (deleted ones left out), by id, with their counts."""
    docs = pd.concat([storage.read_parquet(layout.shard_file(out, s.name, "docs")) for s in manifest.shards])
    return docs[~removed_copies(docs["doc_id"].tolist(), manifest.deleted_doc_ids)].set_index("doc_id")


def _without(manifest: Manifest, removed: pd.DataFrame) -> Manifest:
    """``manifest`` with the live documents ``removed`` (rows of ``_live_documents``) deleted."""
    counts = asdict(manifest.counts)
    for key in COUNTED:
        counts[key] -= len(removed) if key == "documents" else int(removed[key].sum())
    counts["deleted_documents"] += len(removed)
    return manifest.replace(
        updated_at=_now(), counts=Counts(**counts), deleted_doc_ids=(*manifest.deleted_doc_ids, *removed.index)
    )


def _listing(out: Path) -> str:
    """The command that lists the ids of the documents in the index at ``out``."""
    return f"`{program('indexer')} stats --index {shlex.quote(str(out))} --docs`"


def distinct_ids(doc_ids: Iterable[str]) -> list[str]:
    """The ids in their order, each once, as ids are read (``composed``): the documents a delete removes (an id
    given twice, or typed both ways, goes once)."""
    return list(dict.fromkeys(map(composed, doc_ids)))


def delete_documents(path: str | Path, doc_ids: Sequence[str]) -> Counts:
    """Remove documents from search results (their vectors stay on disk); returns the new counts. ``doc_ids`` is a
    list of ids: one string is refused, not read as ids of one character each ("12" would delete "1" and "2")."""
    out = Path(path)
    if isinstance(doc_ids, (str, bytes)):
        raise QueryError(f"ids must be a list of document ids, not one string ({[doc_ids]!r} deletes that one)")
    given = list(doc_ids if doc_ids is not None else [])
    if not given:
        raise QueryError(f"no document ids given: name the documents to delete ({_listing(out)} lists them)")
    other = next((doc_id for doc_id in given if not isinstance(doc_id, str)), None)
    if other is not None:
        raise QueryError(f"document ids are strings, not {other!r} (type {type(other).__name__})")
    wanted = distinct_ids(given)
    with folder.locked(out, create=False):
        manifest = Manifest.read(out)
        live = _live_documents(out, manifest)
        stored = stored_ids(live.index)  # as read now (composed), each to the id a document holds
        unknown = [d for d in wanted if d not in stored]
        if unknown:
            raise QueryError(
                f"{counted(len(unknown), 'document id')} {'is' if len(unknown) == 1 else 'are'} not in the index: {', '.join(map(repr, unknown[:10]))}"
                f"{' …' if len(unknown) > 10 else ''}; nothing was deleted ({_listing(out)} lists the documents)"
            )
        manifest = _without(manifest, live.loc[[stored[d] for d in wanted]])
        manifest.write(out)
    return manifest.counts
