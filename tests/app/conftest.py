"""The app tests' fixtures: the tiny test model with a card, the small index the pages are driven on, a copy of
it, one with documents written as markup, and the app served for the browser tests."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pages import DOCUMENTS, HOSTILE_TITLE, MODEL_CARD, serve

from indexer import Settings, build_index


@pytest.fixture(scope="session")
def model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random model with a model card, an LM head over the documents' words and its vocabulary, as shipped
    models have (so its index reads uses by context prediction, and the LM's expectations can be shown)."""
    from helpers import TINY_CONFIG

    from encoder.lm_data import SPECIALS, Vocabulary
    from encoder.lm_head import HEAD_FILE, LMHead

    directory = tmp_path_factory.mktemp("app-model") / "tiny"
    shutil.copytree(tiny_model_dir, directory)
    (directory / "README.md").write_text(MODEL_CARD, encoding="utf-8")
    words = sorted({word for _, _, text in DOCUMENTS for word in re.findall(r"[a-z]+", text.lower())})
    head = LMHead(TINY_CONFIG["projection_dim"], len(SPECIALS) + len(words), cutoffs=[20])
    head.reset_parameters(seed=1)
    vocabulary = Vocabulary([*SPECIALS, *words])
    head.save(directory / HEAD_FILE, vocabulary)
    vocabulary.save(directory / "vocab.txt")
    return directory


def _app_index(documents: list[dict], model_dir: Path, root: Path) -> Path:
    """``documents`` indexed in ``root`` with the app tests' model and a small trained GloVe."""
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(document) + "\n" for document in documents))
    build_index(
        [corpus],
        root / "index",
        model=model_dir,
        progress=False,
        settings=Settings(glove="train", glove_dim=16, glove_epochs=2, glove_min_count=1),
    )  # not tested
    return root / "index"


@pytest.fixture(scope="session")
def index_dir(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 16-sentence index where "bank" and "play" each have two senses (4 documents: too few for relevance)."""
    documents = [{"id": i, "title": t, "text": x} for i, t, x in DOCUMENTS]
    return _app_index(documents, model_dir, tmp_path_factory.mktemp("app-index"))


@pytest.fixture(scope="session")
def calibrated_index_dir(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``index_dir``'s documents padded with ``filler_documents`` to ``ranking.MIN_CALIBRATED_DOCUMENTS``: the
    smallest collection whose hits have a relevance (bars, the line, "no good match")."""
    from helpers import filler_documents

    from indexer.ranking import MIN_CALIBRATED_DOCUMENTS

    documents = [{"id": i, "title": t, "text": x} for i, t, x in DOCUMENTS]
    documents += filler_documents(MIN_CALIBRATED_DOCUMENTS - len(documents))
    return _app_index(documents, model_dir, tmp_path_factory.mktemp("app-calibrated-index"))


@pytest.fixture(scope="session")
def hostile_index_dir(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``index_dir``'s documents and two whose title and text are markup (HTML, a ``javascript:`` link, LaTeX, an
    emoji shortcode, markdown emphasis in words), one of them without a title (the id "<x>" names it)."""
    documents = [{"id": i, "title": t, "text": x} for i, t, x in DOCUMENTS]
    documents += [
        {"id": "<x>", "text": "The otters swim by the river <b>bank</b>. The x_y_z and snake_case_word go $x^2$."},
        {"id": "markup", "title": HOSTILE_TITLE, "text": "The bank of the river is [here](javascript:alert(1))."},
    ]
    return _app_index(documents, model_dir, tmp_path_factory.mktemp("app-hostile-index"))


@pytest.fixture
def labelled_banks(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Every "bank" of the test index labelled by its document (river or money) as the demo labels its uses, the
    bank example's two sentences too."""
    from demo import labels
    from demo.examples import EXAMPLES
    from encoder.words import normalize
    from indexer import Index

    index = Index.open(index_dir)
    rules = index.elmo.text
    known = {}
    for row in index.sentences.itertuples():
        for position, token in enumerate(row.tokens):
            if normalize(token) == "bank":
                known[(row.text, position)] = labels.UseLabel("bank", row.doc_id, "NOUN")
    (river, _), (money, _) = EXAMPLES["bank: river vs money"]
    for sentence, sense in ((river, "river"), (money, "money")):
        known[(sentence, rules.tokenize(sentence).index("bank"))] = labels.UseLabel("bank", sense, "NOUN")
    monkeypatch.setattr(labels, "demo_labels", lambda: known)
    return known


@pytest.fixture(scope="module")
def index_copy(index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another index folder (a copy), to switch to."""
    copy = tmp_path_factory.mktemp("copy") / "index"
    shutil.copytree(index_dir, copy)
    return copy


@pytest.fixture(scope="module")
def served_app(index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on the test index, served on a free local port (one server for the module's browser tests)."""
    with serve(index_dir, tmp_path_factory.mktemp("served")) as url:
        yield url
