"""Every reader agrees with a fresh build: random sequences of add, upsert, delete and re-adding a deleted id, with
search (by meaning, by keywords, single sentences), Word in context, Senses, the counts and the export of documents
and tokens compared after each step with an index built afresh from the live documents, in the same order.

The index is built with mean pooling: pooled vectors under ``sif`` are weighed by the word counts of all the text
an index has read, which a fresh build of fewer documents does not have (docs/indexer.md says so).
``ELMO_SEARCH_STATE_STEPS`` (default 8) and ``ELMO_SEARCH_STATE_RUNS`` (default 1) set the length and number of
runs; the suite keeps them small, a longer run is the same test with larger numbers.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from live_answers import SETTINGS, answers, write_corpus

from indexer import Index, add_documents, build_index, delete_documents

SENTENCES = [
    "The river bank was muddy after the rain.",
    "She paid the money into her bank account.",
    "Volcanoes erupt when magma rises.",
    "The actors rehearsed the new play.",
    "Children play football in the park.",
    "Fish swam near the bank of the river.",
]
IDS = ["a", "b", "c", "d"]
texts = st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=2).map(" ".join)
STEPS = int(os.environ.get("ELMO_SEARCH_STATE_STEPS", "8"))
RUNS = int(os.environ.get("ELMO_SEARCH_STATE_RUNS", "1"))
CLOSE = {"rtol": 1e-4, "atol": 1e-5}


class LiveDocuments(RuleBasedStateMachine):
    """An index changed step by step, and what a fresh build of its live documents answers."""

    model: Path  # the model both are built with

    def __init__(self):
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="live-state-"))
        self.steps = self.checks = 0
        self.live: dict[str, str] = {}

    @initialize(
        first=st.lists(st.tuples(st.sampled_from(IDS), texts), min_size=1, max_size=3, unique_by=lambda d: d[0])
    )
    def build(self, first):
        self.live = dict(first)
        corpus = write_corpus(self.folder / "corpus-0", first)
        build_index([corpus], self.index, self.model, settings=SETTINGS, progress=False)

    @property
    def index(self) -> Path:
        return self.folder / "index"

    def _add(self, documents: list[tuple[str, str]], replace: bool) -> None:
        self.steps += 1
        add_documents(
            self.index, [write_corpus(self.folder / f"corpus-{self.steps}", documents)], replace=replace, progress=False
        )
        self.live |= dict(documents)

    @precondition(lambda self: len(self.live) < len(IDS))
    @rule(data=st.data(), text=texts)
    def add_a_new_or_deleted_id(self, data, text):
        doc_id = data.draw(st.sampled_from(sorted(set(IDS) - set(self.live))))
        self._add([(doc_id, text)], replace=False)

    @rule(doc_id=st.sampled_from(IDS), text=texts)
    def upsert(self, doc_id, text):
        self._add([(doc_id, text)], replace=True)

    @precondition(lambda self: len(self.live) > 1)
    @rule(data=st.data())
    def delete(self, data):
        doc_id = data.draw(st.sampled_from(sorted(self.live)))
        delete_documents(self.index, [doc_id])
        del self.live[doc_id]

    def teardown(self):
        print(f"live-state: {self.checks} states compared with a fresh build")  # shown with -s (a longer run)
        shutil.rmtree(self.folder, ignore_errors=True)

    @invariant()
    def every_reader_agrees_with_a_fresh_build(self):
        if not self.index.exists():
            return
        index = Index.open(self.index, model=self.model)
        order = [d["doc_id"] for d in index.documents()]
        assert sorted(order) == sorted(self.live)
        self.checks += 1
        fresh_folder = self.folder / f"fresh-{self.checks}"
        corpus = write_corpus(fresh_folder, [(doc_id, self.live[doc_id]) for doc_id in order])
        fresh = build_index([corpus], fresh_folder / "index", self.model, settings=SETTINGS, progress=False)
        changed, built = answers(index, self.folder / "out"), answers(fresh, self.folder / "fresh-out")
        assert changed.keys() == built.keys()
        for question, answer in changed.items():
            if isinstance(answer, tuple):
                assert answer[0] == built[question][0], question
                np.testing.assert_allclose(answer[1], built[question][1], **CLOSE, err_msg=question)
            else:
                assert answer == built[question], question


def test_every_reader_agrees_with_a_fresh_build_after_each_step(tiny_model_dir, monkeypatch):
    monkeypatch.setattr(LiveDocuments, "model", tiny_model_dir, raising=False)
    machine = settings(
        max_examples=RUNS,
        stateful_step_count=STEPS,
        deadline=None,
        derandomize=True,  # the same sequences every run (seed fixed)
        database=None,
        phases=(Phase.explicit, Phase.generate),  # a failure is reported as found: shrinking takes minutes
        suppress_health_check=list(HealthCheck),
    )(LiveDocuments)
    machine.TestCase().runTest()
