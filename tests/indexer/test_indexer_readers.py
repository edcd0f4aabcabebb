"""Corpus readers: every format, compression, folders, empty documents, undecodable bytes, bad input."""

from __future__ import annotations

import gzip
import json
import lzma

import pandas as pd
import pytest

from indexer.errors import CorpusError
from indexer.readers import ReaderOptions, ReadStats, corpus_files, read_corpus


def read(paths, **options):
    stats = ReadStats()
    docs = list(read_corpus(corpus_files(paths), ReaderOptions(**options), stats))
    return docs, stats


def test_formats_and_compression(tmp_path):
    """txt, jsonl, csv and parquet (gzip or xz) are read with their ids and titles; hidden and unknown files are skipped."""
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("First doc.\n\n  \nSecond doc.\n")
    with gzip.open(folder / "sub" / "b.jsonl.gz", "wt") as f:
        f.write(json.dumps({"id": 7, "title": "T", "text": "Json doc."}) + "\n\n")
        f.write(json.dumps({"text": None}) + "\n")
    with lzma.open(folder / "sub" / "c.csv.xz", "wt") as f:
        pd.DataFrame({"text": ["Csv doc.", ""], "title": ["x", "y"]}).to_csv(f, index=False)
    pd.DataFrame({"text": ["Parquet doc."], "key": ["p1"], "title": ["P"]}).to_parquet(folder / "d.parquet")
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "e.txt").write_text("hidden")
    (folder / "notes.docx").write_text("ignored: not a corpus format")

    with pytest.warns(UserWarning, match=r"skipped 2 files: 1 \.docx \(not a type it reads\); 1 hidden"):
        docs, stats = read([folder])
    assert [(d.doc_id, d.title, d.text) for d in docs] == [
        ("corpus/a.txt:1", "", "First doc."),
        ("corpus/a.txt:4", "", "Second doc."),
        ("corpus/d.parquet:1", "P", "Parquet doc."),
        ("7", "T", "Json doc."),
        ("corpus/sub/c.csv.xz:1", "x", "Csv doc."),
    ]
    assert stats.documents == 5 and stats.empty == 4  # two blank .txt lines, a null text, an empty csv cell
    (tmp_path / "t.csv").write_text("body,name\nCsv doc.,x\n")
    docs, _ = read([tmp_path / "t.csv"], text_column="body", title_column="name")
    assert [(d.doc_id, d.title, d.text) for d in docs] == [("t.csv:1", "x", "Csv doc.")]
    docs, _ = read([folder / "d.parquet"], id_column="key")
    assert docs[0].doc_id == "p1"
    docs, _ = read([folder / "a.txt"], doc_per_file=True)
    assert [(d.doc_id, d.title) for d in docs] == [("a.txt", "a")] and docs[0].text.startswith("First doc.\n\n")


def test_csv_without_text_column_is_an_error(tmp_path):
    (tmp_path / "t.csv").write_text("body\nhello\n")
    with pytest.raises(CorpusError, match="no 'text' field.*--text-column"):
        read([tmp_path / "t.csv"])


def test_undecodable_bytes_are_replaced_counted_and_named(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"caf\xe9 au lait\nfine line\n\xff\xfe oops\n")
    stats = ReadStats()
    with pytest.warns(UserWarning, match=r"bad\.txt: 3 undecodable"):
        docs = list(read_corpus(corpus_files([path]), ReaderOptions(), stats, warn=True))
    assert len(docs) == 3 and docs[0].text == "caf\ufffd au lait" and stats.replaced == {"bad.txt": 3}


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("bad.jsonl", '{"text": "ok"}\n{not json}\n', "line 2: not valid JSON"),
        ("list.jsonl", '["text"]\n', "JSON object"),
        ("doc.pdf", "x", "unsupported file type"),
    ],
)
def test_bad_files_are_clear_errors(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(CorpusError, match=message):
        read([tmp_path / name])


def test_missing_paths_and_empty_folders(tmp_path):
    """A missing path, a folder without corpus files and an unknown reader option are clear errors."""
    with pytest.raises(CorpusError, match="does not exist"):
        corpus_files([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="holds no corpus files"):
        corpus_files([tmp_path / "empty"])
    with pytest.raises(TypeError, match="unknown reader option"):
        ReaderOptions.from_kwargs(text_col="x")


def test_a_linked_folder_is_read_and_a_loop_of_links_once(tmp_path):
    """A folder of the corpus that is a link to another is read like any other (before, it was left out without a
    word); a link back up the tree (a loop) does not read a file twice."""
    corpus, elsewhere = tmp_path / "corpus", tmp_path / "elsewhere"
    (corpus / "real").mkdir(parents=True)
    elsewhere.mkdir()
    (corpus / "real" / "a.txt").write_text("Real document.\n")
    (elsewhere / "b.txt").write_text("Linked document.\n")
    (corpus / "linked").symlink_to(elsewhere, target_is_directory=True)
    (corpus / "real" / "loop").symlink_to(corpus, target_is_directory=True)
    found = corpus_files([corpus])
    assert sorted(name for _, name in found) == ["corpus/linked/b.txt", "corpus/real/a.txt"]


def test_an_index_folder_given_as_a_corpus_is_refused_as_one(tmp_path):
    """Its own tables are not documents: the error says what the folder is (not that a parquet row lacks text)."""
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "manifest.json").write_text("{}")
    with pytest.raises(CorpusError, match="is an index folder, not a corpus"):
        corpus_files([tmp_path / "index"])
