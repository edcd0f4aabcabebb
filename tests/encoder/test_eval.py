"""Evaluation protocols on planted cases and tiny slices: each task scores what its protocol says it should."""

from __future__ import annotations

import gzip
import json
import lzma
from pathlib import Path

import numpy as np
import pytest
import torch

from encoder import Elmo
from encoder.eval import pos, sts, wic, wordsim, wsd
from encoder.eval.embeddings import Embedder
from encoder.eval.probe import fit_predict, probe_views
from encoder.eval.results import GLOVE, MIX, TaskResult
from encoder.eval.wordnet import SenseInventory
from encoder.glove import Glove

WORDNET = Path("/usr/share/wordnet")
SHARED = Path(__file__).resolve().parents[3] / "shared"
FIXTURE_DIR = SHARED / "fixtures" / "elmo"


@pytest.fixture(scope="module")
def embedder(tiny_model_dir) -> Embedder:
    return Embedder(Elmo.load(tiny_model_dir))


# ------------------------------------------------------------------ WiC
def write_wic(folder: Path, split: str, rows: list[tuple[str, int, int, str, str, bool]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{split}.data.txt").write_text("".join(f"{t}\tN\t{i}-{j}\t{a}\t{b}\n" for t, i, j, a, b, _ in rows))
    (folder / f"{split}.gold.txt").write_text("".join("T\n" if same else "F\n" for *_, same in rows))


def test_threshold_is_tuned_on_train_and_scores_a_separable_case_100():
    scores = np.array([0.9, 0.8, 0.75, 0.3, 0.2, 0.1])
    labels = np.array([1, 1, 1, 0, 0, 0])
    assert 0.3 < wic.tune_threshold(scores, labels) < 0.75
    accuracy, _ = wic.threshold_accuracy(scores, labels, np.array([0.95, 0.25]), np.array([1, 0]))
    assert accuracy == 100.0
    # ties cannot be split: all-equal scores give the better constant answer
    assert wic.threshold_accuracy(np.ones(3), np.array([1, 1, 0]), np.ones(2), np.array([1, 1]))[0] == 100.0


def test_wic_planted_separable_pairs_score_100_in_every_layer(embedder, tmp_path):
    same = [
        ("bank", 2, 2, "I sat by the bank of the river .", "I sat by the bank of the river .", True),
        ("play", 1, 1, "Let play begin now .", "Let play begin now .", True),
        ("run", 0, 0, "run home quickly", "run home quickly", True),
    ]
    different = [
        ("bank", 2, 1, "I sat by the bank today .", "Two banks merged .", False),
        ("play", 1, 2, "Let play begin now .", "She has played well .", False),
        ("run", 0, 1, "run home quickly", "He ran away", False),
    ]
    for split in ("train", "dev"):
        write_wic(tmp_path, split, same + different)
    result = wic.run(embedder, tmp_path)
    row = result.rows["cosine, threshold tuned on train"]
    assert {row[c] for c in embedder.views} == {100.0}
    assert row[wic.MAJORITY] == 50.0  # three of each label: the majority class is right half the time
    assert result.rows["cosine, threshold tuned on train"]["learned mix"] is None
    weights = result.mix_weights["logistic regression"]
    assert len(weights) == 3 and abs(sum(weights) - 1) < 1e-5


def test_pair_logistic_regression_separates_planted_pairs():
    rng = np.random.default_rng(0)
    u = rng.normal(size=(200, 8)).astype(np.float32)
    same = np.arange(200) % 2
    v = np.where(same[:, None] == 1, u, -u)
    pairs = np.stack([u, v], axis=1)
    predicted, weights = fit_predict(pairs, same, pairs, 2, pair=True)
    assert weights is None and (predicted == same).all()


# ------------------------------------------------------------------ POS
def test_probe_learns_planted_classes_and_a_mix_that_prefers_the_informative_layer():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, size=400)
    centres = rng.normal(size=(4, 6)) * 3
    informative = centres[labels] + rng.normal(size=(400, 6)) * 0.1
    noise = rng.normal(size=(400, 6))
    stack = np.stack([noise, informative, noise], axis=1).astype(np.float32)  # (N, layers, D)
    predicted, weights = fit_predict(stack, labels, stack, 4, learn_mix=True)
    assert (predicted == labels).mean() == 1.0
    assert np.argmax(weights) == 1


def test_probes_run_side_by_side_give_what_they_give_one_at_a_time():
    """probe_views trains its probes in parallel threads (one per torch thread): the scores must not depend on it."""
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, size=300)
    stack = rng.normal(size=(300, 3, 5)).astype(np.float32)
    stack[:, 2, :3] += np.eye(3)[labels] * 2  # layer 2 knows the class, the others are noise
    glove = (rng.normal(size=(300, 4)).astype(np.float32),) * 2
    threads = torch.get_num_threads()
    try:
        runs = []
        for n in (1, 3):
            torch.set_num_threads(n)
            runs.append(probe_views(stack, labels, stack, labels, 3, glove=glove))
    finally:
        torch.set_num_threads(threads)
    assert runs[0] == runs[1]
    scores, weights = runs[0]
    assert set(scores) == {"token", "layer 1", "layer 2", "average", MIX, GLOVE}
    assert scores["layer 2"] > scores["token"] and np.argmax(weights) == 2


def test_conllu_reader_skips_comments_ranges_and_empty_nodes(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text(
        "# sent_id = 1\n1-2\tdon't\t_\t_\n1\tdo\tdo\tAUX\t_\n2\tn't\tnot\tPART\t_\n2.1\tx\t_\t_\t_\n"
        "3\tgo\tgo\tVERB\t_\n\n1\tHi\thi\tINTJ\t_\n\n"
    )
    assert list(pos.read_conllu(path)) == [(["do", "n't", "go"], ["AUX", "PART", "VERB"]), (["Hi"], ["INTJ"])]


def test_pos_runs_on_a_tiny_treebank_with_glove(embedder, tmp_path):
    """The POS probe scores every layer, the learned mix, GloVe and the most-frequent-tag baseline on a treebank."""
    text = "1\tthe\t_\tDET\t_\n2\tcat\t_\tNOUN\t_\n3\truns\t_\tVERB\t_\n\n1\ta\t_\tDET\t_\n2\tdog\t_\tNOUN\t_\n\n"
    (tmp_path / "en_ewt-ud-test.conllu").write_text(text)
    with lzma.open(tmp_path / "en_ewt-ud-train.conllu.xz", "wt") as f:
        f.write(text * 3)
    glove_file = tmp_path / "glove.txt"
    glove_file.write_text("the 1 0\ncat 0 1\n")
    result = pos.run(embedder, tmp_path, Glove.load(glove_file))
    scores = result.rows["linear probe"]
    assert set(scores) == {"token", "layer 1", "layer 2", "average", "learned mix", GLOVE, pos.MOST_FREQUENT}
    assert scores[pos.MOST_FREQUENT] == 100.0  # every test word was seen in train with one tag
    assert all(0 <= v <= 100 for v in scores.values())
    assert result.details["train tokens"] == 15 and result.details["test tokens"] == 5


# ------------------------------------------------------------------ STS
def test_sts_reader_survives_irregular_lines(tmp_path):
    path = tmp_path / "sts-dev.csv"
    path.write_text(
        'main-news\theadlines\t2013\t0001\t4.2\t"Quoted" start and an "unbalanced quote\tSecond "one\n'
        "main-news\tdeft\t2014\t0002\t1.0\tA, with commas, ok\tB\tEurope Media Monitor\textra\n"
        'main-forums\tanswers\t2015\t0003\t0.000\t\'single\' quotes ""\tdoubled "" quotes\r\n'
    )
    pairs = sts.read_sts(path)
    assert [p.score for p in pairs] == [4.2, 1.0, 0.0]
    assert pairs[0].first == '"Quoted" start and an "unbalanced quote' and pairs[0].second == 'Second "one'
    assert pairs[1].second == "B" and pairs[2].second == 'doubled "" quotes'
    path.write_text("main-news\tx\t2013\t1\t2.0\tonly one sentence\n")
    with pytest.raises(ValueError, match="line 1"):
        sts.read_sts(path)


def test_spearman_gives_ties_their_average_rank():
    assert sts.spearman(np.array([1, 2, 2, 3]), np.array([1, 3, 2, 4])) == pytest.approx(100 * 4.5 / np.sqrt(4.5 * 5))
    assert sts.spearman(np.array([3, 2, 1]), np.array([10, 20, 30])) == pytest.approx(-100)
    assert sts.spearman(np.ones(3), np.arange(3)) is None and sts.spearman(np.ones(1), np.ones(1)) is None


def test_sts_scores_dev_and_test(embedder, tmp_path):
    """STS reports dev and test correlations (never train), each within -100..100."""
    for split in ("train", "dev", "test"):
        (tmp_path / f"sts-{split}.csv").write_text(
            "g\tf\t2012\t1\t5.0\tA man is dancing.\tA man is dancing.\n"
            "g\tf\t2012\t2\t2.5\tA man is dancing.\tA man is singing.\n"
            "g\tf\t2012\t3\t0.0\tA man is dancing.\tStocks fell sharply on Monday.\n"
        )
    result = sts.run(embedder, tmp_path)
    assert list(result.rows) == ["dev", "test"]
    assert all(-100 <= v <= 100 for v in result.rows["dev"].values())
    one_pair = sts.run(embedder, tmp_path, limit=1)  # rho is undefined: a dash, not 0 as if measured
    assert all(v is None for v in one_pair.rows["dev"].values()) and "—" in one_pair.table()


# ------------------------------------------------------------------ word similarity
def test_wordsim_planted_glove_ranks_pairs_perfectly(embedder, tmp_path):
    (tmp_path / "wordsim" / "simlex-999").mkdir(parents=True)
    (tmp_path / "wordsim" / "wordsim-353").mkdir()
    (tmp_path / "wordsim" / "simlex-999" / "SimLex-999.txt").write_text(
        "word1\tword2\tPOS\tSimLex999\ncat\tdog\tN\t9.0\ncat\tcar\tN\t5.0\ncat\tsky\tN\t1.0\n"
    )
    (tmp_path / "wordsim" / "wordsim-353" / "combined.tab").write_text(
        "Word 1\tWord 2\tHuman (mean)\r\nCat\tDog\t8.0\r\ncat\tsky\t2.0\r\ncat\tcar\t5.0\r\n"
    )
    with gzip.open(tmp_path / "glove.txt.gz", "wt") as f:  # cos(cat, dog) > cos(cat, car) > cos(cat, sky)
        f.write("4 2\ncat 1 0\ndog 0.9 0.1\ncar 0.5 0.5\nsky 0 1\n")
    glove = Glove.load(tmp_path / "glove.txt.gz")
    result = wordsim.run(embedder, tmp_path / "wordsim", glove)
    assert result.rows["SimLex-999"][GLOVE] == pytest.approx(100.0)
    assert result.rows["WordSim-353"][GLOVE] == pytest.approx(100.0)
    assert any("not found" in note for note in result.notes)  # no context corpus beside this data folder
    assert any("SimLex-999.txt holds 3 pairs, the data set 999" in note for note in result.notes)  # said, not hidden


def test_wordsim_contexts_are_found_and_averaged(embedder):
    paragraphs = ["The cat sat. A dog barked at the cat!", "Nothing here.", "Cats are not cat."]
    contexts = wordsim.find_contexts(paragraphs, {"cat", "dog", "emu"}, per_word=2)
    assert [(tokens[i], len(tokens)) for tokens, i in contexts["cat"]] == [("cat", 4), ("cat", 7)]
    assert len(contexts["dog"]) == 1 and contexts["emu"] == []
    stacks = wordsim.type_stacks(embedder, ["cat", "emu"], contexts)
    alone = embedder.layers([["cat"]])[0][:, 0]
    np.testing.assert_allclose(stacks[0, 0], alone[0])  # the token layer is the word on its own
    assert not np.allclose(stacks[0, 1], alone[1])  # the biLSTM layers come from the contexts


def test_glove_reader_handles_lowercase_fallback_and_bad_lines(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("the 0.5 1\nnew york 1 1\n")
    glove = Glove.load(path)
    assert glove.dim == 2 and glove.vector("The").tolist() == [0.5, 1.0]
    assert glove.vector("new york") is not None and glove.vector("zebra") is None
    np.testing.assert_allclose(glove.mean(["zebra"]), [0, 0])
    np.testing.assert_allclose(glove.in_context(["a", "the", "x", "y"], 3, 4, 2), [0.5, 1.0])
    path.write_text("the 0.5 1\nbad 1\n")
    with pytest.raises(ValueError, match="line 2"):
        Glove.load(path)


# ------------------------------------------------------------------ WSD
FAKE_INDEX_SENSE = (
    "bank%1:14:00:: 08420278 2 20\nbank%1:17:01:: 09213565 1 25\n"
    "zebra%1:05:00:: 02391049 1 0\nbright%5:00:00:light:00 1 2 0\nbright%3:00:00:: 2 1 0\n"
)


def write_semcor(folder: Path) -> None:
    """One NAF document: 'bank' annotated with its second sense in both sentences; 'zebra' never."""
    naf = [
        "<NAF><text>",
        '<wf id="w0" sent="1">The</wf>',
        '<wf id="w1" sent="1">bank</wf>',
        '<wf id="w2" sent="1">lent_money</wf>',
        '<wf id="w3" sent="2">A</wf>',
        '<wf id="w4" sent="2">bank</wf>',
        "</text><terms>",
    ]
    for term, wf in (("t1", "w1"), ("t4", "w4")):
        naf.append(
            f'<term id="{term}" lemma="bank"><span><target id="{wf}"/></span><externalReferences>'
            '<externalRef reference="1:14:00::" resource="WordNet-eng30" reftype="lexical_key"/>'
            "</externalReferences></term>"
        )
    naf.append(
        '<term id="t2" lemma="lend"><span><target id="w2"/></span><externalReferences>'
        '<externalRef reference="2:99:00::" reftype="lexical_key"/></externalReferences></term>'
    )  # not in WN
    naf.append("</terms></NAF>")
    (folder / "brown1").mkdir(parents=True)
    with lzma.open(folder / "brown1" / "br-x01.naf.xz", "wt", encoding="utf-8") as f:
        f.write("\n".join(naf))


def write_raganato(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "ALL.data.xml").write_text(
        '<?xml version="1.0"?><corpus><text id="senseval2.d000"><sentence id="senseval2.d000.s000">'
        '<wf lemma="the" pos="DET">The</wf>'
        '<instance id="senseval2.d000.s000.t000" lemma="bank" pos="NOUN">bank</instance>'
        '<wf lemma="see" pos="VERB">saw</wf><wf lemma="a" pos="DET">a</wf>'
        '<instance id="senseval2.d000.s000.t001" lemma="zebra" pos="NOUN">zebra</instance>'
        '</sentence></text><text id="semeval2015.d000"><sentence id="semeval2015.d000.s000">'
        '<instance id="semeval2015.d000.s000.t000" lemma="take_place" pos="VERB">took place</instance>'
        "</sentence></text></corpus>"
    )
    (folder / "ALL.gold.key.txt").write_text(
        "senseval2.d000.s000.t000 bank%1:14:00::\n"
        "senseval2.d000.s000.t001 zebra%1:05:00::\n"
        "semeval2015.d000.s000.t000 take_place%2:30:00::\n"
    )


def test_wsd_falls_back_to_the_first_sense_for_lemmas_unseen_in_semcor(embedder, tmp_path):
    (tmp_path / "wn").mkdir()
    (tmp_path / "wn" / "index.sense").write_text(FAKE_INDEX_SENSE)
    write_semcor(tmp_path / "wsd" / "SemCor3.0-NAF")
    write_raganato(tmp_path / "wsd" / "Evaluation_Datasets" / "ALL")
    result = wsd.run(embedder, tmp_path / "wsd", wordnet=tmp_path / "wn")
    assert result.details["semcor senses"] == 1 and result.details["semcor occurrences"] == 2
    with_fallback = result.rows["senseval2 + first-sense fallback"]
    without = result.rows["senseval2, SemCor senses only"]
    # bank: its one SemCor sense (WordNet's second) is right; zebra: unseen, WordNet's first sense is right
    assert all(with_fallback[c] == 100.0 for c in embedder.views)
    assert all(without[c] == pytest.approx(100 * 2 * 1 * 0.5 / 1.5) for c in embedder.views)  # P 1, R 1/2
    assert with_fallback["WN first sense"] == pytest.approx(100 * 2 * 0.5 * 0.5 / 1.0)  # bank wrong, zebra right
    assert result.rows["semeval2015 + first-sense fallback"]["token"] == 0.0  # take_place is not in this WordNet


def test_sense_inventory_orders_senses_and_merges_satellites(tmp_path):
    (tmp_path / "index.sense").write_text(FAKE_INDEX_SENSE)
    inventory = SenseInventory.load(tmp_path)
    assert inventory.senses("Bank", "n") == ["bank%1:17:01::", "bank%1:14:00::"]
    assert inventory.first_sense("bright", "a") == "bright%3:00:00::"
    assert inventory.first_sense("zebra", "v") is None
    with pytest.raises(FileNotFoundError, match="wordnet-sense-index"):
        SenseInventory.load(tmp_path / "absent")


@pytest.mark.skipif(
    not (WORDNET / "index.sense").is_file(),
    reason=f"WordNet 3.0 not installed at {WORDNET} (apt-get install wordnet-base wordnet-sense-index)",
)
def test_real_wordnet_first_senses():
    """WordNet's first senses and sense counts are read from the installed WordNet 3.0 files."""
    inventory = SenseInventory.load(WORDNET)
    assert inventory.first_sense("bank", "n") == "bank%1:17:01::"
    assert inventory.first_sense("peculiar", "a") == "peculiar%5:00:00:strange:00"
    assert len(inventory.senses("bank", "v")) == 8


# ------------------------------------------------------------------ command line
def write_tiny_data_root(root: Path) -> None:
    """Every task's data in miniature, laid out as ../shared/data is."""
    pairs = [
        ("bank", 2, 2, "I sat by the bank .", "I sat by the bank .", True),
        ("bank", 2, 1, "I sat by the bank .", "Two banks merged .", False),
    ]
    for split in ("train", "dev"):
        write_wic(root / "wic", split, pairs)
    write_semcor(root / "wsd" / "SemCor3.0-NAF")
    write_raganato(root / "wsd" / "Evaluation_Datasets" / "ALL")
    (root / "ud-english-ewt").mkdir()
    for split in ("train", "test"):
        (root / "ud-english-ewt" / f"en_ewt-ud-{split}.conllu").write_text(
            "1\tthe\t_\tDET\t_\n2\tcat\t_\tNOUN\t_\n\n1\truns\t_\tVERB\t_\n\n"
        )
    (root / "stsb").mkdir()
    for split in ("train", "dev", "test"):
        (root / "stsb" / f"sts-{split}.csv").write_text(
            'g\tf\t2012\t1\t5.0\tA cat .\tA cat .\ng\tf\t2012\t2\t1.0\tA cat .\tThe sky "is blue\n'
        )
    (root / "wordsim" / "simlex-999").mkdir(parents=True)
    (root / "wordsim" / "simlex-999" / "SimLex-999.txt").write_text(
        "w1\tw2\tPOS\tSimLex999\ncat\tdog\tN\t9\ncat\tsky\tN\t1\n"
    )
    (root / "wordsim" / "wordsim-353").mkdir()
    (root / "wordsim" / "wordsim-353" / "combined.tab").write_text("Word 1\tWord 2\tHuman\ncat\tdog\t9\ncat\tsky\t1\n")
    (root / "corpus-en").mkdir()
    for name in ("valid.txt.xz", "test.txt.xz"):
        with lzma.open(root / "corpus-en" / name, "wt") as f:
            f.write("The cat saw a dog. The sky was blue.\n\nA dog barked.\n")


def test_cli_all_writes_json_and_a_report(tiny_model_dir, tmp_path, capsys):
    from encoder.__main__ import main

    write_tiny_data_root(tmp_path / "data")
    (tmp_path / "wn").mkdir()
    (tmp_path / "wn" / "index.sense").write_text(FAKE_INDEX_SENSE)
    (tmp_path / "glove.txt").write_text("cat 1 0\ndog 0.9 0.1\nsky 0 1\nthe 0.5 0.5\n")
    main(
        [
            "evaluate",
            "all",
            "--model",
            str(tiny_model_dir),
            "--data",
            str(tmp_path / "data"),
            "--wordnet",
            str(tmp_path / "wn"),
            "--glove",
            str(tmp_path / "glove.txt"),
            "--json",
            "--report",
            str(tmp_path / "report"),
        ]
    )
    output = json.loads(capsys.readouterr().out)
    assert list(output["results"]) == ["wic", "wsd", "pos", "sts", "wordsim", "perplexity", "senses"]
    assert output["results"]["wic"]["rows"]["cosine, threshold tuned on train"]["layer 1"] == 100.0
    assert output["results"]["wsd"]["rows"]["senseval2 + first-sense fallback"]["token"] == 100.0
    assert output["results"]["wordsim"]["rows"]["SimLex-999"]["GloVe"] == pytest.approx(100.0)
    assert "not measured" in output["results"]["perplexity"]["notes"][0]  # the tiny model has no LM head
    assert len(output["results"]["pos"]["mix_weights"]["linear probe"]) == 3
    assert output["commands"][0].startswith("python -m encoder evaluate wic --model ")
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## wsd" in report and "| ALL + first-sense fallback |" in report and "evaluate all" in report
    assert r"| logistic regression [u,v,u*v,\|u-v\|] |" in report  # a "|" in a row name is escaped
    for name in ("scores.png", "mix_weights.png", "results.json"):
        assert (tmp_path / "report" / name).stat().st_size > 0
    from encoder.eval.report import check_report_folder

    check_report_folder(tmp_path / "report")  # a report of ours may be written again over itself


def test_a_markdown_table_shows_angle_brackets_as_text():
    """report.md and the pages' tables are markdown: "<UNK>" there is an HTML tag, shown as nothing, unless escaped."""
    result = TaskResult("perplexity", "per column", ["forward"], notes=["each <UNK> target pays for its characters"])
    result.add("<UNK> targets (%)", {"forward": 2.8})
    markdown = result.table(markdown=True)
    assert "| \\<UNK> targets (%) | 2.8 |" in markdown and "note: each \\<UNK> target" in markdown
    assert "<UNK>" not in markdown.replace("\\<UNK>", "")
    assert "<UNK> targets (%)" in result.table() and "\\<" not in result.table()  # the terminal shows it as it is


def test_cli_prints_tables_and_says_when_glove_is_absent(tiny_model_dir, tmp_path, capsys):
    from encoder.__main__ import main

    write_tiny_data_root(tmp_path)
    main(["evaluate", "sts", "--model", str(tiny_model_dir), "--data", str(tmp_path / "stsb"), "--glove", "none"])
    out = capsys.readouterr().out
    assert out.startswith("== sts (") and "Spearman x 100" in out and "GloVe column absent" in out
    with pytest.raises(SystemExit) as exited:
        main(["evaluate", "sts", "--model", str(tiny_model_dir), "--report", str(tmp_path / "r")])
    assert exited.value.code == 2 and "error: --report goes with" in capsys.readouterr().err


@pytest.mark.skipif(
    not (SHARED / "data" / "wic").is_dir() or not (FIXTURE_DIR / "lm_weights.hdf5").is_file(),
    reason=f"the shared data sets or the reference fixture are absent ({SHARED} is not in this clone)",
)
def test_cli_reads_the_real_data_sets_with_a_limit_on_test_items_only(capsys):
    """WiC, STS-B and word similarity on the real files (the tasks whose training side is small enough for a
    test); --limit 8 caps what is scored and never what is trained on."""
    from encoder.__main__ import main

    model = ["--model", str(FIXTURE_DIR / "options.json"), "--weights", str(FIXTURE_DIR / "lm_weights.hdf5")]
    results = {}
    for task in ("wic", "sts", "wordsim"):
        main(["evaluate", task, *model, "--limit", "8", "--json", "--no-progress"])
        results.update(json.loads(capsys.readouterr().out)["results"])
    assert results["wic"]["details"]["train pairs"] == 5428 and results["wic"]["details"]["dev pairs"] == 8
    assert "--limit 8: scored the first 8 of 638 dev pairs (train: all)" in results["wic"]["notes"]
    assert results["sts"]["details"] == {"dev pairs": 8, "test pairs": 8}
    assert results["wordsim"]["details"]["SimLex-999 pairs"] == 8
