"""Index building and storage: resuming a killed build, refusing to overwrite, clear errors on damage."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import CLI_SETTINGS, SETTINGS, brute_force, corpus_documents, filler_documents

from encoder.model import BiLM, BiLMConfig
from encoder.weights import save_model
from indexer import (
    CorruptIndexError,
    Index,
    IndexFormatError,
    IndexMismatchError,
    Settings,
    add_documents,
    build_index,
    layout,
)
from indexer.__main__ import main
from indexer.finalize import planned_token_vectors
from indexer.manifest import Manifest
from indexer.ranking import DRAWN_PER_DOCUMENT

ROOT = Path(__file__).resolve().parents[2]


def _without_times(manifest: Manifest) -> Manifest:
    return manifest.replace(created_at="", updated_at="")


KILLING_BUILD = """
import importlib, os, signal, sys
from indexer.__main__ import main

module_name, name = sys.argv[1].split(":")
module, calls = importlib.import_module(module_name), int(sys.argv[2])
real, done = getattr(module, name), []


def killing(*args, **kwargs):  # a crash right after the step's work is on disk: SIGKILL, no cleanup
    result = real(*args, **kwargs)
    done.append(name)
    if len(done) == calls:
        os.kill(os.getpid(), signal.SIGKILL)
    return result


setattr(module, name, killing)
sys.exit(main(sys.argv[3:]))
"""


def _cli_build(corpus: Path, out: Path, model: Path, kill_after: tuple[str, int]) -> subprocess.CompletedProcess:
    """``python -m indexer build`` killed (SIGKILL) after the ``n``-th call of ``step`` ("module:function", as the
    build calls it)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    step, n = kill_after
    arguments = ["build", "--corpus", str(corpus), "--out", str(out), "--model", str(model), "--quiet", *CLI_SETTINGS]
    command = [sys.executable, "-c", KILLING_BUILD, step, str(n), *arguments]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def test_killed_build_resumes_to_the_same_index(corpus_index, tiny_model_dir, tmp_path):
    """A build killed after a shard or after GloVe resumes to an index equal to an uninterrupted build's."""
    corpus, reference = corpus_index
    out = tmp_path / "index"
    killed = _cli_build(corpus, out, tiny_model_dir, kill_after=("indexer.shards:write_shard", 2))
    assert killed.returncode == -9, killed.stderr
    assert sorted(p.name for p in (out / "shards").iterdir()) == ["00000", "00001"]
    with pytest.raises(IndexFormatError, match="interrupted build"):
        Index.open(out)
    (out / "shards" / ".tmp-00002-leftover").mkdir()  # what a kill during a shard write leaves
    killed = _cli_build(corpus, out, tiny_model_dir, kill_after=("indexer.build:glove_source", 1))
    assert killed.returncode == -9, killed.stderr
    assert (out / "glove.txt").is_file() and not (out / "manifest.json").exists()
    resumed = build_index([corpus], out, model=tiny_model_dir, settings=SETTINGS, progress=False)  # same as the CLI's
    clean = Index.open(reference)
    # the manifest holds the sha256 of every shard, FAISS and GloVe file: equal manifests, equal indexes
    assert _without_times(resumed.manifest) == _without_times(clean.manifest)
    assert not (out / "build-state.json").exists() and not list((out / "shards").glob(".tmp-*"))
    found, expected = resumed.search("muddy river", k=5), clean.search("muddy river", k=5)
    assert [(h.doc_id, h.matched_words, h.passages[0].text) for h in found] == [
        (h.doc_id, h.matched_words, h.passages[0].text) for h in expected
    ]  # the scores up to float rounding: the build's model has its words' char-CNN vectors cached, in batches
    assert [h.relevance for h in found] == pytest.approx([h.relevance for h in expected], abs=1e-4)


def test_rerun_refuse_and_overwrite(corpus_index, tiny_model_dir, tmp_path):
    """The same build again opens the index it made; other settings, a foreign folder or a bad factory are refused."""
    corpus, shared = corpus_index
    reference = Path(shutil.copytree(shared, tmp_path / "index"))  # a build takes the index's lock: not the shared one
    created = Index.open(reference).manifest.created_at
    again = build_index(str(corpus), reference, model=tiny_model_dir, settings=SETTINGS, progress=False)  # one path
    assert again.manifest.created_at == created  # same inputs: opened, not rebuilt
    with pytest.raises(FileExistsError, match="already holds an index"):
        build_index([corpus], reference, model=tiny_model_dir, settings=replace(SETTINGS, layers="top"), progress=False)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    with pytest.raises(FileExistsError, match="not empty"):
        build_index([corpus], foreign, model=tiny_model_dir, settings=SETTINGS, progress=False, overwrite=True)
    assert (foreign / "thesis.tex").read_text() == "precious"
    with pytest.raises(ValueError, match="FAISS cannot make"):
        build_index([corpus], tmp_path / "bad", model=tiny_model_dir, index_factory="Nonsense42", progress=False)
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())


USER_FILES = [
    "shards/mine/thesis.docx",
    "sentences.g9.faiss",
    "notes.g2.parquet",
    ".draft.tmp",
    "glove.txt",
    "shards/00999",
]
# Beside an index, glove.txt is the index's own (its GloVe is trained on the corpus): a user's only in a new folder.
# sentences.g9.faiss is a user's in both: the index is at generation 1, and an add cut short leaves generation 2 at most.
NOT_THE_INDEX_S = [name for name in USER_FILES if name != "glove.txt"]


@pytest.mark.parametrize(
    "user_file, index_there",
    [pytest.param(name, False, id=f"new-folder:{name}") for name in USER_FILES]
    + [pytest.param(name, True, id=f"beside-an-index:{name}") for name in NOT_THE_INDEX_S],
)
def test_a_build_never_deletes_files_it_did_not_write(corpus_index, tiny_model_dir, tmp_path, user_file, index_there):
    """Files named like index parts, in a new folder or beside an index, survive a build (even --overwrite)."""
    corpus, reference = corpus_index
    out = tmp_path / "out"
    if index_there:
        shutil.copytree(reference, out)
    path = out / user_file
    assert not path.exists(), f"{user_file} is the index's own file: not a user's"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("precious")
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match="never deletes files it did not write"):
            build_index([corpus], out, model=tiny_model_dir, settings=SETTINGS, progress=False, overwrite=overwrite)
        assert path.read_text() == "precious"
    if index_there:
        Index.open(out)  # the index is intact too


def test_the_files_of_the_generations_an_index_can_have_written_are_its_own(corpus_index, tiny_model_dir, tmp_path):
    """Beside an index of generation 1, the next generation's files (an add cut short leaves them) are the index's:
    --overwrite replaces them with the rest. A farther generation's name is a user's file (the test above)."""
    corpus, reference = corpus_index
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    assert Index.open(out).manifest.generation == 1
    (out / layout.generation_file("sentences", 2)).write_bytes(b"left by an add cut short")
    build_index([corpus], out, model=tiny_model_dir, settings=SETTINGS, progress=False, overwrite=True)
    assert not (out / layout.generation_file("sentences", 2)).exists()


def test_an_add_refuses_a_users_file_named_as_a_later_generations(corpus_index, tmp_path):
    """A user's sentences.g3.faiss beside an index of generation 1 is not the index's now, but would be once adds
    moved the index on (its clean-up deleted it): an add refuses the folder before writing, the file kept; a user's
    file of another name does not stand in the way."""
    _, reference = corpus_index
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    (out / "notes.txt").write_text("mine")
    lookalike = out / layout.generation_file("sentences", 3)
    lookalike.write_text("precious")
    with pytest.raises(FileExistsError, match=r"holds sentences\.g3\.faiss, named as the index's own files"):
        Index.open(out).add(["A new document about the river bank."], ids=["new"])
    assert lookalike.read_text() == "precious" and Index.open(out).manifest.generation == 1
    lookalike.unlink()
    Index.open(out).add(["A new document about the river bank."], ids=["new"])
    assert Index.open(out).manifest.generation == 2 and (out / "notes.txt").read_text() == "mine"


def test_the_folder_names_are_recognised_as_they_are_made():
    """``layout`` makes every name and recognises it by making it again: a near miss (another zero padding, a
    suffix of another kind, a digit that is not ASCII) is not an index's name, so a build never takes it as its own."""
    for kind in layout.GENERATION_FILES:
        for generation in (1, 9, 12345):
            name = layout.generation_file(kind, generation)
            assert layout.generation_of(name) == generation and layout.role(name) == "generation"
    near = ["sentences.g01.faiss", "vocab.g1.npy", "calibration.g².npy", "tokens.g1.faiss.bak", "glove.g.faiss"]
    assert [layout.role(name) for name in near] == [None] * len(near)
    assert [layout.shard_number(layout.shard_name(n)) for n in (0, 7, 123456)] == [0, 7, 123456]
    assert [layout.shard_number(name) for name in ("0001", "000001", "00001x", "٠٠٠٠١", "")] == [None] * 5
    assert all(layout.is_shard_entry(name) for name in layout.SHARD_FILES.values())


@pytest.mark.parametrize("user_file", ["sentences.g01.faiss", "vocab.g1.npy", "shards/000001", "shards/0001"])
def test_names_an_index_does_not_write_are_not_taken_for_its_own(corpus_index, tiny_model_dir, tmp_path, user_file):
    """A near miss of an index's file names (other padding or suffix) is a user's file, kept through --overwrite."""
    corpus, reference = corpus_index
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    path = out / user_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("precious")
    with pytest.raises(FileExistsError, match="never deletes files it did not write"):
        build_index([corpus], out, model=tiny_model_dir, settings=SETTINGS, progress=False, overwrite=True)
    assert path.read_text() == "precious"


def test_a_glove_file_inside_out_is_refused_not_deleted(corpus_index, tiny_model_dir, tmp_path):
    """A GloVe file given inside --out is refused, never overwritten by the build."""
    corpus, _ = corpus_index
    glove = tmp_path / "out" / "glove.txt"
    glove.parent.mkdir()
    glove.write_text("river 0.1 0.2\n")
    with pytest.raises(ValueError, match="inside --out"):
        build_index([corpus], tmp_path / "out", model=tiny_model_dir, glove=glove, progress=False)
    assert glove.read_text() == "river 0.1 0.2\n"


def test_the_lock_is_taken_before_the_folder_or_corpus_is_read(tiny_model_dir, tmp_path):
    """A second build waits for nothing it has read: with another writer's lock held it stops at once, before
    reading even a broken corpus (whose error would otherwise come first)."""
    import fcntl

    broken = tmp_path / "dup.jsonl"
    broken.write_text('{"id": "a", "text": "One."}\n{"id": "a", "text": "Two."}\n')
    out = tmp_path / "out"
    out.mkdir()
    with open(out / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(IndexFormatError, match="another process is writing"):
            build_index([broken], out, model=tiny_model_dir, progress=False)


def test_factory_override_max_pooling_and_min_freq(corpus_index, tiny_model_dir, tmp_path):
    """An IVF factory, max pooling and --min-freq are built as asked, and exhaustive IVF search equals brute force."""
    corpus, _ = corpus_index
    settings = replace(
        SETTINGS,
        search_params="nprobe=4",
        min_freq=3,
        index_factory="IVF4,Flat",
        search_layers="average",  # the token layer alone max-pools sentences of the same words into ties
        pooling="max",
    )
    index = build_index([corpus], tmp_path / "ivf", model=tiny_model_dir, settings=settings, progress=False)
    assert {e.factory for e in index.manifest.indexes.values()} == {"IVF4,Flat"}
    for query, layers in (("muddy river bank", None), ("bread", "top")):  # nprobe = nlist: exhaustive, so exact
        weights = index.search_mix.weights if layers is None else (0, 0, 1)
        scores = brute_force(index, query, weights)[0]
        ids = np.argsort(-scores, kind="stable")[:5]
        hits = index.search_sentences(query, k=5, layers=layers)
        assert [h.sentence_id for h in hits] == ids.tolist()
        np.testing.assert_allclose([h.score for h in hits], scores[ids], atol=1e-4)
    vocab = pd.read_parquet(tmp_path / "ivf" / index.manifest.vocab.file).set_index("word")["count"]
    assert vocab[index.tokens["word"].str.lower()].min() >= 3 and vocab["honey"] == 1
    assert "lunch" in set(index.tokens["word"]) and "honey" not in set(index.tokens["word"].str.lower())
    # what the build planned its token index for (before encoding) is what the shards hold: one rule, both ways
    for skip_stopwords in (True, False):
        planned = planned_token_vectors(
            vocab.to_dict(), index.elmo.text.stopwords, replace(settings, skip_stopwords=skip_stopwords)
        )
        if skip_stopwords == settings.skip_stopwords:
            assert planned == len(index.tokens)
        else:
            assert planned != len(index.tokens)


@pytest.fixture
def indexer_copy(corpus_index, tmp_path) -> Path:
    path = tmp_path / "index"
    shutil.copytree(corpus_index[1], path)
    return path


def _first_shard_file(path: Path, name: str) -> Path:
    return path / "shards" / "00000" / name


def test_truncated_file_is_a_clear_error(indexer_copy):
    faiss_file = indexer_copy / Index.open(indexer_copy).manifest.indexes["sentences"].file
    faiss_file.write_bytes(faiss_file.read_bytes()[:100])
    with pytest.raises(CorruptIndexError, match="truncated"):
        Index.open(indexer_copy)


def test_altered_file_fails_the_hash_check(indexer_copy):
    npy = _first_shard_file(indexer_copy, "sentence_layers.npy")
    data = bytearray(npy.read_bytes())
    data[-1] ^= 0xFF
    npy.write_bytes(bytes(data))
    with pytest.raises(CorruptIndexError, match="sha256"):
        Index.open(indexer_copy)
    Index.open(indexer_copy, verify=False)  # sizes still match: only the hash check can tell


def test_missing_file_and_bad_manifest(indexer_copy):
    """A missing shard file, a newer format, a cut manifest and a folder that is no index are each named errors."""
    _first_shard_file(indexer_copy, "tokens.parquet").unlink()
    with pytest.raises(CorruptIndexError, match="missing"):
        Index.open(indexer_copy)
    manifest = indexer_copy / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "format_version": 99}))
    with pytest.raises(IndexFormatError, match="newer"):
        Index.open(indexer_copy)
    manifest.write_text(manifest.read_text()[:50])
    with pytest.raises(CorruptIndexError, match="manifest.json"):
        Index.open(indexer_copy)
    with pytest.raises(IndexFormatError, match="not an index"):
        Index.open(indexer_copy / "shards")


def test_other_model_is_a_mismatch(indexer_copy, tmp_path, capsys):
    other = BiLM(
        BiLMConfig(char_embed_dim=4, filters=[[1, 4], [2, 8]], n_highway=1, projection_dim=8, lstm_dim=16, n_layers=2)
    )
    other.reset_parameters(seed=1)
    save_model(other, tmp_path / "other", extra_config={"name": "other"})
    with pytest.raises(IndexMismatchError, match="built with model 'tiny'"):
        Index.open(indexer_copy, model=tmp_path / "other")
    assert main(["search", "--index", str(indexer_copy), "--model", str(tmp_path / "other"), "bank"]) == 2
    assert "built with model 'tiny'" in capsys.readouterr().err


def test_bad_corpus_is_an_error_before_anything_is_written(tiny_model_dir, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "text": "fine"}\n{"id": "1", "text": "again"}\n')
    assert (
        main(["build", "--corpus", str(bad), "--out", str(tmp_path / "out"), "--model", str(tiny_model_dir), "--quiet"])
        == 2
    )
    assert "appears more than once" in capsys.readouterr().err
    assert not (tmp_path / "out" / "shards").exists()
    assert (
        main(
            [
                "build",
                "--corpus",
                str(tmp_path / "missing.txt"),
                "--out",
                str(tmp_path / "out2"),
                "--model",
                str(tiny_model_dir),
                "--quiet",
            ]
        )
        == 2
    )
    assert "does not exist" in capsys.readouterr().err
    tiny = tmp_path / "tiny.txt"
    tiny.write_text("One short document.\n")
    tiny_build = ["build", "--corpus", str(tiny), "--out", str(tmp_path / "out3"), "--model", str(tiny_model_dir)]
    assert main([*tiny_build, "--quiet", "--glove", "train"]) == 2
    assert "too little text to train GloVe" in capsys.readouterr().err
    assert main([*tiny_build, "--quiet"]) == 0  # Stanford's GloVe, the default, needs no training text


EVERY_SETTING = dict(  # a value other than the default for every field of Settings
    layers="top",
    search_layers="average",
    pooling="mean",
    index_factory="HNSW8",
    search_params="efSearch=16",
    token_index_factory="HNSW16",
    keep_exact_tokens=False,
    skip_stopwords=False,
    min_freq=2,
    glove="train",
    glove_dim=8,
    glove_epochs=2,
    glove_window=3,
    glove_min_count=1,
    glove_max_vocab=500,
    shard_tokens=100,
    seed=7,
)


def test_every_setting_given_through_settings_is_the_index_s(corpus_index, tiny_model_dir, tmp_path):
    """``build_index(settings=Settings(...))`` builds with every field as given: no keyword default of
    ``build_index`` overrides one (as ``pooling="sif"`` once silently did), and the manifest records them all."""
    assert set(EVERY_SETTING) == set(Settings.__dataclass_fields__), "give the new field a non-default value here"
    assert all(value != getattr(Settings(), name) for name, value in EVERY_SETTING.items())
    corpus, _ = corpus_index
    index = build_index(
        [corpus], tmp_path / "out", model=tiny_model_dir, settings=Settings(**EVERY_SETTING), progress=False
    )
    assert index.manifest.settings == Settings(**EVERY_SETTING)
    assert index.manifest.pooling == "mean" and index.manifest.search_layers.spec == "average"
    assert {entry.factory for entry in index.manifest.indexes.values()} == {"HNSW8", "HNSW16"}


def test_settings_or_fields_never_both(corpus_index, tiny_model_dir, tmp_path):
    """A ``Settings`` and a field given as a keyword too is refused before anything is read: one of them would
    have to win silently. A field alone, an unknown keyword, or settings that are no ``Settings`` say what they
    are."""
    corpus, _ = corpus_index
    with pytest.raises(TypeError, match="give settings= or pooling=, not both"):
        build_index([corpus], tmp_path / "out", model=tiny_model_dir, settings=SETTINGS, pooling="mean")
    with pytest.raises(
        TypeError,
        match="unknown option: pooling_kind; known: the settings .*pooling.* and the reader options text_column",
    ):
        build_index([corpus], tmp_path / "out", model=tiny_model_dir, pooling_kind="mean")
    for wrong in ("mean", ""):  # "mean" failed deep in the build ('str' object has no attribute 'layers'), "" built
        with pytest.raises(TypeError, match=f"settings must be an indexer.Settings .*, not {wrong!r}"):
            build_index([corpus], tmp_path / "out", model=tiny_model_dir, settings=wrong)
    assert not (tmp_path / "out").exists()


def test_build_options_are_the_settings_fields():
    """Each ``Settings`` field's build option comes from the field (``encoder.options.option``): no options give
    ``Settings()``, switches turn their field off, and a numeric option keeps its field's rule."""
    from indexer.__main__ import make_parser
    from indexer.cli.build import settings_of

    parse = make_parser().parse_args
    base = ["build", "--corpus", "c", "--out", "o"]
    assert settings_of(parse(base)) == Settings()
    changed = settings_of(
        parse([*base, "--no-exact-tokens", "--keep-stopwords", "--min-freq", "3", "--pooling", "max"])
    )
    assert changed == Settings(keep_exact_tokens=False, skip_stopwords=False, min_freq=3, pooling="max")
    with pytest.raises(SystemExit):
        parse([*base, "--min-freq", "0"])


def test_the_advice_on_an_older_format_rebuilds_it(small_index, tmp_path, capsys):
    """An index of a format this code no longer reads is refused with the command that rebuilds it, and that command
    (build ... --overwrite) replaces it, where it used to refuse with the same advice."""
    import shlex

    old = Path(shutil.copytree(small_index, tmp_path / "old"))
    manifest = json.loads((old / layout.MANIFEST).read_text())
    (old / layout.MANIFEST).write_text(json.dumps({**manifest, "format_version": 4}))
    with pytest.raises(IndexFormatError, match="format 4") as refused:
        Index.open(old)
    command = shlex.split(str(refused.value).split("rebuild it: ")[1])
    assert command[command.index("build") - 1 :][:1] == ["indexer"] and command[-1] == "--overwrite"
    assert main([*command[command.index("build") :]]) == 0
    assert Index.open(old).count() == Index.open(small_index).count()
    (old / "notes.txt").write_text("mine")  # a file of the user's: still never deleted, whatever the format
    (old / layout.MANIFEST).write_text(json.dumps({**manifest, "format_version": 4}))
    assert main([*command[command.index("build") :]]) == 2
    assert (old / "notes.txt").read_text() == "mine" and "notes.txt" in capsys.readouterr().err


def test_a_long_log_cannot_fill_the_random_queries_with_its_words(tiny_model_dir, tmp_path):
    """Relevance measures a score against random-word queries, drawn as often as words occur. One log that repeats
    two words thousands of times filled most of them with its words, and chance then scored as high as a real
    match (every search said "no good match"). A document counts a word at most DRAWN_PER_DOCUMENT times in the
    draw: the vocabulary keeps both counts, the added documents' on top of the index's."""
    documents = corpus_documents()
    documents += filler_documents(60 - len(documents))
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in documents), encoding="utf-8")
    log = {"id": "log", "text": "Server log: " + "error timeout. " * 2000}
    (tmp_path / "log.jsonl").write_text(json.dumps(log) + "\n", encoding="utf-8")
    build_index([tmp_path / "docs.jsonl"], tmp_path / "index", model=tiny_model_dir, progress=False)
    index = add_documents(tmp_path / "index", [tmp_path / "log.jsonl"], progress=False)
    vocab = pd.read_parquet(tmp_path / "index" / index.manifest.vocab.file).set_index("word")
    assert vocab.loc["error", "count"] == 2000 and vocab.loc["error", "drawn"] == DRAWN_PER_DOCUMENT
    in_texts = sum(re.findall(r"[a-z]+", doc["text"].lower()).count("friend") for doc in documents)
    assert vocab.loc["friend", "drawn"] == vocab.loc["friend", "count"] == in_texts > 1  # few in one document
    words = index.parts.null_queries.words
    with_log_words = sum(bool({"error", "timeout"} & set(query)) for query in words)
    assert with_log_words <= len(words) // 10, f"{with_log_words} of {len(words)} random queries hold the log's words"


def test_an_add_to_an_index_without_drawn_counts_takes_its_occurrences(tmp_path):
    """An index written before the vocabulary kept ``drawn`` gives its occurrences for its old words (uncapped until
    a rebuild); the new corpus's words come capped."""
    from collections import Counter
    from types import SimpleNamespace

    from indexer.finalize import vocabulary

    pd.DataFrame({"word": ["log", "river"], "count": [500, 3]}).to_parquet(tmp_path / "vocab.g1.parquet")
    base = SimpleNamespace(vocab=SimpleNamespace(file="vocab.g1.parquet"))
    vocab = vocabulary(tmp_path, base, Counter(river=2, bank=40), Counter(river=2, bank=10)).set_index("word")
    assert vocab.loc[["log", "river", "bank"], "count"].tolist() == [500, 5, 40]
    assert vocab.loc[["log", "river", "bank"], "drawn"].tolist() == [500, 5, 10]
