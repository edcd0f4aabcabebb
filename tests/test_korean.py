"""Korean: the model's language picks the rules (Kiwi sentences and surface morphemes), everywhere."""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import h5py
import pytest

from encoder import Elmo
from encoder.__main__ import main as encoder_main
from encoder.model_files import model_hash
from encoder.text import text_rules
from indexer import Index, IndexMismatchError, QueryError, build_index
from indexer.__main__ import main as indexer_main

pytest.importorskip("kiwipiepy", reason="Korean text needs kiwipiepy (the [ko] extra)")

DOC = "우리는 항구에서 배를 타고 섬으로 갔다. 배가 고파서 배를 깎아 먹었다!\n\n둘째 문단입니다"


@pytest.fixture(scope="module")
def korean_model(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random model, declared Korean in its config."""
    folder = tmp_path_factory.mktemp("tiny-ko")
    shutil.copytree(tiny_model_dir, folder, dirs_exist_ok=True)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "name": "tiny-ko", "language": "ko"}))
    return folder


def test_korean_sentences_and_surface_morphemes_keep_offsets():
    found = text_rules("ko").split_and_tokenize(DOC)
    assert [s.text for s in found] == [
        "우리는 항구에서 배를 타고 섬으로 갔다.",
        "배가 고파서 배를 깎아 먹었다!",
        "둘째 문단입니다",
    ]
    assert found[0].tokens == ["우리", "는", "항구", "에서", "배", "를", "타", "고", "섬", "으로", "갔", "다", "."]
    assert found[1].tokens[:2] == ["배", "가"] and "고파서" in found[1].tokens  # 고프+어서 share characters: one
    for sentence in found:
        assert all(DOC[a:b] == token for token, (a, b) in zip(sentence.tokens, sentence.token_spans))
    assert found[2].start == DOC.index("둘째")  # a sentence never crosses the blank line


def test_korean_label_words_are_nouns_never_particles_endings_or_stems():
    """What may name a sense cluster: Kiwi's nouns in context, less function and generic nouns (적, 때)."""
    korean = text_rules("ko")
    text = "감기에 걸렸을 때 배의 속을 파내고 먹은 적이 있습니다. 이 앱은 Python으로 만든 프로그램이다."
    assert korean.label_words(text) == ["감기", "배", "앱", "Python", "프로그램"]
    assert korean.label_words("합니다. 했다.") == []
    assert text_rules("ko-eojeol").label_words("배를 타고 갔다.") == ["배를", "타고", "갔다"]  # no noun alone
    assert text_rules("en").label_words("Every bank of the river, often 2 of them.") == ["bank", "river"]
    assert [korean.names_something(w) for w in ("Python", "IT", "The", "of")] == [True, True, False, False]  # Latin


def test_korean_content_words_are_the_nouns_kiwi_finds_in_context_and_alone():
    """The word picker (``content_positions``) and what the model expects (``shown_expectations``) keep what
    ``label_words`` keeps, checked against Kiwi's tags directly: no particle, ending, verb stem, number or LM class."""
    from kiwipiepy import Kiwi

    from encoder.text import KOREAN_GENERIC_NOUNS, KOREAN_STOPWORDS, KoreanText

    korean, kiwi = text_rules("ko"), Kiwi(num_workers=1)

    def noun(word: str, tags: list[str]) -> bool:
        return tags in ([t] for t in KoreanText.LABEL_TAGS) and word not in KOREAN_STOPWORDS | KOREAN_GENERIC_NOUNS

    sentence = "파도가 잔잔해지자 우리는 작은 배를 타고 건너편 섬으로 향했다."
    morphemes = kiwi.tokenize(sentence)
    direct = [
        i
        for i, (token, start, end) in enumerate(korean.text_tokens(sentence))
        if noun(token, [m.tag for m in morphemes if m.start < end and m.start + m.len > start])
    ]
    tokens = korean.tokenize(sentence)
    assert korean.content_positions(sentence) == direct
    assert [tokens[i] for i in direct] == ["파도", "배", "건너편", "섬"]  # not 작 (작은), 타 (타고), 향했
    expected = ["를", "배", "었", "타", "깎", "바다", "1950", "<unk>", "</s>", "학교", "때", "했", "서울"]
    alone = [(w, kiwi.tokenize(w)) for w in expected]
    direct = [w for w, m in alone if len(m) == 1 and m[0].len == len(w) and noun(w, [m[0].tag])]
    assert korean.shown_expectations(expected) == direct == ["배", "바다", "학교", "서울"]
    english = text_rules("en")
    assert english.shown_expectations(expected) == expected  # English shows every expected word, as before
    assert english.content_positions("The bank of the river, every day.") == [1, 4, 6, 7]


def test_eojeol_rules_keep_kiwi_sentences_and_split_off_punctuation_only(tiny_model_dir, tmp_path):
    found = text_rules("ko-eojeol").split_and_tokenize(DOC)
    assert [s.text for s in found] == [s.text for s in text_rules("ko").split_and_tokenize(DOC)]
    assert found[0].tokens == ["우리는", "항구에서", "배를", "타고", "섬으로", "갔다", "."]
    assert found[1].tokens == ["배가", "고파서", "배를", "깎아", "먹었다", "!"]
    for sentence in found:
        assert all(DOC[a:b] == token for token, (a, b) in zip(sentence.tokens, sentence.token_spans))
    rules = text_rules("ko-eojeol")
    assert rules.language == "ko" and rules.identity.startswith("ko-eojeol: Kiwi 0.") and not rules.stopwords
    config = json.loads((tiny_model_dir / "config.json").read_text())  # a config names the rules by their name
    (tmp_path / "config.json").write_text(json.dumps({**config, "language": "ko-eojeol"}))
    shutil.copy(tiny_model_dir / "model.safetensors", tmp_path)
    elmo = Elmo.load(tmp_path)
    assert elmo.text is rules and [v.shape[1] for v in elmo.embed("배를 타고 갔다.")] == [4]
    elmo.save(tmp_path / "saved")
    assert json.loads((tmp_path / "saved" / "config.json").read_text())["language"] == "ko-eojeol"


def test_language_rules_are_named_with_their_versions():
    assert text_rules("ko").identity.startswith("ko: Kiwi 0.") and text_rules("en").identity.startswith("en: Punkt")
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        text_rules("fr")


def test_the_model_config_chooses_the_rules_and_they_are_part_of_its_identity(tiny_model_dir, korean_model):
    korean, english = Elmo.load(korean_model), Elmo.load(tiny_model_dir)
    assert korean.text.language == "ko" and english.text.language == "en"
    assert model_hash(korean_model) != model_hash(tiny_model_dir)  # same weights, another tokenizer
    assert [v.shape[1] for v in korean.embed("배를 타고 갔다. 배가 고프다")] == [11]  # one sequence, Korean tokens


def test_a_korean_index_tokenizes_documents_and_queries_the_same_way(korean_model, tiny_model_dir, tmp_path):
    corpus = tmp_path / "ko.jsonl"
    docs = [
        {"id": "ship", "title": "항구", "text": "어부는 새벽에 배를 타고 바다로 나갔다. 배는 파도를 가르며 나아갔다."},
        {"id": "pear", "title": "과일", "text": "가을에는 달콤한 배를 깎아 먹는다. 배는 즙이 많은 과일이다."},
    ]
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    index = build_index([corpus], tmp_path / "index", model=korean_model, progress=False)
    assert index.stats()["glove"]["source"] == "korean"  # no --glove: the baseline of the model's language
    assert index.query("배를 깎아").tokens == ["배", "를", "깎", "아"]
    words = set(index.tokens["word"])
    assert "배" in words and not words & {"배를", "를", "는", "다"}  # the noun without its particle; no particles
    hits = index.search("즙이 많은 과일", k=2, method="keywords")
    assert hits[0].doc_id == "pear"
    decomposed = index.search(unicodedata.normalize("NFD", "즙이 많은 과일"), k=2, method="keywords")  # typed in jamo
    assert [hit.doc_id for hit in decomposed] == [hit.doc_id for hit in hits] and decomposed.searched_for is None
    neighbors = index.neighbors("항구에서 배를 탔다", "배", same_word=True, k=4)
    assert neighbors.query_tokens[neighbors.position] == "배" and len(neighbors.hits) == 4
    # GloVe's nearest words, as every surface shows them: nouns only, where GloVe's own list has other words too
    assert neighbors.glove == index.glove_nearest("배", k=4) and len(neighbors.glove) == 4
    assert all(index.elmo.text.names_something(word) for word, _ in neighbors.glove)
    assert not all(index.elmo.text.names_something(word) for word, _ in index.parts.glove.nearest("배", 20))
    with pytest.raises(QueryError, match=r"'배를' is not one word unit of the index, which reads it as 배 \| 를"):
        index.senses("배를")  # an eojeol: the units to ask for, not "does not occur"
    with pytest.raises(IndexMismatchError, match="was built with model 'tiny-ko'"):
        Index.open(tmp_path / "index", model=tiny_model_dir)  # the same weights under English rules: refused


def test_a_korean_typo_is_respelled_with_its_notice_and_a_real_word_never(korean_model, tmp_path, capsys):
    """Kiwi's dictionary tells a real word the collection lacks (바가지, or 주운: 줍 + 은) from no word at all (허벅자,
    one key from 허벅지): only the second is respelled, in jamo, and the answer (and the CLI) says what was searched.
    A piece Kiwi makes of a word is left alone when the word as written is one: 프레이야, in the model's vocabulary,
    is read alone as an unknown 프레 + 이 + 야, and 프레 typed alone is respelled (프로, one jamo away)."""
    assert text_rules("ko").knows("벌레") and text_rules("ko").knows("주운") and not text_rules("ko").knows("허벅자")
    model = shutil.copytree(korean_model, tmp_path / "model")
    (model / "vocab.txt").write_text("프레이야\n", encoding="utf-8")
    corpus = tmp_path / "ko.jsonl"
    docs = [
        {"id": "legs", "text": "허벅지 근육을 키우는 운동을 한다. 허벅지가 튼튼하면 무릎이 편하다."},
        {"id": "food", "text": "가지를 볶아 반찬을 만든다. 가지는 여름 채소다."},  # 가지: 2 jamo from 바가지
        {"id": "ball", "text": "프로 야구 경기를 보러 갔다. 프로 선수들이 공을 던졌다."},
    ]
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    index = build_index([corpus], tmp_path / "index", model=model, progress=False)
    assert text_rules("ko").tokenize("프레이야") == ["프레", "이", "야"]
    typo, real, name, piece = index.search(["허벅자 운동", "바가지 조심", "프레이야", "프레"], k=1, method="keywords")
    assert typo.searched_for == "허벅지 운동" and typo.hits[0].doc_id == "legs"
    assert "허벅자 → 허벅지" in typo.notices[0]
    jamo = index.search(unicodedata.normalize("NFD", "허벅자 운동"), k=1, method="keywords")  # 운동 is no typo in jamo
    assert jamo.searched_for == "허벅지 운동" and jamo.notices[0].values["words"] == {"허벅자": "허벅지"}
    assert real.searched_for is None and name.searched_for is None and piece.searched_for == "프로"
    assert (index.parts.speller.counts > 0).all()  # Korean respells into the collection's words only, not 프레이야
    assert indexer_main(["search", "--index", str(tmp_path / "index"), "허벅자 운동", "--k", "1"]) == 0
    assert capsys.readouterr().out.startswith(
        "searched for: 허벅지 운동 (to search for '허벅자 운동' as typed: --as-typed)\n"
    )


def test_embed_raw_tokenizes_each_line_with_the_models_rules(korean_model, tmp_path):
    (tmp_path / "in.txt").write_text("배를 타고 갔다. 배가 고프다\n둘째 줄\n", encoding="utf-8")
    encoder_main(
        ["embed", "--model", str(korean_model), "--raw", "--input", str(tmp_path / "in.txt"),
         "--output", str(tmp_path / "out.hdf5"), "--quiet"]
    )  # fmt: skip
    with h5py.File(tmp_path / "out.hdf5", "r") as f:
        tokens = json.loads(f["tokens"][()])
        assert tokens == [["배", "를", "타", "고", "갔", "다", ".", "배", "가", "고프", "다"], ["둘째", "줄"]]
        assert [f[str(i)].shape[1] for i in range(2)] == [11, 2]


def test_korean_sense_probe_is_written_as_text_and_read_in_either_word_unit():
    from encoder.eval.senses import DATA_KO, read_senses

    morphemes = read_senses(DATA_KO, text_rules("ko"))
    eojeol = read_senses(DATA_KO, text_rules("ko-eojeol"))
    assert len({i.word for i in morphemes}) == 12 and len(morphemes) == len(eojeol) == 120
    assert all(i.tokens[i.index] == i.word for i in morphemes)  # a surface morpheme of its own
    assert all(i.tokens[i.index].startswith(i.word) for i in eojeol)
    assert sum(i.tokens[i.index] != i.word for i in eojeol) > 90  # most carry a particle: 배를, 배가, 눈이
    assert "우리는 항구에서 배를 타고 섬으로 건너갔다." in DATA_KO.read_text("utf-8")  # spaced as written


def test_a_korean_model_is_evaluated_on_korean_data_with_the_korean_baseline(korean_model, tmp_path, capsys):
    import lzma

    (tmp_path / "data" / "corpus-ko").mkdir(parents=True)
    with lzma.open(tmp_path / "data" / "corpus-ko" / "test.txt.xz", "wt", encoding="utf-8") as f:
        f.write(DOC + "\n")
    encoder_main(["evaluate", "all", "--model", str(korean_model), "--data", str(tmp_path / "data"), "--json"])
    captured = capsys.readouterr()
    output = json.loads(captured.out)
    assert list(output["results"]) == ["perplexity", "senses"] and output["glove"] == "korean"
    assert "skipped (no ko data set): wic, wsd, pos, sts, wordsim" in captured.err
    assert output["results"]["senses"]["details"]["words"] == 12  # the Korean probe, not the English one
    assert output["results"]["senses"]["rows"]["ROC AUC, same- vs different-sense pairs"]["GloVe"] is not None
    with pytest.raises(SystemExit):
        encoder_main(["evaluate", "wic", "--model", str(korean_model)])
    assert "wic has no ko data set; give one with --data" in capsys.readouterr().err


def test_the_korean_glove_baseline_ships_by_name_and_knows_korean_words():
    from encoder.eval.embeddings import cosine
    from encoder.glove import BASELINES, Glove, check, resolve

    record = resolve(BASELINES["ko"])
    assert record["source"] == "korean"  # a name, found again wherever the package is installed
    check(record)
    with pytest.raises(ValueError, match="missing or has changed"):
        check({**record, "size": record["size"] + 1})
    glove = Glove.open("korean")

    def similarity(a: str, b: str) -> float:
        return float(cosine(glove.vector(a)[None], glove.vector(b)[None])[0])

    # planted in no test: what any Korean GloVe worth shipping knows (days of the week, family, fruit)
    assert similarity("월요일", "화요일") > similarity("월요일", "사과")
    assert similarity("아버지", "어머니") > similarity("아버지", "항구")
    assert similarity("사과", "포도") > similarity("사과", "월요일")
