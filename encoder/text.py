"""Splitting text into sentences and tokenizing it: the one place that does this.

biLM training (``encoder``) and the indexer both go through this module, so the model is trained
on exactly the tokens it is later asked to embed, and the character offsets the indexer stores
point at exactly those tokens.

English sentences are split by NLTK's Punkt with the parameters we ship (``encoder.punkt``, which trains
them); words by ``NLTKWordTokenizer``, which needs no data. Korean text goes through Kiwi (the ``[ko]`` extra).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import MissingExtra
from .punkt import PUNKT_PATH, punkt_tokenizer
from .words import is_content_word

# A paragraph: from a non-space character to the end of its line, and the lines after it up to
# a blank line.
_PARAGRAPH = re.compile(r"\S.*(?:\n(?![^\S\n]*\n).*)*")
_WORD_CHAR = re.compile(r"\w")
_NON_SPACE = re.compile(r"\S+")


@functools.cache
def _word_tokenizer() -> Any:
    """NLTK's word tokenizer, imported on first use: importing nltk loads scipy and scikit-learn, about 1.5 s of
    every process start, and embedding pre-tokenized text never needs it."""
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


MAX_SENTENCE_TOKENS = 400
"""The most tokens one sentence may have. Text without sentence punctuation (a list, a table, a log, a
transcript) would otherwise be one "sentence" of any length, embedded at once: 700k tokens needed 11.5 GB.
A longer sentence is cut into consecutive pieces of at most this many tokens (:func:`cap_sentences`, which
every language's rules apply), far more than real sentences have; an index, training and a query all see the
same pieces."""

# ---------------------------------------------------------------------------------------------
# Sentences and tokens


@dataclass(frozen=True)
class Sentence:
    """One sentence of a document, with offsets into the document: ``doc[start:end] == text``."""

    text: str
    start: int
    end: int
    tokens: list[str]
    token_spans: list[tuple[int, int]]
    """Offsets into the document (not the sentence): ``doc[a:b] == tokens[i]``."""


def composed(text: str) -> str:
    """``text`` in Unicode's composed form (NFC), as the indexer reads documents and questions: a letter typed as a
    base and a combining mark (é as e + U+0301, as macOS and some keyboards write it) or a Hangul syllable typed as
    its jamo (배 as ᄇ + ᅢ) is one character, so that a query finds the document that spells it the other way."""
    return unicodedata.normalize("NFC", text)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences in ``text``, in order.

    Spans never start or end with whitespace. A sentence never crosses a blank line (a paragraph
    break); single line breaks are treated as spaces, as in hard-wrapped text. Punkt breaks
    sentences after '.', '?' and '!' in any script, so e.g. Korean text is split too. Leftover
    punctuation that Punkt splits off on its own ("Wow!!" + "!") is joined to the sentence before.
    """
    tokenizer = punkt_tokenizer()
    spans: list[tuple[int, int]] = []
    for para in _PARAGRAPH.finditer(text):
        first_in_para = len(spans)
        for start, end in tokenizer.span_tokenize(para.group()):
            start, end = para.start() + start, para.start() + end
            if len(spans) > first_in_para and not _WORD_CHAR.search(text, start, end):
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
    return spans


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`split_sentences`)."""
    return [text[start:end] for start, end in split_sentences(text)]


def tokenize_with_spans(sentence: str) -> list[tuple[str, int, int]]:
    """Tokens of one sentence as ``(token, start, end)``, with ``sentence[start:end] == token``.

    Tokens are always the text as written. ``NLTKWordTokenizer`` itself rewrites double quotes
    as `` and '' (Penn Treebank style); we keep the original '"' instead, so tokens and offsets
    agree and the biLM sees the same quote character as in the text it reads.
    """
    spans = _word_tokenizer().span_tokenize(sentence)
    return [(sentence[start:end], start, end) for start, end in spans]


def tokenize(sentence: str) -> list[str]:
    """Tokens of one sentence, as in :func:`tokenize_with_spans`.

    Split text into sentences first: the word tokenizer only splits off the period at the very
    end of its input, and would leave "them." of an earlier sentence as one token."""
    return [token for token, _, _ in tokenize_with_spans(sentence)]


def split_and_tokenize(text: str) -> list[Sentence]:
    """Split a document into sentences and tokenize each, keeping offsets into the document (long sentences cut
    by :func:`cap_sentences`)."""
    result = []
    for start, end in split_sentences(text):
        tokens = tokenize_with_spans(text[start:end])
        result.append(
            Sentence(
                text=text[start:end],
                start=start,
                end=end,
                tokens=[token for token, _, _ in tokens],
                token_spans=[(start + a, start + b) for _, a, b in tokens],
            )
        )
    return cap_sentences(text, result)


def cap_sentences(text: str, sentences: Iterable[Sentence]) -> list[Sentence]:
    """``sentences`` of ``text``, each of more than ``MAX_SENTENCE_TOKENS`` tokens cut into consecutive pieces of
    at most that many: the first from the sentence's start, the last to its end, the others from their first
    token to their last. Every language's rules end with this, so no text becomes one endless sentence."""
    result = []
    for sentence in sentences:
        n = len(sentence.tokens)
        for first in range(0, max(n, 1), MAX_SENTENCE_TOKENS):
            last = min(first + MAX_SENTENCE_TOKENS, n)
            if first == 0 and last == n:
                result.append(sentence)
                break
            spans = sentence.token_spans[first:last]
            start = sentence.start if first == 0 else spans[0][0]
            end = sentence.end if last == n else spans[-1][1]
            result.append(Sentence(text[start:end], start, end, sentence.tokens[first:last], spans))
    return result


# ---------------------------------------------------------------------------------------------
# Languages: a model's config names its language, and that language's rules are used everywhere


ENGLISH_STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more
most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same
shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
themselves then there there's these they they'd they'll they're they've this those through to too under
until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
while who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself
yourselves 's 're 've 'd 'll 'm n't also may might must shall will just
""".split()
)
"""English function words (compact, built in: no nltk data to download): not indexed as words in context,
not counted as query terms."""

KOREAN_STOPWORDS = frozenset(
    """
이 가 을 를 은 는 의 에 에서 에게 께 께서 한테 로 으로 와 과 도 만 까지 부터 보다 처럼 마다 이나 나 이라 라
이랑 랑 하고 에게서 으로서 로서 으로써 로써 야 요 이요 든지 조차 마저 밖에 뿐 이며 며 고 다 면 서 아 어 아서 어서
지 게 기 음 는데 은데 지만 니다 습니다 입니다 었 았 였 겠 시 던 ㄴ ㄹ 다가 도록 려고 러 자 죠 네 까 니까 으니 니
므로 면서 으면 어요 아요 하 해 했 한 할 함 되 돼 된 될 됨 이다 있 없 것 수 등 및 또 또는 그 이런 저 그리고 그러나
""".split()
)
"""Korean function morphemes as ``KoreanText`` writes them (particles, endings, the copula, 하다/되다 and a few
function nouns): a fixed list, like the English one; not indexed as words in context, not query terms."""

KOREAN_GENERIC_NOUNS = frozenset(
    "때 적 날 곳 속 중 후 전 뒤 앞 위 안 밖 쪽 번 가지 경우 정도 사이 다음 동안 이상 이하 때문 사람 자신 우리 모두".split()
)
"""Nouns of time, place, quantity and person that name no topic, though Kiwi may tag them as ordinary nouns (NNG):
never a sense cluster's label (``KoreanText.label_words``). 적 is mostly the 적 of 한 적이 있다 ("have ever"), rarely
an enemy."""


def _english_function_word(token: str) -> bool:
    """An English stopword as written in other text ("The", "of"); an acronym in capitals ("IT") is a name."""
    return token.lower() in ENGLISH_STOPWORDS and not (token.isupper() and len(token) > 1)


class TextRules:
    """How one language's text becomes sentences and tokens, with offsets into the text, and which of its
    tokens are function words (``stopwords``, lower case).

    A model names its language in its config (``Elmo.text``); training, indexing, search and the app all take
    the rules from the model, so a Korean model is never fed English tokens. ``identity`` names the
    tokenizer and its version: it is part of the model's content hash, so an index built under one tokenizer
    refuses another.
    """

    name = ""
    """What a model's config names (``"language"``): the language, and the word unit where it has more than one."""
    language = ""
    """The human language (ISO 639-1): which data sets, GloVe baseline and examples go with the model."""
    stopwords: frozenset[str] = frozenset()
    respells_into_dictionary = True
    """Whether search may respell a misspelled query word as a dictionary word no document has ("moviie" as
    "movie"), or only as the collection's words: measured by ``bench.search_quality`` (docs/search-quality.md)."""

    @property
    def identity(self) -> str:
        raise NotImplementedError

    def split_and_tokenize(self, text: str) -> list[Sentence]:
        raise NotImplementedError

    def require(self) -> None:
        """Raise ``MissingExtra`` when what tokenizes this language is not installed (an optional extra)."""

    def text_tokens(self, text: str) -> list[tuple[str, int, int]]:
        """The tokens of a text of any length (a query, a sentence a user typed) as ``(token, start, end)`` with
        ``text[start:end] == token``: split into sentences first, then into words. The one way a query is
        tokenized, so the index, the encoder and the app agree on every token's position."""
        return [(t, a, b) for s in self.split_and_tokenize(text) for t, (a, b) in zip(s.tokens, s.token_spans)]

    def tokenize(self, text: str) -> list[str]:
        """The tokens of a text (split into sentences first, as ``text_tokens``), as one list, ``composed``: the same
        tokens, and so the same vectors (``Elmo.embed`` of a string, ``embed --raw``, the API's ``/embed``), however
        the text's accents and Hangul were typed. (``text_tokens`` keeps the text as written: its offsets point into
        it.)"""
        return [t for t, _, _ in self.text_tokens(composed(text))]

    def label_words(self, text: str) -> list[str]:
        """The tokens of ``text`` that may name a topic (a sense cluster's label): words with a letter that are not
        stopwords. Languages with a tagger at hand narrow this to nouns."""
        return [t for t in self.tokenize(text) if any(c.isalpha() for c in t) and t.lower() not in self.stopwords]

    def names_something(self, word: str) -> bool:
        """``word``, read alone, is one word that may name a topic (``label_words``): the rule that keeps GloVe's
        nearest words and sense clusters' names to nouns in Korean."""
        return self.label_words(word) == [word]

    def content_positions(self, text: str) -> list[int]:
        """The positions (in ``tokenize(text)``) of the tokens a page offers to look up: words that are not
        stopwords. Languages whose ``label_words`` has a tagger narrow them to what it keeps (Korean: nouns, never
        a particle, an ending or a verb's stem)."""
        return [i for i, token in enumerate(self.tokenize(text)) if is_content_word(token, self.stopwords)]

    def shown_expectations(self, words: Sequence[str]) -> list[str]:
        """Of the words a language model expects somewhere (likeliest first), those a page shows: all of them, in
        a language whose content words are its words less stopwords."""
        return list(words)

    def knows(self, word: str) -> bool:
        """Whether the language's tokenizer has ``word`` in its own dictionary (what search never respells): no
        tokenizer here has one but Korean's."""
        return False


class EnglishText(TextRules):
    """Punkt sentences (the shipped parameters) and NLTK's word tokenizer (see the functions above)."""

    name = language = "en"
    stopwords = ENGLISH_STOPWORDS

    @functools.cached_property
    def identity(self) -> str:
        from importlib.metadata import version

        punkt = hashlib.sha256(PUNKT_PATH.read_bytes()).hexdigest()[:12]
        return (
            f"en: Punkt ({PUNKT_PATH.name} {punkt}) + NLTK {version('nltk')} word tokenizer, "
            f"sentences of at most {MAX_SENTENCE_TOKENS} tokens"
        )

    def split_and_tokenize(self, text: str) -> list[Sentence]:
        return split_and_tokenize(text)

    def label_words(self, text: str) -> list[str]:
        """As ``TextRules.label_words``, with scikit-learn's longer English stopword list too ("every", "often",
        "many" name no topic either)."""
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return [t for t in super().label_words(text) if t.lower() not in ENGLISH_STOP_WORDS]


def kiwi_installed() -> bool:
    """Whether Kiwi (the ``[ko]`` extra) can be imported: only what tokenizes Korean text needs it."""
    return importlib.util.find_spec("kiwipiepy") is not None


def kiwi_version() -> str:
    """Kiwi and its model's versions (tokens depend on them), or that it is not installed: a Korean model then
    still loads, trains from prepared files and ships; only tokenizing text asks for the extra."""
    if not kiwi_installed():
        return "Kiwi (not installed)"
    from importlib.metadata import version

    return f"Kiwi {version('kiwipiepy')} (model {version('kiwipiepy_model')})"


class KoreanText(TextRules):
    """Kiwi (kiwipiepy) sentences and surface morphemes: each eojeol is cut where Kiwi's morphemes meet, and
    morphemes that share characters (했 = 하 + 었) stay one token, so every token is the text as written
    ("배를" -> 배 + 를: the noun is the same token whatever its particle). Sentences never cross a blank line."""

    name = language = "ko"
    stopwords = KOREAN_STOPWORDS
    respells_into_dictionary = False  # a few jamo from a word are many morphemes: typo'd recall fell (0.867 -> 0.844)

    @functools.cached_property
    def _kiwi(self) -> Any:
        self.require()
        from kiwipiepy import Kiwi

        return Kiwi(num_workers=1)  # one thread: a worker process each, never more threads than asked for

    def require(self) -> None:
        if not kiwi_installed():
            raise MissingExtra("Korean text (Kiwi)", "ko")

    @functools.cached_property
    def identity(self) -> str:
        return (
            f"ko: {kiwi_version()}, surface morphemes without spaces, sentences of at most {MAX_SENTENCE_TOKENS} tokens"
        )

    @staticmethod
    def _surface(tokens: Iterable[Any], text: str, offset: int) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        for token in tokens:
            start, end = offset + token.start, offset + token.start + token.len
            if spans and start < spans[-1][1]:  # shares characters with the one before: one surface token
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((start, end))
        # Kiwi keeps some multi-word names whole ("아사카노미야 야스히코"): a token never holds a space
        return [
            (start + m.start(), start + m.end()) for start, end in spans for m in _NON_SPACE.finditer(text[start:end])
        ]

    def _word_spans(self, sentence: Any, text: str, offset: int) -> list[tuple[int, int]]:
        """The token spans of one Kiwi sentence (``sentence.start`` is relative to ``offset`` in ``text``)."""
        return self._surface(sentence.tokens, text, offset)

    LABEL_TAGS = frozenset({"NNG", "NNP", "SL", "SH"})
    """Kiwi's tags of a morpheme that can name a topic: common and proper nouns, words in Latin script or Hanja."""

    def label_words(self, text: str) -> list[str]:
        """The surface tokens of ``text`` that Kiwi, reading the whole text, tags as one noun (``LABEL_TAGS``), less
        stopwords and ``KOREAN_GENERIC_NOUNS``: never a particle, an ending or a verb's stem (적, 합니다, 먹)."""
        tokens = self.tokenize(text)
        return [tokens[i] for i in self.content_positions(text)]

    def content_positions(self, text: str) -> list[int]:
        """The tokens that ``label_words`` keeps, by their positions: Korean offers and shows only nouns."""
        morphemes = self._kiwi.tokenize(text)
        return [
            i
            for i, (token, start, end) in enumerate(self.text_tokens(text))
            if self._is_noun(token, [m.tag for m in morphemes if m.start < end and m.start + m.len > start])
        ]

    def _is_noun(self, token: str, tags: Sequence[str]) -> bool:
        """A token whose morphemes (their Kiwi ``tags``) are one noun that names something."""
        return (
            len(tags) == 1
            and tags[0] in self.LABEL_TAGS
            and token not in self.stopwords
            and not _english_function_word(token)  # Latin script (SL) in Korean text: "The" names nothing
            and token not in KOREAN_GENERIC_NOUNS
        )

    def names_something(self, word: str) -> bool:
        """As ``TextRules.names_something``, from Kiwi's morphemes of the word alone (a whole sentence's analysis
        costs about 10 ms a word, too slow for the 50 GloVe neighbours or 100 expected words of one question)."""
        morphemes = self._kiwi.tokenize(word)
        whole = len(morphemes) == 1 and morphemes[0].start == 0 and morphemes[0].len == len(word)
        return whole and self._is_noun(word, [morphemes[0].tag])

    def shown_expectations(self, words: Sequence[str]) -> list[str]:
        """Only the expected words that name something alone (``names_something``): no particle, ending, stem,
        number or the LM's own classes (a rare word, a sentence's start or end). Out of its sentence a noun that is
        also a stem (먹, 작) stays, and one Kiwi reads otherwise alone (섬 as 서 + ㅁ) is dropped."""
        return [word for word in words if self.names_something(word)]

    def knows(self, word: str) -> bool:
        """Whether Kiwi reads ``word`` alone as morphemes of its dictionary, none of them an unknown one: "벌레" and
        "주운" (줍 + 은) are words; "허벅자" (a slip for 허벅지) is not."""
        return not any(morpheme.oov for morpheme in self._kiwi.tokenize(word))

    def split_and_tokenize(self, text: str) -> list[Sentence]:
        result = []
        for para in _PARAGRAPH.finditer(text):
            for found in self._kiwi.split_into_sents(para.group(), return_tokens=True):
                spans = self._word_spans(found, text, para.start())
                start, end = para.start() + found.start, para.start() + found.end
                if spans:
                    result.append(Sentence(text[start:end], start, end, [text[a:b] for a, b in spans], spans))
        return cap_sentences(text, result)


class KoreanEojeolText(KoreanText):
    """Kiwi sentences, then eojeol: the words between spaces, with punctuation split off ("배를 타고 갔다." ->
    배를 / 타고 / 갔다 / .). The word unit that surface morphemes (``ko``) were measured against (docs/korean.md,
    "Word units, measured"); a model trained with it names ``ko-eojeol`` in its config. No stopwords: an eojeol carries
    its particles, so none is a pure function word."""

    name = "ko-eojeol"
    stopwords = frozenset()

    @functools.cached_property
    def identity(self) -> str:
        return (
            f"ko-eojeol: {kiwi_version()} sentences, eojeol with punctuation split off, sentences of at most "
            f"{MAX_SENTENCE_TOKENS} tokens"
        )

    def _word_spans(self, sentence: Any, text: str, offset: int) -> list[tuple[int, int]]:
        return [m.span() for m in _EOJEOL.finditer(text, offset + sentence.start, offset + sentence.end)]

    label_words = TextRules.label_words  # an eojeol holds its particles: no token is a noun alone
    names_something = TextRules.names_something
    content_positions = TextRules.content_positions
    shown_expectations = TextRules.shown_expectations


_EOJEOL = re.compile(r"\w+|[^\w\s]")  # a run of letters and digits, or one punctuation mark

LANGUAGES = {rules.name: rules for rules in (EnglishText, KoreanText, KoreanEojeolText)}
"""The text rules a model can name in its config (``"language"``; a config without one is English): a language,
and for Korean a choice of word unit (``ko``: surface morphemes, the default; ``ko-eojeol``: eojeol)."""


@functools.cache
def text_rules(language: str = "en") -> TextRules:
    """The rules a config names (one shared instance each)."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}: one of {', '.join(LANGUAGES)}")
    return LANGUAGES[language]()


_HANGUL_WORD = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]+")  # syllables, jamo, compatibility jamo
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


def written_in(text: str) -> str | None:
    """The language a text is written in, as far as its words tell: "ko" where more of its words are written in
    Hangul than in Latin letters, "en" where more are in Latin letters, None where as many are (or it has neither:
    digits, punctuation). A word is a run of one script's letters, so an English question that names one Korean
    word ("the 배 of Korea") is English. What tells a user that a query is meant for a collection of the other
    language."""
    hangul, latin = len(_HANGUL_WORD.findall(text)), len(_LATIN_WORD.findall(text))
    if hangul == latin:
        return None
    return "ko" if hangul > latin else "en"
