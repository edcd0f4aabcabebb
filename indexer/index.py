"""``Index``: open a built index and answer its questions.

    idx = Index.open("demo-index")
    idx.search("volcanic eruptions", k=5)                        # documents that answer it (hybrid ranking)
    idx.search("vulcanic eruptons", k=5)                         # the same: words that are no words are respelled
    idx.search(["volcanic eruptions", "baking bread"], k=5)      # many queries, embedded and searched in batches
    Index.from_texts(["Volcanoes erupt.", "Bake bread."])         # an index of strings, in a temporary folder
    idx.search_sentences("volcanic eruptions", k=5)              # sentences nearest in meaning
    idx.neighbors("I sat on the bank of the river", "bank")      # other uses of words in context
    idx.senses("bank")                                           # the word's uses, clustered
    idx.compare("I sat on the bank of the river", "bank", "The bank raised its rates", "bank")  # two uses

Word in context and Senses read each use through the index's sense readout by default (``encoder.readout``: what
the language model expects at the word, "context prediction"); ``representation="elmo"`` reads the ELMo layers at
the word instead, mixed as ``layers`` says (the paper's way).

Each answer carries its ``notices``: what a question changed or found out (a query cut at ``MAX_QUERY_CHARS``,
the words it searched for instead, "no good match"). Document search itself is ``search.DocumentSearch``; this
class opens the index, holds its parts and is the door of the four questions and of an index of strings
(``from_texts``, ``add``, ``upsert``, ``delete``, ``save``: ``texts.py``); being every door is why it passes 450 lines.
"""

from __future__ import annotations

import functools
import inspect
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from encoder import Elmo, LayerMix, locks
from encoder.device import resolve_device
from encoder.readout import KINDS, Expectation, Readout, centred
from encoder.words import WordFrequencies, is_word, normalize

from . import build, layout, storage
from . import texts as text_input
from .bm25 import BM25, KeywordTerms, terms
from .calibration import NullQueries
from .errors import CorpusError, CorruptIndexError, IndexMismatchError, QueryError, message
from .factory import apply_search_params
from .glove import GloveVectors
from .live import LiveRows
from .manifest import Manifest, ModelSpec
from .options import K, NeighborsOptions, SearchOptions, SensesOptions
from .parts import open_glove, open_model, shard_layers, shard_substitutes
from .results import Comparison, DocumentHit, Neighbors, Results, Senses, SentenceHit, TokenHit
from .search import DocumentSearch
from .senses import describe_senses
from .spelling import Speller
from .vectors import RERANK, ExactSearch, VectorSet, faiss_search, gpu_faiss_available, mix
from .vectors import normalize as normalize_rows

MAX_QUERY_CHARS = 10_000
QUERY_BATCH = 64  # queries embedded and searched together by a search of many
ELMO_NAME = "ELMo layer mix (paper)"
EXPECTED_CANDIDATES = 10  # the LM's likeliest words looked at per expected word shown: enough that k name something
MEAN_USES = 10_000  # a word's mean readout (the centre its uses are compared around) is taken over this many at most


@dataclass
class Query:
    """A query or sentence as every question uses it: its text (cut at ``MAX_QUERY_CHARS``), its tokens, and the
    notices of what was changed to make it answerable."""

    text: str
    tokens: list[str]
    notices: list[str] = field(default_factory=list)


def _one_at_a_time(question: Callable) -> Callable:
    """A question (or change) of an index, asked under its ``lock``: its lazily built parts and the caches of its
    vector sets are not thread-safe, so a server or an app may share one index between threads."""

    @functools.wraps(question)
    def asked(self: Index, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return question(self, *args, **kwargs)

    return asked


def _written(path: Path) -> tuple[int, int, int] | None:
    """When and how the manifest in ``path`` was last written (it is replaced whole, by a rename): what ``refresh``
    compares; None where there is none."""
    try:
        found = (path / layout.MANIFEST).stat()
    except OSError:
        return None
    return found.st_ino, found.st_mtime_ns, found.st_size


class Index:
    """A built index opened for search: metadata in memory, vectors memory-mapped, FAISS indexes loaded.

    ``docs``, ``sentences`` and ``tokens`` are the shards' tables (pandas; row number = id), removed documents
    included; ``live`` says which rows are live (``live.LiveRows``, the one rule every reader uses).
    """

    def __init__(self, path: Path, manifest: Manifest, elmo: Elmo, device: str = "cpu"):
        self.path = path
        self.manifest = manifest
        self.elmo = elmo
        self.device = device
        self.layer_mix = LayerMix(manifest.layers.weights)  # word in context and senses
        self.search_mix = LayerMix(manifest.search_layers.weights)  # search
        shards = manifest.shards

        def read(part: str) -> pd.DataFrame:
            tables = [storage.read_parquet(layout.shard_file(path, s.name, part)) for s in shards]
            return pd.concat(tables, ignore_index=True)

        self.docs, self.sentences, self.tokens = read("docs"), read("sentences"), read("tokens")
        counts = manifest.counts
        if (
            len(self.docs) != counts.stored_documents
            or len(self.sentences) != counts.stored_sentences
            or len(self.tokens) != counts.stored_token_vectors
        ):
            raise CorruptIndexError(f"{path}: the shard metadata does not match the manifest counts; rebuild the index")
        # the document row of each sentence: a document's sentences are stored together, in document order
        self.sentence_docs = np.repeat(np.arange(len(self.docs)), self.docs["sentences"].to_numpy())
        if len(self.sentence_docs) != len(self.sentences) or not np.array_equal(
            self.docs["doc_id"].to_numpy()[self.sentence_docs], self.sentences["doc_id"].to_numpy()
        ):
            raise CorruptIndexError(f"{path}: the shards' sentences do not follow their documents; rebuild the index")
        self.live = LiveRows.of(
            self.docs["doc_id"].tolist(),
            manifest.deleted_doc_ids,
            self.sentence_docs,
            self.tokens["sentence_id"].to_numpy(),
        )
        self.deleted_docs = self.live.removed("documents")
        self.deleted_sentences = self.live.removed("sentences")
        self._deleted_tokens = self.live.removed("tokens")
        dims = (elmo.n_layers, elmo.dim)
        faiss_indexes = {}
        for kind, entry in manifest.indexes.items():
            faiss_indexes[kind] = storage.read_faiss(path / entry.file, entry.ntotal, entry.dim)
            apply_search_params(faiss_indexes[kind], entry.search_params)
        self.sentence_vectors = VectorSet(
            shard_layers(path, shards, "sentence", dims), faiss_indexes["sentences"], self.search_mix.weights, device
        )
        self.title_vectors = VectorSet(shard_layers(path, shards, "title", dims), None, (), device)
        exact_tokens = shard_layers(path, shards, "token", dims) if manifest.settings.keep_exact_tokens else None
        self._token_vectors = VectorSet(
            exact_tokens, faiss_indexes["tokens"], self.layer_mix.weights, device, rerank=RERANK
        )
        self._glove_index = faiss_indexes["glove"]
        width = manifest.readout.width(elmo.dim)
        self._readouts = VectorSet(shard_layers(path, shards, "readout", (1, width)), None, (1.0,), device)
        self._substitutes = shard_substitutes(path, shards, manifest.readout.kept_substitutes)
        self._collection_readout: np.ndarray | None = None
        self._glove: GloveVectors | None = None
        self._frequencies: WordFrequencies | None = None
        self._document_terms: list[list[str]] | None = None
        self.keyword_terms = KeywordTerms(elmo.text.language)
        self._bm25: BM25 | None = None
        self._glove_documents: ExactSearch | None = None
        self._null_queries: NullQueries | None = None
        self.document_search = DocumentSearch(self)
        self._speller: Speller | None = None
        self._word_ids: dict[str, np.ndarray] | None = None
        self.written: tuple[int, int, int] | None = None  # the manifest as read (``open``), for ``refresh``
        self.lock = (
            threading.RLock()
        )  # the parts above built on first use, the mixed-vector caches: one question at a time

    @classmethod
    def open(cls, path: str | Path, model: ModelSpec | None = None, device: str = "auto", verify: bool = True) -> Index:
        """Open the index at ``path``; ``model`` defaults to the one the manifest names; ``device`` "auto": a GPU
        when torch sees one.

        Raises IndexFormatError (not an index, interrupted build, newer format), CorruptIndexError
        (missing, truncated or - with ``verify`` - altered files) or IndexMismatchError (another model).
        """
        path = Path(path)
        written = _written(path)  # before the manifest is read: a change after it is seen by ``refresh``
        manifest = Manifest.read(path)
        manifest.check_files(path, verify_hashes=verify)
        device = resolve_device(device)
        index = cls(path, manifest, open_model(manifest.model, model, device), device)
        index.written = written
        return index

    @classmethod
    def from_texts(
        cls,
        texts: Sequence[str],
        ids: Sequence[str] | None = None,
        model: ModelSpec = "default",
        device: str = "auto",
        **build_options: Any,
    ) -> Index:
        """An index of ``texts`` (one document each; ``ids`` default to their positions: "0", "1", ...), kept in a
        temporary folder for as long as the index lives (``save`` writes it to a folder of yours).
        ``build_options``: those of ``build_index`` (``settings``, ``glove``, ...).

        >>> index = Index.from_texts(["Volcanoes erupt when magma rises.", "Bake bread in a hot oven."], ids=["v", "b"])
        >>> len(index), index.search("an oven for bread", k=1)[0].doc_id
        (2, 'b')
        """
        texts, ids = text_input.checked(texts, ids)
        temporary = tempfile.TemporaryDirectory(prefix="elmo-search-")
        corpus = text_input.write_jsonl(Path(temporary.name), texts, ids)
        index = build_index(
            [corpus], Path(temporary.name) / "index", model, device=device, progress=False, **build_options
        )
        index._temporary = temporary  # removed with the index
        return index

    def save(self, path: str | Path) -> Path:
        """Write this index to ``path``, a new or empty folder; ``Index.open(path)`` opens the copy.

        >>> index = Index.from_texts(["The bank of the river flooded."])
        >>> import tempfile; folder = tempfile.mkdtemp()
        >>> Index.open(index.save(folder + "/saved")).count()
        1
        """
        return text_input.save(self.path, path)

    def add(self, texts: Sequence[str], ids: Sequence[str] | None = None) -> None:
        """Add ``texts`` as new documents (``ids`` default to their positions after the stored documents); an id
        the index holds is refused (``upsert`` replaces it), a deleted one may be used again. Written to the index's
        folder (as ``add_documents``), and this object then answers from the new documents too."""
        self._add(texts, ids, replace=False)

    def upsert(self, texts: Sequence[str], ids: Sequence[str]) -> None:
        """Add ``texts`` under ``ids``, each replacing the document of that id where the index holds one, in one
        commit (a failure leaves the index as it was).

        >>> index = Index.from_texts(["An old text about rivers."], ids=["doc"])
        >>> index.upsert(["A new text about bread and ovens."], ids=["doc"])
        >>> len(index), index.search("bread", k=1)[0].passages[0].text
        (1, 'A new text about bread and ovens.')
        """
        if ids is None:
            raise CorpusError("upsert needs the ids of the documents (those to replace, or new ones)")
        self._add(texts, ids, replace=True)

    @_one_at_a_time
    def delete(self, ids: Sequence[str]) -> None:
        """Remove the documents of ``ids`` from all results (as ``delete_documents``: their vectors stay on disk until
        a rebuild; an id the index does not hold is refused and nothing is deleted); this object then answers
        without them.

        >>> index = Index.from_texts(["Volcanoes erupt when magma rises.", "Bake bread in a hot oven."], ids=["v", "b"])
        >>> index.delete(["v"])
        >>> len(index), [hit.doc_id for hit in index.search("magma and volcanoes", k=5)]
        (1, ['b'])
        """
        if isinstance(ids, str):
            raise QueryError(f"ids must be a list of document ids, not one string ({[ids]!r} deletes that one)")
        build.delete_documents(self.path, ids)
        self._reopen()

    @_one_at_a_time
    def _add(self, texts: Sequence[str], ids: Sequence[str] | None, replace: bool) -> None:
        texts, ids = text_input.checked(texts, ids, first_id=len(self.docs))
        with tempfile.TemporaryDirectory(prefix="elmo-search-") as folder:
            corpus = text_input.write_jsonl(Path(folder), texts, ids)
            added = add_documents(
                self.path, [corpus], model=self.elmo, device=self.device, progress=False, replace=replace
            )
        self.__dict__.update(vars(added))  # answer from the new generation; a temporary folder stays this index's

    @_one_at_a_time
    def refresh(self) -> bool:
        """Answer from the index as it is on disk now: where another process changed it since it was opened (an
        ``add``, ``delete`` or a rebuild: its manifest was written again), it is opened again; returns
        whether it was. While a writer holds the folder's lock nothing changes (a build under way is half-written).
        A server calls it before each request, so that it never answers from documents that are gone."""
        if locks.is_locked(self.path / layout.LOCK) or _written(self.path) in (None, self.written):
            return False
        self._reopen()
        return True

    def _reopen(self) -> None:
        """Answer from the index as it is on disk now, with this model (the one it names, if rebuilt with another)."""
        try:
            opened = Index.open(self.path, model=self.elmo, device=self.device, verify=False)
        except IndexMismatchError:
            opened = Index.open(self.path, device=self.device, verify=False)
        self.__dict__.update(vars(opened))

    def __len__(self) -> int:
        """The documents results can come from (deleted ones left out)."""
        return self.manifest.counts.documents

    def count(self) -> int:
        """``len(index)``: the documents results can come from."""
        return len(self)

    # ------------------------------------------------------------------------------ lazily built parts
    @functools.cached_property
    def readout(self) -> Readout | None:
        """The sense readout the index was built with (its model's LM head, read on first use); None when the model
        was given without its folder, so the head is not known (a readout question then says so)."""
        readout = Readout.of_model(self.elmo.folder, self.manifest.readout, self.elmo.model)
        return readout if readout.settings == self.manifest.readout else None

    @property
    def glove(self) -> GloveVectors:
        with self.lock:  # read once, whichever thread asks first
            if self._glove is None:
                self._glove = open_glove(self.path, self.manifest.glove_source)
            return self._glove

    @functools.cached_property
    def _vocab(self) -> pd.DataFrame:
        """Word counts of the indexed text (most frequent first), read once."""
        return storage.read_parquet(self.path / self.manifest.vocab.file)

    @property
    def frequencies(self) -> WordFrequencies:
        """Word counts of the indexed text: they weigh a query's words as the passages' were weighed."""
        if self._frequencies is None:
            self._frequencies = WordFrequencies(dict(zip(self._vocab["word"], self._vocab["count"].tolist())))
        return self._frequencies

    @property
    def document_terms(self) -> list[list[str]]:
        """Each document's words (``bm25.terms``): its title's, then its sentences'."""
        if self._document_terms is None:
            documents = [terms(t) for t in self.docs["title_tokens"]]
            for row, tokens in zip(self.sentence_docs.tolist(), self.sentences["tokens"]):
                documents[row].extend(terms(tokens))
            self._document_terms = documents
        return self._document_terms

    @property
    def bm25(self) -> BM25:
        """Okapi BM25 over whole documents, on their keyword terms (stems)."""
        if self._bm25 is None:
            self._bm25 = BM25((self.keyword_terms(words) for words in self.document_terms), self.live.documents)
        return self._bm25

    @property
    def null_queries(self) -> NullQueries:
        """The random-word queries relevance is calibrated on, stored in the index (``calibration``)."""
        if self._null_queries is None:
            names = tuple(f.file for f in self.manifest.calibration)
            self._null_queries = NullQueries.read(self.path, names, (self.elmo.n_layers, self.elmo.dim))
        return self._null_queries

    @property
    def speller(self) -> Speller:
        """The indexed words that have token vectors, with their token-layer vectors: query words the index lacks
        are matched to them (``spelling``). The vectors are the stored ones' token layer where kept (no model run)."""
        if self._speller is None:
            live = self.tokens[self.live.tokens]
            lower = live["word"].str.lower()
            occurrences = pd.DataFrame({"word": lower, "cased": live["word"] != lower, "id": live.index})
            # one occurrence per word, lower case where it has one: the character model reads case
            first = occurrences.sort_values(["word", "cased"], kind="stable").drop_duplicates("word")
            words = first["word"].tolist()
            if self._token_vectors.layers is not None:
                token_layer = (1.0,) + (0.0,) * (self.elmo.n_layers - 1)
                # layer 0 is the token vector twice (forward and backward halves alike): one half is the vector
                vectors = self._token_vectors.layers.gather(first["id"].to_numpy(), token_layer)
                vectors = vectors[:, : self.elmo.config.projection_dim]
            else:
                vectors = self.elmo.token_vectors(words)
            counts = occurrences["word"].value_counts()[words].to_numpy()
            self._speller = Speller(words, vectors, self.elmo.token_vectors, counts)
        return self._speller

    @property
    def glove_documents(self) -> ExactSearch:
        """SIF-weighted mean GloVe vectors of whole documents, searched exactly."""
        if self._glove_documents is None:
            vectors = [self.glove.pooled(t, self.frequencies) for t in self.document_terms]
            self._glove_documents = ExactSearch(np.stack(vectors) if vectors else np.zeros((0, self.glove.dim)))
        return self._glove_documents

    def word_ids(self, word: str) -> np.ndarray:
        """Ids of the live token vectors of ``word`` (any case); QueryError if it has none."""
        if self._word_ids is None:
            self._word_ids = self.tokens.groupby(self.tokens["word"].str.lower()).indices
        ids = self.live.live_of("tokens", self._word_ids.get(normalize(word), np.zeros(0, np.int64)))
        if not len(ids):
            key = (
                "stopword_not_indexed"
                if normalize(word) in self.elmo.text.stopwords
                else "punctuation_not_indexed"
                if not is_word(word)
                else "word_not_indexed"
            )
            raise QueryError(message(key, word=word))
        return ids

    # ------------------------------------------------------------------------------ query helpers
    def query(self, text: Any, what: str = "query") -> Query:
        """A query or sentence as every question uses it (QueryError when it has no words).

        ``what`` ("query" or "sentence") picks the messages: ``query_empty`` or ``sentence_empty``, and so on.
        """
        if not isinstance(text, str) or not text.strip():
            raise QueryError(message(f"{what}_empty"))
        notices = []
        if len(text) > MAX_QUERY_CHARS:
            notices.append(message(f"{what}_too_long", length=len(text), limit=MAX_QUERY_CHARS))
            text = text[:MAX_QUERY_CHARS]
        tokens = self.elmo.text.tokenize(text)  # the model's language rules, as the documents were tokenized
        if not tokens:
            raise QueryError(message(f"{what}_no_words"))
        return Query(text, tokens, notices)

    def _weights(self, layers: str | Sequence[float] | LayerMix | None, default: LayerMix) -> tuple[float, ...]:
        if layers is None:
            return default.weights
        try:
            return LayerMix.parse(layers, self.elmo.n_layers).weights
        except ValueError as error:
            raise QueryError(f"bad layer mix: {error}") from None

    @staticmethod
    def _k(k: Any) -> int:
        if K.problem(k) is not None:
            raise QueryError(f"k {K.problem(k)}")
        return int(k)

    def _sentence_hit(self, rank: int, score: float, sentence_id: int) -> SentenceHit:
        row = self.sentences.iloc[int(sentence_id)]
        return SentenceHit(rank, float(score), row["doc_id"], row["title"], row["text"], int(sentence_id))

    # ------------------------------------------------------------------------------ queries
    @_one_at_a_time
    def search(
        self,
        query: str | Sequence[str],
        k: int = 10,
        method: str = "hybrid",
        layers: str | Sequence[float] | None = None,
        spelling: bool = True,
    ) -> Results[DocumentHit] | list[Results[DocumentHit]]:
        """Documents that answer ``query``, best first, each with its best passages and the words it matched; for a
        list of queries, one ``Results`` each (embedded and searched in batches: many times faster than one by one).

        ``method``: ``hybrid`` (ELMo + BM25 keywords, the default), ``elmo``, ``keywords`` or ``glove`` (the
        static baseline); see ``indexer.ranking``. ``layers``: the ELMo layer mix (default: the index's search
        mix). ``spelling``: query words that are no word at all (unknown to the index, the model and GloVe) are
        replaced by the nearest indexed spelling (``spelling``; ``searched_for`` and a notice say what was searched
        for). All ``k`` hits are returned (fewer only when fewer documents match); ``DocumentHit.above_line``
        marks those that score clearly better than random words do (``ranking.RELEVANCE_LINE``), and a notice says
        "no good match" when even the best one does not (another, that relevance is uncalibrated, under 50
        documents).

        >>> index = Index.from_texts(["Volcanoes erupt when magma rises.", "Bake the bread in a hot oven."])
        >>> index.search("lava and magma", k=1)[0].doc_id
        '0'
        >>> [found[0].doc_id for found in index.search(["magma", "an oven for bread"], k=1)]
        ['0', '1']
        """
        SearchOptions(k=k, method=method, layers=layers, as_typed=not spelling)  # each checked by its rule
        k = int(k)
        weights = self._weights(layers, self.search_mix)
        if isinstance(query, str) or not isinstance(query, Sequence):
            return self.document_search.search([self.query(query)], k, method, weights, spelling)[0]
        if not query:
            raise QueryError("the list of queries is empty; give at least one query")
        prepared = []
        for i, text in enumerate(query):
            try:
                prepared.append(self.query(text))
            except QueryError as error:
                raise QueryError(f"query {i} of the list: {error}") from None
        found: list[Results[DocumentHit]] = []
        for start in range(0, len(prepared), QUERY_BATCH):
            found += self.document_search.search(prepared[start : start + QUERY_BATCH], k, method, weights, spelling)
        return found

    @_one_at_a_time
    def search_sentences(
        self, query: str, k: int = 10, method: str = "elmo", layers: str | Sequence[float] | None = None
    ) -> Results[SentenceHit]:
        """Single sentences nearest in meaning to ``query``: cosine of pooled ELMo vectors (``elmo``), or of
        mean GloVe vectors (``glove``; empty, with a notice, when no query word has one)."""
        k = self._k(k)
        if method not in ("elmo", "glove"):
            raise QueryError(f"sentence search method must be 'elmo' or 'glove', not {method!r}")
        prepared = self.query(query)
        if method == "glove":
            query_vector = self.glove.sentence_vector(prepared.tokens)
            if not query_vector.any():
                return Results([], [*prepared.notices, message("no_glove_vector")])
            scores, ids = faiss_search(self._glove_index, query_vector, k, self.deleted_sentences)
        else:
            weights = self._weights(layers, self.search_mix)
            (query_vector,) = self.document_search.query_vectors([prepared.tokens], "elmo", weights)
            scores, ids = self.sentence_vectors.search(query_vector, k, weights, self.deleted_sentences)
        hits = [self._sentence_hit(rank, s, i) for rank, (s, i) in enumerate(zip(scores, ids), start=1)]
        return Results(hits, prepared.notices)

    def _token_weights(self, layers: str | Sequence[float] | None) -> tuple[float, ...]:
        """The token mix for a query (``_weights``); one other than the index's needs the exact token vectors."""
        weights = self._weights(layers, self.layer_mix)
        if not self._token_vectors.searchable(weights):
            raise QueryError(message("no_exact_tokens", mix=self.manifest.layers.description))
        return weights

    def _approximate_notice(self, key: str) -> list[str]:
        """Said when token vectors come from a compressed index alone (no exact vectors to re-rank with)."""
        if self._token_vectors.exact:
            return []
        return [message(key, factory=self.manifest.indexes["tokens"].factory)]

    def _representation(
        self, representation: str | None, layers: str | Sequence[float] | None
    ) -> tuple[float, ...] | None:
        """Check a question's representation (None: the sense readout, or "elmo" when ``layers`` are given): None for
        the sense readout, or the ELMo mix's weights for "elmo"."""
        if representation is None:
            representation = "readout" if layers is None else "elmo"
        if representation == "elmo":
            return self._token_weights(layers)
        if layers is not None:
            raise QueryError("layers choose an ELMo layer mix: give them with representation='elmo'")
        if self.readout is None:
            raise QueryError(message("no_readout", name=self.manifest.model.name))
        return None

    def representation_name(self, weights: tuple[float, ...] | None) -> str:
        """What a representation is called (None: the sense readout): "context prediction", "ELMo layer mix (paper)"
        for the index's mix, else the mix's formula."""
        if weights is None:
            return KINDS[self.manifest.readout.kind]
        return ELMO_NAME if weights == self.layer_mix.weights else LayerMix(weights).describe()

    @property
    def collection_readout(self) -> np.ndarray:
        """The mean readout of the index's live uses: where a rare word's centre is shrunk to (``readout.centred``)."""
        if self._collection_readout is None:
            total, count, offset = 0.0, 0, 0
            for chunk in self._readouts.layers.mixed((1.0,)):
                live = chunk[self.live.tokens[offset : offset + len(chunk)]]
                total, count, offset = total + live.sum(0, dtype=np.float64), count + len(live), offset + len(chunk)
            self._collection_readout = np.asarray(total, np.float64) / max(count, 1)
        return self._collection_readout

    def _centred(self, ids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """Readouts of uses of one word (normalised) centred on the mean of its uses ``ids`` in the index, shrunk
        towards the collection's mean while they are few (``encoder.readout.centred``), normalised again."""
        sample = ids if len(ids) <= MEAN_USES else np.random.default_rng(0).choice(ids, MEAN_USES, replace=False)
        mean = self._readouts.gather(np.sort(sample), (1.0,)).mean(0)
        return normalize_rows(
            centred(vectors, mean, len(ids), self.collection_readout, self.manifest.readout.shrinkage)
        )

    def _use(self, sentence: str, word: str, position: int | None) -> tuple[Query, int, list[str]]:
        """The sentence as a query, the position of ``word`` in it (its first use unless ``position`` says which),
        and notices (a sentence cut short, a word used twice)."""
        query = self.query(sentence, "sentence")
        tokens = query.tokens
        if not isinstance(word, str) or not word.strip():
            raise QueryError(message("word_of_sentence_empty"))
        word = word.strip()
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
            raise QueryError(message(key, position=position, token=tokens[position], word=word, positions=matches))
        return query, int(position), notices

    def _read_use(self, tokens: list[str], position: int) -> tuple[np.ndarray, np.ndarray]:
        """One use's ELMo layers (L+1, dim) and context states (2P,): one run of the model."""
        out = self.elmo.embed([tokens], context=True)[0]
        return out[:-1, position], out[-1, position]

    @_one_at_a_time
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
        """Uses in context nearest to ``word`` as used in ``sentence`` (token ``position`` if it occurs twice).

        ``representation``: "readout" (the index's sense readout; the default unless ``layers`` are given) or "elmo"
        (the ELMo layers mixed as ``layers`` say; default the index's mix). ``same_word`` keeps only occurrences of the same word (any case);
        their readouts are compared around the word's mean use (``encoder.readout.centred``). ``explain`` adds what
        the LM expects at the position (``Neighbors.expected``). GloVe's nearest words come along.
        """
        NeighborsOptions(position, k, same_word, explain, layers, representation)  # each checked by its rule
        k = int(k)
        query, position, notices = self._use(sentence, word, position)
        word = word.strip()
        weights = self._representation(representation, layers)
        subset = self.word_ids(word) if same_word else None
        if not len(self._token_vectors):
            raise QueryError(message("no_token_vectors"))
        layer_vectors, context = self._read_use(query.tokens, position)
        if weights is not None:
            query_vector = mix(layer_vectors, weights)
            scores, ids = self._token_vectors.search(query_vector, k, weights, self._deleted_tokens, subset)
            notices += self._approximate_notice("approximate_neighbors")
        else:
            query_vector = normalize_rows(self.readout.vectors(context[None]))
            if subset is None:
                scores, ids = self._readouts.search(query_vector[0], k, (1.0,), self._deleted_tokens)
            else:
                candidates = self._centred(subset, self._readouts.gather(subset, (1.0,)))
                scores, rows = ExactSearch(candidates, self.device).search(self._centred(subset, query_vector)[0], k)
                ids = subset[rows]
        hits = []
        for rank, (score, token_id) in enumerate(zip(scores, ids), start=1):
            token = self.tokens.iloc[int(token_id)]
            row = self.sentences.iloc[int(token["sentence_id"])]
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
        nearest = self.glove.nearest(word, k)
        note = None if nearest is not None else message("word_not_in_glove", word=word, size=len(self.glove))
        expected = self.expectations(context) if explain else []
        name = self.representation_name(weights)
        return Neighbors(query.tokens, position, hits, nearest or [], note, notices, name, expected)

    def expectations(self, context: np.ndarray, k: int = 10) -> list[Expectation]:
        """What the LM expects at a use (its context states): each direction's ``k`` likeliest words that the
        language shows (``TextRules.shown_expectations``: in Korean nouns, among the ``EXPECTED_CANDIDATES`` times
        ``k`` likeliest). None for a model without an LM head (published weights)."""
        if self.readout is None or self.readout.head is None:
            return []
        shown = []
        for expectation in self.readout.expectations(
            context, min(EXPECTED_CANDIDATES * k, self.readout.head.vocab_size)
        ):
            probability = dict(expectation.words)
            words = self.elmo.text.shown_expectations(list(probability))[:k]
            shown.append(Expectation(expectation.direction, [(word, probability[word]) for word in words]))
        return shown

    @_one_at_a_time
    def compare(
        self,
        sentence_a: str,
        word_a: str,
        sentence_b: str,
        word_b: str,
        position_a: int | None = None,
        position_b: int | None = None,
    ) -> Comparison:
        """Two uses compared in every representation: the cosine of their vectors at each ELMo layer, under the
        index's mix, and in the sense readout (for two uses of one indexed word, around its mean use)."""
        uses, notices, layer_vectors, contexts = [], [], [], []
        for sentence, word, position in ((sentence_a, word_a, position_a), (sentence_b, word_b, position_b)):
            query, position, said = self._use(sentence, word, position)
            layers, context = self._read_use(query.tokens, position)
            uses.append((query.tokens, position))
            notices += said
            layer_vectors.append(layers)
            contexts.append(context)
        n = self.elmo.n_layers
        names = [*(f"ELMo layer {j}" if j else "ELMo token layer" for j in range(n)), ELMO_NAME]
        mixes = [*(tuple(float(i == j) for i in range(n)) for j in range(n)), self.layer_mix.weights]
        cosines = {name: float(mix(layer_vectors[0], w) @ mix(layer_vectors[1], w)) for name, w in zip(names, mixes)}
        if self.readout is not None:
            readouts = normalize_rows(self.readout.vectors(np.stack(contexts)))
            same = normalize(uses[0][0][uses[0][1]]) == normalize(uses[1][0][uses[1][1]])
            ids = self._word_ids_or_none(uses[0][0][uses[0][1]]) if same else None
            if ids is not None:
                readouts = self._centred(ids, readouts)
            cosines[self.representation_name(None)] = float(readouts[0] @ readouts[1])
        return Comparison(uses, cosines, list(self.layer_mix.weights), self.layer_mix.gamma, notices)

    def _word_ids_or_none(self, word: str) -> np.ndarray | None:
        try:
            return self.word_ids(word)
        except QueryError:
            return None

    @_one_at_a_time
    def senses(
        self,
        word: str,
        k: int | str = "auto",
        max_occurrences: int = 2000,
        layers: str | Sequence[float] | None = None,
        representation: str | None = None,
    ) -> Senses:
        """Cluster the occurrences of ``word`` (k by ``senses.auto_k`` when "auto": 2 to 8) and place them in 2-D.

        ``representation`` as for ``neighbors``: the sense readout (each use around the word's mean use), or the ELMo
        mix ``layers``. Clusters are named by the LM's likeliest words at their uses where the index keeps them,
        else by their sentences' words (``senses.describe_senses``)."""
        if not isinstance(word, str) or not word.strip():
            raise QueryError(message("word_empty"))
        SensesOptions(k, max_occurrences, layers, representation)  # each checked by its rule
        weights = self._representation(representation, layers)
        ids = self.word_ids(word.strip())
        every_use = ids
        notices = self._approximate_notice("approximate_senses") if weights is not None else []
        if len(ids) > max_occurrences:
            notices.append(message("senses_sampled", word=word, n=len(ids), sample=max_occurrences))
            ids = np.sort(np.random.default_rng(0).choice(ids, max_occurrences, replace=False))
        vectors = self._vectors_of_uses(ids, every_use, weights)
        sentence_ids = self.tokens["sentence_id"].to_numpy()[ids]
        rows = self.sentences.iloc[sentence_ids]
        result = describe_senses(
            word.strip(),
            vectors,
            rows["text"].tolist(),
            self._use_words(ids, rows["text"]),
            self.elmo.text.stopwords,
            k,
            positions=self.tokens["position"].to_numpy()[ids].tolist(),
            may_name=self.elmo.text.names_something,  # the language's rule: Korean nouns
        )
        result.notices = notices
        result.representation = self.representation_name(weights)
        return result

    @_one_at_a_time
    def use_vectors(
        self, word: str, layers: str | Sequence[float] | None = None, representation: str | None = None
    ) -> tuple[list[tuple[str, int]], np.ndarray]:
        """Every live use of ``word`` (its sentence and token position) and its unit vector in a representation, as
        ``neighbors`` compares them (``representation`` and ``layers`` as there): what a word's typical cosines are
        measured on."""
        if not isinstance(word, str) or not word.strip():
            raise QueryError(message("word_empty"))
        weights = self._representation(representation, layers)
        ids = self.word_ids(word.strip())
        tokens = self.tokens.iloc[ids]
        sentences = self.sentences["text"].to_numpy()[tokens["sentence_id"].to_numpy()]
        uses = [(str(sentence), int(position)) for sentence, position in zip(sentences, tokens["position"])]
        return uses, self._vectors_of_uses(ids, ids, weights)

    def _vectors_of_uses(self, ids: np.ndarray, every_use: np.ndarray, weights: tuple[float, ...] | None) -> np.ndarray:
        """Unit vectors of uses ``ids`` of one word: the ELMo mix ``weights``, or (None) the sense readout around the
        mean of the word's uses ``every_use``."""
        if weights is None:
            return self._centred(every_use, self._readouts.gather(ids, (1.0,)))
        return self._token_vectors.gather(ids, weights)

    def _use_words(self, ids: np.ndarray, texts: pd.Series) -> list[dict[str, float]]:
        """What each use's cluster may be named by: the words that weigh most in its readout, with their probability,
        where the index keeps them, else the words of its sentence that may name a topic, each counted 1."""
        if self.readout is None or self.readout.head is None or not self.manifest.readout.kept_substitutes:
            return [dict.fromkeys(self.elmo.text.label_words(text), 1.0) for text in texts]
        shard_ids, shard_probs = self._substitutes
        offsets = np.cumsum([0] + [len(a) for a in shard_ids])
        words = self.readout.vocab.words
        found = []
        for token_id in ids.tolist():
            s = int(np.searchsorted(offsets, token_id, side="right") - 1)
            use: dict[str, float] = {}
            for i, p in zip(shard_ids[s][token_id - offsets[s]].ravel(), shard_probs[s][token_id - offsets[s]].ravel()):
                use[words[i]] = use.get(words[i], 0.0) + float(p)
            found.append(use)
        return found

    # ------------------------------------------------------------------------------ information
    @property
    def backend(self) -> str:
        """Where queries under the build-time mix run: faiss-cpu, faiss-gpu or torch-cuda (exact)."""
        if not self.device.startswith("cuda"):
            return "faiss-cpu"
        return "faiss-gpu" if gpu_faiss_available() else "torch-cuda"

    def documents(self) -> list[dict]:
        """The documents results can come from (deleted ones left out), in index order: ``doc_id`` and ``title``."""
        live = self.docs[self.live.documents]
        return [{"doc_id": doc_id, "title": title} for doc_id, title in zip(live["doc_id"], live["title"])]

    def stats(self) -> dict:
        """Counts, settings, index types and sizes, as shown by ``python -m indexer stats``."""
        m = self.manifest
        return {
            "path": str(self.path),
            "format_version": m.format_version,
            "created_at": m.created_at,
            "updated_at": m.updated_at,
            "model": asdict(m.model),
            "layers": asdict(m.layers),
            "search_layers": asdict(m.search_layers),
            "pooling": m.pooling,
            "counts": asdict(m.counts),
            "shards": len(m.shards),
            "indexes": {
                kind: {"factory": e.factory, "search_params": e.search_params, "ntotal": e.ntotal, "dim": e.dim}
                for kind, e in m.indexes.items()
            },
            "token_vectors": {
                "exact_kept": m.settings.keep_exact_tokens,
                "compressed": self._token_vectors.compressed,
                "reranked": self._token_vectors.rerank > 1,  # the compressed index's candidates re-scored exactly
                "index_bytes_per_vector": m.indexes["tokens"].size / max(m.indexes["tokens"].ntotal, 1),
            },
            "glove": m.glove,
            "corpus": [{"name": c.name, "size": c.size, "documents": c.documents} for c in m.corpus],
            "disk_bytes": m.disk_bytes(),
            "device": self.device,
            "backend": self.backend,
        }


def _opening(write: Callable[..., build.Written], name: str) -> Callable[..., Index]:
    """``write`` (``build.write_index`` or ``write_additions``), then the index it wrote, opened: the public function
    ``name``, with ``write``'s parameters and documentation. The build pipeline never imports ``Index``."""

    def opened(*args: Any, **kwargs: Any) -> Index:
        written = write(*args, **kwargs)
        return Index.open(written.folder, model=written.model, device=written.device, verify=written.verify)

    opened.__name__ = opened.__qualname__ = name
    opened.__doc__ = write.__doc__
    opened.__signature__ = inspect.signature(write).replace(return_annotation="Index")  # type: ignore[attr-defined]
    return opened


build_index = _opening(build.write_index, "build_index")
add_documents = _opening(build.write_additions, "add_documents")
