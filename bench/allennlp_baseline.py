"""Speed baseline: AllenNLP 2.10's own ``_ElmoBiLm``, run from an unpacked wheel without installing allennlp.

AllenNLP cannot be pip-installed next to our torch (it pins an old torch and pulls dozens of packages), so this
module imports the real, unmodified AllenNLP source files from a directory you provide and registers small
stand-ins only for imports that ``_ElmoBiLm`` never touches at run time. Nothing is copied from AllenNLP into this
repository and nothing is downloaded here. To get the source once:

    pip download --no-deps allennlp==2.10.1 && unzip -q allennlp-2.10.1-py3-none-any.whl -d /tmp/allen/src
    python -m bench.allennlp_baseline --allennlp /tmp/allen/src       # correctness check on the fixture model

What is real and what is stubbed (see ``load_allennlp``):
  real (loaded from DIR/allennlp/... with importlib): version.py, modules/{elmo,elmo_lstm,lstm_cell_with_projection,
    encoder_base,highway,scalar_mix}.py, nn/{util,initializers}.py, data/{vocabulary,instance,batch}.py,
    data/fields/{field,sequence_field,text_field}.py, data/tokenizers/token_class.py,
    data/token_indexers/{token_indexer,elmo_indexer}.py, common/{checks,logging,params,lazy,from_params,
    registrable,util,tqdm}.py -- i.e. the whole run-time path, ``batch_to_ids`` included.
  not executed: the package ``__init__.py`` files (they import the entire library: models, training, transformers
    ...); each package is an empty module whose few re-exported names are bound to the real classes above.
  stubbed: allennlp.common.file_utils (``cached_path`` -> the local path itself, ``FileLock`` unusable) and the
    third-party modules spacy, transformers, dill, base58, which are not installed and only appear in imports,
    type hints, isinstance checks against classes we never pass, or functions that are not called.

``allennlp_tokens_per_second`` times ``batch_to_ids`` + ``_ElmoBiLm.forward`` (stateless, no_grad, CPU) over
consecutive batches in input order, as AllenNLP's documented usage does.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import types
from pathlib import Path

WHEEL_HINT = (
    "pip download --no-deps allennlp==2.10.1 && "
    "unzip -q allennlp-2.10.1-py3-none-any.whl -d DIR   (then pass --allennlp DIR)"
)
FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "elmo"

# Real AllenNLP files, in dependency order (module name relative to ``allennlp``).
_REAL_MODULES = [
    "version",
    "common.checks",
    "common.logging",
    "common.params",
    "common.lazy",
    "common.from_params",
    "common.registrable",
    "common.util",
    "common.tqdm",
    "nn.util",
    "nn.initializers",
    "data.tokenizers.token_class",
    "data.vocabulary",
    "data.token_indexers.token_indexer",
    "data.fields.field",
    "data.fields.sequence_field",
    "data.fields.text_field",
    "data.instance",
    "data.batch",
    "data.token_indexers.elmo_indexer",
    "modules.encoder_base",
    "modules.lstm_cell_with_projection",
    "modules.elmo_lstm",
    "modules.highway",
    "modules.scalar_mix",
    "modules.elmo",
]
# Names that the (not executed) package __init__ files re-export and that the real modules import from them.
_REEXPORTS = {
    "common": {
        "FromParams": "common.from_params",
        "Registrable": "common.registrable",
        "Params": "common.params",
        "Lazy": "common.lazy",
        "Tqdm": "common.tqdm",
        "JsonDict": "common.util",
    },
    "data.tokenizers": {"Token": "data.tokenizers.token_class"},
    "data.fields": {
        "TextField": "data.fields.text_field",
        "Field": "data.fields.field",
        "SequenceField": "data.fields.sequence_field",
    },
}
_MARK = "_elmo_search_allennlp_root"


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return module


class _Unused:
    """Stand-in class for a third-party type that the AllenNLP run-time path never instantiates."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__qualname__} is a stub in bench/allennlp_baseline.py")


def _unavailable(what: str):
    def call(*args, **kwargs):
        raise RuntimeError(f"{what} is stubbed in bench/allennlp_baseline.py and must not be called")

    return call


_THIRD_PARTY_STUBS = (
    "spacy",
    "spacy.tokens",
    "spacy.cli",
    "spacy.cli.download",
    "spacy.language",
    "transformers",
    "dill",
    "base58",
)


def _install_stubs() -> None:
    # Third-party packages (not installed; only imported at module level by allennlp files we load). They are taken
    # out of sys.modules again once AllenNLP is loaded, so that other code (torch checks find_spec("dill")) never
    # mistakes them for the real packages.
    for name in _THIRD_PARTY_STUBS[:5]:
        _module(name)
    sys.modules["spacy.tokens"].Token = type("Token", (_Unused,), {})  # text_field: isinstance(x, (Token, SpacyToken))
    sys.modules["spacy.cli.download"].download = _unavailable("spacy.cli.download.download")
    sys.modules["spacy.language"].Language = type("Language", (_Unused,), {})
    _module("transformers", PreTrainedTokenizer=type("PreTrainedTokenizer", (_Unused,), {}))  # vocabulary type hint
    _module("dill")  # common.util: only used for pickling helpers
    _module("base58")  # common.util: only used by hash_object

    # allennlp.common.file_utils pulls cached_path, lmdb, huggingface_hub ...; _ElmoBiLm only calls cached_path on
    # the options/weights paths at construction, which we require to be local files.
    def cached_path(url_or_filename, *args, **kwargs):
        path = os.fspath(url_or_filename)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: only local files are supported (no downloads in this benchmark)")
        return path

    _module("allennlp.common.file_utils", cached_path=cached_path, FileLock=type("FileLock", (_Unused,), {}))


def load_allennlp(root: str | os.PathLike) -> types.ModuleType:
    """Import AllenNLP's real ``allennlp.modules.elmo`` from ``root`` (the folder containing ``allennlp/``)."""
    package_dir = Path(root).expanduser().resolve() / "allennlp"
    loaded = sys.modules.get("allennlp")
    if loaded is not None:
        if getattr(loaded, _MARK, None) != str(package_dir):
            raise RuntimeError(f"another allennlp is already imported ({loaded!r})")
        return sys.modules["allennlp.modules.elmo"]
    missing = [m for m in _REAL_MODULES if not (package_dir / (m.replace(".", "/") + ".py")).is_file()]
    if missing:
        raise FileNotFoundError(
            f"AllenNLP 2.10 source not found under {package_dir} (missing {missing[0]}.py). Get it with: {WHEEL_HINT}"
        )
    # Empty package modules: their real __init__.py would import the whole library. An empty __path__ means that
    # nothing but the files listed in _REAL_MODULES can ever be imported from allennlp (any other import fails).
    _module("allennlp", __path__=[], **{_MARK: str(package_dir)})
    for package in ("common", "data", "data.fields", "data.tokenizers", "data.token_indexers", "modules", "nn"):
        _module(f"allennlp.{package}", __path__=[])
    import h5py  # noqa: F401  real dependencies first, before any stub is visible
    import numpy  # noqa: F401
    import torch  # noqa: F401

    saved = {name: sys.modules[name] for name in _THIRD_PARTY_STUBS if name in sys.modules}
    _install_stubs()
    try:
        for name in _REAL_MODULES:
            full = f"allennlp.{name}"
            spec = importlib.util.spec_from_file_location(full, package_dir / (name.replace(".", "/") + ".py"))
            module = importlib.util.module_from_spec(spec)
            sys.modules[full] = module
            spec.loader.exec_module(module)
            parent, _, child = full.rpartition(".")
            setattr(sys.modules[parent], child, module)
            for package, names in _REEXPORTS.items():
                for attr, source in names.items():
                    if source == name:
                        setattr(sys.modules[f"allennlp.{package}"], attr, getattr(module, attr))
    finally:
        for name in _THIRD_PARTY_STUBS:
            sys.modules.pop(name, None)
        sys.modules.update(saved)
    elmo = sys.modules["allennlp.modules.elmo"]
    elmo.ALLENNLP_VERSION = sys.modules["allennlp.version"].VERSION
    return elmo


def build_bilm(options_file: str, weights_file: str, allennlp_dir: str | None = None):
    """AllenNLP ``_ElmoBiLm`` on CPU, eval mode, with the LSTM made stateless (zero initial state every batch)."""
    elmo = load_allennlp(allennlp_dir) if allennlp_dir else sys.modules.get("allennlp.modules.elmo")
    if elmo is None:
        raise RuntimeError("call load_allennlp(DIR) first or pass allennlp_dir")
    bilm = elmo._ElmoBiLm(options_file, weights_file, requires_grad=False).eval()
    bilm._elmo_lstm.stateful = False  # elmo-reference.md section 4: otherwise row states carry across batches
    return elmo, bilm


def allennlp_tokens_per_second(
    options_file: str,
    weights_file: str,
    sentences: list[list[str]],
    batch_size: int,
    *,
    allennlp_dir: str | None = None,
) -> dict:
    """Time ``batch_to_ids`` + ``_ElmoBiLm`` over ``sentences`` in consecutive batches (input order), CPU, no_grad."""
    import torch

    elmo, bilm = build_bilm(options_file, weights_file, allennlp_dir)
    batches = [sentences[i : i + batch_size] for i in range(0, len(sentences), batch_size)]
    with torch.no_grad():
        bilm(elmo.batch_to_ids(batches[0]))  # warm-up, not timed (as for our modes)
        start = time.perf_counter()
        for batch in batches:
            bilm(elmo.batch_to_ids(batch))
        seconds = time.perf_counter() - start
    tokens = sum(len(s) for s in sentences)
    return {
        "tokens_per_s": tokens / seconds,
        "seconds": seconds,
        "tokens": tokens,
        "batches": len(batches),
        "allennlp_version": elmo.ALLENNLP_VERSION,
    }


def check_against_encoder(
    options_file: str,
    weights_file: str,
    sentences: list[list[str]],
    allennlp_dir: str | None = None,
    atol: float = 1e-5,
) -> dict:
    """Run one stateless batch through AllenNLP and through our ``Elmo``; compare every layer, BOS/EOS stripped."""
    import numpy as np
    import torch

    from encoder import Elmo

    elmo, bilm = build_bilm(options_file, weights_file, allennlp_dir)
    with torch.no_grad():
        out = bilm(elmo.batch_to_ids(sentences))
    ours = Elmo.load(options_file, weights_file).embed(sentences)
    layer_diff = [0.0] * len(out["activations"])
    for b, sentence in enumerate(sentences):
        n = len(sentence)
        assert int(out["mask"][b].sum()) == n + 2
        for k, layer in enumerate(out["activations"]):
            reference = layer[b, 1 : n + 1].numpy()  # strip BOS/EOS
            layer_diff[k] = max(layer_diff[k], float(np.abs(reference - ours[b][k]).max()))
    top_ok = all(
        np.allclose(out["activations"][-1][b, 1 : len(s) + 1].numpy(), ours[b][-1], atol=atol)
        for b, s in enumerate(sentences)
    )
    return {
        "ok": top_ok,
        "top_max_abs_diff": layer_diff[-1],
        "layer_max_abs_diff": layer_diff,
        "sentences": len(sentences),
        "tokens": sum(len(s) for s in sentences),
        "atol": atol,
        "allennlp_version": elmo.ALLENNLP_VERSION,
    }


def fixture_check(allennlp_dir: str, extra: list[list[str]] | None = None) -> dict:
    """``check_against_encoder`` on shared/fixtures/elmo: its 3x10 test sentences (first 4 of each) + ``extra``."""
    with open(FIXTURE / "sentences.json", encoding="utf-8") as f:
        groups = json.load(f)
    sentences = [s.split() for group in groups for s in group[:4]] + list(extra or [])
    options, weights = str(FIXTURE / "options.json"), str(FIXTURE / "lm_weights.hdf5")
    result = check_against_encoder(options, weights, sentences, allennlp_dir)
    result["fixture_max_abs_diff"] = _fixture_batch0_diff(options, weights, [g[0].split() for g in groups])
    return result


def _fixture_batch0_diff(options: str, weights: str, batch0: list[list[str]]) -> float:
    """The loaded AllenNLP vs the fixture's expected top layer of batch 0 (reproducible from zero state)."""
    import h5py
    import numpy as np
    import torch

    elmo, bilm = build_bilm(options, weights)
    with torch.no_grad():
        top = bilm(elmo.batch_to_ids(batch0))["activations"][-1]
    diff = 0.0
    for k, sentence in enumerate(batch0):
        with h5py.File(FIXTURE / f"lm_embeddings_{k}.hdf5", "r") as f:
            expected = np.concatenate([f["0"][0], f["0"][1]], axis=-1)
        diff = max(diff, float(np.abs(top[k, 1 : len(sentence) + 1].numpy() - expected).max()))
    return diff


def format_check(result: dict) -> str:
    layers = ", ".join(f"{d:.1e}" for d in result["layer_max_abs_diff"])
    return (
        f"allennlp {result['allennlp_version']} check on fixture model: {result['sentences']} sentences, "
        f"{result['tokens']} tokens, one stateless batch; top layer allclose(atol={result['atol']:g}) "
        f"{'PASS' if result['ok'] else 'FAIL'}; max |diff| per layer [{layers}]; "
        f"allennlp vs fixture lm_embeddings batch 0: max |diff| {result['fixture_max_abs_diff']:.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--allennlp", required=True, metavar="DIR", help="folder that contains the allennlp package")
    args = parser.parse_args()
    result = fixture_check(args.allennlp)
    print(format_check(result))
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
