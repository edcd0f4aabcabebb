"""The paper's Table 4 on the demo index with the shipped model: GloVe's part exactly, the biLM's structure.

The share of nearest uses that match each sentence's sense is printed (run pytest with -s), not asserted: it
measures the model, which is still being trained.
"""

from __future__ import annotations

import pytest

from bench.table4 import table4
from demo.corpora import demo_corpus
from demo.examples import EXAMPLES, TABLE4
from demo.labels import demo_labels
from encoder.model_files import DEFAULT_MODEL_DIR
from indexer import build_index


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory):
    if not (DEFAULT_MODEL_DIR / "config.json").is_file():
        pytest.skip("the default model is not in data/models/default")
    return build_index(demo_corpus(), tmp_path_factory.mktemp("demo") / "index", progress=False)


def test_table4_glove_row_and_the_bilm_rows(demo_index):
    """Table 4 of the paper on the demo: GloVe's neighbours of "play" ignore the sentence; the biLM's are labelled uses."""
    rows = table4(demo_index, k=5)
    assert [row.sense for row in rows] == ["sport", "stage"]
    assert [row.sentence for row in rows] == [sentence for sentence, _ in EXAMPLES[TABLE4]]
    for row in rows:  # GloVe: one vector for "play", whatever the sentence
        assert [w for w, _ in row.result.glove] == ["playing", "game", "played", "player", "plays"]
    labelled = {label.sense for label in demo_labels().values() if label.word == "play"}
    for row in rows:
        assert len(row.result.hits) == 5
        for hit, sense in zip(row.result.hits, row.senses):
            assert hit.sentence[hit.char_start : hit.char_end].lower() == "play"
            assert sense in labelled  # every use of "play" in the demo corpus carries our label
        assert row.share == sum(s == row.sense for s in row.senses) / 5
        print(f"\n{row.sense}: {row.share:.0%} of the 5 nearest uses share its sense: {row.senses}")
