"""What a manifest names, opened and checked against it: the model, the GloVe, the shards' vectors, and
``IndexParts``, every part of one generation of an index.

``manifest.py`` knows the records; this module turns them into the objects a build and ``Index`` work with
(``Elmo`` checked by content hash, ``GloveVectors``, memory-mapped ``LayerStore``s, the tables and FAISS indexes).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from encoder import Elmo, LayerMix
from encoder.glove import Glove
from encoder.lm_data import VOCAB_FILE
from encoder.lm_head import HEAD_FILE
from encoder.model_files import MODEL_NAMES, resolve_model
from encoder.readout import Readout, head_hash
from encoder.text import composed
from encoder.words import WordFrequencies, is_word, normalize

from . import layout, storage
from .bm25 import BM25, KeywordTerms, terms
from .calibration import NullQueries
from .errors import CorruptIndexError, IndexMismatchError, QueryError, message
from .factory import apply_search_params
from .glove import GloveVectors
from .live import LiveRows
from .manifest import Manifest, ModelRecord, ModelSpec, Shard, check_glove_source
from .spelling import Speller
from .vectors import RERANK, ExactSearch, LayerStore, VectorSet

DICTIONARY_GLOVE_WORDS = 50_000  # GloVe's most frequent words are words; Stanford's rarer ones hold typos ("furst")


def open_glove(out: Path, entry: dict) -> GloveVectors:
    """The GloVe an index uses: trained on its corpus (a file in the index), or the one it refers to (Stanford's
    package, or a GloVe file elsewhere), checked against what it recorded. Never copied into the index."""
    if "file" in entry:
        return GloveVectors.load(out / entry["file"])
    check_glove_source(out, entry)
    return GloveVectors(Glove.open(entry["source"]))


def model_source(model: str | Path | Sequence[str | Path]) -> str | list[str]:
    """How a manifest names a model (``ModelRecord.source``): a shipped or downloaded published model by name (it is
    found wherever it is installed or cached), our model folder by its absolute path, other published weights as
    [options, weights] (found by ``encoder.model_files.resolve_model``)."""
    if str(model) in MODEL_NAMES:
        return str(model)
    found = resolve_model(*model) if isinstance(model, (list, tuple)) else resolve_model(model)
    if found.folder is not None:
        return str(found.folder.resolve())
    return [str(found.options.resolve()), str(found.weights.resolve())]


def load_model(model: ModelSpec, device: str = "auto") -> tuple[Elmo, ModelRecord]:
    """The Elmo for ``model`` and the manifest's record of it (``model_source``); an index tokenizes text with it,
    so what its language's tokenizer needs must be installed (``MissingExtra`` says which extra)."""
    if isinstance(model, Elmo):
        model.text.require()
        return model, ModelRecord(
            model.name, model.model_hash, None, model.dim, model.n_layers, head_hash(model.folder)
        )
    source = model_source(model)
    elmo = Elmo.load(*(source if isinstance(source, list) else [source]), device=device)
    elmo.text.require()
    return elmo, ModelRecord(elmo.name, elmo.model_hash, source, elmo.dim, elmo.n_layers, head_hash(elmo.folder))


def open_model(expected: ModelRecord, model: ModelSpec | None, device: str) -> Elmo:
    """The model an index was built with (``model``, or the one ``expected`` names), checked by content hash."""
    if model is None:
        if expected.source is None:
            raise IndexMismatchError(
                f"the index does not record where its model ({expected.name}) is; "
                "pass the model directory (model=... / --model)"
            )
        model = expected.source
    try:
        elmo, _ = load_model(model, device)
    except (FileNotFoundError, ValueError, OSError) as error:
        raise IndexMismatchError(
            f"cannot load the model the index was built with ({expected.name}): {error}; "
            "pass its location with model=... / --model"
        ) from None
    if elmo.model_hash != expected.hash:
        same_name = " (the same name, other weights or storage: another version or copy of it)" * (
            elmo.name == expected.name
        )
        raise IndexMismatchError(
            f"the index was built with model {expected.name!r} (hash {expected.hash}), "
            f"but {elmo.name!r} (hash {elmo.model_hash}) was given{same_name}; open it with the same model "
            "or rebuild the index with this one"
        )
    known = expected.head_hash is not None and elmo.folder is not None  # else the readout is not read: ELMo only
    if known and head_hash(elmo.folder) != expected.head_hash:
        raise IndexMismatchError(
            f"the LM head or vocabulary of model {expected.name!r} ({HEAD_FILE}, {VOCAB_FILE} in {elmo.folder}) is not "
            "the one the index was built with, and they name what the model expects at a word; restore them, or "
            "rebuild the index with this model"
        )
    return elmo


LAYER_PARTS = {
    "sentence": ("sentence_layers", "sentences"),
    "token": ("token_layers", "token_vectors"),
    "title": ("title_layers", "documents"),
    "readout": ("token_readout", "token_vectors"),
}
"""Per-layer vector stores of a shard: their part (``layout.SHARD_FILES``) and the ``Shard`` count of their rows."""


def shard_layers(out: Path, shards: Sequence[Shard], kind: str, dims: tuple[int, int]) -> LayerStore:
    """The per-layer vectors of ``kind`` (``LAYER_PARTS``: "sentence", "token", "title"; "readout", one layer of
    the readout's width) of the shards, memory-mapped."""
    part, count = LAYER_PARTS[kind]
    return LayerStore(
        [storage.read_npy(layout.shard_file(out, s.name, part), (getattr(s, count), *dims)) for s in shards]
    )


def shard_substitutes(out: Path, shards: Sequence[Shard], k: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each shard's stored substitutes of its token vectors: vocabulary ids and probabilities, (n, k) each,
    memory-mapped."""
    ids = [storage.read_npy(layout.shard_file(out, s.name, "token_substitutes"), (s.token_vectors, k)) for s in shards]
    probs = [
        storage.read_npy(layout.shard_file(out, s.name, "token_substitute_probs"), (s.token_vectors, k)) for s in shards
    ]
    return ids, probs


class IndexParts:
    """Every part of one generation of an index, as the questions read it: the shards' tables (pandas; row number
    = id; removed documents included, ``live`` says which rows are live), their vectors and FAISS indexes, and the
    parts built on first use (``functools.cached_property``: questions run one at a time, under ``Index.lock``).
    ``Index.add``, ``upsert``, ``delete`` and ``refresh`` replace the whole, so that no part outlives its generation.
    """

    def __init__(self, path: Path, manifest: Manifest, elmo: Elmo, device: str):
        self.path, self.manifest, self.elmo, self.device = path, manifest, elmo, device
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
        self.deleted_tokens = self.live.removed("tokens")
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
        self.token_vectors = VectorSet(
            exact_tokens, faiss_indexes["tokens"], self.layer_mix.weights, device, rerank=RERANK
        )
        self.glove_index = faiss_indexes["glove"]  # sentences' mean GloVe vectors
        width = manifest.readout.width(elmo.dim)
        self.readouts = VectorSet(shard_layers(path, shards, "readout", (1, width)), None, (1.0,), device)
        self.substitutes = shard_substitutes(path, shards, manifest.readout.kept_substitutes)
        self.keyword_terms = KeywordTerms(elmo.text.language)

    @functools.cached_property
    def readout(self) -> Readout | None:
        """The sense readout the index was built with (its model's LM head, read on first use); None when the model
        was given without its folder, so the head is not known (a readout question then says so)."""
        readout = Readout.of_model(self.elmo.folder, self.manifest.readout, self.elmo.model)
        return readout if readout.settings == self.manifest.readout else None

    @functools.cached_property
    def glove(self) -> GloveVectors:
        """The GloVe the index uses (``open_glove``)."""
        return open_glove(self.path, self.manifest.glove_source)

    @functools.cached_property
    def vocab(self) -> pd.DataFrame:
        """Word counts of the indexed text (most frequent first)."""
        return storage.read_parquet(self.path / self.manifest.vocab.file)

    @functools.cached_property
    def frequencies(self) -> WordFrequencies:
        """Word counts of the indexed text: they weigh a query's words as the passages' were weighed."""
        return WordFrequencies(dict(zip(self.vocab["word"], self.vocab["count"].tolist())))

    @functools.cached_property
    def document_terms(self) -> list[list[str]]:
        """Each document's words (``bm25.terms``): its title's, then its sentences'."""
        documents = [terms(t) for t in self.docs["title_tokens"]]
        for row, tokens in zip(self.sentence_docs.tolist(), self.sentences["tokens"]):
            documents[row].extend(terms(tokens))
        return documents

    @functools.cached_property
    def bm25(self) -> BM25:
        """Okapi BM25 over whole documents, on their keyword terms (stems)."""
        return BM25((self.keyword_terms(words) for words in self.document_terms), self.live.documents)

    @functools.cached_property
    def null_queries(self) -> NullQueries:
        """The random-word queries relevance is calibrated on, stored in the index (``calibration``)."""
        names = tuple(f.file for f in self.manifest.calibration)
        return NullQueries.read(self.path, names, (self.elmo.n_layers, self.elmo.dim))

    @functools.cached_property
    def dictionary(self) -> frozenset[str]:
        """The language's words (lower case): the model's training vocabulary and the ``DICTIONARY_GLOVE_WORDS``
        most frequent words of the index's GloVe (Stanford's rarer ones hold typos: "furst"). Search never respells
        one of them (``DocumentSearch.is_a_word``)."""
        words = [*self.elmo.vocabulary, *self.glove.words[:DICTIONARY_GLOVE_WORDS]]
        return frozenset(word.lower() for word in words)

    @functools.cached_property
    def speller(self) -> Speller:
        """The indexed words (lower case) with how often each occurs and, where the language respells into them
        (``TextRules.respells_into_dictionary``), the words of the model's training vocabulary that it holds in lower
        case, most frequent first: common words, not names ("movie", never "Vulcans"). Query words that are no
        word at all are matched to them (``spelling``)."""
        counts = self.tokens["word"][self.live.tokens].str.lower().value_counts().sort_index()
        common = [w for w in self.elmo.vocabulary if w == w.lower()] if self.elmo.text.respells_into_dictionary else []
        return Speller(counts.index.tolist(), counts.to_numpy(), common, self.elmo.token_vectors)

    @functools.cached_property
    def glove_documents(self) -> ExactSearch:
        """SIF-weighted mean GloVe vectors of whole documents, searched exactly."""
        vectors = [self.glove.pooled(t, self.frequencies) for t in self.document_terms]
        return ExactSearch(np.stack(vectors) if vectors else np.zeros((0, self.glove.dim)))

    @functools.cached_property
    def collection_readout(self) -> np.ndarray:
        """The mean readout of the index's live uses: where a rare word's centre is shrunk to (``readout.centred``)."""
        total, count, offset = 0.0, 0, 0
        for chunk in self.readouts.layers.mixed((1.0,)):
            live = chunk[self.live.tokens[offset : offset + len(chunk)]]
            total, count, offset = total + live.sum(0, dtype=np.float64), count + len(live), offset + len(chunk)
        return np.asarray(total, np.float64) / max(count, 1)

    @functools.cached_property
    def token_rows(self) -> dict[str, np.ndarray]:
        """The stored token vectors of each word (lower case), removed ones included."""
        return self.tokens.groupby(self.tokens["word"].str.lower()).indices

    def word_ids(self, word: str) -> np.ndarray:
        """Ids of the live token vectors of ``word`` (any case, ``composed``); QueryError if it has none."""
        ids = self.live.live_of("tokens", self.token_rows.get(normalize(composed(word)), np.zeros(0, np.int64)))
        if not len(ids):
            units = self.elmo.text.tokenize(composed(word))
            if len(units) > 1 and any(normalize(unit) in self.token_rows for unit in units):  # 배를: 배 | 를
                raise QueryError(message("word_in_units", word=word, units=" | ".join(units)))
            key = (
                "stopword_not_indexed"
                if normalize(word) in self.elmo.text.stopwords
                else "punctuation_not_indexed"
                if not is_word(word)
                else "word_not_indexed"
            )
            raise QueryError(message(key, word=word))
        return ids
