"""The word questions of an index, over its parts (``parts.IndexParts``): a word's uses nearest to one in context
(``neighbors``), its uses clustered into senses (``senses``), two uses compared (``compare``), every use's vector
(``use_vectors``), and what the language model expects at a use. ``Index`` is their door.

Each use is read in a representation (``representations``: the index's sense readout, "context prediction", or the
ELMo layers at the word, mixed as ``layers`` say), which reads the uses' vectors and searches them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from encoder.readout import Expectation
from encoder.text import composed
from encoder.words import normalize

from .errors import QueryError, message
from .options import NeighborsOptions, SensesOptions
from .parts import IndexParts
from .queries import Query, read_query
from .representations import Representation, asked, comparison_order
from .results import Comparison, Neighbors, Senses, TokenHit
from .senses import MIN_CLUSTER, describe_senses, different_uses

EXPECTED_CANDIDATES = 10  # the LM's likeliest words looked at per expected word shown: enough that k name something
GLOVE_CANDIDATES = (5, 25)  # GloVe's nearest words looked at per word shown, then again when too few name something


class WordQuestions:
    """The word questions over one generation of an index (``Index.neighbors``, ``senses``, ``compare`` and
    ``use_vectors`` say what each answers)."""

    def __init__(self, parts: IndexParts):
        self.parts = parts

    def _approximate_notice(self, representation: Representation, key: str) -> list[str]:
        """Said when a representation's vectors come from a compressed index alone (no exact vectors to re-rank
        with)."""
        if not representation.approximate(self.parts):
            return []
        return [message(key, factory=self.parts.manifest.indexes["tokens"].factory)]

    def representation_name(self, representation: Representation) -> str:
        """What a representation is called: "context prediction", "ELMo layer mix (paper)", a mix's formula."""
        return representation.name(self.parts.manifest.readout.kind, self.parts.layer_mix.weights)

    def _use(self, sentence: str, word: str, position: int | None) -> tuple[Query, int, list[str]]:
        """The sentence as a query, the position of ``word`` in it (its first use unless ``position`` says which),
        and notices (a sentence cut short, a word used twice)."""
        query = read_query(self.parts.elmo.text, sentence, "sentence", self.parts.manifest.counts.documents)
        tokens = query.tokens
        if not isinstance(word, str) or not word.strip():
            raise QueryError(message("word_of_sentence_empty"))
        word = composed(word.strip())
        matches = [i for i, t in enumerate(tokens) if t == word] or [
            i for i, t in enumerate(tokens) if normalize(t) == normalize(word)
        ]
        notices = list(query.notices)
        if position is None:
            if not matches:
                raise QueryError(message("word_not_in_sentence", word=word, words=" | ".join(tokens[:60])))
            position = matches[0]
            if len(matches) > 1:
                notices.append(
                    message("word_repeated", word=word, n=len(matches), positions=matches, position=position)
                )
        elif (
            isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not 0 <= position < len(tokens)
        ):
            raise QueryError(message("position_outside", position=position, last=len(tokens) - 1))
        elif position not in matches:
            key = "position_other_word_elsewhere" if matches else "position_other_word"
            where = ("position " if len(matches) == 1 else "positions ") + ", ".join(map(str, matches))
            raise QueryError(message(key, position=position, token=tokens[position], word=word, positions=where))
        return query, int(position), notices

    def _read_use(self, tokens: list[str], position: int) -> tuple[np.ndarray, np.ndarray]:
        """One use's ELMo layers (L+1, dim) and context states (2P,): one run of the model."""
        out = self.parts.elmo.embed([tokens], context=True)[0]
        return out[:-1, position], out[-1, position]

    def neighbors(
        self,
        sentence: str,
        word: str,
        position: int | None = None,
        k: int = 10,
        same_word: bool = False,
        layers: str | Sequence[float] | None = None,
        representation: str | None = None,
        explain: bool = False,
    ) -> Neighbors:
        """Uses in context nearest to ``word`` as used in ``sentence``: ``Index.neighbors``."""
        NeighborsOptions(position, k, same_word, explain, layers, representation)  # each checked by its rule
        k = int(k)
        query, position, notices = self._use(sentence, word, position)
        word = composed(word.strip())  # as ``_use`` reads it: GloVe's words are composed too
        asked_in = asked(representation, layers, self.parts)
        subset = self.parts.word_ids(word) if same_word else None
        if not len(self.parts.token_vectors):
            raise QueryError(message("no_token_vectors"))
        layer_vectors, context = self._read_use(query.tokens, position)
        query_vector = asked_in.queries(self.parts, layer_vectors[None], context[None], subset)[0]
        scores, ids = asked_in.nearest(self.parts, query_vector, k, subset)
        notices += self._approximate_notice(asked_in, "approximate_neighbors")
        hits = []
        for rank, (score, token_id) in enumerate(zip(scores, ids), start=1):
            token = self.parts.tokens.iloc[int(token_id)]
            row = self.parts.sentences.iloc[int(token["sentence_id"])]
            hits.append(
                TokenHit(
                    rank,
                    float(score),
                    token["word"],
                    row["doc_id"],
                    row["title"],
                    row["text"],
                    int(token["position"]),
                    int(token["char_start"]),
                    int(token["char_end"]),
                )
            )
        nearest = self.glove_nearest(word, k)
        if nearest is None:
            note = message("word_not_in_glove", word=word, size=len(self.parts.glove))
        else:
            note = None if nearest else message("glove_none_named", word=word, n=GLOVE_CANDIDATES[-1] * k)
        expected = self.expectations(context) if explain else []
        name = self.representation_name(asked_in)
        return Neighbors(query.tokens, position, hits, nearest or [], note, notices, name, expected)

    def glove_nearest(self, word: str, k: int) -> list[tuple[str, float]] | None:
        """GloVe's ``k`` nearest words to ``word`` that may name something (``TextRules.names_something``: no
        stopword or punctuation; in Korean nouns, never a particle, an ending or a fragment of a word): among its
        5 times ``k`` nearest, and 25 times when those hold fewer (``GLOVE_CANDIDATES``; a stopword's nearest words
        are mostly stopwords); None when ``word`` has no GloVe vector."""
        for candidates in GLOVE_CANDIDATES:
            nearest = self.parts.glove.nearest(word, candidates * k)
            if nearest is None:
                return None
            named = [(w, score) for w, score in nearest if self.parts.elmo.text.names_something(w)][:k]
            if len(named) == k:
                break
        return named

    def expectations(self, context: np.ndarray, k: int = 10) -> list[Expectation]:
        """What the LM expects at a use (its context states): each direction's ``k`` likeliest words that the
        language shows (``TextRules.shown_expectations``: in Korean nouns, among the ``EXPECTED_CANDIDATES`` times
        ``k`` likeliest). An empty list for a model without an LM head (published weights)."""
        if self.parts.readout is None or self.parts.readout.head is None:
            return []
        shown = []
        for expectation in self.parts.readout.expectations(
            context, min(EXPECTED_CANDIDATES * k, self.parts.readout.head.vocab_size)
        ):
            probability = dict(expectation.words)
            words = self.parts.elmo.text.shown_expectations(list(probability))[:k]
            shown.append(Expectation(expectation.direction, [(word, probability[word]) for word in words]))
        return shown

    def compare(
        self,
        sentence_a: str,
        word_a: str,
        sentence_b: str,
        word_b: str,
        position_a: int | None = None,
        position_b: int | None = None,
    ) -> Comparison:
        """Two uses compared in every representation: ``Index.compare``."""
        uses, notices, layer_vectors, contexts = [], [], [], []
        for sentence, word, position in ((sentence_a, word_a, position_a), (sentence_b, word_b, position_b)):
            query, position, said = self._use(sentence, word, position)
            layers, context = self._read_use(query.tokens, position)
            uses.append((query.tokens, position))
            notices += said
            layer_vectors.append(layers)
            contexts.append(context)
        same = normalize(uses[0][0][uses[0][1]]) == normalize(uses[1][0][uses[1][1]])
        word_uses = self._word_ids_or_none(uses[0][0][uses[0][1]]) if same else None
        cosines = {}
        for representation in comparison_order(self.parts.elmo.n_layers):
            if not representation.reads_new_uses(self.parts):
                continue  # the sense readout of a model without its LM head
            a, b = representation.queries(self.parts, np.stack(layer_vectors), np.stack(contexts), word_uses)
            # unit vectors: a cosine, whose float32 rounding can pass 1 (1.0000001 for the same word's token layer)
            cosines[self.representation_name(representation)] = float(np.clip(a @ b, -1.0, 1.0))
        return Comparison(uses, cosines, list(self.parts.layer_mix.weights), self.parts.layer_mix.gamma, notices)

    def _word_ids_or_none(self, word: str) -> np.ndarray | None:
        try:
            return self.parts.word_ids(word)
        except QueryError:
            return None

    def senses(
        self,
        word: str,
        k: int | str = "auto",
        max_occurrences: int = 2000,
        layers: str | Sequence[float] | None = None,
        representation: str | None = None,
    ) -> Senses:
        """The occurrences of ``word`` clustered: ``Index.senses``."""
        if not isinstance(word, str) or not word.strip():
            raise QueryError(message("word_empty"))
        SensesOptions(k, max_occurrences, layers, representation)  # each checked by its rule
        asked_in = asked(representation, layers, self.parts)
        ids = self.parts.word_ids(word.strip())
        every_use = ids
        notices = self._approximate_notice(asked_in, "approximate_senses")
        if len(ids) > max_occurrences:
            notices.append(message("senses_sampled", word=word, n=len(ids), sample=max_occurrences))
            ids = np.sort(np.random.default_rng(0).choice(ids, max_occurrences, replace=False))
        vectors = asked_in.sense_vectors(self.parts, ids, every_use)
        if k != "auto":  # a number the uses may not fill
            different = different_uses(vectors)
            if int(k) > different:
                notices.append(message("senses_capped", k=int(k), word=word, n=different))
            elif int(k) > max(1, len(vectors) // MIN_CLUSTER):
                notices.append(message("senses_thin", k=int(k), n=len(vectors), min=MIN_CLUSTER))
        sentence_ids = self.parts.tokens["sentence_id"].to_numpy()[ids]
        rows = self.parts.sentences.iloc[sentence_ids]
        result = describe_senses(
            word.strip(),
            vectors,
            rows["text"].tolist(),
            self._use_words(ids, rows["text"]),
            self.parts.elmo.text.stopwords,
            k,
            positions=self.parts.tokens["position"].to_numpy()[ids].tolist(),
            may_name=self.parts.elmo.text.names_something,  # the language's rule: Korean nouns
        )
        result.notices = notices
        result.representation = self.representation_name(asked_in)
        return result

    def use_vectors(
        self, word: str, layers: str | Sequence[float] | None = None, representation: str | None = None
    ) -> tuple[list[tuple[str, int]], np.ndarray]:
        """Every live use of ``word`` and its unit vector in a representation: ``Index.use_vectors``."""
        if not isinstance(word, str) or not word.strip():
            raise QueryError(message("word_empty"))
        asked_in = asked(representation, layers, self.parts)
        ids = self.parts.word_ids(word.strip())
        tokens = self.parts.tokens.iloc[ids]
        sentences = self.parts.sentences["text"].to_numpy()[tokens["sentence_id"].to_numpy()]
        uses = [(str(sentence), int(position)) for sentence, position in zip(sentences, tokens["position"])]
        return uses, asked_in.uses(self.parts, ids, ids)

    def _use_words(self, ids: np.ndarray, texts: pd.Series) -> list[dict[str, float]]:
        """What each use's cluster may be named by: the words that weigh most in its readout, with their probability,
        where the index keeps them, else the words of its sentence that may name a topic, each counted 1."""
        if (
            self.parts.readout is None
            or self.parts.readout.head is None
            or not self.parts.manifest.readout.kept_substitutes
        ):
            return [dict.fromkeys(self.parts.elmo.text.label_words(text), 1.0) for text in texts]
        shard_ids, shard_probs = self.parts.substitutes
        offsets = np.cumsum([0] + [len(a) for a in shard_ids])
        words = self.parts.readout.vocab.words
        found = []
        for token_id in ids.tolist():
            s = int(np.searchsorted(offsets, token_id, side="right") - 1)
            use: dict[str, float] = {}
            for i, p in zip(shard_ids[s][token_id - offsets[s]].ravel(), shard_probs[s][token_id - offsets[s]].ravel()):
                use[words[i]] = use.get(words[i], 0.0) + float(p)
            found.append(use)
        return found
