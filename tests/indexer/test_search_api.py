"""The Python API as its peers offer it, on the shipped default model: docstring examples, batch search equal to
one query at a time, an index of a list of strings, upsert, a deleted id used again, respelling of non-words only,
text typed decomposed (NFD), and ``Elmo.encode``."""

from __future__ import annotations

import doctest
import json
import shutil
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import TINY_CONFIG

from encoder import Elmo
from encoder.model import BiLM, BiLMConfig
from encoder.words import WordFrequencies
from indexer import CorpusError, Index, QueryError, add_documents, delete_documents
from indexer.__main__ import main
from indexer.manifest import rebuild_command

TEXTS = [
    "Volcanoes erupt when magma rises through the crust.",
    "Bake the bread in a hot oven for forty minutes.",
    "The muddy river bank flooded after the storm.",
    "She saved money at the bank for a new house.",
    "The telescope revealed distant spiral galaxies.",
    "Passengers changed trains at the busy junction.",
]
IDS = ["volcano", "bread", "river", "money", "telescope", "trains"]


@pytest.fixture(scope="module")
def small() -> Index:
    """An index of six sentences by the default model, held in a temporary folder."""
    return Index.from_texts(TEXTS, ids=IDS)


def test_docstring_examples_run():
    """The examples in the docstrings of the API's doors are run as they are written."""
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    doors = [Index.search, Index.from_texts, Index.save, Index.upsert, Index.delete, Elmo.encode]
    for door in doors:
        for test in finder.find(door, door.__qualname__, globs={"Index": Index, "Elmo": Elmo}):
            runner.run(test)
    assert runner.summarize(verbose=False).attempted >= 11 and runner.failures == 0


def test_a_list_of_queries_is_answered_as_each_one_alone(small):
    queries = ["lava and magma", "an oven for bread", "the bank of a river", "teleskope"]
    for method in ("hybrid", "elmo", "keywords", "glove"):
        together = small.search(queries, k=3, method=method)
        alone = [small.search(q, k=3, method=method) for q in queries]
        assert [[h.doc_id for h in r] for r in together] == [[h.doc_id for h in r] for r in alone]
        for a, b in zip(together, alone):
            np.testing.assert_allclose([h.score for h in a], [h.score for h in b], rtol=1e-4, atol=1e-5)
            assert a.notices == b.notices and a.searched_for == b.searched_for
    with pytest.raises(QueryError, match="empty"):
        small.search([])
    with pytest.raises(QueryError, match="query 1 of the list: the query is empty"):
        small.search(["lava", " "])


def test_the_hybrid_lists_k_documents_beyond_its_candidates(small, monkeypatch):
    """Each part of the hybrid brings its ``CANDIDATES`` best documents, or the k best when k is more: a k above
    100 listed about 110 of 275 demo documents before."""
    monkeypatch.setattr("indexer.search.CANDIDATES", 2)
    assert [len(small.search("money in the bank", k=k)) for k in (1, 5, 6)] == [1, 5, 6]


def test_a_compound_no_document_holds_is_matched_by_its_pieces(small):
    """Keyword search matches "river-bank", which no document writes so, by "river" and "bank"."""
    (first, *_) = small.search("river-bank", k=1, method="keywords")
    assert first.doc_id == "river" and set(first.matched_words) == {"river", "bank"}


def test_only_non_words_are_respelled(small):
    """Real words the index lacks ("mice", "bold") are searched as they are; a typo of an indexed word is not, nor
    (in English) one of a common word that no document has ("moviie": movie), never as a name ("vulcanos" is one
    edit from the vocabulary's "Vulcans", two from the collection's "volcanoes")."""
    assert small.search("mice bold best come").searched_for is None
    assert small.search("a moviie about bread").searched_for == "a movie about bread"
    assert small.search("vulcanos").searched_for == "volcanoes"
    assert small.search("spiral galaxeis").searched_for == "spiral galaxies"
    assert [small.search(typo).searched_for for typo in ("teleskope", "monney", "passangers")] == [
        "telescope",
        "money",
        "passengers",
    ]
    assert small.search("spiral galaxeis", spelling=False).searched_for is None
    # a compound is respelled piece by piece, and only its pieces that are no words
    assert small.search("a spiral-galaxeis").searched_for == "a spiral-galaxies"
    assert small.search("ice-cream and teleskope").searched_for == "ice-cream and telescope"
    assert small.search("NASA-teleskope Images").searched_for == "NASA-telescope Images"  # the rest as typed
    assert small.search("well-known ice-cream").searched_for is None


def test_sentences_are_searched_respelled_as_documents_are(small):
    """``search_sentences`` (``search --sentences``, a --queries line, POST /search) respells as ``search`` does, and
    its answer says what it searched for."""
    from indexer.answers import search_answers
    from indexer.options import SearchOptions

    typed, right = small.search_sentences("spiral galaxeis", k=3), small.search_sentences("spiral galaxies", k=3)
    assert typed.searched_for == "spiral galaxies" and right.searched_for is None
    assert [h.sentence_id for h in typed] == [h.sentence_id for h in right]
    assert small.search_sentences("spiral galaxeis", k=3, spelling=False).searched_for is None
    (answer,) = search_answers(small, ["spiral galaxeis"], SearchOptions(k=3, sentences=True))
    assert answer["searched_for"] == "spiral galaxies" and answer["method"] == "elmo"
    (answer,) = search_answers(small, ["spiral galaxeis"], SearchOptions(k=3, sentences=True, as_typed=True))
    assert answer["searched_for"] is None


def test_a_query_of_many_typos_respells_the_first_few(small, monkeypatch):
    """Each respelled word asks the character model: beyond ``MAX_RESPELLED`` distinct ones, a query's words are
    searched as typed, and its notice says exactly what was respelled."""
    monkeypatch.setattr("indexer.search.MAX_RESPELLED", 2)
    found = small.search("teleskope monney passangers")
    assert found.searched_for == "telescope money passangers"
    (notice,) = [notice for notice in found.notices if notice.key == "searched_for"]
    assert notice.values["words"] == {"teleskope": "telescope", "monney": "money"}


def test_a_typo_only_deleted_documents_held_is_respelled_again(small, tmp_path):
    """Whether a word is "no word at all" is asked of the live documents: once the only document that held a typo
    is replaced or deleted, the typo is respelled again, on every door that changes an index."""
    path = tmp_path / "index"
    shutil.copytree(small.path, path)
    index = Index.open(path)
    assert index.search("teleskope").searched_for == "telescope"
    index.add(["A teleskope stood on the roof."], ids=["typo"])
    assert index.search("teleskope").searched_for is None  # a document holds it now: searched as typed
    index.upsert(["A telescope stood on the roof."], ids=["typo"])
    assert index.search("teleskope").searched_for == "telescope"
    index.upsert(["A teleskope stood on the roof."], ids=["typo"])
    index.delete(["typo"])
    assert index.search("teleskope").searched_for == "telescope"
    assert Index.open(path).search("teleskope").searched_for == "telescope"


def test_an_id_typed_decomposed_is_the_id_typed_composed(tiny_model_dir, tmp_path, capsys):
    """Ids are read composed, as texts and queries are: "café" typed either way is one id, so two look-alike ids
    never coexist, and either spelling deletes it (also from the command line, where the terminal chose the form)."""
    nfd, nfc = (lambda text, form=form: unicodedata.normalize(form, text) for form in ("NFD", "NFC"))
    with pytest.raises(CorpusError, match="^ids must be unique; the list repeats one$"):
        Index.from_texts(["One.", "Two."], ids=[nfc("café"), nfd("café")], model=tiny_model_dir)
    index = Index.from_texts(
        ["A café.", "A train.", "A ship."], ids=[nfd("café"), "train", "ship"], model=tiny_model_dir
    )
    assert [d["doc_id"] for d in index.documents()] == [nfc("café"), "train", "ship"]
    with pytest.raises(CorpusError, match=r"^id 0 \('café'\) is already in the index; upsert replaces"):
        index.add(["Another café."], ids=[nfd("café")])
    index.delete([nfd("café")])
    assert [d["doc_id"] for d in index.documents()] == ["train", "ship"]
    path = index.save(tmp_path / "index")
    corpus = tmp_path / "more.jsonl"
    corpus.write_text(json.dumps({"id": nfd("crème"), "text": "Crème brûlée."}, ensure_ascii=False) + "\n")
    assert [d["doc_id"] for d in add_documents(path, [corpus], progress=False).documents()][-1] == nfc("crème")
    assert main(["delete", "--index", str(path), "--doc-id", nfd("crème")]) == 0
    assert nfc("crème") not in {d["doc_id"] for d in Index.open(path).documents()}


def test_an_index_written_before_ids_were_composed_finds_its_decomposed_ids(
    tiny_model_dir, tmp_path, monkeypatch, capsys
):
    """An index written before ids were read composed may hold one decomposed (as macOS names files): the id read
    or typed composed now finds it, so an add refuses it, an empty replacement is refused, an upsert replaces it
    (no look-alike added) and a delete, counted once for both spellings, removes it."""
    import indexer.readers
    import indexer.texts

    nfd, nfc = (lambda text, form=form: unicodedata.normalize(form, text) for form in ("NFD", "NFC"))
    with monkeypatch.context() as before:  # ids kept as given, as before
        before.setattr(indexer.readers, "composed", lambda text: text)
        before.setattr(indexer.texts, "composed", lambda text: text)
        index = Index.from_texts(
            ["A café.", "A train.", "A ship."], ids=[nfd("café"), "train", "ship"], model=tiny_model_dir
        )
        path = index.save(tmp_path / "index")
    index = Index.open(path)
    assert [d["doc_id"] for d in index.documents()] == [nfd("café"), "train", "ship"]
    with pytest.raises(CorpusError, match=r"^id 0 \('café'\) is already in the index"):
        index.add(["Another café."], ids=[nfc("café")])
    corpus = tmp_path / "empty.jsonl"
    corpus.write_text(json.dumps({"id": nfc("café"), "text": " "}) + "\n")
    assert main(["add", "--index", str(path), "--corpus", str(corpus), "--replace", "--quiet"]) == 2
    index.upsert(["A tea room with cakes."], ids=[nfc("café")])
    assert sorted(d["doc_id"] for d in index.documents()) == sorted([nfc("café"), "train", "ship"])
    capsys.readouterr()
    assert main(["delete", "--index", str(path), "--doc-id", nfc("café"), nfd("café")]) == 0
    assert capsys.readouterr().out == "deleted 1 document; 2 remain\n"
    assert [d["doc_id"] for d in Index.open(path).documents()] == ["train", "ship"]


def test_text_typed_decomposed_is_read_as_text_typed_composed(tiny_model_dir):
    """é typed as e + a combining accent (NFD, as macOS writes it) is the é typed as one character (NFC), in a
    document as in a query: either finds the other with the same matched words, nothing said to be respelled; a
    word in context and a word's uses are found the same way."""
    nfd, nfc = (lambda text, form=form: unicodedata.normalize(form, text) for form in ("NFD", "NFC"))
    assert nfd("café") != nfc("café")
    index = Index.from_texts([nfd("The café served crème brûlée."), "Trains left the station."], model=tiny_model_dir)
    for typed in (nfd, nfc):
        hits = index.search(typed("crème brûlée café"), k=1, method="keywords")
        assert [hit.doc_id for hit in hits] == ["0"] and hits[0].matched_words == [
            nfc(w) for w in ("crème", "brûlée", "café")
        ]
        assert hits.searched_for is None and not any(notice.key == "searched_for" for notice in hits.notices)
        found = index.neighbors(typed("A busy café"), typed("café"), k=1)
        assert found.query_tokens[found.position] == nfc("café") and found.hits[0].doc_id == "0"
        assert found.glove and found.glove_note is None  # GloVe knows the word, however it was typed
        assert len(index.word_ids(typed("Café"))) == 1
    assert hits[0].passages[0].text == nfc("The café served crème brûlée.")


def test_an_index_of_strings_counts_saves_and_refuses_bad_input(small, tmp_path):
    assert len(small) == small.count() == 6
    saved = small.save(tmp_path / "saved")
    assert Index.open(saved).search("galaxies", k=1)[0].doc_id == "telescope"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not an empty folder"):
        small.save(tmp_path / "mine")
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]
    copied = Index.open(saved)
    before = sorted(str(p.relative_to(saved)) for p in saved.rglob("*"))
    with pytest.raises(FileExistsError, match="is inside the index being saved"):
        copied.save(saved / "copy")  # copying a folder into itself: without end
    assert sorted(str(p.relative_to(saved)) for p in saved.rglob("*")) == before
    with pytest.raises(TypeError, match=r"save to a folder's path \(a string or a Path\), not None"):
        small.save(None)
    for texts, ids, words in [
        ("one string", None, "list of strings"),
        (b"bytes of text", None, "list of strings"),
        ([], None, "non-empty"),
        (["a", 3], None, "text 1 is a int"),
        (["a", "b"], ["x"], "list of 2 strings"),
        (["a", "b"], ["x", "x"], "unique"),
        (["a", "b \udc80 c"], None, r"text 1 is not valid Unicode: a lone surrogate \('\\udc80'\) at 2"),
        (["a", "b"], ["x", "\ud83d"], "id 1 is not valid Unicode"),
        (["...", "— ?"], None, r"^no text holds a word \(a letter or digit: punctuation and symbols only\)"),
        (["a", " \n\t"], None, r"^text 1 is empty: every text becomes a document, and a document needs text$"),
    ]:
        with pytest.raises(CorpusError, match=words):
            Index.from_texts(texts, ids=ids)


def test_upsert_replaces_and_a_deleted_id_comes_back(small, tmp_path):
    path = tmp_path / "index"
    shutil.copytree(small.path, path)
    index = Index.open(path)
    index.upsert(["Glaciers carve deep valleys in the mountains."], ids=["bread"])
    assert len(index) == 6 and index.search("glaciers valleys", k=1)[0].doc_id == "bread"
    assert "oven" not in " ".join(h.passages[0].text for h in index.search("oven bread", k=6))
    with pytest.raises(CorpusError, match=r"^id 1 \('river'\) is already in the index; upsert replaces that document$"):
        index.add(["Another text.", "A third one."], ids=["fresh", "river"])
    assert Index.open(path).count() == 6  # the refused add changed nothing
    delete_documents(path, ["river"])
    corpus = tmp_path / "again.jsonl"
    corpus.write_text(json.dumps({"id": "river", "text": "A kingfisher dives into the clear river."}) + "\n")
    again = add_documents(path, [corpus], progress=False)
    assert len(again) == 6 and again.search("kingfisher", k=1)[0].doc_id == "river"
    delete_documents(path, ["river"])  # the new copy goes; the old one stays gone
    assert "river" not in {d["doc_id"] for d in Index.open(path).documents()} and len(Index.open(path)) == 5
    with pytest.raises(QueryError, match="not in the index"):
        delete_documents(path, ["river"])
    corpus.write_text(json.dumps({"id": "money", "text": "Coins were minted from silver."}) + "\n")
    assert main(["add", "--index", str(path), "--corpus", str(corpus), "--replace", "--quiet"]) == 0
    replaced = Index.open(path)
    assert len(replaced) == 5 and replaced.search("silver coins", k=1)[0].doc_id == "money"


def test_an_empty_text_never_silently_keeps_the_document_it_was_to_replace(small, tmp_path, capsys):
    """A corpus's empty documents are skipped: in an upsert, one whose id the index holds would keep the old text
    while the user believes it replaced. Given texts refuse a blank one; a corpus refuses such a document, naming
    it, and changes nothing; an empty document with a new id is skipped as in a build."""
    path = tmp_path / "index"
    shutil.copytree(small.path, path)
    index = Index.open(path)
    written = (path / "manifest.json").read_bytes()
    with pytest.raises(CorpusError, match=r"^text 0 is empty"):
        index.upsert(["", "Trains run on rails."], ids=["bread", "train"])
    corpus = tmp_path / "replace.jsonl"
    lines = [{"id": "bread", "text": " "}, {"id": "new", "text": ""}, {"id": "train", "text": "Trains run on rails."}]
    corpus.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["add", "--index", str(path), "--corpus", str(corpus), "--replace", "--quiet"]) == 2
    assert capsys.readouterr().err.startswith("error: 1 document to replace is empty ('bread'): ")
    assert (path / "manifest.json").read_bytes() == written and len(Index.open(path)) == 6
    lines[0]["id"] = "fresh"  # empty, and not in the index: skipped, the rest added
    corpus.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["add", "--index", str(path), "--corpus", str(corpus), "--replace", "--quiet"]) == 0
    assert {d["doc_id"] for d in Index.open(path).documents()} >= {"bread", "train"}
    assert "fresh" not in {d["doc_id"] for d in Index.open(path).documents()}


def test_added_texts_default_ids_pass_over_the_ids_in_use(small, tmp_path):
    """Default ids are positions after the stored documents; one that a document already holds (given as its id)
    is passed over, where the add was refused with a build's message about a temporary file's id column."""
    shutil.copytree(small.path, tmp_path / "index")
    index = Index.open(tmp_path / "index")
    index.upsert(["Glaciers carve deep valleys."], ids=["8"])  # the 7th stored document, id "8"
    index.add(["Icebergs drift south.", "Penguins dive for fish."])
    assert [d["doc_id"] for d in index.documents()][-3:] == ["8", "7", "9"]
    assert index.search("penguins fish", k=1)[0].doc_id == "9"


def test_documents_given_as_strings_are_recorded_as_from_no_file(small, tmp_path):
    """The temporary JSONL file that carries texts into a build is gone once the call returns: stats name the
    documents as given texts, and the rebuild command that errors print asks for the user's files rather than
    naming it, while a corpus file added after keeps its path."""
    shutil.copytree(small.path, tmp_path / "index")
    index = Index.open(tmp_path / "index")
    index.add(["Icebergs drift south."])
    corpus = tmp_path / "more.jsonl"
    corpus.write_text(json.dumps({"id": "owl", "text": "Owls hunt at night."}) + "\n")
    add_documents(index.path, [corpus], progress=False)
    records = json.loads((index.path / "manifest.json").read_text())["corpus"]
    assert [(r["name"], r["path"]) for r in records] == [
        ("(texts given as strings)", ""),
        ("(texts given as strings)", ""),
        ("more.jsonl", str(corpus.resolve())),
    ]
    assert [c["name"] for c in Index.open(index.path).stats()["corpus"]][:2] == ["(texts given as strings)"] * 2
    command = rebuild_command(index.path)
    assert " --corpus YOUR_FILES --out " in command and "texts-" not in command


def test_encode_pools_as_the_index_does():
    elmo = Elmo.load("default", device="cpu")
    texts = ["The river bank flooded.", "She paid the bank back."]
    vectors = elmo.encode(texts, mix="top", normalize=True)
    layers = elmo.embed(texts)
    for vector, text, per_layer in zip(vectors, texts, layers):
        weights = WordFrequencies({}).weights(elmo.text.tokenize(text))  # no counts: words 1, punctuation 0
        expected = (per_layer[-1] * weights[:, None]).sum(0) / weights.sum()
        np.testing.assert_allclose(vector, expected / np.linalg.norm(expected), atol=1e-5)
    one = elmo.encode(texts[0], mix="top", normalize=True)  # one string: one vector, as sentence-transformers
    assert one.shape == (elmo.dim,) and elmo.encode(texts[:1], pooling="mean").shape == (1, elmo.dim)
    np.testing.assert_allclose(one, vectors[0], atol=1e-6)
    with pytest.raises(ValueError, match="pooling must be one of"):
        elmo.encode(texts, pooling="median")
    with pytest.raises(ValueError, match="text 1 has no tokens"):
        elmo.encode(["fine", " "])


def test_lstm_weights_are_laid_out_once_and_follow_the_parameters():
    """Inference keeps the fused kernel's weights; a change to a parameter (loading, training) is seen at once, and
    the result equals that of a model given the changed weights from the start."""
    config = BiLMConfig(**TINY_CONFIG, cell_clip=None, proj_clip=None)  # unclipped: the fused kernel runs
    model = BiLM(config)
    model.reset_parameters(seed=0)
    elmo = Elmo(model, device="cpu")
    layer = elmo.model.lstm.layers[0]
    sentences = [["the", "bank"], ["a", "river", "bank", "flooded"]]
    first = elmo.embed(sentences)
    assert [len(v) for v in layer.__dict__["_kernel_weights"].values()] == [5, 5]  # both directions, kept
    with torch.no_grad():
        layer.w_input.mul_(0.5)
    changed = elmo.embed(sentences)
    assert not np.allclose(first[1], changed[1])
    with torch.enable_grad():  # gradients on: laid out on every call, from the parameters as they are
        fresh = [layer.kernel_weights(d, torch.float32) for d in range(2)]
    with torch.inference_mode():
        kept = [layer.kernel_weights(d, torch.float32) for d in range(2)]
    assert all(torch.equal(a, b) for f, k in zip(fresh, kept) for a, b in zip(f, k))
    reference = BiLM(config)
    reference.load_state_dict(elmo.model.state_dict())
    for got, want in zip(changed, Elmo(reference, device="cpu").embed(sentences)):
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_markdown_and_rst_files_are_documents(tmp_path):
    from indexer.readers import ReaderOptions, corpus_files, read_corpus

    folder = tmp_path / "notes"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "config").write_text("x")
    (folder / "a.md").write_text("# Volcanoes\n\nMagma *rises* through the [crust](http://x).\n\n- lava\n")
    (folder / "b.rst").write_text("Rivers\n======\n\nA river **flows**.\n\n.. include:: /etc/passwd\n")
    (folder / "c.docx").write_bytes(b"PK")
    with pytest.warns(UserWarning, match=r"skipped 2 files: 1 \.docx \(not a type it reads\); 1 hidden"):
        files = corpus_files([folder])
    docs = list(read_corpus(files, ReaderOptions()))
    assert [(d.doc_id, d.title) for d in docs] == [("notes/a.md", "Volcanoes"), ("notes/b.rst", "Rivers")]
    assert docs[0].text == "Volcanoes\n\nMagma rises through the crust.\n\nlava"
    assert docs[1].text == "Rivers\n\nA river flows." and "passwd" not in docs[1].text


def test_a_query_file_answers_at_the_batch_speed(small, tmp_path, capsys):
    """``search --queries``: one line per query and option set, answered in batches, in the input's order."""
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(["lava and magma", json.dumps({"query": "bread", "k": 1}), "galaxies"]) + "\n")
    assert main(["search", "--index", str(small.path), "--queries", str(queries), "--k", "2"]) == 0
    answers = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [a["results"][0]["doc_id"] for a in answers] == ["volcano", "bread", "telescope"]
    assert [len(a["results"]) for a in answers] == [2, 1, 2]
    assert Path(small.path).is_dir()


def test_delete_removes_documents_from_every_answer_and_refuses_what_it_cannot(small, tmp_path):
    index = Index.open(small.save(tmp_path / "copy"))
    index.delete(["river", "money"])
    assert len(index) == 4 and len(Index.open(index.path)) == 4  # written to the folder, and this object knows it
    assert all(hit.doc_id not in ("river", "money") for hit in index.search("the bank of a river", k=6))
    with pytest.raises(QueryError, match="not in the index: 'castle'; nothing was deleted"):
        index.delete(["castle", "volcano"])
    with pytest.raises(QueryError, match="not one string"):
        index.delete("volcano")
    assert len(index) == 4
