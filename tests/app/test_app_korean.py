"""The app in Korean: the 한국어 / English switch on every page, Korean examples on a Korean index (built from a
few documents with the shipped "ko" model), a Korean font for the browser, and the Korean UI in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import string
import subprocess
import time
from pathlib import Path

import pytest
from pages import (
    SIZES,
    assert_clean,
    caption_contrast,
    check_word_in_context_layout,
    cut_off,
    documents,
    facts_of,
    leaving_the_machine,
    notices,
    open_app,
    open_browser,
    open_url,
    requested_urls,
    results,
    search_as_typed,
    serve,
    tables,
    texts,
    wait_for_text,
)
from streamlit.testing.v1 import AppTest

from app.i18n import STRINGS
from app.render import NOTICES
from app.settings import MAIN_SCRIPT
from demo.corpora import demo_corpus
from demo.examples import EXAMPLES, EXAMPLES_KO, QUERIES_KO, SENSE_WORDS_KO, examples_for
from encoder.model_files import resolve_model
from indexer import Settings, build_index
from indexer.errors import MESSAGES

pytest.importorskip("kiwipiepy", reason="Korean text needs kiwipiepy (the [ko] extra)")

KOREAN_DOCUMENTS = [  # 배 as a ship and as a pear, 눈 as snow and as eyes, 말 as a horse and as words
    (
        "port",
        "항구의 아침",
        "어부들은 해가 뜨기 전에 배를 몰고 바다로 나간다. 큰 배가 항구에 들어오자 사람들이 그물을 내렸다. "
        "배에서 내린 손님들은 섬 구경을 떠났다. 바람이 세게 불면 배는 항구에 묶여 있다.",
    ),
    (
        "orchard",
        "배 과수원",
        "가을이 되면 과수원의 배가 노랗게 익는다. 잘 익은 배는 즙이 많고 달다. 농부는 배를 따서 상자에 "
        "담았다. 껍질을 깎은 배를 접시에 올려 손님에게 냈다.",
    ),
    (
        "winter",
        "눈 오는 날",
        "밤새 눈이 내려 길이 하얗게 덮였다. 아이들은 쌓인 눈으로 눈사람을 만들었다. 오래 화면을 보면 눈이 "
        "쉽게 피로해진다. 눈을 감고 잠시 쉬면 한결 편해진다.",
    ),
    (
        "ranch",
        "목장 이야기",
        "초원에서 말이 풀을 뜯고 있다. 목동은 말을 타고 양 떼를 몰았다. 친구의 다정한 말에 마음이 풀렸다. "
        "그는 아무 말도 하지 않고 고개만 끄덕였다.",
    ),
    (
        "kimchi",
        "김치 담그기",
        "배추를 소금물에 절인 뒤 깨끗한 물에 헹군다. 고춧가루와 마늘로 양념을 만든다. 절인 배추에 양념을 "
        "고루 바르면 맛있는 김치가 된다.",
    ),
]
PAGES = {  # page -> its title in each language
    "views/search.py": ("검색", "Search"),
    "views/word_in_context.py": ("문맥 속 단어", "Word in context"),
    "views/senses.py": ("단어의 뜻", "Senses"),
    "views/about.py": ("소개", "About"),
}


def write_corpus(path: Path, documents: list[tuple[str, str, str]]) -> Path:
    path.write_text(
        "".join(json.dumps({"id": i, "title": t, "text": x}, ensure_ascii=False) + "\n" for i, t, x in documents),
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="session")
def korean_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 22-sentence index of the shipped Korean model, where 배, 눈 and 말 each have two senses."""
    try:
        resolve_model("ko")
    except FileNotFoundError:
        pytest.skip("the Korean model data/models/ko is not installed")
    root = tmp_path_factory.mktemp("app-index-ko")
    build_index(
        [write_corpus(root / "corpus.jsonl", KOREAN_DOCUMENTS)],
        root / "index",
        model="ko",
        progress=False,
        settings=Settings(glove="train", glove_dim=16, glove_epochs=2, glove_min_count=1),
    )
    return root / "index"


def titles(at: AppTest) -> list[str]:
    return [title.value for title in at.title]


def marks(markdown: str) -> list[str]:
    """The marked words of a result: a Korean token is marked with its whole written word (배 in 배를)."""
    return re.findall(r":orange-background\[\*\*(.+?)\*\*\]", markdown)


# ------------------------------------------------------------------------------------------ the strings
def fields(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def test_every_string_is_in_both_languages_with_the_same_fields() -> None:
    english, korean = STRINGS["en"], STRINGS["ko"]
    assert set(english) == {k for k in korean if not k.startswith(("example.", "indexer."))}
    assert {key for key in english if fields(english[key]) != fields(korean[key])} == set()
    examples = {*EXAMPLES, *EXAMPLES_KO}
    assert {key.removeprefix("example.") for key in korean if key.startswith("example.")} == examples
    assert not [text for text in korean.values() if re.search(r"\b(the|of|and|to)\b", text)]  # nothing left in English


def test_every_indexer_message_is_in_korean_with_the_same_fields() -> None:
    """English is the message itself; Korean words each one, but for the notices the page words itself."""
    korean = {k.removeprefix("indexer."): v for k, v in STRINGS["ko"].items() if k.startswith("indexer.")}
    assert set(korean) == set(MESSAGES) - set(NOTICES) and set(NOTICES) <= set(MESSAGES)
    assert {key for key in korean if fields(korean[key]) != fields(MESSAGES[key])} == set()


def test_korean_presets_are_new_sentences_about_words_of_the_korean_demo() -> None:
    """Each preset word is one token of its sentence under the Korean rules and a word of data/demo-ko; no preset
    sentence is taken from the demo corpus or the Korean sense probe."""
    from encoder.text import text_rules

    korean = text_rules("ko")
    lines = [line for path in demo_corpus("ko") for line in path.read_text(encoding="utf-8").splitlines()]
    corpus = "\n".join(json.loads(line)["text"] for line in lines if line.strip())
    probe = (Path(__file__).resolve().parents[2] / "encoder" / "eval" / "sense_probe_ko.tsv").read_text("utf-8")
    demo_words = set(korean.tokenize(corpus))
    for name, pairs in EXAMPLES_KO.items():
        assert name.startswith(f"{pairs[0][1]}:") and pairs[0][1] == pairs[1][1]
        for sentence, word in pairs:
            assert korean.tokenize(sentence).count(word) == 1, sentence
            assert word in demo_words and sentence not in corpus and sentence not in probe
    assert set(SENSE_WORDS_KO) <= demo_words
    assert all(set(korean.tokenize(query)) & demo_words for query in QUERIES_KO)
    assert examples_for("ko").queries == QUERIES_KO and examples_for("fr") == examples_for("en")


# ------------------------------------------------------------------------------------------ the switch
def test_a_korean_index_opens_in_korean_on_every_page(korean_index: Path) -> None:
    at = open_app(korean_index)
    assert_clean(at)
    assert at.radio(key="ui.lang").value == "ko" and at.radio(key="ui.lang").label == "한국어 / English"
    assert [b.label for b in at.button] == ["검색"] and at.text_input(key="ui.search.query").label == "검색어"
    assert any("검색어를 입력하거나" in text for text in texts(at.info))
    assert at.text_input(key="index_dir").label == "색인 폴더"
    for page, (korean, _) in PAGES.items():
        at.switch_page(page).run()
        assert_clean(at)
        assert titles(at) == [korean]
    assert texts(at.header) == ["ELMo의 작동 방식", "모델", "색인", "사용 중인 층 가중치", "모델 카드"]  # About
    facts = facts_of(at, 1)
    assert facts["문서"] == "5" and facts["GloVe 기준선"].startswith("이 색인의 말뭉치로 학습")
    model = facts_of(at, 0)  # the model's config.json entries by name, never as raw keys
    assert model["언어 모델 어휘"] == "단어 50,000개" and model["언어"] == "한국어"
    assert not {"vocab_size", "language", "vocab size"} & set(model)
    assert "s2 = " in at.get("graphviz_chart")[0].proto.spec and "정방향" in at.get("graphviz_chart")[0].proto.spec
    assert not at.query_params.get("lang")  # the index's own language: nothing in the URL


def test_the_choice_survives_other_pages_and_goes_into_the_url(korean_index: Path) -> None:
    at = open_app(korean_index, "views/senses.py")
    at.radio(key="ui.lang").set_value("en").run()
    assert_clean(at)
    assert titles(at) == ["Senses"] and at.text_input(key="ui.senses.word").value == "배"  # examples: the index's
    assert at.query_params["lang"] == "en"
    for page, (_, english) in PAGES.items():
        at.switch_page(page).run()
        assert_clean(at)
        assert titles(at) == [english] and at.radio(key="ui.lang").value == "en"
    at.switch_page("views/search.py").run()
    at.text_input(key="ui.search.query").set_value("배를 타고 섬에 가기").run()
    assert_clean(at)
    assert at.query_params["lang"] == "en" and at.query_params["q"] == "배를 타고 섬에 가기"
    assert [tab.label for tab in at.tabs] == ["Keywords + ELMo token layer", "GloVe (static baseline)"]

    at.radio(key="ui.lang").set_value("ko").run()  # back to the index's language: gone from the URL
    assert "lang" not in at.query_params and [tab.label for tab in at.tabs] == [
        "키워드 + ELMo 토큰 층",
        "GloVe (고정 벡터 기준선)",
    ]


def test_a_shared_url_keeps_its_language(korean_index: Path) -> None:
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
    at.session_state["index_dir"] = str(korean_index)
    at.query_params.update({"lang": "en", "q": "김치"})
    at.run()
    assert_clean(at)
    assert at.radio(key="ui.lang").value == "en" and titles(at) == ["Search"]
    assert documents(at)[0] == "**1. 김치 담그기**"


def test_a_language_the_url_gives_twice_is_neither(small_index: Path) -> None:
    """``?lang=en&lang=ko`` chose Korean (the last) unsaid; it says neither, and the index's language is shown."""
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
    at.session_state["index_dir"] = str(small_index)
    at.query_params.update({"lang": ["en", "ko"]})
    at.run()
    assert_clean(at)
    assert at.radio(key="ui.lang").value == "en" and titles(at) == ["Search"] and "lang" not in at.query_params


def test_an_english_index_opens_in_english_and_switches_to_korean(small_index: Path) -> None:
    at = open_app(small_index, "views/word_in_context.py")
    assert_clean(at)
    assert at.radio(key="ui.lang").value == "en" and titles(at) == ["Word in context"]
    at.radio(key="ui.lang").set_value("ko").run()
    assert_clean(at)
    assert titles(at) == ["문맥 속 단어"] and at.query_params["lang"] == "ko"
    assert [b.label for b in at.button] == ["bank: 강둑 vs 은행"]  # the examples this index has the words of
    assert at.text_input(key="ui.wic.sentence_a").value == EXAMPLES["bank: river vs money"][0][0]  # still English
    assert texts(at.subheader) == [
        "ELMo · 문장 A의 “bank”",
        "ELMo · 문장 B의 “bank”",
        "GloVe · 가장 가까운 단어",
        "두 쓰임의 비교",
        "질문",
        "층마다",
    ]
    assert at.toggle(key="ui.wic.same_word").label == "같은 단어만"
    representation = at.radio(key="ui.wic.representation")
    assert representation.label == "표현" and representation.options[:2] == ["문맥 상태", "ELMo 층 섞기 \\(논문\\)"]
    assert "이 자리에서 모델이 기대하는 단어" not in texts(at.markdown)  # a model without an LM head expects nothing


# ------------------------------------------------------------------------------------------ the Korean pages
def test_korean_presets_appear_and_run_on_word_in_context(korean_index: Path) -> None:
    at = open_app(korean_index, "views/word_in_context.py")
    assert_clean(at)
    assert [b.label for b in at.button] == [
        "배: 선박 vs 과일",
        "눈: 날씨 vs 신체",
        "말: 동물 vs 언어",
    ]  # 다리, 밤: not here
    assert at.text_input(key="ui.wic.sentence_a").value == EXAMPLES_KO["배: ship vs pear"][0][0]
    assert texts(at.subheader) == [
        "ELMo · 문장 A의 “배”",
        "ELMo · 문장 B의 “배”",
        "GloVe · 가장 가까운 단어",
        "두 쓰임의 비교",
        "질문",
        "층마다",
    ]
    hits = results(at)
    assert len(hits) == 2 * 8  # the index has 8 uses of 배: each sentence gets them all
    assert all(marks(hit) and marks(hit)[0].startswith("배") for hit in hits)  # 배를, 배가, 배에서 … marked
    assert {"배를", "배가", "배에서"} <= {mark for hit in hits for mark in marks(hit)}

    next(b for b in at.button if b.label.startswith("눈")).click().run()
    assert_clean(at)
    assert texts(at.subheader)[:2] == ["ELMo · 문장 A의 “눈”", "ELMo · 문장 B의 “눈”"]
    assert results(at) and all(marks(hit)[0].startswith("눈") for hit in results(at))

    picker = at.button_group[0]  # the tokens of sentence A, as Kiwi splits them, that the index holds
    from encoder.text import text_rules

    # 밤사이 내린 눈이 발목까지 쌓여서 아침 일찍 마당을 쓸었다: its nouns only, never a particle, ending or stem
    assert picker.options == ["눈"]  # of its nouns the index holds only 눈 (내린, 쌓, 쓸었: verbs, not offered)
    not_offered = next(caption.value for caption in at.caption if "마당" in caption.value)  # nouns it lacks
    assert "발목" in not_offered and not {"내린", "쌓", "쓸었", "이"} & set(re.split(r"[:,\s]+", not_offered))
    next(b for b in at.button if b.label.startswith("배")).click().run()
    picker = at.button_group[0]  # 파도가 잔잔해지자 우리는 작은 배를 타고 건너편 섬으로 향했다.
    assert picker.options == ["배", "섬"]  # not 작 (작은) or 타 (타고), fragments of verbs the index holds
    tokens = text_rules("ko").tokenize(at.text_input(key="ui.wic.sentence_a").value)
    picker.set_value(tokens.index("섬")).run()
    assert_clean(at)
    assert texts(at.subheader)[0] == "ELMo · 문장 A의 “섬”"


def test_korean_word_in_context_shows_its_new_parts_in_korean(korean_index: Path) -> None:
    """What the model expects (with the LM's own classes in Korean), the two uses compared and the representation
    choice, all in Korean; GloVe's nearest words are content words (nouns), never particles or endings."""
    from encoder.text import KOREAN_STOPWORDS, text_rules

    korean = text_rules("ko")
    at = open_app(korean_index, "views/word_in_context.py")
    assert_clean(at)
    assert at.radio(key="ui.wic.representation").options[:2] == ["문맥 예측", "ELMo 층 섞기 \\(논문\\)"]
    assert "이 자리에서 모델이 기대하는 단어" in " ".join(texts(at.markdown))
    shown = tables(at.get_by_key("wide-wic"))
    expected = [table for table in shown if "앞 단어들을 읽고" in table.columns]
    assert len(expected) == 2 and all(len(table) == 10 for table in expected)
    cells = " ".join(" ".join(table[column]) for table in expected for column in table.columns)
    assert "<UNK>" not in cells and "<S>" not in cells
    compared = next(table for table in shown if "코사인" in table.columns)
    assert list(compared["표현"])[-2:] == ["ELMo 층 섞기 (논문)", "문맥 예측"]
    assert any("층들의 단순 평균" in caption for caption in texts(at.caption))
    glove = [table for table in at.get_by_key("wide-wic").dataframe if "유사도" in table.value.columns]
    words = list(glove[0].value["단어"])
    assert words and all(korean.label_words(word) == [word] for word in words)
    assert not set(words) & KOREAN_STOPWORDS


def test_senses_shows_cards_for_a_korean_word(korean_index: Path) -> None:
    at = open_app(korean_index, "views/senses.py")
    assert at.text_input(key="ui.senses.word").value == "배"
    at.selectbox(key="ui.senses.k").set_value(2).run()
    assert_clean(at)
    assert [m.value for m in at.markdown if m.value.startswith("#### ")] == ["#### 뜻 1", "#### 뜻 2"]
    assert [m.label for m in at.metric] == ["나온 횟수", "뜻", "실루엣"] and at.metric[0].value == "8"
    assert sum(any(w.startswith("배") for w in marks(m.value)) for m in at.markdown) >= 2  # in the cards
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert {"field": "문장", "type": "nominal"} in spec["encoding"]["tooltip"]

    at.button_group[0].set_value("말").run()
    assert_clean(at)
    assert at.text_input(key="ui.senses.word").value == "말" and at.metric[0].value == "4"


def test_a_korean_query_finds_its_document(korean_index: Path) -> None:
    at = open_app(korean_index)
    assert at.button_group[0].options == [QUERIES_KO[1]]  # the one example most of whose words are here
    at.text_input(key="ui.search.query").set_value("배를 깎아 먹었다").run()
    assert_clean(at)
    assert [tab.label for tab in at.tabs] == ["키워드 + ELMo 토큰 층", "GloVe (고정 벡터 기준선)"]
    found = documents(at)
    assert found and found[0] == "**1. 배 과수원**"
    assert ["깎은", "배를"] in [marks(m.value) for m in at.markdown]  # the words of the matched morphemes
    assert any(e.label.startswith("일치한 단어") and "배, 깎" in e.label for e in at.expander)
    # 22 sentences, too few documents to tell chance: the note says so in Korean, and no bars are shown
    assert any("관련도를 보이지 않습니다" in c.value for c in at.caption) and not at.get("progress")

    at.button_group[0].set_value(QUERIES_KO[1]).run()  # an example query fills the box
    assert at.text_input(key="ui.search.query").value == QUERIES_KO[1]
    assert_clean(at)
    assert documents(at)[0] == "**1. 김치 담그기**"


def test_a_korean_typo_is_searched_as_the_index_spells_it_with_the_way_back(korean_index: Path) -> None:
    """배츄 (one jamo from 배추, and no word Kiwi knows) is searched as 배추, said in Korean, with the button that
    searches it as typed in this tab."""
    at = open_app(korean_index)
    at.text_input(key="ui.search.query").set_value("배츄를 절이는 법").run()
    assert_clean(at)
    assert any(text.startswith("배추를 절이는 법(으)로 검색했습니다(배츄 → 배추") for text in notices(at))
    assert documents(at)[0] == "**1. 김치 담그기**"
    search_as_typed(at, "검색했습니다")


def test_a_written_form_is_looked_up_as_the_token_the_index_knows(korean_index: Path) -> None:
    """배를 typed in Senses, or carried by a link to Word in context, is 배 by the model's own rules (Kiwi); a
    phrase of several words is answered with the words to choose from."""
    at = open_url(korean_index, {"word": "배를", "k": "2"}, "views/senses.py")
    assert_clean(at)
    assert "“배”의 뜻을 보여 줍니다. 모델이 “배를”에서 읽어 낸 단어입니다." in texts(at.caption)
    assert at.metric[0].value == "8" and at.query_params["word"] == "배를"  # the URL keeps what was typed
    at.text_input(key="ui.senses.word").set_value("항구의 배").run()
    assert_clean(at)
    assert texts(at.info) == ["모델은 “항구의 배”을(를) 여러 단어(항구, 배)로 읽습니다. 그 가운데 하나를 넣으세요."]
    assert not at.metric

    sentence = "어제 항구에서 큰 배를 보았다."
    at = open_url(korean_index, {"a": sentence, "wa": "배를", "compare": "0"}, "views/word_in_context.py")
    assert_clean(at)
    assert texts(at.subheader)[0] == "ELMo · 문장 A의 “배”" and results(at)


def test_a_word_typed_as_jamo_is_the_word_the_sentence_holds(korean_index: Path) -> None:
    """A link whose word and sentence are written decomposed (배 as jamo, as macOS writes it) chooses 배 in the
    sentence, where the page said "“배” is not in this sentence"; Senses reads such a word with nothing to say."""
    import unicodedata

    jamo = lambda text: unicodedata.normalize("NFD", text)  # noqa: E731
    at = open_url(
        korean_index,
        {"a": jamo("어제 항구에서 큰 배를 보았다."), "wa": jamo("배"), "compare": "0"},
        "views/word_in_context.py",
    )
    assert_clean(at)
    assert texts(at.subheader)[0] == "ELMo · 문장 A의 “배”" and results(at) and not texts(at.info)
    at = open_url(korean_index, {"word": jamo("배"), "k": "2"}, "views/senses.py")
    assert_clean(at)
    assert at.metric[0].value == "8" and not any("읽어 낸 단어" in caption for caption in texts(at.caption))


def test_korean_sense_labels_are_nouns_never_particles_or_endings(korean_index: Path) -> None:
    """Clusters are named by the words the LM expects at their uses, kept only where the Korean rules call them a
    noun (``TextRules.label_words``)."""
    from encoder.text import KOREAN_GENERIC_NOUNS, KOREAN_STOPWORDS, text_rules

    korean = text_rules("ko")
    at = open_app(korean_index, "views/senses.py")
    for word in ("배", "눈", "말"):
        at.text_input(key="ui.senses.word").set_value(word)
        at.selectbox(key="ui.senses.k").set_value(2).run()
        assert_clean(at)
        cards = [m.value for m in at.markdown if m.value.startswith("**") and " · " in m.value]
        labels = {
            w for card in cards for w in card.split("**")[1].split(", ") if card.split("**")[1] != "두드러진 단어 없음"
        }
        assert word not in labels and not labels & (KOREAN_STOPWORDS | KOREAN_GENERIC_NOUNS | {"합니다", "적", "때"})
        assert all(korean.label_words(label) == [label] for label in labels), labels  # the LM's words, if nouns


def test_the_about_page_shows_the_korean_card_in_korean(korean_index: Path) -> None:
    at = open_app(korean_index, "views/about.py")
    assert_clean(at)
    card = " ".join(texts(at.markdown))
    assert "ELMo Search의 한국어 biLM" in card and "<!--" not in card and "../shared" not in card
    assert len(at.get("image")) == 1  # the learning curve, from the model's folder
    at.radio(key="ui.lang").set_value("en").run()
    assert "the Korean biLM of ELMo Search" in " ".join(texts(at.markdown))


def test_a_word_the_index_lacks_is_answered_in_the_ui_language(korean_index: Path) -> None:
    at = open_app(korean_index, "views/senses.py")
    at.text_input(key="ui.senses.word").set_value("기차").run()
    assert not at.exception and not at.metric
    assert texts(at.warning) == ["“기차”은(는) 색인된 문서에 나오지 않습니다. 다른 단어를 넣어 보세요."]
    at.radio(key="ui.lang").set_value("en").run()
    assert texts(at.warning) == ["'기차' does not occur in the indexed documents; try another word"]


def test_a_korean_nonsense_query_is_answered_in_korean(korean_index: Path) -> None:
    at = open_app(korean_index)
    at.text_input(key="ui.search.query").set_value("뷁궭 쀍").run()
    assert_clean(at)
    # 5 documents: no verdict ("no good match") from a scale too small to tell; the note that says so, in Korean
    assert any("관련도를 보이지 않습니다" in c.value for c in at.caption) and documents(at)


def test_opening_the_korean_demo_after_the_english_one_moves_to_its_examples(
    korean_index: Path, small_index: Path
) -> None:
    at = open_app(small_index, "views/senses.py")
    assert at.text_input(key="ui.senses.word").value == "bank" and titles(at) == ["Senses"]
    at.text_input(key="index_dir").set_value(str(korean_index)).run()
    assert_clean(at)
    assert titles(at) == ["단어의 뜻"]  # the user never chose: the UI follows the index into Korean
    assert at.text_input(key="ui.senses.word").value == "배" and at.metric[0].value == "8"


# ------------------------------------------------------------------------------------------ the browser
def test_a_korean_font_is_installed_for_the_browser() -> None:
    """Without a font that covers Hangul, Chromium draws the Korean pages as empty boxes."""
    if shutil.which("chromium") is None:
        pytest.skip("no headless browser: install the Debian packages chromium and chromium-driver")
    fc_list = shutil.which("fc-list")
    assert fc_list, "fc-list not found: install fontconfig and fonts-noto-cjk (scripts/install-system-packages.sh)"
    fonts = subprocess.run([fc_list, ":lang=ko", "family"], capture_output=True, text=True, check=True).stdout
    assert fonts.strip(), (
        "Chromium is installed but no font covers Korean (fc-list :lang=ko is empty): install fonts-noto-cjk "
        "(scripts/install-system-packages.sh)"
    )


@pytest.fixture(scope="module")
def served_korean(korean_index: Path, tmp_path_factory: pytest.TempPathFactory):
    """The app on the Korean test index, served on a free local port (one server for both sizes)."""
    with serve(korean_index, tmp_path_factory.mktemp("served-ko")) as url:
        yield url


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_korean_ui_in_a_real_browser(served_korean: str, tmp_path: Path, size: str) -> None:
    """The Korean pages in headless Chromium at a desktop and a phone size: Word in context (Korean labels, 배's
    neighbours, layout by width; then ?lang=en), Senses from a written form (배를 is looked up as 배), and About
    with the Korean model card in Korean and, with ?lang=en, in English; no request leaves the machine and
    captions read at AA contrast. Screenshots are left in tmp_path."""
    browser = open_browser(tmp_path, *SIZES[size])
    from selenium.webdriver.common.by import By

    url, urls = served_korean, []
    try:
        page_text = lambda: browser.find_element(By.TAG_NAME, "body").text  # noqa: E731
        browser.get(f"{url}/word_in_context")
        wait_for_text(browser, "층마다", last_hit=8)
        assert browser.title == "문맥 속 단어 · ELMo Search"
        wait_for_text(browser, "배: 선박 vs 과일")  # a button's script can come after the lists (under load)
        check_word_in_context_layout(browser, size, "ELMo · 문장 A의 “배”", "ELMo · 문장 B의 “배”")
        wait_for_text(browser, "이 자리에서 모델이 기대하는 단어")  # the LM's expectations, in Korean
        assert "앞 단어들을 읽고" in page_text() and "문맥 예측(으)로 찾은 가장 가까운 쓰임" in page_text()
        assert not cut_off(browser, '[data-testid="stTable"]')  # the tables fit a phone
        assert caption_contrast(browser) >= 4.5
        time.sleep(1)  # let the last elements paint
        browser.save_screenshot(str(tmp_path / f"word-in-context-ko-{size}.png"))

        browser.get(f"{url}/word_in_context?lang=en")
        wait_for_text(browser, "Layer by layer", last_hit=8)
        assert browser.title == "Word in context · ELMo Search"
        assert ("ELMo · “배” in A" in page_text()) == (size == "desktop")  # a phone's tab says "A · 배"

        browser.get(f"{url}/senses?word=배를&k=2")  # 8 uses: too few for "auto" to show two senses of 5
        wait_for_text(browser, "뜻 2")
        assert "“배”의 뜻을 보여 줍니다" in page_text() and "누르면 문장을 읽을 수 있습니다" in page_text()
        browser.save_screenshot(str(tmp_path / f"senses-ko-{size}.png"))

        browser.get(f"{url}/about")
        wait_for_text(browser, "ELMo Search의 한국어 biLM")  # the card's Korean translation
        card = page_text().split("모델 카드")[-1]  # the card, the page's last part (its facts show the index's folder)
        assert "<!--" not in card and "../shared" not in card and "/tmp/" not in card
        browser.get(f"{url}/about?lang=en")
        wait_for_text(browser, "the Korean biLM of ELMo Search")
        if size == "phone":  # Search in Korean: the method names its layers; too few documents for relevance, in
            browser.get(f"{url}/?q=배를+깎아+먹었다")  # Korean; each one's "why" fits the screen
            wait_for_text(browser, "일치한 단어: 배, 깎")
            assert "키워드 + ELMo 토큰 층" in page_text() and "관련도를 보이지 않습니다" in page_text()
            assert "1. 배 과수원" in page_text()
            width = browser.execute_script("return document.body.clientWidth")
            for why in browser.find_elements(By.TAG_NAME, "summary"):
                assert why.rect["x"] + why.rect["width"] <= width
            browser.save_screenshot(str(tmp_path / "search-ko-phone.png"))
        assert not browser.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
        assert "Traceback" not in page_text()
        urls += requested_urls(browser)
    finally:
        browser.quit()
    assert urls and not leaving_the_machine(urls), leaving_the_machine(urls)
    assert (tmp_path / f"word-in-context-ko-{size}.png").stat().st_size > 10_000
