"""Reading a biLM for a word's sense: what the language model expects at the word, beside ELMo's layers at it.

ELMo's vectors at a word are built from the word itself and its context, and the word's own spelling weighs on
every layer: its uses in different senses stay close. The two states that *predict* the word (the forward LM's top
state before it and the backward LM's after it, ``BiLM.context_states``) hold only its context, and the LM head
turns them into the words the model expects there, its substitutes: "bank" beside a river expects side, coast,
slopes; at a central bank, government, authorities. Uses in one sense expect the same kind of words.
``bench/sense_readout.py`` measures this against the ELMo layers on development data (docs/evaluation.md, "Sense
readout") and its rule picked the readout below.

The readout of one use ("context prediction"), with ``ReadoutSettings``:

    p_f, p_b = the forward and backward LM's probabilities of the ``vocabulary`` most frequent words
               (where ``top`` is set, each keeps only its ``top`` largest, the rest zero)
    r = sketch(normalize(p_f ** power) + normalize(p_b ** power))

A small ``power`` lets the long tail of plausible words count, not only the few likeliest (often function words).
The sketch is a count sketch (Charikar et al. 2002): each word adds its value, with a fixed random sign, to one
fixed random coordinate of ``dim``, which keeps inner products in expectation at a fraction of the width. Uses of
one word are compared after each is centred (``centred``) on the word's mean readout in the collection, shrunk
towards the collection's mean while the word has few uses. Published AllenNLP models ship no softmax: their readout
is the context states themselves ("context states").
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np
import torch

from .files import sha256_of, unique_keys
from .lm_data import VOCAB_FILE, Vocabulary
from .lm_head import HEAD_FILE, LMHead, load_language_model
from .model import BiLM
from .numbers import Number

PREDICTION, STATES = "prediction", "states"
KINDS = {PREDICTION: "context prediction", STATES: "context states"}
"""The readouts by key, with the name the app and the docs give them."""
READOUT_FILE = "readout.json"
"""Beside one of our models, where its readout differs from the defaults: the fields of ``ReadoutSettings`` it sets."""
CHUNK = 1024  # positions whose distributions are computed at once (1024 x 10k floats: 40 MB)

READOUT_NUMBERS = {
    "vocabulary": Number(int, 2, 10**7),
    "power": Number(float, above=0.0, at_most=1.0),
    "dim": Number(int, 1, 1 << 16),
    "shrinkage": Number(float, 0.0),
    "seed": Number(int, 0, 2**32 - 1),
    "substitutes": Number(int, 0, 1000),
    "top": Number(int, 0, 10**7),
}


def has_head(folder: str | Path | None) -> bool:
    """Whether the model in ``folder`` is one of ours with its LM head (context prediction needs it)."""
    return folder is not None and (Path(folder) / HEAD_FILE).is_file()


def head_hash(folder: str | Path | None) -> str | None:
    """The content hash of what the readout reads beside the biLM, its LM head and vocabulary (None: the model has
    no head): an index records it, since the biLM's hash does not cover them and they name what the model expects."""
    if not has_head(folder):
        return None
    return sha256_of([Path(folder) / HEAD_FILE, Path(folder) / VOCAB_FILE])[:16]


@dataclass(frozen=True)
class ReadoutSettings:
    """How a use's readout is computed and compared; an index records them (``asdict``)."""

    kind: str = PREDICTION
    vocabulary: int = 10_000  # the LM's most frequent words the substitutes range over (the adaptive softmax's first
    # two clusters): 1.4 AUC points above 2,000, as good as all 100k at a fifth of their cost (bench/sense_readout.py)
    power: float = 0.25  # p ** power before normalising each direction's distribution
    dim: int = 256  # width of the count sketch: as good as 512 within the bench rule's tie, at half the bytes
    shrinkage: float = (
        10.0  # a word with n uses is centred on (n * its mean + shrinkage * the collection's) / (n + shrinkage)
    )
    seed: int = 0  # of the sketch's coordinates and signs
    substitutes: int = 16  # the words weighing most in a use's readout an index keeps (they name senses' clusters)
    top: int = 0  # each direction's most probable words kept before the sketch (0: all ``vocabulary``)

    def width(self, context_dim: int) -> int:
        """Width of the readout of context states of width ``context_dim``."""
        return self.dim if self.kind == PREDICTION else context_dim

    @property
    def kept_substitutes(self) -> int:
        """Substitutes an index keeps per use: none without the LM (context states)."""
        return self.substitutes if self.kind == PREDICTION else 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"readout kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        for name, rule in READOUT_NUMBERS.items():
            rule.check(name, getattr(self, name))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def of_folder(cls, folder: str | Path | None) -> ReadoutSettings:
        """The readout an index of the model in ``folder`` is built with: the defaults, with the model's
        ``readout.json`` over them (what ``bench/sense_readout.py``'s rule picked for it, where that differs from the
        English pick); context states for a model without an LM head (a published one: ``folder`` None)."""
        path = Path(folder) / READOUT_FILE if folder is not None else None
        settings = cls()
        if path is not None and path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=unique_keys)
                if not isinstance(data, dict):
                    raise ValueError("it is not a JSON object")
                unknown = sorted(set(data) - {spec.name for spec in fields(cls)})
                if unknown:
                    keys = ", ".join(spec.name for spec in fields(cls))
                    raise ValueError(f"unknown key {', '.join(map(repr, unknown))}; its keys are {keys}")
                settings = cls(**data)
            except (UnicodeDecodeError, json.JSONDecodeError, TypeError, ValueError) as error:
                raise ValueError(f"{path} does not hold readout settings ({error}): restore the model folder") from None
        return settings if has_head(folder) else replace(settings, kind=STATES)


@dataclass(frozen=True)
class Expectation:
    """What one direction of the LM expects at a position: its most probable words, most probable first."""

    direction: str  # "forward" (given the words before) or "backward" (given the words after)
    words: list[tuple[str, float]]  # (word, probability)


class Readout:
    """The readout of one model: context states (L+2-th row of ``Elmo.embed(..., context=True)``) -> vectors."""

    def __init__(self, settings: ReadoutSettings, head: LMHead | None = None, vocab: Vocabulary | None = None):
        if settings.kind == PREDICTION and (head is None or vocab is None):
            raise ValueError("the context-prediction readout needs the model's LM head and vocabulary")
        self.settings = settings
        self.head = head.eval() if head is not None else None
        self.vocab = vocab
        if head is not None:
            words = min(settings.vocabulary, head.vocab_size)
            generator = np.random.default_rng(settings.seed)
            self._coordinates = torch.from_numpy(generator.integers(0, settings.dim, words))
            self._signs = torch.from_numpy(generator.choice(np.array([-1.0, 1.0], np.float32), words))

    @classmethod
    def of_model(
        cls, folder: str | Path | None, settings: ReadoutSettings | None = None, bilm: BiLM | None = None
    ) -> Readout:
        """The readout of the model in ``folder`` (one of ours: its head and vocabulary are beside it), or of a
        published model (``folder`` None): context prediction where the head is there, else context states.
        ``bilm``: the folder's biLM, where it is loaded already (an ``Elmo``'s ``model``): not read a second time."""
        settings = settings or ReadoutSettings.of_folder(folder)
        if not has_head(folder):
            return cls(replace(settings, kind=STATES))
        lm, vocab = load_language_model(
            folder, bilm
        )  # the head and vocabulary checked to be of one model with the biLM
        return cls(settings, lm.head, vocab)

    def vectors(self, context: np.ndarray) -> np.ndarray:
        """Context states (n, 2P) -> readouts (n, dim) float32 (unnormalised; compare by cosine)."""
        return self.read(context, 0)[0]

    def substitutes(self, context: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Each position's ``k`` words that weigh most in its readout (among the readout's vocabulary): vocabulary ids
        (n, k) int32, and their probability averaged over the two directions (n, k) float16; k = 0 for a model
        without an LM head."""
        return self.read(context, k)[1:]

    @torch.inference_mode()
    def read(self, context: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``vectors`` and ``substitutes`` at once, each direction's distribution raised to the power once
        (``LMHead.powered_probs``)."""
        n = len(context)
        if self.head is None:
            return np.asarray(context, np.float32), np.zeros((n, 0), np.int32), np.zeros((n, 0), np.float16)
        vectors, ids, probs = [torch.zeros(0, self.settings.dim)], [torch.zeros(0, k, dtype=torch.int32)], []
        probs.append(torch.zeros(0, k, dtype=torch.float16))
        power, words = self.settings.power, self.settings.vocabulary
        for start in range(0, n, CHUNK):
            states = torch.as_tensor(np.asarray(context[start : start + CHUNK], dtype=np.float32))
            P = states.shape[-1] // 2
            forward, backward = (self.head.powered_probs(states[:, d * P : (d + 1) * P], words, power) for d in (0, 1))
            if 0 < self.settings.top < forward.shape[1]:
                forward, backward = (_kept_top(p, self.settings.top) for p in (forward, backward))
            norms = forward.norm(dim=1, keepdim=True), backward.norm(dim=1, keepdim=True)
            backward.div_(norms[1])
            both = forward.div_(norms[0]).add_(backward)  # in place: the readout before its sketch
            top = both.topk(k, dim=1, sorted=False).indices  # the words that weigh most in the readout, then in order
            weight = both.gather(1, top)
            top = top.gather(1, weight.argsort(dim=1, descending=True))
            behind = backward.gather(1, top)
            ahead = both.gather(1, top).sub_(behind)
            mean = (ahead.mul_(norms[0]).pow_(1 / power) + behind.mul_(norms[1]).pow_(1 / power)) / 2
            ids.append(top.int())
            probs.append(mean.half())
            sketch = torch.zeros(len(both), self.settings.dim)
            vectors.append(sketch.index_add_(1, self._coordinates, both.mul_(self._signs)))
        return torch.cat(vectors).numpy(), torch.cat(ids).numpy(), torch.cat(probs).numpy()

    @torch.inference_mode()
    def expectations(self, context: np.ndarray, k: int = 10) -> list[Expectation]:
        """What the LM expects at one position (its context states, (2P,)): each direction's ``k`` most probable
        words over the whole vocabulary, with their probabilities."""
        forward, backward = self.distributions(np.asarray(context)[None], None)
        return [
            Expectation(
                name, [(self.vocab.words[i], float(p)) for p, i in zip(*map(torch.Tensor.tolist, probs.topk(k)))]
            )
            for name, probs in (("forward", forward[0]), ("backward", backward[0]))
        ]

    @torch.inference_mode()
    def distributions(self, context: np.ndarray, words: int | None) -> tuple[torch.Tensor, torch.Tensor]:
        """The forward and backward LM's probabilities (n, words) of the ``words`` most frequent words (None: all) from
        context states (n, 2P)."""
        if self.head is None:
            raise ValueError("this model has no LM head (a published model): it predicts no words")
        states = torch.as_tensor(np.asarray(context, dtype=np.float32))
        P = states.shape[-1] // 2
        return self.head.log_probs(states[:, :P], words).exp(), self.head.log_probs(states[:, P:], words).exp()


def _kept_top(powered: torch.Tensor, top: int) -> torch.Tensor:
    """Each row's ``top`` largest values in place, the rest zero."""
    kept = powered.topk(top, dim=1, sorted=False)
    return powered.zero_().scatter_(1, kept.indices, kept.values)


def centred(
    vectors: np.ndarray, word_mean: np.ndarray, uses: int, collection_mean: np.ndarray, shrinkage: float
) -> np.ndarray:
    """Readouts of one word's uses minus the word's mean readout, shrunk towards the collection's mean while the word
    has few ``uses`` (its mean is then a poor guess: two uses centred on their own mean point opposite ways)."""
    mean = (uses * np.asarray(word_mean, np.float64) + shrinkage * np.asarray(collection_mean, np.float64)) / (
        uses + shrinkage
    )
    return (np.asarray(vectors, np.float64) - mean).astype(np.float32)
