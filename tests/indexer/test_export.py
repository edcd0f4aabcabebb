"""``indexer export``: the stated layout in both formats, vectors equal to the index's own, deleted documents left
out, and only an earlier export replaced."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from encoder import ownership
from indexer import Index, add_documents, delete_documents
from indexer.__main__ import main
from indexer.export import export


def expected_documents(index: Index) -> tuple[list[str], np.ndarray]:
    """Each live document's vector from the index's stored sentence vectors: the mean under the search mix."""
    layers = index.parts.sentence_vectors.layers
    ids, vectors = [], []
    for doc in index.documents():
        rows = np.flatnonzero(index.sentences["doc_id"].to_numpy() == doc["doc_id"])
        mean = layers.gather(rows, index.search_mix.weights).mean(axis=0)
        ids.append(doc["doc_id"])
        vectors.append(mean / np.linalg.norm(mean))
    return ids, np.stack(vectors)


@pytest.fixture
def index(small_index, tmp_path) -> Index:
    """A copy of the small index with one document deleted."""
    shutil.copytree(small_index, tmp_path / "index")
    delete_documents(tmp_path / "index", ["money"])
    return Index.open(tmp_path / "index")


def test_npy_layout_holds_the_documents_and_tokens_vectors(index, tmp_path):
    layout = export(index, tmp_path / "out", "npy", tokens=True)
    out = tmp_path / "out"
    assert json.loads((out / "export.json").read_text()) == layout
    assert sorted(p.name for p in out.iterdir()) == sorted([*layout["files"], "export.json"])
    ids, vectors = expected_documents(index)
    assert np.load(out / "document_ids.npy").tolist() == ids == ["river", "volcano"]  # "money" was deleted
    np.testing.assert_allclose(np.load(out / "documents.npy"), vectors, rtol=1e-5, atol=1e-6)
    token_ids = np.load(out / "token_ids.npy")
    live = index.tokens.index[~index.tokens["sentence_id"].isin(np.flatnonzero(index.sentences["doc_id"] == "money"))]
    assert token_ids.tolist() == live.tolist()
    expected = index.parts.token_vectors.layers.gather(token_ids, index.layer_mix.weights)
    np.testing.assert_allclose(np.load(out / "tokens.npy"), expected, rtol=1e-5, atol=1e-6)
    assert np.load(out / "token_words.npy").tolist() == index.tokens.loc[token_ids, "word"].tolist()
    assert set(np.load(out / "token_document_ids.npy").tolist()) == {"river", "volcano"}
    assert layout["documents"] == {"count": 2, "layers": list(index.search_mix.weights)}


def test_parquet_layout_equals_the_npy_one(index, tmp_path):
    export(index, tmp_path / "npy", "npy", tokens=True)
    export(index, tmp_path / "parquet", "parquet", tokens=True)
    documents = pq.read_table(tmp_path / "parquet" / "documents.parquet").to_pandas()
    assert documents["doc_id"].tolist() == np.load(tmp_path / "npy" / "document_ids.npy").tolist()
    np.testing.assert_array_equal(np.stack(documents["vector"]), np.load(tmp_path / "npy" / "documents.npy"))
    tokens = pq.read_table(tmp_path / "parquet" / "tokens.parquet")
    vector = tokens.schema.field("vector").type
    assert vector.list_size == index.elmo.dim and str(vector.value_type) == "float"
    tokens = tokens.to_pandas()
    assert tokens["token_id"].tolist() == np.load(tmp_path / "npy" / "token_ids.npy").tolist()
    np.testing.assert_array_equal(np.stack(tokens["vector"]), np.load(tmp_path / "npy" / "tokens.npy"))
    sentences = index.sentences.set_index("sentence_id")
    for row in tokens.head(5).itertuples():  # each word where the row says it is
        assert sentences.loc[row.sentence_id, "text"][row.char_start : row.char_end] == row.word


def test_an_earlier_export_is_replaced_and_anything_else_refused(index, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["export", "--index", str(index.path), "--out", str(out), "--tokens"]) == 0
    assert (out / "tokens.npy").is_file()
    assert main(["export", "--index", str(index.path), "--out", str(out), "--format", "parquet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["documents.parquet", "export.json"]  # none of the old left
    (out / "notes.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert main(["export", "--index", str(index.path), "--out", str(out)]) == 2
    assert (
        f"error: {out} holds files this command did not write (notes.txt)" in capsys.readouterr().err
    )  # not its folder
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    corpus = tmp_path / "documents.parquet"  # a user's file named like an export file: a name claims nothing
    corpus.write_bytes(b"PAR1 the user's corpus")
    for theirs, kind in [(out / "notes.txt", "file"), (index.path, "folder"), (corpus, "file")]:  # --out itself
        assert main(["export", "--index", str(index.path), "--out", str(theirs), "--format", "parquet"]) == 2
        assert f"error: {theirs} is a {kind} this command did not write" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert corpus.read_bytes() == b"PAR1 the user's corpus"
    lookalike = tmp_path / "lookalike"  # export files without the record of an export that wrote them
    lookalike.mkdir()
    (lookalike / "documents.npy").write_bytes(b"mine")
    assert main(["export", "--index", str(index.path), "--out", str(lookalike)]) == 2
    assert f"error: {lookalike} is a folder this command did not write" in capsys.readouterr().err
    assert (lookalike / "documents.npy").read_bytes() == b"mine"
    inside = index.path / "exported"  # in the index folder: its next build --overwrite would refuse to start
    assert main(["export", "--index", str(index.path), "--out", str(inside)]) == 2
    assert f"error: the export folder {inside} is inside {index.path}, a folder a command writes whole" in (
        capsys.readouterr().err
    )
    assert not inside.exists()


def test_tokens_of_an_index_without_exact_vectors_are_one_error(tiny_model_dir, tmp_path):
    from helpers import SMALL_DOCUMENTS

    from indexer import Settings, build_index

    (tmp_path / "docs.txt").write_text("\n".join(text for _, _, text in SMALL_DOCUMENTS))
    settings = Settings(keep_exact_tokens=False)
    index = build_index(
        [tmp_path / "docs.txt"], tmp_path / "index", model=tiny_model_dir, settings=settings, progress=False
    )
    with pytest.raises(ValueError, match="no exact token vectors"):
        export(index, tmp_path / "out", tokens=True)
    assert not Path(tmp_path / "out").exists()


def test_export_after_a_replace_equals_a_fresh_build_of_the_live_documents(tiny_model_dir, tmp_path):
    """An id stored twice (the replaced copy and the new one): export writes the new copy's vectors under its id,
    and every other document's own, as a fresh build of the live documents does."""
    from indexer import Settings, build_index

    def corpus(name: str, documents: list[tuple[str, str]]) -> Path:
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(json.dumps({"id": i, "text": t}) for i, t in documents))
        return path

    x, y, z = ("x", "The river bank was muddy."), ("y", "She paid money into the bank."), ("z", "Magma rises.")
    new_x = ("x", "Volcanoes erupt when magma rises through the crust. Ash falls.")
    settings = Settings(pooling="mean")  # pooling weights would depend on the corpus's word counts
    build_index([corpus("first", [x, y, z])], tmp_path / "index", tiny_model_dir, settings=settings, progress=False)
    replaced = add_documents(tmp_path / "index", [corpus("new", [new_x])], progress=False, replace=True)
    fresh = build_index(
        [corpus("live", [y, z, new_x])], tmp_path / "fresh", tiny_model_dir, settings=settings, progress=False
    )
    for index, out in ((replaced, tmp_path / "out"), (fresh, tmp_path / "fresh-out")):
        export(index, out, "npy", tokens=True)
    ids = np.load(tmp_path / "out" / "document_ids.npy").tolist()
    assert sorted(ids) == ["x", "y", "z"]
    expected = dict(
        zip(
            np.load(tmp_path / "fresh-out" / "document_ids.npy").tolist(),
            np.load(tmp_path / "fresh-out" / "documents.npy"),
        )
    )
    for doc_id, vector in zip(ids, np.load(tmp_path / "out" / "documents.npy")):
        np.testing.assert_allclose(vector, expected[doc_id], rtol=1e-5, atol=1e-6)
    words = np.load(tmp_path / "out" / "token_words.npy").tolist()
    token_docs = np.load(tmp_path / "out" / "token_document_ids.npy").tolist()
    fresh_words = np.load(tmp_path / "fresh-out" / "token_words.npy").tolist()
    fresh_docs = np.load(tmp_path / "fresh-out" / "token_document_ids.npy").tolist()
    assert sorted(zip(token_docs, words)) == sorted(zip(fresh_docs, fresh_words))
    assert "Volcanoes" in words and "muddy" not in words  # the new copy's tokens, not the replaced one's


def test_a_signal_while_export_writes_leaves_the_earlier_export_and_one_after_lets_it_finish(
    index, tmp_path, monkeypatch
):
    """Ctrl-C while the new export is written: the earlier one stays as it was (it was deleted first, and nothing
    replaced it); Ctrl-C once the new one is whole (here: as the earlier one goes) ends the command, 0 (it said
    "interrupted", 130, of an export in place)."""
    import indexer.export

    out = tmp_path / "out"
    assert main(["export", "--index", str(index.path), "--out", str(out), "--tokens"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    monkeypatch.setattr(indexer.export, "_write_npy", lambda *_: os.kill(os.getpid(), signal.SIGINT))
    assert main(["export", "--index", str(index.path), "--out", str(out)]) == 130
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    monkeypatch.undo()
    remove = ownership.remove
    monkeypatch.setattr(ownership, "remove", lambda *a: (os.kill(os.getpid(), signal.SIGINT), remove(*a)))
    assert main(["export", "--index", str(index.path), "--out", str(out), "--format", "parquet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["documents.parquet", "export.json"]
