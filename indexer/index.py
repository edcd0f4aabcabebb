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

Each answer carries its ``notices``: what a question changed or found out (a query cut at
``queries.MAX_QUERY_CHARS``, the words it searched for instead, "no good match"). ``Index`` is a door: it takes the
lock and asks the parts of the index as opened (``parts.IndexParts``: tables, vectors, FAISS indexes, lazily built parts), document
search (``search.DocumentSearch``) and the word questions (``words.WordQuestions``); a change (``add``, ``upsert``,
``delete``, ``refresh``; an index of strings: ``texts.py``) replaces all three at once.
"""

from __future__ import annotations

import functools
import inspect
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from encoder import locks
from encoder.device import resolve_device
from encoder.text import composed

from . import build, layout
from . import texts as text_input
from .errors import CorpusError, CorruptIndexError, IndexMismatchError, QueryError, message
from .manifest import Manifest, ModelSpec
from .options import K, SearchOptions
from .parts import IndexParts, open_model
from .queries import Query, layer_weights, read_query
from .readers import stored_ids
from .representations import Representation
from .results import Comparison, DocumentHit, Neighbors, Results, Senses, SentenceHit
from .search import DocumentSearch
from .vectors import gpu_faiss_available
from .words import WordQuestions

QUERY_BATCH = 200  # queries searched together by a search of many (sorted by length across all of them: less padding)


def _one_at_a_time(question: Callable) -> Callable:
    """A question (or change) of an index, asked under its ``lock``: its lazily built parts and the caches of its
    vector sets are not thread-safe, so a server or an app may share one index between threads. A part that
    cannot be read because another process's ``add`` replaced the generation it belongs to (the manifest was
    written again since this index read it) is no damage: the question is asked again of the index as it is now.
    It said "the index is damaged, rebuild it"."""

    @functools.wraps(question)
    def asked(self: Index, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            try:
                return question(self, *args, **kwargs)
            except CorruptIndexError:
                if _written(self.path) in (None, self.written):  # the same manifest: the files are damaged
                    raise
            self._reopen()
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


def _part(name: str) -> property:
    """An attribute of ``Index`` that is one of its parts (``IndexParts``), read-only: a change replaces them all."""
    return property(lambda index: getattr(index.parts, name), doc=f"``IndexParts.{name}``")


class Index:
    """A built index opened for search: metadata in memory, vectors memory-mapped, FAISS indexes loaded.

    ``docs``, ``sentences`` and ``tokens`` are the shards' tables (pandas; row number = id), removed documents
    included; ``live`` says which rows are live (``live.LiveRows``, the one rule every reader uses). ``parts`` holds
    them and every other part (``parts.IndexParts``).
    """

    def __init__(self, parts: IndexParts, written: tuple[int, int, int] | None = None):
        self.lock = threading.RLock()  # the lazily built parts, the mixed-vector caches: one question at a time
        self._answer_from(parts, written)

    def _answer_from(self, parts: IndexParts, written: tuple[int, int, int] | None) -> None:
        """Answer from ``parts`` (``written``: the manifest as read, for ``refresh``): every part, and the questions'
        caches, replaced at once."""
        self.parts, self.written = parts, written
        self.document_search = DocumentSearch(parts)
        self.words = WordQuestions(parts)

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
        return cls(IndexParts(path, manifest, open_model(manifest.model, model, device), device), written)

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
        """Add ``texts`` as new documents (``ids`` default to their positions after the stored documents, passing
        over numbers a document holds as its id); an id the index holds is refused (``upsert`` replaces it), a
        deleted one may be used again. Written to the index's
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
        build.delete_documents(self.path, ids)
        self._reopen()

    @_one_at_a_time
    def _add(self, texts: Sequence[str], ids: Sequence[str] | None, replace: bool) -> None:
        in_use = set() if replace else set(stored_ids(d["doc_id"] for d in self.documents()))  # upsert: replaced
        texts, ids = text_input.checked(texts, ids, first_id=len(self.docs), taken=in_use)
        with tempfile.TemporaryDirectory(prefix="elmo-search-") as folder:
            corpus = text_input.write_jsonl(Path(folder), texts, ids)
            added = add_documents(
                self.path, [corpus], model=self.elmo, device=self.device, progress=False, replace=replace
            )
        self._answer_from(added.parts, added.written)  # the new generation; a temporary folder stays this index's

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
        self._answer_from(opened.parts, opened.written)

    def __len__(self) -> int:
        """The documents results can come from (deleted ones left out)."""
        return self.manifest.counts.documents

    def count(self) -> int:
        """``len(index)``: the documents results can come from."""
        return len(self)

    # ------------------------------------------------------------------------------ the parts most read
    path, manifest, elmo, device = _part("path"), _part("manifest"), _part("elmo"), _part("device")
    layer_mix, search_mix = _part("layer_mix"), _part("search_mix")  # word questions' layer mix, and search's
    docs, sentences, tokens, live = _part("docs"), _part("sentences"), _part("tokens"), _part("live")

    @_one_at_a_time
    def word_ids(self, word: str) -> np.ndarray:
        """Ids of the live token vectors of ``word`` (any case); QueryError if it has none."""
        return self.parts.word_ids(word)

    # ------------------------------------------------------------------------------ query helpers
    def query(self, text: Any, what: str = "query") -> Query:
        """A query or sentence as every question uses it (QueryError when it has no words).

        ``what`` ("query" or "sentence") picks the messages: ``query_empty`` or ``sentence_empty``, and so on. An
        index whose documents were all deleted adds a notice saying so: every answer is then empty.
        """
        return read_query(self.elmo.text, text, what, len(self))

    @staticmethod
    def _k(k: Any) -> int:
        if K.problem(k) is not None:
            raise QueryError(f"k {K.problem(k)}")
        return int(k)

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
        replaced by the nearest word the index's speller knows (``spelling``; ``searched_for`` and a notice say what was searched
        for). All ``k`` hits are returned (fewer only when fewer documents match); ``DocumentHit.above_line``
        marks those that score clearly better than random words do (``ranking.RELEVANCE_LINE``), and a notice says
        "no good match" when even the best one does not; under 50 documents relevance and the line are None, and a
        notice says why (``ranking.calibrated``).

        >>> index = Index.from_texts(["Volcanoes erupt when magma rises.", "Bake the bread in a hot oven."])
        >>> index.search("lava and magma", k=1)[0].doc_id
        '0'
        >>> [found[0].doc_id for found in index.search(["magma", "an oven for bread"], k=1)]
        ['0', '1']
        """
        SearchOptions(k=k, method=method, layers=layers, as_typed=not spelling)  # each checked by its rule
        k = int(k)
        weights = layer_weights(layers, self.search_mix, self.elmo.n_layers)
        if isinstance(query, (str, bytes)) or not isinstance(query, Sequence):  # one query (bytes: refused as one)
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
        self,
        query: str,
        k: int = 10,
        method: str = "elmo",
        layers: str | Sequence[float] | None = None,
        spelling: bool = True,
    ) -> Results[SentenceHit]:
        """Single sentences nearest in meaning to ``query``, respelled as ``search`` respells (``spelling``): cosine
        of pooled ELMo vectors (``elmo``), or of mean GloVe vectors (``glove``; empty, with a notice, when no query
        word has one)."""
        k = self._k(k)
        if method not in ("elmo", "glove"):
            raise QueryError(f"sentence search method must be 'elmo' or 'glove', not {method!r}")
        weights = layer_weights(layers, self.search_mix, self.elmo.n_layers) if method == "elmo" else ()
        return self.document_search.sentences(self.query(query), k, method, weights, spelling)

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
        (the ELMo layers mixed as ``layers`` say; default the index's mix). ``same_word`` keeps only occurrences of
        the same word (any case); their readouts are compared around the word's mean use
        (``encoder.readout.centred``). ``explain`` adds what the LM expects at the position (``Neighbors.expected``).
        GloVe's nearest words come along.
        """
        return self.words.neighbors(sentence, word, position, k, same_word, layers, representation, explain)

    def glove_nearest(self, word: str, k: int = 10) -> list[tuple[str, float]] | None:
        """GloVe's ``k`` nearest words to ``word`` (context-free: the static baseline beside ``neighbors``), those
        that may name something in the index's language; None when GloVe has no vector for ``word``."""
        if K.problem(k) is not None:
            raise QueryError(f"k {K.problem(k)}")
        if not isinstance(word, str) or not word.strip():
            raise QueryError(message("word_empty"))
        return self.words.glove_nearest(composed(word.strip()), k)

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
        return self.words.compare(sentence_a, word_a, sentence_b, word_b, position_a, position_b)

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
        return self.words.senses(word, k, max_occurrences, layers, representation)

    @_one_at_a_time
    def use_vectors(
        self, word: str, layers: str | Sequence[float] | None = None, representation: str | None = None
    ) -> tuple[list[tuple[str, int]], np.ndarray]:
        """Every live use of ``word`` (its sentence and token position) and its unit vector in a representation, as
        ``neighbors`` compares them (``representation`` and ``layers`` as there): what a word's typical cosines are
        measured on."""
        return self.words.use_vectors(word, layers, representation)

    def representation_name(self, representation: Representation) -> str:
        """What a representation is called: "context prediction", "ELMo layer mix (paper)", a mix's formula."""
        return self.words.representation_name(representation)

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
                "compressed": self.parts.token_vectors.compressed,
                "reranked": self.parts.token_vectors.rerank > 1,  # the compressed index's candidates re-scored exactly
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
