"""Tests for encoder.text (sentence splitting, tokenization) and the file reading it is fed by (encoder.files);
Punkt training: tests/encoder/test_punkt.py."""

import bz2
import collections
import gzip
import lzma
import random
import unicodedata

import pytest

from encoder import text
from encoder.files import iter_lines, open_text
from encoder.text import (
    MAX_SENTENCE_TOKENS,
    Sentence,
    sentences,
    split_and_tokenize,
    split_sentences,
    text_rules,
    tokenize,
    tokenize_with_spans,
)


def assert_consistent(doc: str, result: list[Sentence]) -> None:
    """Every offset points at exactly the text it claims to, in order, without overlaps."""
    previous_end = 0
    for sentence in result:
        assert doc[sentence.start : sentence.end] == sentence.text
        assert sentence.text == sentence.text.strip() != ""
        assert sentence.start >= previous_end
        previous_end = sentence.end
        assert sentence.tokens == tokenize(sentence.text)
        assert len(sentence.tokens) == len(sentence.token_spans)
        token_end = sentence.start
        for token, (a, b) in zip(sentence.tokens, sentence.token_spans):
            assert doc[a:b] == token
            assert token_end <= a < b <= sentence.end
            token_end = b


# --- sentence splitting ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc, expected",
    [
        (
            "Dr. Smith went to Washington. He arrived at 5 p.m. on Monday.",
            ["Dr. Smith went to Washington.", "He arrived at 5 p.m. on Monday."],
        ),
        (
            "He likes fruit, e.g. apples and pears. She does not.",
            ["He likes fruit, e.g. apples and pears.", "She does not."],
        ),
        (
            "The U.S. Army fought there. It won.",
            ["The U.S. Army fought there.", "It won."],
        ),
        (
            "He moved to the U.S. in 1990. Later he moved back.",
            ["He moved to the U.S. in 1990.", "Later he moved back."],
        ),
        (
            "Mr. Jones lives in St. Louis. He works for Acme Inc. in the city.",
            ["Mr. Jones lives in St. Louis.", "He works for Acme Inc. in the city."],
        ),
        (
            "He was born c. 1500 in Italy. He died (d. 1557) in Rome. It hit No. 1 in Jan. 1960.",
            [
                "He was born c. 1500 in Italy.",
                "He died (d. 1557) in Rome.",
                "It hit No. 1 in Jan. 1960.",
            ],
        ),
        (
            "It is rich in vitamin C. The fruit is red.",
            ["It is rich in vitamin C.", "The fruit is red."],
        ),
        (
            'J. R. R. Tolkien wrote it. "Is it long?" She nodded. (It is.) Yes!',
            ["J. R. R. Tolkien wrote it.", '"Is it long?"', "She nodded.", "(It is.)", "Yes!"],
        ),
    ],
)
def test_abbreviations_do_not_end_sentences(doc, expected):
    assert sentences(doc) == expected


def test_spans_map_back_to_the_text():
    doc = (
        '  Dr. Smith said "hello." Then he left!\n'
        "This line is wrapped\nin the middle.   \n\n\n"
        "New paragraph?  Yes. (Quoted.) Done"
    )
    spans = split_sentences(doc)
    assert [doc[a:b] for a, b in spans] == [
        'Dr. Smith said "hello."',
        "Then he left!",
        "This line is wrapped\nin the middle.",
        "New paragraph?",
        "Yes.",
        "(Quoted.)",
        "Done",
    ]
    assert_consistent(doc, split_and_tokenize(doc))


def test_a_sentence_never_crosses_a_blank_line():
    doc = "Introduction\n\nThe text starts here. It goes on\r\n \r\nNext paragraph"
    expected = ["Introduction", "The text starts here.", "It goes on", "Next paragraph"]
    assert sentences(doc) == expected


def test_leftover_punctuation_stays_with_its_sentence():
    assert sentences("I love it!!!") == ["I love it!!!"]
    assert sentences("Wow!!! Great... Really?!") == ["Wow!!!", "Great...", "Really?!"]


@pytest.mark.parametrize("doc", ["", " ", "\n\n\t \u3000\n"])
def test_empty_and_whitespace_text(doc):
    """Empty or blank text has no sentences and no tokens, through every door of the splitter."""
    assert split_sentences(doc) == []
    assert sentences(doc) == []
    assert split_and_tokenize(doc) == []
    assert tokenize(doc) == []
    assert tokenize_with_spans(doc) == []


def test_korean():
    """Korean text splits into sentences at its full stops and into space-separated words, offsets intact."""
    doc = "서울은 대한민국의 수도이다. 인구는 약 천만 명이다."
    assert sentences(doc) == ["서울은 대한민국의 수도이다.", "인구는 약 천만 명이다."]
    result = split_and_tokenize(doc)
    assert result[0].tokens == ["서울은", "대한민국의", "수도이다", "."]
    assert result[1].tokens == ["인구는", "약", "천만", "명이다", "."]
    assert_consistent(doc, result)


def test_other_unicode():
    """Accents, the euro sign, emoji and Greek neither break a sentence nor shift the offsets."""
    doc = "Ça coûte 5 €. Die Straße ist naß! Emoji 🙂 works. Ελληνικά κείμενα."
    expected = ["Ça coûte 5 €.", "Die Straße ist naß!", "Emoji 🙂 works.", "Ελληνικά κείμενα."]
    assert sentences(doc) == expected
    assert_consistent(doc, split_and_tokenize(doc))


def test_long_text():
    """200,000 characters of abbreviations, quotes and questions split into exactly the planted sentences."""
    rng = random.Random(0)
    templates = [
        "Dr. {} met Mr. {} in St. Louis on Jan. {}.",
        'The report (see p. {}) says "{} percent", i.e. {} cases!',
        "Was it {} or {}? Nobody knew in {}.",
    ]
    parts, expected = [], 0
    while sum(map(len, parts)) < 200_000:
        template = rng.choice(templates)
        parts.append(template.format(*(rng.randint(1, 30) for _ in range(3))))
        expected += template.count("?") + 1
    doc = " ".join(parts)
    assert len(doc) >= 200_000
    result = split_and_tokenize(doc)
    assert len(result) == expected
    assert_consistent(doc, result)


def test_long_text_without_sentence_ends():
    """A 200,000-character text with no sentence end is one sentence of one token, not a crash or a hang."""
    doc = "x" * 200_000
    [sentence] = split_and_tokenize(doc)
    assert (sentence.start, sentence.end, sentence.tokens) == (0, 200_000, [doc])


def test_a_sentence_longer_than_the_cap_is_cut_into_consecutive_pieces():
    """A document of one endless sentence (no sentence punctuation) is embedded in pieces of at most
    MAX_SENTENCE_TOKENS tokens, so its memory does not grow with its length; offsets still point at the text."""
    words = [f"w{i % 97}" for i in range(2 * MAX_SENTENCE_TOKENS + 7)]
    doc = "  Intro here.  " + " ".join(words) + "\nand the end.  Next one."  # 807 + 4 tokens in the middle
    result = split_and_tokenize(doc)
    assert_consistent(doc, result)
    assert [len(s.tokens) for s in result] == [3, MAX_SENTENCE_TOKENS, MAX_SENTENCE_TOKENS, 11, 3]
    assert [t for s in result for t in s.tokens] == [t for s in sentences(doc) for t in tokenize(s)]  # none lost
    long = result[1:4]
    assert long[0].start == doc.index("w0") and long[-1].end == doc.index("end.") + 4  # the sentence's own ends
    assert all(a.end <= b.start for a, b in zip(long, long[1:]))  # consecutive, not overlapping
    assert [s.text for s in long] == [doc[s.start : s.end] for s in long]
    assert text_rules("en").text_tokens(doc) == [
        (t, a, b) for s in result for t, (a, b) in zip(s.tokens, s.token_spans)
    ]


@pytest.mark.parametrize(
    "language, doc",
    [
        ("en", "One two three four five six seven eight nine ten eleven."),
        ("ko", "나는 강둑에 앉아 흐르는 강물을 오래 바라보았다"),
    ],
)
def test_every_language_caps_its_sentences(language, doc, monkeypatch):
    """The cap is applied by every language's rules (here at 4 tokens), losing no token and no offset."""
    rules = text_rules(language)
    whole = rules.split_and_tokenize(doc)
    monkeypatch.setattr(text, "MAX_SENTENCE_TOKENS", 4)
    pieces = rules.split_and_tokenize(doc)
    assert max(len(s.tokens) for s in whole) > 4 >= max(len(s.tokens) for s in pieces)
    assert [t for s in pieces for t in s.token_spans] == [t for s in whole for t in s.token_spans]
    assert all(doc[s.start : s.end] == s.text and s.text == s.text.strip() for s in pieces)


# --- tokenization ----------------------------------------------------------------------------


def test_tokens_are_the_text_as_written():
    sentence = 'She said "don\'t go" -- and left (quickly).'
    assert tokenize(sentence) == [
        "She", "said", '"', "do", "n't", "go", '"', "--", "and", "left", "(", "quickly", ")", ".",
    ]  # fmt: skip
    for token, start, end in tokenize_with_spans(sentence):
        assert sentence[start:end] == token


def test_sentence_offsets_are_relative_to_the_document():
    doc = "First one. Second one here."
    second = split_and_tokenize(doc)[1]
    assert (second.text, second.start, second.end) == ("Second one here.", 11, 27)
    assert second.token_spans[0] == (11, 17)
    assert tokenize_with_spans(second.text)[0] == ("Second", 0, 6)


# --- reading files ---------------------------------------------------------------------------


def write(path, content: str | bytes) -> None:
    data = content.encode("utf-8") if isinstance(content, str) else content
    opener = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}.get(path.suffix, open)
    path.parent.mkdir(parents=True, exist_ok=True)
    with opener(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("name", ["a.txt", "a.txt.gz", "a.txt.xz", "a.txt.bz2", "a.gz"])
def test_open_text(tmp_path, name):
    """``open_text`` reads a file plain or gzip/xz/bz2-compressed (by its suffix, or .gz alone) as UTF-8 text."""
    write(tmp_path / name, "first line\nzweite Zeile – ü\n")
    with open_text(tmp_path / name) as f:
        assert f.read() == "first line\nzweite Zeile – ü\n"


def test_a_gzip_file_written_keeps_no_name_or_time_in_its_header(tmp_path):
    """Written under a temporary name and then renamed (``atomic_path``), it must not carry that name, which
    ``gunzip -N`` would restore; nor the time, so the same text gives the same bytes."""
    for name in ("a.tmp", "b.tmp"):
        with open_text(tmp_path / name, "wt", suffix=".gz") as f:
            f.write("zweite Zeile – ü\n")
    data = (tmp_path / "a.tmp").read_bytes()
    assert data == (tmp_path / "b.tmp").read_bytes() and b"a.tmp" not in data
    assert data[3] & 0x08 == 0 and data[4:8] == bytes(4)  # no FNAME flag; MTIME 0
    assert gzip.decompress(data).decode() == "zweite Zeile – ü\n"


def test_a_server_address_is_a_url_an_ipv6_one_in_brackets():
    from encoder.commands import http_url

    assert (http_url("127.0.0.1", 8000), http_url("::1", 80)) == ("http://127.0.0.1:8000", "http://[::1]:80")


def test_iter_lines_reads_files_and_folders(tmp_path):
    write(tmp_path / "corpus" / "b.txt.xz", "b1\n\nb2\n")
    write(tmp_path / "corpus" / "a" / "z.txt.gz", "az1\r\naz2")
    write(tmp_path / "corpus" / "c.txt.bz2", "c1\n")
    write(tmp_path / "corpus" / "README.md", "not text of the corpus\n")
    write(tmp_path / "single.txt", "s1\n")

    assert list(iter_lines(tmp_path / "corpus")) == ["az1", "az2", "b1", "", "b2", "c1"]
    assert list(iter_lines([str(tmp_path / "single.txt"), tmp_path / "corpus" / "c.txt.bz2"])) == [
        "s1",
        "c1",
    ]
    with pytest.raises(FileNotFoundError):
        list(iter_lines(tmp_path / "missing.txt"))


@pytest.mark.parametrize("name", ["bad.txt", "bad.txt.gz"])
def test_invalid_utf8_is_replaced_and_counted(tmp_path, name):
    write(tmp_path / name, b"caf\xe9 ok\n\xff\xfe good\nfine\n")
    replaced: collections.Counter = collections.Counter()
    lines = list(iter_lines(tmp_path / name, replaced))
    assert lines == ["caf\ufffd ok", "\ufffd\ufffd good", "fine"]
    assert replaced == {tmp_path / name: 3}


def test_utf8_byte_order_mark_is_dropped(tmp_path):
    write(tmp_path / "bom.txt", "\ufeffhello\n")
    assert list(iter_lines(tmp_path / "bom.txt")) == ["hello"]


def test_text_tokens_split_sentences_first_and_keep_offsets():
    """A query of two sentences: "down." is two tokens, and every offset points back into the text."""
    text = "I sat down. The bank was muddy."
    found = text_rules("en").text_tokens(text)
    assert [t for t, _, _ in found] == ["I", "sat", "down", ".", "The", "bank", "was", "muddy", "."]
    assert all(text[a:b] == t for t, a, b in found)
    assert tokenize(text)[2] == "down."  # the word tokenizer alone keeps an inner period: why text_tokens exists


@pytest.mark.parametrize("language", ["en", "ko"])
def test_tokens_of_a_text_typed_decomposed_are_those_of_it_typed_composed(language):
    """é as e + a combining accent, 배 as its jamo (NFD, as macOS writes them): ``tokenize`` gives the composed
    tokens, which the model embeds as the documents' (``Elmo.embed`` of a string, ``/embed``, ``embed --raw``)."""
    if language == "ko":
        pytest.importorskip("kiwipiepy")
    typed = "The café served crème brûlée." if language == "en" else "배를 타고 강을 건넜다."
    decomposed = unicodedata.normalize("NFD", typed)
    assert decomposed != typed
    rules = text_rules(language)
    assert rules.tokenize(decomposed) == rules.tokenize(typed)
    assert "".join(rules.tokenize(decomposed)) == "".join(typed.split())


def test_the_language_a_text_is_written_in_is_told_by_its_letters():
    from encoder.text import written_in

    assert written_in("배를 타고") == "ko" and written_in("배를 타고 강을 건넌 river") == "ko"
    assert written_in("the 배 of Korea") == "en"  # one Korean word in an English question: English
    assert written_in("bank 은행") is None  # as many words of each: no language to tell
    assert written_in("how do volcanoes form") == "en" and written_in("Ångström café") == "en"
    assert written_in("1999 - 2024 !") is None and written_in("") is None
