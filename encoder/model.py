"""The ELMo biLM: character CNN -> highway -> projection -> forward and backward LSTM stacks.

Follows the reference implementations exactly (see docs in the README): TF gate order i, j, f, o with a
+1 forget bias added at run time, cell and projection clipping, residual connections from the second
layer on. Weight matrices are stored the way the published hdf5 files store them (row vector times
matrix, ``x @ W``), so loading and saving the reference format needs no transposes or re-blocking.

The two directions of a layer are stacked on a leading axis of size 2 (0 = forward, 1 = backward) and
run together, the backward one over time-reversed sequences. The same code serves inference (masked,
variable-length batches) and training (full windows, state carried between windows). It passes 450 lines on
purpose: like nanoGPT's model.py, the whole network is one file a reader checks against the paper top to bottom.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .chars import MAX_CHARS, N_CHARACTERS
from .numbers import Number, check_memory

FORWARD, BACKWARD = 0, 1
SIZE = Number(int, 1, 2**16)
"""A width or count of a biLM (embedding, projection, LSTM, characters)."""
FILTER_COUNT = Number(int, 1, 2**16)
CONFIG_NUMBERS = {
    "char_embed_dim": SIZE,
    "n_highway": Number(int, 0, 64),
    "projection_dim": SIZE,
    "lstm_dim": SIZE,
    "n_layers": Number(int, 1, 64),
    "max_chars": Number(int, 3, 2**12),  # a word's characters and its begin and end marks
    "n_characters": Number(int, 1, 2**16),
}
CLIP = Number(float, above=0)


def _is_filter(pair: object, max_chars: int) -> bool:
    return (
        isinstance(pair, (list, tuple))
        and len(pair) == 2
        and Number(int, 1, max_chars).problem(pair[0]) is None
        and FILTER_COUNT.problem(pair[1]) is None
    )


@dataclass
class BiLMConfig:
    """Architecture of a biLM; ``from_options``/``to_options`` translate the reference options.json."""

    char_embed_dim: int = 16
    filters: list[list[int]] = field(
        default_factory=lambda: [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]
    )
    n_highway: int = 1
    activation: str = "relu"  # of the char CNN; highway layers are always relu
    projection_dim: int = 128
    lstm_dim: int = 1024
    n_layers: int = 2
    cell_clip: float | None = 3.0
    proj_clip: float | None = 3.0
    use_skip_connections: bool = True
    max_chars: int = MAX_CHARS
    n_characters: int = N_CHARACTERS

    def __post_init__(self) -> None:
        """Every size a whole number in range, the filters a list of [width, count], clips positive or None, and the
        whole within this machine's memory: a config.json, options.json or --config of wrong values is a
        ``ValueError`` naming the field (its reader names the file), never a tensor error or an allocation that
        fails deep in torch."""
        for name, rule in CONFIG_NUMBERS.items():
            rule.check(name, getattr(self, name))
        filters = self.filters
        if (
            not isinstance(filters, (list, tuple))
            or not filters
            or not all(_is_filter(f, self.max_chars) for f in filters)
        ):
            raise ValueError(
                f"filters must be a list of [width, count] pairs, widths from 1 to max_chars ({self.max_chars}) and "
                f"counts from 1 to {FILTER_COUNT.at_most:,}, not {filters!r}"[:300]
            )
        if self.activation not in ("relu", "tanh"):
            raise ValueError(f"activation must be relu or tanh, not {self.activation!r}")
        for name in ("cell_clip", "proj_clip"):
            if getattr(self, name) is not None:
                CLIP.check(name, getattr(self, name))
        if not isinstance(self.use_skip_connections, bool):
            raise ValueError(f"use_skip_connections must be true or false, not {self.use_skip_connections!r}")
        check_memory(4 * self.n_parameters, f"a biLM of {self.n_parameters:,} parameters", "check its sizes")

    @property
    def n_parameters(self) -> int:
        """The biLM's weights: char embeddings, convolutions, highway, projection, and both directions' LSTMs."""
        E, F_, P, D = self.char_embed_dim, self.n_filters, self.projection_dim, self.lstm_dim
        cnn = self.n_characters * E + sum(width * E * count + count for width, count in self.filters)
        cnn += self.n_highway * (2 * F_ * F_ + 2 * F_) + F_ * P + P
        return cnn + 2 * self.n_layers * (2 * P * 4 * D + 4 * D + D * P)

    @property
    def n_filters(self) -> int:
        return sum(n for _, n in self.filters)

    @property
    def output_dim(self) -> int:
        """Width of every ELMo layer: forward and backward concatenated."""
        return 2 * self.projection_dim

    @classmethod
    def from_options(cls, options: dict) -> BiLMConfig:
        """The config of a published options.json; a ``ValueError`` says what it lacks or holds wrong."""
        try:
            return cls._from_options(options)
        except KeyError as error:
            raise ValueError(
                f"it has no {error.args[0]!r} entry (the published options.json has char_cnn and lstm)"
            ) from None
        except (TypeError, AttributeError) as error:
            raise ValueError(f"it is not in the published options' layout ({error})") from None

    @classmethod
    def _from_options(cls, options: dict) -> BiLMConfig:
        cnn, lstm = options["char_cnn"], options["lstm"]
        if cnn.get("activation", "relu") not in ("relu", "tanh"):
            raise ValueError(f"unsupported char_cnn activation {cnn['activation']!r}")
        return cls(
            char_embed_dim=cnn["embedding"]["dim"],
            filters=[list(f) for f in cnn["filters"]],
            n_highway=cnn["n_highway"],
            activation=cnn.get("activation", "relu"),
            projection_dim=lstm["projection_dim"],
            lstm_dim=lstm["dim"],
            n_layers=lstm["n_layers"],
            cell_clip=lstm.get("cell_clip"),
            proj_clip=lstm.get("proj_clip"),
            use_skip_connections=lstm.get("use_skip_connections", False),
            max_chars=cnn.get("max_characters_per_token", MAX_CHARS),
        )

    def to_options(self) -> dict:
        return {
            "lstm": {
                "cell_clip": self.cell_clip,
                "use_skip_connections": self.use_skip_connections,
                "n_layers": self.n_layers,
                "proj_clip": self.proj_clip,
                "projection_dim": self.projection_dim,
                "dim": self.lstm_dim,
            },
            "char_cnn": {
                "embedding": {"dim": self.char_embed_dim},
                "filters": self.filters,
                "n_highway": self.n_highway,
                "n_characters": self.n_characters,
                "max_characters_per_token": self.max_chars,
                "activation": self.activation,
            },
        }

    @classmethod
    def from_json(cls, path: str | Path) -> BiLMConfig:
        """A shape from a JSON file: an object of this class's fields, one of our model folders' ``config.json`` (its
        fields; the rest is the model's record: name, language, training) or a published ``options.json``. Any
        other key is refused: a misspelt field would train the default shape without a word."""
        try:
            data = json.loads(Path(path).read_text())
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON ({error}); give a JSON object of BiLMConfig fields") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path} is not a JSON object of BiLMConfig fields")
        if "char_cnn" in data and "lstm" in data:  # the published layout (AllenNLP / bilm-tf)
            try:
                return cls.from_options(data)
            except ValueError as error:
                raise ValueError(f"{path}: {error}") from None
        fields = cls.__dataclass_fields__
        unknown = [] if "format_version" in data else sorted(set(data) - set(fields))  # ours: a model's record
        if unknown:
            raise ValueError(
                f"{path}: {', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} not a field of the "
                f"model's shape ({', '.join(fields)}); the language and vocabulary are train's own options"
            )
        try:
            return cls(**{k: v for k, v in data.items() if k in fields})
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}: {error}") from None

    def to_dict(self) -> dict:
        return asdict(self)


class CharCNN(nn.Module):
    """Context-free token encoder: char embeddings -> max-pooled convolutions -> highway -> projection."""

    def __init__(self, config: BiLMConfig):
        super().__init__()
        self.config = config
        E, F_ = config.char_embed_dim, config.n_filters
        # row 0 is the "no token" id and stays zero, as in the reference (a zero row prepended to char_embed)
        self.char_embed = nn.Parameter(torch.zeros(config.n_characters, E))
        self.convs = nn.ModuleList(nn.Conv1d(E, n, w) for w, n in config.filters)
        # highway k: gate = sigmoid(x W_carry + b_carry) multiplies relu(x W_transform + b_transform)
        self.w_carry = nn.ParameterList(nn.Parameter(torch.zeros(F_, F_)) for _ in range(config.n_highway))
        self.b_carry = nn.ParameterList(nn.Parameter(torch.zeros(F_)) for _ in range(config.n_highway))
        self.w_transform = nn.ParameterList(nn.Parameter(torch.zeros(F_, F_)) for _ in range(config.n_highway))
        self.b_transform = nn.ParameterList(nn.Parameter(torch.zeros(F_)) for _ in range(config.n_highway))
        self.w_proj = nn.Parameter(torch.zeros(F_, config.projection_dim))
        self.b_proj = nn.Parameter(torch.zeros(config.projection_dim))
        self._activation = torch.relu if config.activation == "relu" else torch.tanh

    def forward(self, char_ids: Tensor) -> Tensor:
        """(..., 50) int ids -> (..., P) token vectors."""
        lead = char_ids.shape[:-1]
        ids = char_ids.reshape(-1, char_ids.shape[-1])
        if self.training or torch.is_grad_enabled() or not len(ids):
            pooled = self._max_over_all_windows(ids)
        else:
            pooled = self._max_over_word_windows(ids)
        h = self._activation(pooled)
        for k in range(self.config.n_highway):
            gate = torch.sigmoid(h @ self.w_carry[k] + self.b_carry[k])
            transformed = torch.relu(h @ self.w_transform[k] + self.b_transform[k])
            h = gate * transformed + (1 - gate) * h
        h = h @ self.w_proj + self.b_proj
        return h.reshape(*lead, -1)

    def _max_over_all_windows(self, ids: Tensor) -> Tensor:
        """(N, 50) ids -> (N, filters): each filter's maximum over every window of the 50 characters (the reference)."""
        x = F.embedding(ids, self.char_embed).transpose(1, 2)  # (N, E, 50) for Conv1d
        return torch.cat([conv(x).amax(dim=-1) for conv in self.convs], dim=-1)

    def _max_over_word_windows(self, ids: Tensor, rows_per_chunk: int = 256) -> Tensor:
        """The maxima of ``_max_over_all_windows`` without convolving the padding: inference's path (eval mode, no
        gradients). Training keeps the reference's, which a frozen char CNN's cache reproduces bit for bit.

        A token's ids end in a run of one id (the pad character; id 0 in a "no token" row), and every window inside
        that run reads the same ids, so it has one value per filter, computed once. The tokens of each length are
        then convolved together over their own characters only: 19 % of the windows (weighted by filters) for the
        distinct words of WikiText-2's first 24,000 validation tokens, in the published small shape. Agrees with the reference to float rounding (its sums are taken in another order)."""
        n_chars = ids.shape[1]
        run_id = ids[:, -1]
        positions = torch.arange(1, n_chars + 1, device=ids.device)
        lengths = (positions * (ids != run_id[:, None])).amax(dim=-1)  # the ids before the run
        run_ids, which_run = run_id.unique(return_inverse=True)
        widest = max(conv.kernel_size[0] for conv in self.convs)
        run_values = self._window_maxima(F.embedding(run_ids, self.char_embed)[:, None].expand(-1, widest, -1), 1)
        widths = torch.cat([torch.full((conv.out_channels,), conv.kernel_size[0]) for conv in self.convs])
        widths = widths.to(ids.device)
        order = torch.argsort(lengths, stable=True)
        each_length, counts = torch.unique_consecutive(lengths[order], return_counts=True)
        pooled = None
        for length, same_length in zip(each_length.tolist(), order.split(counts.tolist())):
            starts = max(length, 1)  # the windows that begin before the run (one at least)
            has_run_window = (n_chars - length >= widths)[None, :]  # (1, filters)
            for rows in same_length.split(rows_per_chunk):
                chunk = self._window_maxima(F.embedding(ids[rows], self.char_embed), starts)
                chunk = torch.where(has_run_window, torch.maximum(chunk, run_values[which_run[rows]]), chunk)
                if pooled is None:
                    pooled = chunk.new_empty(len(ids), chunk.shape[1])
                pooled[rows] = chunk
        return pooled

    def _window_maxima(self, x: Tensor, starts: int) -> Tensor:
        """(N, chars, E) embedded characters -> (N, filters): each filter's maximum over the windows that begin at the
        first ``starts`` characters, one matrix product per filter width (faster here than Conv1d on short rows)."""
        maxima = []
        for conv in self.convs:
            width = conv.kernel_size[0]
            windows = x[:, : starts + width - 1].unfold(1, width, 1)  # (N, windows, E, width)
            values = windows.reshape(*windows.shape[:2], -1) @ conv.weight.flatten(1).T  # (N, windows, filters)
            maxima.append(values.amax(dim=1) + conv.bias)  # the bias after the maximum: the same number
        return torch.cat(maxima, dim=-1)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Random initialisation for training from scratch (loading weights overwrites all of this)."""
        with torch.no_grad():
            self.char_embed.uniform_(-1.0, 1.0, generator=generator)
            self.char_embed[0].zero_()
            for conv in self.convs:
                fan_in = conv.in_channels * conv.kernel_size[0]
                conv.weight.uniform_(-(fan_in**-0.5), fan_in**-0.5, generator=generator)
                conv.bias.zero_()
            F_ = self.config.n_filters
            for k in range(self.config.n_highway):
                self.w_carry[k].normal_(0.0, (1.0 / F_) ** 0.5, generator=generator)
                self.w_transform[k].normal_(0.0, (1.0 / F_) ** 0.5, generator=generator)
                self.b_carry[k].fill_(-2.0)  # start close to the identity, as the reference does
                self.b_transform[k].zero_()
            self.w_proj.normal_(0.0, (1.0 / F_) ** 0.5, generator=generator)
            self.b_proj.zero_()


class LstmLayer(nn.Module):
    """One layer of both directions: LSTM cells with projection, cell clip and projection clip."""

    def __init__(self, input_dim: int, config: BiLMConfig, reads_tokens: bool = False):
        super().__init__()
        D, P = config.lstm_dim, config.projection_dim
        self.config = config
        self.reads_tokens = reads_tokens  # the first layer: its input rows are token vectors, which repeat
        # direction axis first; gate blocks of width D in TF order i, j, f, o
        self.w_input = nn.Parameter(torch.zeros(2, input_dim, 4 * D))
        self.w_state = nn.Parameter(torch.zeros(2, P, 4 * D))
        self.bias = nn.Parameter(torch.zeros(2, 4 * D))
        self.w_proj = nn.Parameter(torch.zeros(2, D, P))

    @property
    def fused(self) -> bool:
        """Without clipping the layer is exactly ``torch.nn.LSTM(proj_size=P)``, which runs cuDNN's fused kernel."""
        return self.config.cell_clip is None and self.config.proj_clip is None

    def _bias_with_forget(self, dtype: torch.dtype) -> Tensor:
        D = self.config.lstm_dim
        forget_bias = torch.zeros(4 * D, dtype=dtype, device=self.bias.device)
        forget_bias[2 * D : 3 * D] = 1.0  # TF's LSTMCell adds 1.0 to the forget gate at run time
        return self.bias + forget_bias

    def forward(
        self, x: Tensor, mask: Tensor | None, state: tuple[Tensor, Tensor]
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """x (2, B, T, in), mask (2, B, T) bool or None (all valid), state (h (2, B, P), c (2, B, D))
        -> outputs (2, B, T, P), state.

        Each row's mask must be a prefix (valid steps first), the same in both directions. Steps past a row's length output zeros and
        do not count: the returned state is the one after the row's last valid step.
        """
        if mask is not None and (mask.shape != x.shape[:3] or mask.dtype != torch.bool):
            raise ValueError(f"mask: bool {tuple(x.shape[:3])} expected, not {mask.dtype} {tuple(mask.shape)}")
        if self.fused:
            return self._forward_fused(x, mask, state)
        if torch.is_grad_enabled() or torch.is_autocast_enabled(x.device.type):
            return self._forward_steps(x, mask, state)
        return self._forward_steps_in_place(x, mask, state)

    def torch_lstm_weights(self, direction: int) -> list[Tensor]:
        """This direction's weights as ``torch.nn.LSTM(proj_size=P)`` holds them: w_ih, w_hh, b_ih, b_hh, w_hr.

        TF's gate blocks i, j, f, o become torch's i, f, g, o; the +1 forget bias is folded into b_ih.
        Built from our parameters, so gradients reach them and the files keep one layout (``kernel_weights``
        keeps them, laid out, while nothing needs gradients).
        """
        D = self.config.lstm_dim

        def reorder(w: Tensor) -> Tensor:  # last axis: blocks i, j, f, o -> i, f, j, o
            i, j, f, o = w.split(D, dim=-1)
            return torch.cat([i, f, j, o], dim=-1)

        bias = reorder(self._bias_with_forget(self.bias.dtype)[direction])
        return [
            reorder(self.w_input[direction]).t(),
            reorder(self.w_state[direction]).t(),
            bias,
            torch.zeros_like(bias),
            self.w_proj[direction].t(),
        ]

    def kernel_weights(self, direction: int, dtype: torch.dtype) -> list[Tensor]:
        """``torch_lstm_weights`` in ``dtype``, dense, as the kernel reads them. With gradients off (inference) they
        are laid out once and kept until a parameter changes (its version, storage or device): re-laying them out
        on every call was a third of a short query's time. With gradients on they are built on every call."""
        if torch.is_grad_enabled():
            return [w.to(dtype).contiguous() for w in self.torch_lstm_weights(direction)]
        key = (direction, dtype, *((id(p), p._version, p.data_ptr(), p.device) for p in self.parameters()))
        cache = self.__dict__.setdefault("_kernel_weights", {})  # not a buffer: never saved, never moved
        if key not in cache:
            if len(cache) >= 4:  # both directions in two dtypes at most: what is more is stale
                cache.clear()
            cache[key] = [w.to(dtype).contiguous() for w in self.torch_lstm_weights(direction)]
        return cache[key]

    def _forward_fused(
        self, x: Tensor, mask: Tensor | None, state: tuple[Tensor, Tensor]
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """Both directions through torch's LSTM kernel (cuDNN on a GPU); under autocast it runs in the autocast dtype."""
        h0, c0 = state
        dtype = x.dtype
        if x.is_cuda and torch.is_autocast_enabled("cuda"):
            dtype = torch.get_autocast_dtype("cuda")
        lengths = None if mask is None else mask[0].sum(dim=-1)  # both directions share row lengths
        packed_lengths = None if lengths is None else lengths.cpu().clamp(min=1)  # one wait for the GPU, not two
        outputs, final_h, final_c = [], [], []
        for d in range(2):
            weights = self.kernel_weights(d, dtype)
            hx = (h0[d : d + 1].to(dtype), c0[d : d + 1].to(dtype))
            if lengths is None:
                out, h, c = lstm_kernel(x[d].to(dtype), None, hx, weights, self.training)
            else:
                packed = nn.utils.rnn.pack_padded_sequence(
                    x[d].to(dtype), packed_lengths, batch_first=True, enforce_sorted=False
                )
                out, h, c = lstm_kernel(
                    packed.data, packed.batch_sizes, _permute(hx, packed.sorted_indices), weights, self.training
                )
                h, c = _permute((h, c), packed.unsorted_indices)
                packed_out = nn.utils.rnn.PackedSequence(
                    out, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices
                )
                out = nn.utils.rnn.pad_packed_sequence(packed_out, batch_first=True, total_length=x.shape[2])[0]
                empty = (lengths == 0)[:, None]  # an empty row keeps its initial state
                h, c = torch.where(empty, hx[0][0], h[0])[None], torch.where(empty, hx[1][0], c[0])[None]
            outputs.append(out)
            final_h.append(h[0])
            final_c.append(c[0])
        output = torch.stack(outputs)
        if mask is not None:
            output = output * mask[..., None]
        return output, (torch.stack(final_h), torch.stack(final_c))

    def _forward_steps(
        self, x: Tensor, mask: Tensor | None, state: tuple[Tensor, Tensor]
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """The reference recurrence, step by step (the only way to clip). Steps past a row's length are still
        computed (cheaper than masking every step) and then discarded. Without a mask (full windows) nothing
        waits for the GPU: the final state is the last step's."""
        D = self.config.lstm_dim
        bias = self._bias_with_forget(x.dtype)
        _, B, T, _ = x.shape
        # the input half of every step at once: one large matrix product instead of T small ones
        x_part = torch.baddbmm(bias[:, None, :], x.reshape(2, B * T, -1), self.w_input).view(2, B, T, 4 * D)
        x_steps = x_part.unbind(2)  # views; unlike x_part[:, :, t], their backward does not zero-fill x_part per step
        last_step = None if mask is None else mask.sum(dim=-1) - 1  # (2, B); -1: an empty row keeps its state
        ends = set() if last_step is None else set(last_step.flatten().tolist())  # the one wait for the GPU
        h, c = state
        final_h, final_c = h, c
        cell_clip, proj_clip = self.config.cell_clip, self.config.proj_clip
        outputs = []
        for t in range(T):
            z = torch.baddbmm(x_steps[t], h, self.w_state)
            gates = torch.sigmoid(z)  # i, f and o blocks are used; the j block takes tanh instead
            c = torch.addcmul(gates[..., 2 * D : 3 * D] * c, gates[..., :D], torch.tanh(z[..., D : 2 * D]))
            if cell_clip is not None:
                c = c.clamp(-cell_clip, cell_clip)
            h = torch.bmm(gates[..., 3 * D :] * torch.tanh(c), self.w_proj)
            if proj_clip is not None:
                h = h.clamp(-proj_clip, proj_clip)
            outputs.append(h)
            if last_step is None:
                final_h, final_c = h, c
            elif t in ends:  # some rows end here: remember their state
                ending = (last_step == t)[..., None]
                final_h, final_c = torch.where(ending, h, final_h), torch.where(ending, c, final_c)
        output = torch.stack(outputs, dim=2)
        return (output if mask is None else output * mask[..., None]), (final_h, final_c)

    def _forward_steps_in_place(
        self, x: Tensor, mask: Tensor | None, state: tuple[Tensor, Tensor]
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """``_forward_steps`` for inference (no gradients, no autocast): the same recurrence, with each step done in
        place in buffers made once, so that a step allocates nothing, and tanh taken as 2 sigmoid(2x) - 1 (torch's
        CPU tanh is several times slower than its sigmoid). The rows run longest first, and a step computes only the
        rows still running (padding was 5 % of the steps of WikiText-2 in length-sorted batches of 32, more where
        lengths mix); a row that has ended keeps its state, which is then its final state. The input half of the
        gates comes from ``_input_halves``; from a zero state (stateless) the first step has no recurrent product.
        It agrees with ``_forward_steps`` to float32 rounding (tests/encoder); what it saves: docs/benchmarks.md."""
        D, P = self.config.lstm_dim, self.config.projection_dim
        _, B, T, _ = x.shape
        lengths = [T] * B if mask is None else mask[0].sum(dim=-1).tolist()  # both directions share row lengths
        order = sorted(range(B), key=lambda b: -lengths[b])
        reordered = order != list(range(B))
        h, c = (s.clone() for s in state)  # updated in place, each row until it ends: the caller's stay as they were
        zero_start = h.device.type == "cpu" and not h.any()  # stateless: h = 0 (asked on the CPU only: no GPU wait)
        if reordered:
            rows = torch.tensor(order, device=x.device)
            x, h, c = x.index_select(1, rows), h.index_select(1, rows), c.index_select(1, rows)
        longest = lengths[order[0]] if B else 0
        running = [sum(length > t for length in lengths) for t in range(longest)]  # a prefix of the sorted rows
        cell_clip, proj_clip = self.config.cell_clip, self.config.proj_clip
        outputs = torch.zeros(T, 2, B, P, dtype=x.dtype, device=x.device)  # a row's steps past its end stay zero
        cell_output = torch.empty(2, B, D, dtype=x.dtype, device=x.device)
        for t, z in enumerate(self._input_halves(x[:, :, :longest])):
            n = running[t]
            z, h_run, c_run, o_tanh_c = z[:, :n], h[:, :n], c[:, :n], cell_output[:, :n]
            if t > 0 or not zero_start:  # from h = 0 the product is 0 (exactly): z already holds the gates
                z.baddbmm_(h_run, self.w_state)  # z: this step's (2, B, 4D) gates, a buffer the step may overwrite
            i, j, f, o = z.split(D, dim=-1)  # TF's gate order
            j.mul_(2)
            torch.sigmoid_(z)  # i, f, o, and sigmoid(2j): all four blocks in one call
            j.mul_(2).sub_(1)  # tanh(j)
            c_run.mul_(f).addcmul_(i, j)
            if cell_clip is not None:
                c_run.clamp_(-cell_clip, cell_clip)
            torch.sigmoid_(torch.mul(c_run, 2, out=o_tanh_c)).mul_(2).sub_(1).mul_(o)  # o tanh(c)
            torch.bmm(o_tanh_c, self.w_proj, out=h_run)
            if proj_clip is not None:
                h_run.clamp_(-proj_clip, proj_clip)
            outputs[t, :, :n] = h_run
        output = outputs.permute(1, 2, 0, 3)  # (2, B, T, P)
        if reordered:
            back = rows.argsort()
            return output.index_select(1, back), (h.index_select(1, back), c.index_select(1, back))
        return output.contiguous(), (h, c)

    def _input_halves(self, x: Tensor, rows_per_product: int = 512) -> Iterator[Tensor]:
        """x (2, B, T, in) -> for each step t in turn, x[:, :, t] W_input + bias as a (2, B, 4D) buffer to overwrite.

        The products are taken for a few steps at a time (about ``rows_per_product`` rows) into one buffer made
        once: large enough for a fast matrix product, small enough to stay in the cache (one product for all the
        steps wrote a fresh buffer of 28 MB per batch: 11 % of the layer's time went to page faults and copies).
        The first layer reads token vectors, which repeat (a batch of 32 WikiText-2 sentences holds 43 % distinct
        ones): on the CPU its products are taken once per distinct vector and each step gathers its rows."""
        D = self.config.lstm_dim
        _, B, T, n_in = x.shape
        bias = self._bias_with_forget(x.dtype)[:, None, :]
        if self.reads_tokens and x.device.type == "cpu":
            distinct, index = _distinct_rows(x.reshape(-1, n_in))
            table = torch.baddbmm(bias, distinct.expand(2, -1, -1), self.w_input).view(-1, 4 * D)
            index = index.view(2, B, T) + torch.arange(2, device=x.device)[:, None, None] * len(distinct)
            index_by_step = index.permute(2, 0, 1).reshape(T, 2 * B)  # forward rows, then backward rows
            z = torch.empty(2, B, 4 * D, dtype=x.dtype, device=x.device)
            for t in range(T):
                yield torch.index_select(table, 0, index_by_step[t], out=z.view(2 * B, 4 * D)).view(2, B, 4 * D)
            return
        steps_per_product = max(1, rows_per_product // max(B, 1))
        x_by_step = x.transpose(1, 2).reshape(2, T * B, n_in)
        buffer = torch.empty(2, min(T, steps_per_product) * B, 4 * D, dtype=x.dtype, device=x.device)
        for first in range(0, T, steps_per_product):
            n = min(steps_per_product, T - first)
            block = buffer[:, : n * B]
            torch.baddbmm(bias, x_by_step[:, first * B : (first + n) * B], self.w_input, out=block)
            for k in range(n):
                yield block[:, k * B : (k + 1) * B]

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        with torch.no_grad():
            for w in (self.w_input, self.w_state, self.w_proj):
                bound = (6.0 / (w.shape[1] + w.shape[2])) ** 0.5  # Glorot uniform, TF's default
                w.uniform_(-bound, bound, generator=generator)
            self.bias.zero_()


def _distinct_rows(rows: Tensor) -> tuple[Tensor, Tensor]:
    """(N, d) CPU rows -> the distinct rows (U, d) and each row's index among them. Rows are the same when their bytes
    are: numpy compares each as one opaque record, 4x faster here than ``torch.unique(dim=0)``'s sort."""
    raw = rows.contiguous().view(torch.uint8).numpy()  # bytes: numpy has no bfloat16
    distinct, index = np.unique(raw.view(f"V{raw.shape[1]}").ravel(), return_inverse=True)
    distinct_rows = torch.from_numpy(distinct.view(np.uint8).reshape(-1, raw.shape[1])).view(rows.dtype)
    return distinct_rows, torch.from_numpy(index)


def lstm_kernel(
    x: Tensor, batch_sizes: Tensor | None, hx: tuple[Tensor, Tensor], weights: list[Tensor], training: bool
) -> tuple[Tensor, Tensor, Tensor]:
    """torch's fused LSTM (cuDNN on a GPU) over one direction: ``x`` (B, T, in) batch first, or the data of a
    ``PackedSequence`` with its ``batch_sizes``; ``weights`` as ``LstmLayer.torch_lstm_weights`` lays them out.

    ``torch._VF.lstm`` is torch's private entry point (what ``torch.nn.LSTM.forward`` calls); this wrapper is the one
    place that calls it, with the arguments of torch 2.13 (the version pyproject.toml pins). Tested on 2.13.0+cpu, the
    suite's torch; its cuDNN path was last measured on 2.11.0+cu130 (docs/benchmarks.md, GPU figures). Arguments:
    has biases, one layer, no dropout, not bidirectional, then batch first for a padded input.

    The weights are laid out from ours (so the files keep one layout): cuDNN then copies them into its own buffer,
    and oneDNN (CPU) falls back to torch's kernel for projections. Both say so in a warning, and neither changes a
    result (the fused path is tested against the step-by-step one): those two warnings are silenced around this
    call only (``KERNEL_WARNINGS``); the process's warning filters are left as they were.
    """
    with warnings.catch_warnings():
        for message in KERNEL_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        if batch_sizes is None:
            return torch._VF.lstm(x, hx, weights, True, 1, 0.0, training, False, True)
        return torch._VF.lstm(x, batch_sizes, hx, weights, True, 1, 0.0, training, False)


KERNEL_WARNINGS = (
    "RNN module weights are not part of single contiguous chunk",
    "LSTM with projections is not supported with oneDNN",
)
"""What torch's fused LSTM says about the weights ``lstm_kernel`` hands it; nothing a user can or need act on."""


def _permute(hx: tuple[Tensor, Tensor], order: Tensor | None) -> tuple[Tensor, Tensor]:
    """Rows of an LSTM state (1, B, .) in ``order`` (what ``pack_padded_sequence`` sorted them into)."""
    return hx if order is None else (hx[0].index_select(1, order), hx[1].index_select(1, order))


State = list[tuple[Tensor, Tensor]]  # per layer: h (2, B, P), c (2, B, D)


class LstmStack(nn.Module):
    """L layers of both directions; layer l >= 1 adds its input to its output when skip connections are on."""

    def __init__(self, config: BiLMConfig):
        super().__init__()
        self.config = config
        P = config.projection_dim
        self.layers = nn.ModuleList(LstmLayer(P, config, reads_tokens=l == 0) for l in range(config.n_layers))

    def zero_state(self, batch_size: int, device: torch.device | str = "cpu", dtype=torch.float32) -> State:
        P, D = self.config.projection_dim, self.config.lstm_dim
        return [
            (
                torch.zeros(2, batch_size, P, device=device, dtype=dtype),
                torch.zeros(2, batch_size, D, device=device, dtype=dtype),
            )
            for _ in range(self.config.n_layers)
        ]

    def forward(self, x: Tensor, mask: Tensor | None, state: State, dropout: float = 0.0) -> tuple[list[Tensor], State]:
        """x (2, B, T, P): each direction's input in its own time order -> per-layer outputs, final state.
        ``mask`` (2, B, T) marks valid steps (None: all are).

        ``dropout`` (training only) drops each layer's input; the residual adds the dropped input, as in bilm-tf.
        """
        outputs, new_state = [], []
        for l, layer in enumerate(self.layers):
            if dropout > 0.0:
                x = F.dropout(x, dropout, training=True)
            h, layer_state = layer(x, mask, state[l])
            if l > 0 and self.config.use_skip_connections:
                h = h + x
            outputs.append(h)
            new_state.append(layer_state)
            x = h
        return outputs, new_state


def reverse_padded(x: Tensor, lengths: Tensor) -> Tensor:
    """Reverse each row's first ``lengths[b]`` steps along dim 1 (B, T, ...); padding stays in place."""
    B, T = x.shape[:2]
    steps = torch.arange(T, device=x.device).expand(B, T)
    index = torch.where(steps < lengths[:, None], lengths[:, None] - 1 - steps, steps)
    index = index.reshape(B, T, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, index)


class BiLM(nn.Module):
    """The full biLM. ``forward`` returns the L+1 ELMo layers for sentences framed with BOS/EOS."""

    def __init__(self, config: BiLMConfig):
        super().__init__()
        self.config = config
        self.char_cnn = CharCNN(config)
        self.lstm = LstmStack(config)

    def reset_parameters(self, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.char_cnn.reset_parameters(generator)
        for layer in self.lstm.layers:
            layer.reset_parameters(generator)

    def contextualize(
        self,
        tokens: Tensor,
        mask: Tensor,
        state: State | None = None,
        final_state: bool = True,
        far_ends: bool = True,
    ) -> tuple[list[Tensor], State | None]:
        """Token vectors (B, T, P) with mask (B, T) -> L+1 layers (B, T, 2P) and the final LSTM state.

        Rows must be right-padded. The backward stack runs each row from its last valid position down to 0.
        ``final_state=False`` (stateless embedding) returns no state and runs a fused LSTM over whole padded rows:
        both directions read their valid steps first, so those outputs are the same, and the padding's are zeroed;
        the fused kernel then needs no packing and the GPU no wait for the rows' lengths. A clipped LSTM on the CPU
        is given the rows' lengths all the same: step by step, it skips the padding's steps.

        ``far_ends=False`` (with ``final_state=False``): the caller reads neither the forward half of a row's last
        position nor the backward half of its first, which only each direction's last step writes (a sentence's EOS
        and BOS: no word's vector or context states hold them). The CPU's step path then stops each direction one
        step early (a sentence of 23 words: 1 step of 25) and leaves those halves zero; every other output is the
        same to float rounding (the last steps then take fewer rows, and a product's last bit can depend on how many).
        """
        B = tokens.shape[0]
        lengths = mask.sum(dim=1)
        if state is None:
            state = self.lstm.zero_state(B, tokens.device, tokens.dtype)
        x = torch.stack([tokens, reverse_padded(tokens, lengths)])
        both = torch.stack([mask, mask])
        whole_rows = not final_state and (self.lstm.layers[0].fused or tokens.device.type != "cpu")
        steps = both
        if not far_ends and not final_state:
            steps = both & (torch.arange(mask.shape[1], device=mask.device) < (lengths - 1)[:, None])
        layer_outputs, state = self.lstm(x, None if whole_rows else steps, state)
        token_layer = tokens * mask[..., None]
        layers = [torch.cat([token_layer, token_layer], dim=-1)]
        for out in layer_outputs:
            out = out * both[..., None] if whole_rows else out
            layers.append(torch.cat([out[FORWARD], reverse_padded(out[BACKWARD], lengths)], dim=-1))
        return layers, state if final_state else None

    def context_states(self, top: Tensor) -> Tensor:
        """The top layer (B, T, 2P) -> (B, T, 2P): at step t the forward LM's top state at t-1 and the backward LM's
        at t+1, the two states from which the LM head predicts the token at t (each direction has read only the
        context on its side). Zero where t-1 or t+1 lies outside the row."""
        P = self.config.projection_dim
        forward = F.pad(top[:, :-1, :P], (0, 0, 1, 0))
        backward = F.pad(top[:, 1:, P:], (0, 0, 0, 1))
        return torch.cat([forward, backward], dim=-1)

    def forward(self, char_ids: Tensor, state: State | None = None) -> tuple[list[Tensor], Tensor, State]:
        """Char ids (B, T, 50) already framed with BOS/EOS -> L+1 layers (B, T, 2P), mask (B, T), state."""
        mask = (char_ids > 0).any(dim=-1)
        tokens = self.char_cnn(char_ids)
        layers, state = self.contextualize(tokens, mask, state)
        return layers, mask, state
