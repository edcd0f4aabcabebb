"""Examples, by the language of the open index (an English index cannot answer 배): sentence pairs of the
Word-in-context page (``bench/table4.py`` prints the Table 4 one as a table), words of the Senses page and
queries of the Search page. Their button labels are the UI language's (``app.i18n.example_name``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from encoder.text import TextRules
from encoder.words import is_content_word

Pairs = tuple[tuple[str, str], tuple[str, str]]  # two (sentence, word) pairs

TABLE4 = "play: the paper's Table 4"
"""Peters et al. (2018), Table 4: a sports "play" and a stage "play", each against the uses nearest to it."""

EXAMPLES: dict[str, Pairs] = {  # name -> two (sentence, word) pairs
    "bank: river vs money": (
        ("The otters dug a den in the muddy bank of the river.", "bank"),
        ("She opened a savings account at the bank on the high street.", "bank"),
    ),
    "play: theatre vs game": (
        ("The actors rehearsed the new play for six weeks before opening night.", "play"),
        ("After school the children went outside to play football in the park.", "play"),
    ),
    TABLE4: (
        ("The shortstop made a spectacular play to stop the ball and end the game.", "play"),
        ("The actress signed to star in a Broadway play that opens in the spring.", "play"),
    ),
}

QUERIES = (
    "how do volcanoes form",
    "my laptop will not start",
    "bass fishing on a quiet lake",
    "keeping banknotes safe from forgers",
    "actors on stage",
)
"""Example queries of the Search page, for the demo corpus."""

SENSE_WORDS = ("bank", "play", "stick", "bat", "pitch", "spring", "seal", "mouse", "cell", "interest")
"""Words of the Senses page: the demo corpus has each in two or more senses."""

# Korean: homonyms of the Korean demo corpus (data/demo-ko/README.md lists their senses), in sentences of our own
# (none is in the corpus or in the sense probe encoder/eval/sense_probe_ko.tsv). Each word is one token of its
# sentence under the Korean rules (Kiwi surface morphemes), as tests/app/test_app_korean.py checks.
EXAMPLES_KO: dict[str, Pairs] = {
    "배: ship vs pear": (
        ("파도가 잔잔해지자 우리는 작은 배를 타고 건너편 섬으로 향했다.", "배"),
        ("할머니가 깎아 주신 배는 달고 시원해서 한 접시를 금세 비웠다.", "배"),
    ),
    "눈: snow vs eye": (
        ("밤사이 내린 눈이 발목까지 쌓여서 아침 일찍 마당을 쓸었다.", "눈"),
        ("먼지가 들어갔는지 눈이 따끔거려서 깨끗한 물로 씻어 냈다.", "눈"),
    ),
    "말: horse vs speech": (
        ("목장의 말이 울타리를 넘어 넓은 들판으로 힘차게 달려 나갔다.", "말"),
        ("선생님이 건넨 따뜻한 말 덕분에 시험을 끝까지 포기하지 않았다.", "말"),
    ),
    "다리: leg vs bridge": (
        ("하루 종일 산길을 걸었더니 다리가 아파서 계단을 내려가기 힘들었다.", "다리"),
        ("강 위에 새 다리가 놓이자 두 마을을 오가는 시간이 크게 줄었다.", "다리"),
    ),
    "밤: night vs chestnut": (
        ("보름달이 뜬 밤에 가족과 함께 마을 뒷산을 천천히 걸었다.", "밤"),
        ("아버지는 난로 위에 밤을 올려 구운 뒤 껍질을 까서 아이들에게 나눠 주셨다.", "밤"),
    ),
}

QUERIES_KO = (
    "땅이 흔들리는 까닭",
    "배추로 김치 담그기",
    "잃어버린 여권 다시 받기",
    "해외에서 택시 탈 때 조심할 점",
    "감기와 독감의 차이",
)
"""Example queries of the Search page, for the Korean demo corpus (its question and how-to pieces, in other
words)."""

SENSE_WORDS_KO = ("배", "눈", "말", "다리", "밤", "차", "사과", "김", "굴", "바람")


@dataclass(frozen=True)
class Examples:
    """What the pages offer to try on an index of one language."""

    word_in_context: dict[str, Pairs]
    queries: tuple[str, ...]
    sense_words: tuple[str, ...]
    placeholder: str  # the query box's example


BY_LANGUAGE = {
    "en": Examples(EXAMPLES, QUERIES, SENSE_WORDS, "animals that live by the river"),
    "ko": Examples(EXAMPLES_KO, QUERIES_KO, SENSE_WORDS_KO, "강가에 사는 동물"),
}


def examples_for(language: str) -> Examples:
    """The examples for an index of ``language`` (English ones when there are none in it)."""
    return BY_LANGUAGE.get(language, BY_LANGUAGE["en"])


def answerable(
    examples: Examples, rules: TextRules, in_text: Callable[[str], bool], uses: Callable[[str], int]
) -> Examples:
    """The ``examples`` an index can answer: word-in-context pairs whose word it has uses of, sense words it has at
    least two uses of, and queries (and the placeholder) most of whose content words are in its text (the demo's
    queries are paraphrases: some of their words are absent on purpose). On one's own index few or none remain."""

    def mostly_known(query: str) -> bool:
        words = [w for w in rules.tokenize(query) if is_content_word(w, rules.stopwords)]
        return 2 * sum(map(in_text, words)) > len(words)

    return Examples(
        word_in_context={name: pairs for name, pairs in examples.word_in_context.items() if uses(pairs[0][1]) > 0},
        queries=tuple(query for query in examples.queries if mostly_known(query)),
        sense_words=tuple(word for word in examples.sense_words if uses(word) >= 2),
        placeholder=examples.placeholder if mostly_known(examples.placeholder) else "",
    )
