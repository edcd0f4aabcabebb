"""Weight formats: the published AllenNLP / bilm-tf ``options.json`` + hdf5, and our own model directory.

Our format is a directory with ``config.json`` (the architecture), ``model.safetensors`` (the biLM; shards
named by ``model.safetensors.index.json`` when it would exceed 16 MB) and,
for models we trained, ``vocab.txt`` and ``head.safetensors`` (the LM softmax, needed only to fine-tune
or measure perplexity). Nothing here ever unpickles a file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from .files import atomic_path
from .model import BiLM, BiLMConfig

CONFIG_FILE, WEIGHTS_FILE, WEIGHTS_INDEX = "config.json", "model.safetensors", "model.safetensors.index.json"
STORAGES = ("fp32", "fp16", "int8")
"""How weights are stored on disk; the loader always restores float32. int8: every matrix as int8 with one
float32 scale per row (symmetric, the row's largest magnitude maps to 127), vectors in float16."""
INT8_SCALE = ".int8_scale"  # the tensor beside an int8 matrix that holds its row scales
FORMAT_VERSION = 1
MAX_FILE_BYTES = 16_000_000
"""Weights larger than this are split into shards with an index, as Hugging Face splits safetensors: model
folders travel to GPU machines and live in git, where files of at most 16 MB move best."""


class WeightsError(ValueError):
    """A weight file that does not fit the model: the message names the tensors concerned."""


def check_finite_weights(tensors: dict[str, torch.Tensor | np.ndarray], where: str | Path, writing: bool) -> None:
    """No model is written or read with NaN or infinity in it: ``WeightsError`` names the file and the tensors."""
    bad = [
        name
        for name, t in tensors.items()
        if not (bool(torch.isfinite(t).all()) if isinstance(t, torch.Tensor) else bool(np.isfinite(t).all()))
    ]
    if not bad:
        return
    names = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    if writing:
        raise WeightsError(
            f"the weights to write to {where} hold NaN or infinite values ({names}): the model diverged; "
            "nothing was written"
        )
    raise WeightsError(f"{where} holds NaN or infinite values ({names}): the model is damaged; restore it")


class CutShortError(WeightsError):
    """An hdf5 file shorter than its own header says it is: a copy or a download cut short."""

    def __init__(self, path: str | Path, size: int, stated: int):
        super().__init__(
            f"{path} is cut short: it has {size:,} of the {stated:,} bytes its header says it has (a copy or a download "
            "that stopped early); copy or download it again"
        )
        self.size, self.stated = size, stated


HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def hdf5_stated_size(path: str | Path) -> int | None:
    """The size an hdf5 file's superblock says the file has (its end-of-file address, which counts a user block
    before it too), or None where no superblock is found (not an hdf5 file). The superblock is at byte 0 or after
    a user block of 512 bytes times a power of 2."""
    with open(path, "rb") as f:
        size, offset = Path(path).stat().st_size, 0
        while offset < size:
            f.seek(offset)
            block = f.read(64)
            if block[:8] == HDF5_SIGNATURE:
                break
            offset = 512 if offset == 0 else offset * 2
        else:
            return None
    version = block[8]
    if version in (0, 1):  # offsets' size at byte 13; base address after 24 bytes (28 in version 1)
        width, start = block[13], 24 + 4 * version
    elif version in (2, 3):  # offsets' size at byte 9; base address at 12
        width, start = block[9], 12
    else:
        return None
    # base address, (free space or superblock extension) address, then the end-of-file address
    end = start + 2 * width
    return int.from_bytes(block[end : end + width], "little") if len(block) >= end + width else None


def read_hdf5(path: str | Path) -> h5py.File:
    """An hdf5 file opened for reading; a file h5py cannot open is a ``WeightsError`` naming it, a
    ``CutShortError`` where the file is shorter than its header says."""
    try:
        return h5py.File(path, "r")
    except (OSError, ValueError) as error:
        stated = hdf5_stated_size(path) if Path(path).is_file() else None
        if stated is not None and Path(path).stat().st_size < stated:
            raise CutShortError(path, Path(path).stat().st_size, stated) from None
        reason = str(error).split("(", 1)[-1].rstrip(")") if "(" in str(error) else str(error)
        raise WeightsError(f"{path} is not a readable hdf5 file ({reason}); give the published weights file") from None


@contextmanager
def write_hdf5(path: str | Path) -> Iterator[h5py.File]:
    """An hdf5 file written atomically through a Python file object: a full disk is then an ``OSError`` naming the
    file (``atomic_path``), where h5py's own writer reports it only as its objects are freed, in a stream of
    ignored errors that can end in a crash."""
    with atomic_path(path) as tmp, open(tmp, "w+b") as handle, h5py.File(handle, "w") as f:
        yield f


def write_float32(f: h5py.File, name: str, array: np.ndarray) -> None:
    """``f.create_dataset(name, data=array)`` for an array of one dimension or more (a 0-d one would get shape (1,)),
    stored as float32, through h5py's low-level calls: the same bytes in the file (tests/encoder), without the
    high-level call's handling of its many options, which took a third of ``embed``'s writing (1,024 arrays like
    embed's: 0.16-0.19 s against 0.11-0.14 s, measured here)."""
    array = np.ascontiguousarray(array, dtype=np.float32)
    creation = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    creation.set_obj_track_times(False)  # as h5py's default: a file's bytes do not depend on when it was written
    space = h5py.h5s.create_simple(array.shape)
    dataset = h5py.h5d.create(f.id, name.encode(), h5py.h5t.IEEE_F32LE, space, dcpl=creation)
    dataset.write(h5py.h5s.ALL, h5py.h5s.ALL, array)


def read_safetensors(path: str | Path) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file; one that cannot be read is a ``WeightsError`` naming it."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path} is missing")
    try:
        return load_file(str(path))
    except (OSError, SafetensorError) as error:
        raise WeightsError(f"{path} is not a readable safetensors file ({error}); restore it") from None


def _lstm_prefix(direction: int, layer: int) -> str:
    return f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"


def hdf5_layout(config: BiLMConfig) -> dict[str, tuple[int, ...]]:
    """Every dataset name of the reference hdf5 format with its expected shape."""
    E, F_, P, D = config.char_embed_dim, config.n_filters, config.projection_dim, config.lstm_dim
    shapes: dict[str, tuple[int, ...]] = {"char_embed": (config.n_characters - 1, E)}
    for i, (width, count) in enumerate(config.filters):
        shapes[f"CNN/W_cnn_{i}"] = (1, width, E, count)
        shapes[f"CNN/b_cnn_{i}"] = (count,)
    for k in range(config.n_highway):
        for name, shape in (
            ("W_carry", (F_, F_)),
            ("b_carry", (F_,)),
            ("W_transform", (F_, F_)),
            ("b_transform", (F_,)),
        ):
            shapes[f"CNN_high_{k}/{name}"] = shape
    shapes["CNN_proj/W_proj"] = (F_, P)
    shapes["CNN_proj/b_proj"] = (P,)
    for d in range(2):
        for l in range(config.n_layers):
            prefix = _lstm_prefix(d, l)
            shapes[f"{prefix}/W_0"] = (2 * P, 4 * D)
            shapes[f"{prefix}/B"] = (4 * D,)
            shapes[f"{prefix}/W_P_0"] = (D, P)
    return shapes


def load_options(path: str | Path) -> BiLMConfig:
    try:
        options = json.loads(Path(path).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise WeightsError(f"{path} is not valid JSON ({error}); give the published options.json") from None
    try:
        return BiLMConfig.from_options(options)
    except ValueError as error:
        raise WeightsError(f"{path} is not a published options.json of a biLM we can build: {error}") from None


def hdf5_problems(f: h5py.File, config: BiLMConfig) -> list[str]:
    """What keeps an open reference hdf5 file from fitting ``config``: missing datasets and wrong shapes."""
    problems = []
    for name, shape in hdf5_layout(config).items():
        if name.startswith("CNN_proj/") and _projection_skipped(f, config):
            continue
        if name not in f:
            problems.append(f"missing {name}")
        elif f[name].shape != shape:
            problems.append(f"{name} has shape {f[name].shape}, expected {shape}")
    return problems


def _projection_skipped(f: h5py.File, config: BiLMConfig) -> bool:
    """bilm-tf skips the char-CNN projection when the filters add up to the projection size (F == P)."""
    return "CNN_proj/W_proj" not in f and config.n_filters == config.projection_dim


def check_hdf5(options_file: str | Path, weights_file: str | Path) -> BiLMConfig:
    """The architecture ``options_file`` describes, once ``weights_file`` is checked to open and to hold every
    dataset it needs in the shape it needs (``WeightsError`` naming what does not fit); the values are not read."""
    config = load_options(options_file)
    with read_hdf5(weights_file) as f:
        problems = hdf5_problems(f, config)
    if problems:
        raise WeightsError(f"{weights_file} does not match {options_file}: {_first(problems)}")
    return config


def load_hdf5(options_file: str | Path, weights_file: str | Path) -> BiLM:
    """Build a biLM from the reference format, checking every dataset's presence and shape (``check_hdf5``)."""
    config = check_hdf5(options_file, weights_file)
    with read_hdf5(weights_file) as f:
        arrays = {name: f[name][...].astype(np.float32, copy=False) for name in hdf5_layout(config) if name in f}
        if _projection_skipped(f, config):
            arrays["CNN_proj/W_proj"] = np.eye(config.n_filters, dtype=np.float32)
            arrays["CNN_proj/b_proj"] = np.zeros(config.projection_dim, dtype=np.float32)
    check_finite_weights(arrays, weights_file, writing=False)
    model = BiLM(config)  # once the files are known to fit it
    _assign_hdf5(model, config, arrays)
    return model.eval()


def _assign_hdf5(model: BiLM, config: BiLMConfig, arrays: dict[str, np.ndarray]) -> None:
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a))  # noqa: E731
    P = config.projection_dim
    cnn = model.char_cnn
    with torch.no_grad():
        cnn.char_embed[0].zero_()
        cnn.char_embed[1:].copy_(t(arrays["char_embed"]))
        for i, conv in enumerate(cnn.convs):
            conv.weight.copy_(t(arrays[f"CNN/W_cnn_{i}"][0].transpose(2, 1, 0)))
            conv.bias.copy_(t(arrays[f"CNN/b_cnn_{i}"]))
        for k in range(config.n_highway):
            cnn.w_carry[k].copy_(t(arrays[f"CNN_high_{k}/W_carry"]))
            cnn.b_carry[k].copy_(t(arrays[f"CNN_high_{k}/b_carry"]))
            cnn.w_transform[k].copy_(t(arrays[f"CNN_high_{k}/W_transform"]))
            cnn.b_transform[k].copy_(t(arrays[f"CNN_high_{k}/b_transform"]))
        cnn.w_proj.copy_(t(arrays["CNN_proj/W_proj"]))
        cnn.b_proj.copy_(t(arrays["CNN_proj/b_proj"]))
        for l, layer in enumerate(model.lstm.layers):
            for d in range(2):
                prefix = _lstm_prefix(d, l)
                w0 = arrays[f"{prefix}/W_0"]
                layer.w_input[d].copy_(t(w0[:P]))
                layer.w_state[d].copy_(t(w0[P:]))
                layer.bias[d].copy_(t(arrays[f"{prefix}/B"]))
                layer.w_proj[d].copy_(t(arrays[f"{prefix}/W_P_0"]))


def save_hdf5(model: BiLM, options_file: str | Path, weights_file: str | Path) -> None:
    """Write the reference format (what bilm-tf's ``dump_weights`` produces), e.g. for AllenNLP users."""
    config = model.config
    cnn = model.char_cnn
    n = lambda p: p.detach().cpu().float().numpy()  # noqa: E731
    arrays = {"char_embed": n(cnn.char_embed)[1:]}
    for i, conv in enumerate(cnn.convs):
        arrays[f"CNN/W_cnn_{i}"] = n(conv.weight).transpose(2, 1, 0)[None]
        arrays[f"CNN/b_cnn_{i}"] = n(conv.bias)
    for k in range(config.n_highway):
        arrays[f"CNN_high_{k}/W_carry"] = n(cnn.w_carry[k])
        arrays[f"CNN_high_{k}/b_carry"] = n(cnn.b_carry[k])
        arrays[f"CNN_high_{k}/W_transform"] = n(cnn.w_transform[k])
        arrays[f"CNN_high_{k}/b_transform"] = n(cnn.b_transform[k])
    arrays["CNN_proj/W_proj"] = n(cnn.w_proj)
    arrays["CNN_proj/b_proj"] = n(cnn.b_proj)
    for l, layer in enumerate(model.lstm.layers):
        for d in range(2):
            prefix = _lstm_prefix(d, l)
            arrays[f"{prefix}/W_0"] = np.concatenate([n(layer.w_input[d]), n(layer.w_state[d])])
            arrays[f"{prefix}/B"] = n(layer.bias[d])
            arrays[f"{prefix}/W_P_0"] = n(layer.w_proj[d])
    check_finite_weights(arrays, weights_file, writing=True)
    with write_hdf5(weights_file) as f:
        for name, array in arrays.items():
            f.create_dataset(name, data=np.ascontiguousarray(array, dtype=np.float32))
    with atomic_path(options_file) as tmp:
        Path(tmp).write_text(json.dumps(config.to_options(), indent=2))


def stored_tensors(state: dict[str, torch.Tensor], storage: str) -> dict[str, torch.Tensor]:
    """Tensors as ``storage`` keeps them on disk (see ``STORAGES``)."""
    if storage not in STORAGES:
        raise ValueError(f"unknown storage {storage!r}: one of {', '.join(STORAGES)}")
    stored = {}
    for name, tensor in state.items():
        tensor = tensor.detach().cpu().float()
        if storage == "int8" and tensor.dim() >= 2:
            rows = tensor.reshape(tensor.shape[0], -1)
            scale = rows.abs().amax(dim=1).clamp_min(torch.finfo(torch.float32).tiny) / 127
            stored[name] = torch.round(rows / scale[:, None]).to(torch.int8).reshape(tensor.shape).contiguous()
            stored[name + INT8_SCALE] = scale.contiguous()
        else:
            stored[name] = tensor.to(torch.float32 if storage == "fp32" else torch.float16).contiguous()
    return stored


def restored_tensors(stored: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Float32 tensors from what ``stored_tensors`` wrote (whatever the storage)."""
    tensors = {}
    for name, tensor in stored.items():
        if name.endswith(INT8_SCALE):
            continue
        if name + INT8_SCALE in stored:
            scale = stored[name + INT8_SCALE].float()
            tensor = (tensor.float().reshape(tensor.shape[0], -1) * scale[:, None]).reshape(tensor.shape)
        tensors[name] = tensor.float()
    return tensors


def save_model(
    model: BiLM,
    directory: str | Path,
    extra_config: dict | None = None,
    storage: str = "fp32",
    max_file_bytes: int = MAX_FILE_BYTES,
) -> None:
    """Write ``config.json`` + ``model.safetensors``, or shards of at most ``max_file_bytes`` (a tensor larger than
    that gets one of its own) named by ``model.safetensors.index.json``; ``storage`` (``STORAGES``): fp16 halves
    the files, int8 quarters them (the loader restores float32)."""
    directory = Path(directory)
    tensors = stored_tensors(model.state_dict(), storage)
    check_finite_weights(tensors, directory, writing=True)  # float16 included: a weight beyond its range is inf
    shards: list[dict[str, torch.Tensor]] = [{}]
    for name, tensor in tensors.items():
        size = tensor.numel() * tensor.element_size()
        if shards[-1] and sum(t.numel() * t.element_size() for t in shards[-1].values()) + size > max_file_bytes:
            shards.append({})
        shards[-1][name] = tensor
    metadata = {"format": "elmo-search-bilm", "format_version": str(FORMAT_VERSION), "storage": storage}
    names = (
        [WEIGHTS_FILE]
        if len(shards) == 1
        else [f"model-{i:05d}-of-{len(shards):05d}.safetensors" for i in range(1, len(shards) + 1)]
    )
    for old in {*directory.glob("model-*-of-*.safetensors"), directory / WEIGHTS_FILE, directory / WEIGHTS_INDEX}:
        if old.name not in names and old.exists():  # what an earlier save of another size left
            old.unlink()
    for name, shard in zip(names, shards):
        with atomic_path(directory / name) as tmp:
            save_file(shard, tmp, metadata=metadata)
    if len(shards) > 1:
        with atomic_path(directory / WEIGHTS_INDEX) as tmp:
            weight_map = {k: name for name, shard in zip(names, shards) for k in shard}
            Path(tmp).write_text(json.dumps({"metadata": metadata, "weight_map": weight_map}, indent=1))
    config = {"format_version": FORMAT_VERSION, **model.config.to_dict(), **(extra_config or {})}
    with atomic_path(directory / CONFIG_FILE) as tmp:
        Path(tmp).write_text(json.dumps(config, indent=2))


def weight_files(directory: str | Path) -> list[Path]:
    """The files holding a model's weights: ``model.safetensors``, or the shards its index names, in order."""
    directory = Path(directory)
    index = directory / WEIGHTS_INDEX
    if not index.is_file():
        return [directory / WEIGHTS_FILE]
    return [directory / name for name in sorted(set(json.loads(index.read_text())["weight_map"].values()))]


def read_config(directory: str | Path) -> dict:
    path = Path(directory) / CONFIG_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{directory} is not a model directory: {CONFIG_FILE} is missing")
    try:
        config = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise WeightsError(f"{path} is not valid JSON ({error}); restore the model's {CONFIG_FILE}") from None
    if not isinstance(config, dict):
        raise WeightsError(f"{path} is not a JSON object; restore the model's {CONFIG_FILE}")
    version = config.get("format_version", FORMAT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool):
        raise WeightsError(
            f"{path} has format_version {version!r}, not a whole number; restore the model's {CONFIG_FILE}"
        )
    if version > FORMAT_VERSION:
        raise WeightsError(
            f"{path} has format version {config['format_version']}; this code reads up to {FORMAT_VERSION}"
        )
    return config


def load_model(directory: str | Path) -> BiLM:
    """Load our own model directory, checking that every tensor is present and of the right shape."""
    directory = Path(directory)
    try:
        config = BiLMConfig(**{k: v for k, v in read_config(directory).items() if k in BiLMConfig.__dataclass_fields__})
        with torch.device("meta"):  # the shapes it needs, checked against the files before any memory is taken
            model = BiLM(config)
    except (TypeError, ValueError) as error:
        if isinstance(error, WeightsError):
            raise
        raise WeightsError(
            f"{directory / CONFIG_FILE} has a field of the wrong type or value: {error}; restore it"
        ) from None
    files, tensors = weight_files(directory), {}
    for path in files:
        loaded = read_safetensors(path)
        check_finite_weights(loaded, path, writing=False)
        tensors.update(loaded)
    weights_path = files[0] if len(files) == 1 else directory / WEIGHTS_INDEX
    tensors = restored_tensors(tensors)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    misshaped = [
        f"{k} has shape {tuple(tensors[k].shape)}, expected {tuple(v.shape)}"
        for k, v in expected.items()
        if k in tensors and tensors[k].shape != v.shape
    ]
    if missing or unexpected or misshaped:
        problems = [f"missing {k}" for k in missing] + [f"unexpected {k}" for k in unexpected] + misshaped
        raise WeightsError(f"{weights_path} does not match {directory / CONFIG_FILE}: {_first(problems)}")
    model = BiLM(config)
    model.load_state_dict(tensors)
    return model.eval()


def _first(problems: list[str], shown: int = 5) -> str:
    """The first ``shown`` problems, and how many more (a message stays one readable line)."""
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more
