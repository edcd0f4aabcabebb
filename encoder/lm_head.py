"""The language-model side of the biLM: the shared output layer (LM head), the joint objective, perplexity.

The head is an adaptive softmax (the layers of ``torch.nn.AdaptiveLogSoftmaxWithLoss``, its computation in
``LMHead.forward``, which can take each cluster's rows from the host): frequent words get full-width logits,
rarer ones share low-rank tail clusters. It gives the exact log-probability of a target over the whole
vocabulary, so training loss and perplexity are the same quantity, and it is cheap: on 2 CPU cores with 100k
words and 2,560 targets a step of it costs about 0.6 s against 0.8 s for a sampled softmax with the
reference's 8,192 negatives (which is also only an estimate). It is small (1.3M parameters at width 128 for
100k words), so it ships beside the model for fine-tuning and perplexity. One head serves both directions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file
from torch import Tensor, nn

from .chars import BOS_TOKEN, EOS_TOKEN
from .elmo import TokenCache
from .files import atomic_path
from .lm_data import (
    VOCAB_FILE,
    Batch,
    Vocabulary,
    cluster_rows,
    make_batch,
    paragraph_pairs,
    paragraph_sentences,
    target_clusters,
)
from .model import BiLM, State
from .weights import (
    WeightsError,
    check_finite_weights,
    load_model,
    read_config,
    read_safetensors,
    restored_tensors,
    stored_tensors,
)

if TYPE_CHECKING:
    from .elmo import Elmo

HEAD_FILE = "head.safetensors"


def default_cutoffs(vocab_size: int) -> list[int]:
    """Cluster boundaries of the adaptive softmax: 2k frequent words in the head, then 8k, 30k and the rest.

    Small clusters keep the cost of the rare-word log-softmax down (measured: at 100k words and 2,560 targets
    a step costs about half of [4000, 20000]'s). Small vocabularies (tests) get one split in the middle.
    """
    return [c for c in (2000, 10000, 40000) if c < vocab_size - 1] or [vocab_size // 2]


class LMHead(nn.Module):
    """Shared output layer of both LMs: hidden states (N, P) + target ids (N,) -> target log-probs (N,)."""

    def __init__(self, input_dim: int, vocab_size: int, cutoffs: list[int] | None = None, div_value: float = 3.0):
        super().__init__()
        self.input_dim, self.vocab_size, self.div_value = input_dim, vocab_size, div_value
        self.vocab_hash: str | None = None  # of the vocabulary it predicts, as saved (``save``)
        self.cutoffs = default_cutoffs(vocab_size) if cutoffs is None else list(cutoffs)
        self.softmax = nn.AdaptiveLogSoftmaxWithLoss(input_dim, vocab_size, self.cutoffs, div_value)

    def forward(self, hidden: Tensor, targets: Tensor, tail_rows: Sequence[Tensor] | None = None) -> Tensor:
        """Each target's log-probability over the whole vocabulary, as ``AdaptiveLogSoftmaxWithLoss`` computes it:
        the head's log-softmax over the shortlist words and one entry per tail cluster, plus, for a target in a
        tail cluster, its log-softmax within that cluster.

        ``tail_rows``: the rows whose target lies in each tail cluster. Training windows bring them, found on the
        host (``Batch.cluster_rows``), so that no step waits for the GPU; otherwise they are found here, with one
        wait for the GPU (torch's module waits once per cluster).
        """
        hidden = hidden.float()  # float32 log-probabilities whatever the input (autocast still runs the layers in bf16)
        if tail_rows is None:
            rows, sizes = cluster_rows(targets, self.cutoffs)
            tail_rows = rows.split(sizes)
        cluster = target_clusters(targets, self.cutoffs)
        head_class = torch.where(cluster == 0, targets, self.cutoffs[0] + cluster - 1)
        log_probs = F.log_softmax(self.softmax.head(hidden), dim=1).gather(1, head_class[:, None]).squeeze(1)
        for tail, low, rows in zip(self.softmax.tail, self.cutoffs, tail_rows):
            within = F.log_softmax(tail(hidden[rows]), dim=1).gather(1, (targets[rows] - low)[:, None]).squeeze(1)
            log_probs = log_probs.index_add(0, rows, within)
        return log_probs

    def log_probs(self, hidden: Tensor, words: int | None = None) -> Tensor:
        """Log-probabilities (N, words) of the first ``words`` classes (the whole vocabulary by default) for hidden
        states (N, P), as ``AdaptiveLogSoftmaxWithLoss.log_prob`` computes them: the head's log-softmax for the
        shortlist, each tail cluster's log-softmax plus its cluster's head entry. Clusters wholly past ``words`` are
        not computed: the 10,000 most frequent words of a 100k vocabulary cost a tenth of the whole."""
        words = self.vocab_size if words is None else min(words, self.vocab_size)
        hidden = hidden.float()
        head = F.log_softmax(self.softmax.head(hidden), dim=1)
        shortlist = self.cutoffs[0]
        parts = [head[:, : min(shortlist, words)]]
        for i, low in enumerate(self.cutoffs):
            if low >= words:
                break
            cluster = F.log_softmax(self.softmax.tail[i](hidden), dim=1)[:, : words - low]
            parts.append(cluster + head[:, shortlist + i, None])
        return torch.cat(parts, dim=1)

    def powered_probs(self, hidden: Tensor, words: int, power: float) -> Tensor:
        """``log_probs(hidden, words).exp() ** power``, the sense readout's inner loop, in fewer passes over the
        (N, words) array: each cluster's fused log-softmax, plus its head entry, times ``power``, exponentiated in
        place."""
        words = min(words, self.vocab_size)
        hidden = hidden.float()
        head = F.log_softmax(self.softmax.head(hidden), dim=1)
        shortlist = self.cutoffs[0]
        parts = [head[:, : min(shortlist, words)].mul(power).exp_()]
        for i, low in enumerate(self.cutoffs):
            if low >= words:
                break
            cluster = F.log_softmax(self.softmax.tail[i](hidden), dim=1)[:, : words - low]
            parts.append(cluster.add_(head[:, shortlist + i, None]).mul_(power).exp_())
        return torch.cat(parts, dim=1) if len(parts) > 1 else parts[0]

    def reset_parameters(self, seed: int) -> None:
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p in self.parameters():
                bound = p.shape[-1] ** -0.5
                p.uniform_(-bound, bound, generator=generator)

    def config(self) -> dict:
        return {
            "input_dim": self.input_dim,
            "vocab_size": self.vocab_size,
            "cutoffs": self.cutoffs,
            "div_value": self.div_value,
        }

    def save(self, path: str | Path, vocab: Vocabulary, storage: str = "fp32") -> None:
        """``storage``: as ``weights.STORAGES`` (the loader restores float32); the hash of ``vocab``, the classes
        it predicts, is recorded with it (``load_language_model`` checks it)."""
        tensors = stored_tensors(self.state_dict(), storage)
        check_finite_weights(tensors, path, writing=True)
        metadata = {"format": "elmo-search-lm-head", "config": json.dumps(self.config()), "vocab": vocab.hash()}
        with atomic_path(path) as tmp:
            save_file(tensors, tmp, metadata=metadata)

    @classmethod
    def load(cls, path: str | Path) -> LMHead:
        """A head saved by ``save``; a file that is not one is a ``WeightsError`` naming it."""
        tensors = restored_tensors(read_safetensors(path))
        try:
            with safe_open(str(path), framework="pt") as f:
                head = cls(**json.loads(f.metadata()["config"]))
                head.vocab_hash = f.metadata().get("vocab")  # None in a head saved before it was recorded
            head.load_state_dict(tensors)
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            raise WeightsError(
                f"{path} is not an LM head of ours ({type(error).__name__}: {error}); restore it"
            ) from None
        check_finite_weights(tensors, path, writing=False)
        return head


class FrozenTokenVectors:
    """A frozen char CNN's token vectors (char CNN, highway, projection) of each word, computed once per run and kept
    (``LanguageModel.freeze_char_cnn`` on a CPU): a training window's words are mostly words of earlier windows.

    A word is its row of character ids. Exact: the char CNN's matrix products round a row alike in any batch of at
    least 16 rows (measured; fewer rows can round differently), so the new words of a window are computed in a
    block of at least ``MIN_ROWS`` (padded with copies of one of them), and their vectors are, bit for bit, those of
    the whole window's char CNN (tested against it)."""

    MIN_ROWS = 64

    def __init__(self, char_cnn: nn.Module, max_words: int = 500_000):
        self.char_cnn = char_cnn
        self.cache = TokenCache(char_cnn.w_proj.shape[1], char_cnn.w_proj.device, max_words)

    @torch.no_grad()
    def __call__(self, char_ids: Tensor) -> Tensor:
        """The token vectors (U, P) of the words ``char_ids`` (U, max chars)."""
        keys = [row.tobytes() for row in char_ids.cpu().numpy()]
        new: dict[bytes, int] = {}  # word -> its first row
        for row, key in enumerate(keys):
            if key not in self.cache and key not in new:
                new[key] = row
        vectors = None
        if new:
            rows = list(new.values())
            rows += rows[:1] * (self.MIN_ROWS - len(rows))
            vectors = self.char_cnn(char_ids[torch.tensor(rows, device=char_ids.device)])[: len(new)]
        words = list(new)
        kept = self.cache.add(words, vectors) if new else 0
        extra = {word: i for i, word in enumerate(words[kept:])}  # did not fit in the cache
        table = self.cache.table(vectors[kept:] if vectors is not None else None)
        index = torch.tensor([self.cache.row(key, extra) for key in keys], device=table.device)
        return table.index_select(0, index)


class LanguageModel(nn.Module):
    """biLM + shared head: the training objective and its exact evaluation."""

    def __init__(self, bilm: BiLM, head: LMHead):
        super().__init__()
        self.bilm, self.head = bilm, head
        self.frozen_tokens: FrozenTokenVectors | None = None  # set by ``freeze_char_cnn``

    def freeze_char_cnn(self, frozen: bool, cached: bool) -> None:
        """Train the char CNN (highway and projection with it) or keep it as it is (``encoder train
        --freeze-char-cnn``): frozen, it gets no gradient, so autograd skips its backward; frozen and ``cached``,
        each word's vector is computed once per run (``FrozenTokenVectors``; the CPU lever: a GPU's step is left as
        it is)."""
        self.bilm.char_cnn.requires_grad_(not frozen)
        self.frozen_tokens = FrozenTokenVectors(self.bilm.char_cnn) if frozen and cached else None

    def forward(
        self,
        batch: Batch,
        state: State,
        mask: Tensor | None = None,
        dropout: float = 0.0,
        top_layer: Callable | None = None,
    ) -> tuple[Tensor, Tensor, State]:
        """-> summed negative log-likelihood per direction (2,), target count per direction (2,), final state.

        ``mask`` (2, B, T) marks real positions (evaluation of padded rows); training windows are full.
        ``top_layer``: what computes the top layer, ``self.top_layer`` or a compiled twin (``encoder train
        --compile``); the head always runs here, eagerly.
        """
        top, state = (top_layer or self.top_layer)(batch.char_ids, batch.token_index, state, mask, dropout)
        if mask is None:  # full windows: no data-dependent shapes, no wait for the GPU
            log_probs = self.head(top.reshape(-1, top.shape[-1]), batch.targets.reshape(-1), batch.tail_rows())
            nll = -log_probs.float().view(2, -1).sum(dim=1)
            return nll, torch.full((2,), batch.targets[0].numel(), device=top.device), state
        log_probs = self.head(top[mask], batch.targets[mask])
        direction = torch.arange(2, device=mask.device)[:, None, None].expand_as(mask)[mask]
        nll = torch.zeros(2, device=top.device).index_add(0, direction, -log_probs)
        return nll, mask.sum(dim=(1, 2)), state

    def top_layer(
        self, char_ids: Tensor, token_index: Tensor, state: State, mask: Tensor | None, dropout: float
    ) -> tuple[Tensor, State]:
        """The biLM's top layer (2, B, T, P) of a window (dropped out when training) and the final LSTM state:
        tensors in, tensors out, so that it can be compiled."""
        words = self.frozen_tokens(char_ids) if self.frozen_tokens is not None else self.bilm.char_cnn(char_ids)
        tokens = words[token_index]  # (2, B, T, P)
        if torch.compiler.is_compiling():  # compiled: a new number of types recompiles the char CNN, not the LSTMs
            torch._dynamo.graph_break()
        outputs, state = self.bilm.lstm(tokens, mask, state, dropout=dropout)
        top = outputs[-1]
        return (nn.functional.dropout(top, dropout, training=True) if dropout > 0.0 else top), state


def _pad(rows: list[list[str]], length: int, word: str) -> list[list[str]]:
    """Right-pad rows to ``length`` with ``word`` (masked out later, so any word will do)."""
    return [row + [word] * (length - len(row)) for row in rows]


@torch.inference_mode()
def evaluate(
    lm: LanguageModel,
    vocab: Vocabulary,
    paragraphs: Iterable[list[list[str]]],
    max_tokens: int | None = None,
    batch_tokens: int = 4096,
) -> dict:
    """Forward and backward perplexity over the full vocabulary (OOV targets count as ``<UNK>``), and "mean":
    both directions as exp of their mean loss (the geometric mean of the two, as the reference reports it).

    ``paragraphs``: each one its sentences' tokens (``paragraph_sentences`` of a text line, or a prepared file's
    ``TokenizedText.sentences``). Each paragraph starts from a zero LSTM state that is carried across its
    sentences, as training windows carry it; paragraphs are independent of each other and of batching.
    ``max_tokens`` stops after the first paragraphs holding that many targets per direction (whole paragraphs,
    so the count may exceed it a little).
    """
    framed: list[tuple[list[list[str]], list[list[str]]]] = []  # per paragraph: (inputs, targets) per direction
    n_tokens = n_unknown = 0
    for sentences in paragraphs:
        pairs = [paragraph_pairs(sentences, backward) for backward in (False, True)]
        if not pairs[0][0]:
            continue
        framed.append(([p[0] for p in pairs], [p[1] for p in pairs]))
        n_tokens += len(pairs[0][1])
        n_unknown += sum(token not in vocab.index for token in pairs[0][1])
        if max_tokens is not None and n_tokens >= max_tokens:
            break
    if not framed:
        raise ValueError("the text holds no words to predict, so it has no perplexity; give a non-empty text file")
    was_training = lm.training
    lm.eval()
    device = next(lm.parameters()).device
    nll = torch.zeros(2, dtype=torch.float64)
    count = torch.zeros(2, dtype=torch.long)
    order = sorted(range(len(framed)), key=lambda i: -len(framed[i][0][0]))
    start = 0
    while start < len(order):
        longest = len(framed[order[start]][0][0])
        group = order[start : start + max(1, batch_tokens // longest)]
        start += len(group)
        inputs = [_pad([framed[i][0][d] for i in group], longest, EOS_TOKEN) for d in (0, 1)]
        targets = [_pad([framed[i][1][d] for i in group], longest, BOS_TOKEN) for d in (0, 1)]
        lengths = torch.tensor([len(framed[i][0][0]) for i in group], device=device)
        mask = (torch.arange(longest, device=device)[None, :] < lengths[:, None]).expand(2, -1, -1)
        batch = make_batch(inputs, targets, vocab).to(device)
        batch_nll, batch_count, _ = lm(batch, lm.bilm.lstm.zero_state(len(group), device), mask)
        nll += batch_nll.double().cpu()
        count += batch_count.cpu()
    lm.train(was_training)
    forward, backward = (math.exp(nll[d] / count[d].item()) for d in (0, 1))
    return {
        "forward": forward,
        "backward": backward,
        "mean": math.sqrt(forward * backward),  # exp of the mean loss: both directions predict the same count
        "tokens": int(count[0]),
        "vocab_size": len(vocab),
        "unknown": n_unknown / n_tokens,  # the share of targets that are <UNK>, which a model finds easy to predict
    }


def load_language_model(model_dir: str | Path, bilm: BiLM | None = None) -> tuple[LanguageModel, Vocabulary]:
    """biLM + head + vocabulary of one of our model directories, a run or a checkpoint (all three are needed for
    perplexity, shipping and training on), checked to be of one model (``check_one_model``). ``bilm``: the
    directory's biLM where the caller has loaded it already (it is checked against the head, not read again)."""
    model_dir = Path(model_dir)
    for name in (HEAD_FILE, VOCAB_FILE):
        if not (model_dir / name).is_file():
            raise FileNotFoundError(
                f"{model_dir / name} is missing: this needs one of our models (or a training run) with its LM head"
            )
    lm, vocab = (
        LanguageModel(bilm if bilm is not None else load_model(model_dir), LMHead.load(model_dir / HEAD_FILE)),
        Vocabulary.load(model_dir / VOCAB_FILE),
    )
    check_one_model(model_dir, lm, vocab)
    return lm, vocab


def check_one_model(model_dir: Path, lm: LanguageModel, vocab: Vocabulary) -> None:
    """Refuse a head and a vocabulary that are not of one model with the biLM: a head of other sizes (another
    model's), a head predicting another number of words than the vocabulary lists (cut, or lines repeated), or
    trained with another vocabulary (its recorded hash), a config.json whose vocab_size says otherwise. A model
    of mixed parts would give a perplexity, or train, with nothing to tell it is wrong."""
    head, vocab_file = model_dir / HEAD_FILE, model_dir / VOCAB_FILE
    advice = "they are not of one model: restore the model folder whole"
    if lm.head.input_dim != lm.bilm.config.projection_dim:
        raise WeightsError(
            f"{head} reads {lm.head.input_dim}-dimensional states, the biLM gives {lm.bilm.config.projection_dim}: "
            f"{advice}"
        )
    if lm.head.vocab_size != len(vocab):
        raise WeightsError(f"{head} predicts {lm.head.vocab_size:,} words, {vocab_file} lists {len(vocab):,}: {advice}")
    if lm.head.vocab_hash is not None and lm.head.vocab_hash != vocab.hash():
        raise WeightsError(f"{head} was trained with another vocabulary than {vocab_file}: {advice}")
    said = read_config(model_dir).get("vocab_size")
    if said is not None and said != len(vocab):
        raise WeightsError(
            f"{model_dir / 'config.json'} says vocab_size {said}, {vocab_file} lists {len(vocab):,}: {advice}"
        )


def perplexity(
    model: Elmo | str | Path, lines: Iterable[str], max_tokens: int | None = None, model_dir: str | Path | None = None
) -> dict:
    """Perplexities (see ``evaluate``) of a model directory / ``"default"``, or of a loaded ``Elmo``.

    An ``Elmo`` has no LM head, so its head and vocabulary are read from ``model_dir`` (default: the shipped
    model), whose weights must be the ones the ``Elmo`` holds.
    """
    from .elmo import Elmo
    from .model_files import model_folder, model_hash, resolve_model

    if isinstance(model, Elmo):
        directory = model_folder(model_dir or "default")
        if model_hash(directory) != model.model_hash:
            raise ValueError(f"the Elmo's weights are not those of {directory}; pass model_dir= its directory")
        lm, vocab = load_language_model(directory)
        lm.bilm = model.model
        lm.to(model.device)
    else:
        directory = model_folder(model)
        lm, vocab = load_language_model(directory)
    text = resolve_model(directory).text()
    return evaluate(lm, vocab, (paragraph_sentences(line, text) for line in lines), max_tokens)
