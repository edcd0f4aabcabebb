"""``Elmo``: the one entry point for turning sentences into ELMo vectors.

    elmo = Elmo.load("default")                 # or "elmo-small" (downloaded), a folder, options.json + weights
    layers = elmo.embed(["The bank of the river."])[0]        # (L+1, n_tokens, 2P)
    vectors = elmo.embed(sentences, mix="average")            # list of (n_tokens, 2P)

Batching (length-sorted under a token budget), the token cache and statefulness are handled inside, and so is
threads' sharing one model: the cache and the carried state change under the model's own lock (``Elmo.lock``), so
a server or an app can ask it from several threads.
Stateless by default: a sentence always gets the same vectors, whatever else is in its batch.
With ``stateful=True`` the LSTM state of batch row b is carried to row b of the next batch, as the
reference implementations do; batches are then taken in input order, never sorted.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from .chars import BOS_TOKEN, EOS_TOKEN, batch_to_ids
from .device import resolve_device
from .mix import POOLINGS, LayerMix, pool
from .model import BiLM, State
from .model_files import PUBLISHED, download_command, downloaded_name, resolve_model
from .numbers import Number
from .text import TextRules, text_rules
from .threads import apply_default_threads
from .weights import WeightsError, load_hdf5, load_model, read_config, save_model
from .words import WordFrequencies

BATCH_SIZE = Number(int, 1, 2**16)
"""Sentences embedded together (``Elmo.embed``, ``embed --batch-size``)."""
MAX_TOKENS = Number(int, 1)
"""``embed``'s padded tokens per batch."""
PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
"""How ``Elmo`` computes: fp32 exact; tf32 (TF32 matrix products on a GPU); bf16 or fp16 autocast (fp16: the
half precision cuDNN's fused LSTM has always supported). Outputs are float32 in every case."""
AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@contextmanager
def tf32(enabled: bool) -> Iterator[None]:
    """TF32 matrix products (cuBLAS and cuDNN) on or off for the block, as they were after it."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


class Elmo:
    """A loaded biLM with batching, a char-CNN token cache and optional state carrying."""

    def __init__(
        self,
        model: BiLM,
        name: str = "model",
        model_hash: str | Callable[[], str] = "",
        device: str = "auto",
        stateful: bool = False,
        info: dict | None = None,
        precision: str = "fp32",
        text: TextRules | None = None,
        folder: Path | None = None,
    ):
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r} (one of {', '.join(PRECISIONS)})")
        self.device = torch.device(resolve_device(device))
        self.precision = precision
        if precision == "fp16" and self.device.type == "cpu":
            warnings.warn(
                "fp16 on the CPU is about 10x slower than fp32 (measured): it is meant for GPUs", stacklevel=2
            )
        self.model = model.to(self.device).eval()
        self.config = model.config
        self.name = name
        self._model_hash = model_hash
        self.info = info or {}
        self.text = text or text_rules("en")  # the model's language rules: how its text becomes tokens
        self.folder = folder  # one of our model folders (its LM head and vocabulary beside it), else None
        self.stateful = stateful
        # length buckets: on a GPU every batch is padded to a multiple of 8 steps, so that a run sees a few
        # (batch, width) shapes again and again; on the CPU padding only costs, so batches stay as long as their
        # longest sentence
        self.length_multiple = 8 if self.device.type == "cuda" else 1
        self._state: State | None = None
        self.lock = threading.RLock()  # the token cache and the carried state: one thread at a time runs the model
        self.token_cache = TokenCache(self.config.projection_dim, self.device)
        self.cache_vocabulary([BOS_TOKEN, EOS_TOKEN])

    # ---------------------------------------------------------------- loading and saving
    @classmethod
    def load(
        cls,
        spec: str | Path = "default",
        weights: str | Path | None = None,
        *,
        device: str = "auto",
        stateful: bool = False,
        cache_vocab_size: int = 0,
        precision: str = "fp32",
    ) -> Elmo:
        """Load a model found by ``resolve_model(spec, weights)``: ``default``, ``ko``, a downloaded published model
        (``elmo-small`` ... ``elmo-original-5.5b``), one of our folders, or published AllenNLP weights.

        ``cache_vocab_size`` > 0 precomputes the char-CNN vectors of that many of the most frequent words
        of one of our models' training vocabulary (otherwise words are cached as they are first seen).
        ``precision``: one of ``PRECISIONS`` (``fp32``, exact, by default); outputs are float32 in every case.
        The process's CPU threads follow the project's rule unless it chose its own (``threads.apply_default_threads``).
        """
        apply_default_threads()
        found = resolve_model(spec, weights)
        if found.folder is None:
            try:
                model = load_hdf5(found.options, found.weights)
            except WeightsError as error:  # a download (by its name, or its folder's path) can be fetched again
                name = found.name or downloaded_name(found.weights.parent)
                if name not in PUBLISHED:
                    raise
                raise WeightsError(f"{error}, or download it again: {download_command(name)} --force") from None
            return cls(
                model,
                name=found.name or found.weights.stem,
                model_hash=found.hash,
                device=device,
                stateful=stateful,
                precision=precision,
                text=found.text(),
            )
        info = read_config(found.folder)
        elmo = cls(
            load_model(found.folder),
            name=info.get("name", found.folder.name),
            model_hash=found.hash,
            device=device,
            stateful=stateful,
            info=info,
            precision=precision,
            text=found.text(),
            folder=found.folder,
        )
        vocab_file = found.folder / "vocab.txt"
        if cache_vocab_size and vocab_file.is_file():
            with open(vocab_file, encoding="utf-8") as f:
                words = [line.rstrip("\n") for _, line in zip(range(cache_vocab_size), f)]
            elmo.cache_vocabulary(words)
        return elmo

    @functools.cached_property
    def model_hash(self) -> str:
        """The content hash of the model's files (``ModelFiles.hash``), taken when first asked (an index asks it as it
        is built or opened): ``embed`` never asks, and published weights given by path are hashed whole (35 ms for
        the small shape's 54 MB here)."""
        return self._model_hash() if callable(self._model_hash) else self._model_hash

    def save(self, directory: str | Path) -> None:
        """Write the biLM as one of our model folders (``config.json``, ``model.safetensors`` in float32) into a new
        or empty ``directory``: a published model's weights in our format. The biLM alone, without an LM head or
        vocabulary; and a model shipped in float16 or int8 saved again is stored otherwise, so it counts as another
        model (another content hash: an index built with the original does not open with the copy)."""
        directory = Path(directory)
        if directory.is_dir() and any(directory.iterdir()):
            raise FileExistsError(f"{directory} is not empty: Elmo.save writes a model into a new or empty folder")
        save_model(self.model, directory, extra_config={"name": self.name, "language": self.text.name})

    @functools.cached_property
    def vocabulary(self) -> tuple[str, ...]:
        """The words of the model's training vocabulary as written, in its file's order (most frequent first; read
        once); empty for a model that ships none (published weights)."""
        vocabulary_file = self.folder / "vocab.txt" if self.folder is not None else None
        if vocabulary_file is None or not vocabulary_file.is_file():
            return ()
        with open(vocabulary_file, encoding="utf-8") as f:
            return tuple(line.rstrip("\n") for line in f)

    @property
    def n_layers(self) -> int:
        """Number of ELMo layers: the token layer plus one per LSTM layer (2L+1 vectors in L+1 layers)."""
        return self.config.n_layers + 1

    @property
    def dim(self) -> int:
        return self.config.output_dim

    # ---------------------------------------------------------------- token cache
    def cache_vocabulary(self, words: Iterable[str], batch_size: int = 4096) -> None:
        """Precompute the context-free char-CNN vectors of ``words`` (other words are cached as they come)."""
        with self.lock:
            new = [w for w in dict.fromkeys(words) if w not in self.token_cache]
            for start in range(0, len(new), batch_size):
                chunk = new[start : start + batch_size]
                self.token_cache.add(chunk, self._char_cnn(chunk))

    @contextmanager
    def computing(self) -> Iterator[None]:
        """The block in which the model runs at this Elmo's ``precision``: autocast for bf16 and fp16; on a GPU, TF32
        matrix products on for tf32 and off otherwise (fp32 must stay exact: cuDNN allows TF32 by default). torch's
        TF32 switches are process-wide, so they are set for the block only and put back after it."""
        with ExitStack() as stack:
            if self.device.type == "cuda":
                stack.enter_context(tf32(self.precision == "tf32"))
            dtype = AUTOCAST_DTYPES.get(self.precision)
            stack.enter_context(
                torch.autocast(self.device.type, dtype=dtype or torch.bfloat16, enabled=dtype is not None)
            )
            yield

    @torch.inference_mode()
    def _char_cnn(self, words: list[str]) -> torch.Tensor:
        ids = torch.from_numpy(batch_to_ids([words])[0]).to(self.device)
        with self.computing():
            return self.model.char_cnn(ids).float()

    def token_vectors(self, words: Sequence[str]) -> np.ndarray:
        """Context-free token-layer vectors (n, P) of words, as the first ELMo layer has them."""
        return self._lookup_tokens([list(words)], use_cache=True)[0, : len(words)].cpu().numpy()

    def _width(self, longest: int) -> int:
        """Padded length of a batch whose longest framed sentence has ``longest`` tokens (its length bucket)."""
        return -(-longest // self.length_multiple) * self.length_multiple

    @torch.inference_mode()
    def _lookup_tokens(self, sentences: list[list[str]], use_cache: bool) -> torch.Tensor:
        """Token vectors (B, T, P) for right-padded sentences, zero at padding; T is the batch's length bucket.

        With the cache each word type goes through the char CNN once per process (and once per batch
        when the cache is full); without it every position does, as the reference implementations do.
        """
        longest = max(len(s) for s in sentences)
        if not use_cache:
            ids = torch.from_numpy(batch_to_ids(sentences)).to(self.device)
            ids = torch.nn.functional.pad(ids, (0, 0, 0, self._width(longest) - longest))
            with self.computing():
                return self.model.char_cnn(ids) * (ids > 0).any(-1, keepdim=True)
        with self.lock:  # the cache grows (and its tensor moves) as words come
            misses = [w for w in dict.fromkeys(w for s in sentences for w in s) if w not in self.token_cache]
            miss_vectors = self._char_cnn(misses) if misses else None
            kept = self.token_cache.add(misses, miss_vectors) if misses else 0
            extra = {w: i for i, w in enumerate(misses[kept:])}  # did not fit in the cache
            table = self.token_cache.table(miss_vectors[kept:] if miss_vectors is not None else None)
            rows = np.zeros((len(sentences), self._width(longest)), dtype=np.int64)  # row 0 of the table = padding
            for b, sentence in enumerate(sentences):
                rows[b, : len(sentence)] = [self.token_cache.row(w, extra) for w in sentence]
            return table[torch.from_numpy(rows).to(self.device)]

    # ---------------------------------------------------------------- state
    def reset_state(self) -> None:
        """Forget the carried LSTM state (stateful mode): the next batch starts from zeros."""
        self._state = None

    def _initial_state(self, batch_size: int) -> State | None:
        if not self.stateful:
            return None
        zero = self.model.lstm.zero_state(batch_size, self.device)
        if self._state is None:
            return zero
        rows = min(batch_size, self._state[0][0].shape[1])
        return [
            (torch.cat([h[:, :rows], hz[:, rows:]], 1), torch.cat([c[:, :rows], cz[:, rows:]], 1))
            for (h, c), (hz, cz) in zip(self._state, zero)
        ]

    def _keep_state(self, state: State) -> None:
        """Rows 0..B-1 take the batch's final state; rows beyond the batch keep theirs (as the reference)."""
        if self._state is None or self._state[0][0].shape[1] <= state[0][0].shape[1]:
            self._state = [(h.detach(), c.detach()) for h, c in state]
            return
        B = state[0][0].shape[1]
        self._state = [
            (torch.cat([h_new, h_old[:, B:]], 1), torch.cat([c_new, c_old[:, B:]], 1))
            for (h_new, c_new), (h_old, c_old) in zip(state, self._state)
        ]

    # ---------------------------------------------------------------- embedding
    @torch.inference_mode()
    def model_inputs(self, sentences: list[list[str]], use_cache: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
        """What the LSTMs read for one batch: token vectors (B, T, P) of the sentences framed with BOS/EOS, right-
        padded to the batch's length bucket, and their mask (B, T)."""
        framed = [[BOS_TOKEN, *s, EOS_TOKEN] for s in sentences]
        tokens = self._lookup_tokens(framed, use_cache)
        lengths = torch.tensor([len(s) for s in framed], device=self.device)
        return tokens, torch.arange(tokens.shape[1], device=self.device)[None, :] < lengths[:, None]

    @torch.inference_mode()
    def embed_batch(
        self, sentences: list[list[str]], use_cache: bool = True, context: bool = False
    ) -> list[np.ndarray]:
        """Run one batch as given (no sorting or splitting) -> per sentence (L+1, n, 2P) float32, or (L+2, n, 2P) with
        ``context``: the last row then holds each token's context states (``BiLM.context_states``)."""
        with self.lock:  # the carried state, and torch's process-wide switches of ``computing``
            tokens, mask = self.model_inputs(sentences, use_cache)
            with self.computing():
                layers, state = self.model.contextualize(
                    tokens, mask, self._initial_state(len(sentences)), final_state=self.stateful, far_ends=False
                )  # _to_host drops BOS and EOS; context_states reads neither's far half
                if context:
                    layers.append(self.model.context_states(layers[-1]))
            if state is not None:
                self._keep_state(state)
            return self._to_host(torch.stack(layers), [len(s) for s in sentences])

    def _to_host(self, layers: torch.Tensor, lengths: list[int]) -> list[np.ndarray]:
        """Layers (L+1, B, T, 2P) on the device -> per sentence (L+1, n, 2P) float32 on the host, without BOS, EOS
        and padding. One gather on the device lays each sentence's vectors out as one block, so the host receives
        only real tokens, in one copy, and cuts it into views (the arrays of a batch share its buffer)."""
        n_layers, B, T, dim = layers.shape
        layer_offsets = np.arange(n_layers) * B * T
        blocks = [np.add.outer(layer_offsets, b * T + 1 + np.arange(n)).ravel() for b, n in enumerate(lengths)]
        index = torch.from_numpy(np.concatenate(blocks)).to(self.device)
        flat = layers.reshape(-1, dim).index_select(0, index).float()
        if flat.is_cuda:  # into page-locked memory: the copy runs at the bus's speed
            host = torch.empty(flat.shape, dtype=flat.dtype, pin_memory=True)
            host.copy_(flat, non_blocking=True)
            torch.cuda.current_stream(flat.device).synchronize()
            flat = host
        ends = np.cumsum([n_layers * n for n in lengths])
        return [block.reshape(n_layers, n, dim) for block, n in zip(np.split(flat.numpy(), ends[:-1]), lengths)]

    def embed(
        self,
        sentences: str | Sequence[str | Sequence[str]],
        mix: str | LayerMix | Sequence[float] | None = None,
        batch_size: int = 64,
        max_tokens: int = 4096,
        progress: bool = False,
        use_cache: bool = True,
        context: bool = False,
    ) -> list[np.ndarray]:
        """ELMo vectors for each sentence: (L+1, n, 2P) per sentence, or (n, 2P) when ``mix`` is given.
        ``context`` (without ``mix``) appends one row after the layers: each token's context states, the forward LM's
        top state before it and the backward LM's after it (``BiLM.context_states``; ``encoder.readout`` reads them).

        Each sentence is a list/tuple of tokens (taken as they are) or a string, tokenized by
        the model's language rules (``self.text``: split into sentences, then words) and embedded as one sequence: pass the
        sentences of a text separately to embed them separately. A single string gives a one-element list. ``batch_size`` caps sentences per batch and
        ``max_tokens`` the padded tokens per batch (stateless mode sorts by length to waste little padding).
        """
        token_lists = self._token_lists(sentences)
        layer_mix = LayerMix.parse(mix, self.n_layers) if mix is not None else None
        if context and layer_mix is not None:
            raise ValueError("context states are not an ELMo layer: ask for mix or for context, not both")
        results: list[np.ndarray | None] = [None] * len(token_lists)
        bar = tqdm(total=sum(len(s) for s in token_lists), unit="tok", desc="embedding", disable=not progress)
        for batch in self._batches(token_lists, batch_size, max_tokens):
            outputs = self.embed_batch([token_lists[i] for i in batch], use_cache=use_cache, context=context)
            for i, layers in zip(batch, outputs):
                results[i] = layer_mix.apply(layers) if layer_mix is not None else layers
            bar.update(sum(len(token_lists[i]) for i in batch))
        bar.close()
        return results  # type: ignore[return-value]

    def encode(
        self,
        texts: str | Sequence[str | Sequence[str]],
        batch_size: int = 64,
        show_progress_bar: bool = False,
        normalize: bool = False,
        *,
        mix: str | LayerMix | Sequence[float] = "average",
        pooling: str = "sif",
        word_weights: Callable[[list[str]], np.ndarray] | None = None,
    ) -> np.ndarray:
        """One vector per text, pooled as an index pools its passages: (texts, dim) float32, or for one string its
        (dim,) vector (as sentence-transformers' ``encode``).

        Each text (a string, tokenized by the model's language rules, or a list of tokens) is embedded, its tokens
        pooled per layer (``pooling``: ``sif``, the index's default, weighs each token by ``word_weights(tokens)``
        - an index passes its word counts' smooth-inverse-frequency weights; without them a word weighs 1 and
        punctuation 0 -, ``mean`` or ``max``), then the layers mixed (``mix``); ``normalize``: unit length.

        >>> elmo = Elmo.load("default")
        >>> vectors = elmo.encode(["The river bank flooded.", "The bank raised its rates."], normalize=True)
        >>> vectors.shape, round(float(vectors[0] @ vectors[0]), 3)
        ((2, 256), 1.0)
        >>> elmo.encode("The river bank flooded.").shape
        (256,)
        """
        one = isinstance(texts, str)
        token_lists = self._token_lists(texts)
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, not {pooling!r}")
        empty = next((i for i, tokens in enumerate(token_lists) if not tokens), None)
        if empty is not None:
            raise ValueError(f"text {empty} has no tokens; give every text at least one word")
        weights = np.asarray(LayerMix.parse(mix, self.n_layers).weights, np.float32)
        weigh = word_weights or WordFrequencies({}).weights  # no counts: a word weighs 1, punctuation 0
        layers = self.embed(token_lists, batch_size=batch_size, progress=show_progress_bar)
        pooled = [pool(x, pooling, weigh(tokens)) for x, tokens in zip(layers, token_lists)]
        vectors = np.einsum("nld,l->nd", np.stack(pooled), weights) if pooled else np.zeros((0, self.dim))
        if normalize:
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        vectors = vectors.astype(np.float32, copy=False)
        return vectors[0] if one else vectors

    def _token_lists(self, texts: object) -> list[list[str]]:
        """The tokens of each text ``embed`` and ``encode`` are given: a string is tokenized by the model's language
        rules (one string alone is one text), a list (or other iterable) of strings is taken as its tokens; anything else is
        refused with one TypeError saying what (not a traceback from deep inside)."""
        if isinstance(texts, str):
            texts = [texts]
        if isinstance(texts, (bytes, bytearray, dict)) or not isinstance(texts, Iterable):
            raise TypeError(f"give a string or a list of strings (or of token lists), not {type(texts).__name__}")
        token_lists = []
        for i, text in enumerate(texts):
            if isinstance(text, str):
                token_lists.append(self.text.tokenize(text))
                continue
            tokens = list(text) if isinstance(text, Iterable) and not isinstance(text, (bytes, bytearray)) else None
            if tokens is None or not all(isinstance(token, str) for token in tokens):
                raise TypeError(f"text {i} is a {type(text).__name__}, not a string or a list of string tokens")
            token_lists.append(tokens)
        return token_lists

    def _batches(self, token_lists: list[list[str]], batch_size: int, max_tokens: int) -> list[list[int]]:
        """Stateful: consecutive batches in input order. Stateless: longest first, under the token budget (padded
        tokens, counted at the batch's length bucket)."""
        BATCH_SIZE.check("batch_size", batch_size)
        MAX_TOKENS.check("max_tokens", max_tokens)
        if self.stateful:
            return [
                list(range(i, min(i + batch_size, len(token_lists)))) for i in range(0, len(token_lists), batch_size)
            ]
        order = sorted(range(len(token_lists)), key=lambda i: -len(token_lists[i]))
        batches, current = [], []
        for i in order:
            width = self._width(len(token_lists[current[0] if current else i]) + 2)
            if current and (len(current) >= batch_size or (len(current) + 1) * width > max_tokens):
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches


class TokenCache:
    """Char-CNN vectors of word types (a word: its text, or its row of character ids as bytes), in one growing
    tensor; row 0 is the zero padding vector."""

    def __init__(self, dim: int, device: torch.device, max_words: int = 200_000):
        self.max_words = max_words
        self._rows: dict[Hashable, int] = {}
        self._vectors = torch.zeros(1024, dim, device=device)

    def __contains__(self, word: Hashable) -> bool:
        return word in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, words: list[Hashable], vectors: torch.Tensor) -> int:
        """Store as many of ``words`` as fit (in order); returns how many were stored."""
        n = min(len(words), self.max_words - len(self._rows))
        used = len(self._rows) + 1
        if used + n > self._vectors.shape[0]:
            grown = torch.zeros(
                max(2 * self._vectors.shape[0], used + n), self._vectors.shape[1], device=self._vectors.device
            )
            grown[:used] = self._vectors[:used]
            self._vectors = grown
        self._vectors[used : used + n] = vectors[:n]
        self._rows.update((w, used + i) for i, w in enumerate(words[:n]))
        return n

    def table(self, extra: torch.Tensor | None) -> torch.Tensor:
        """The lookup table: padding, cached words, then ``extra`` vectors that did not fit."""
        used = self._vectors[: len(self._rows) + 1]
        return used if extra is None or len(extra) == 0 else torch.cat([used, extra])

    def row(self, word: Hashable, extra: dict[Hashable, int]) -> int:
        cached = self._rows.get(word)
        return cached if cached is not None else len(self._rows) + 1 + extra[word]

    def vectors(self, words: Sequence[str]) -> torch.Tensor:
        return self._vectors[[self._rows[w] for w in words]]
