"""The command lines where they follow their peers: `embed --top/--average/--all` as AllenNLP's `elmo`
writes them, `--device auto` everywhere, no oneDNN warning, a busy port as one error line, `stats --docs`, build
progress per document, and a missing optional dependency named by its extra."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch
from helpers import SETTINGS

import app.__main__ as app_cli
import encoder.__main__ as encoder_cli
import indexer.__main__ as indexer_cli
import indexer.shards
from app.settings import INDEX_ENV
from encoder import Elmo
from encoder.device import resolve_device
from encoder.errors import MissingExtra
from encoder.model import BiLM, BiLMConfig
from encoder.text import KoreanText
from encoder.weights import save_model
from indexer import Index, build_index

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    {"id": "river", "title": "The river bank", "text": "We sat on the bank of the river. The water was cold."},
    {"id": "money", "title": "A loan", "text": "The bank lent them money. They paid it back in a year."},
    {"id": "hills", "title": "", "text": "Sheep grazed on the green hills above the valley."},
]


def exit_code(run) -> int:
    try:
        return run() or 0
    except SystemExit as exit:
        return exit.code


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("commands") / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCUMENTS), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ embed
def test_embed_writes_all_top_or_average_as_allennlp_elmo_does(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("The bank of the river .\nI play the violin .\n", encoding="utf-8")
    layers = {}
    for flag in ("", "--all", "--top", "--average"):
        out = tmp_path / f"out{flag}.hdf5"
        argv = ["embed", "--model", str(tiny_model_dir), "--input", str(sentences), "--output", str(out), "--quiet"]
        encoder_cli.main(argv + ([flag] if flag else []))
        with h5py.File(out, "r") as f:
            layers[flag] = [f[str(i)][()] for i in range(2)]
            assert json.loads(f["sentence_to_index"][0]) == {"The bank of the river .": "0", "I play the violin .": "1"}
    for i, n_tokens in enumerate((6, 5)):
        every = layers["--all"][i]
        assert every.shape == (3, n_tokens, 16) and every.dtype == np.float32
        np.testing.assert_array_equal(layers[""][i], every)  # --all is the default
        np.testing.assert_array_equal(layers["--top"][i], every[-1])  # AllenNLP: embeddings[-1]
        np.testing.assert_array_equal(layers["--average"][i], np.average(every, axis=0))  # numpy.average(axis=0)
    assert "the mean of 3 layers x 16 dims" in capsys.readouterr().err
    argv = ["embed", "--input", str(sentences), "--output", str(tmp_path / "x.hdf5"), "--top", "--average"]
    assert exit_code(lambda: encoder_cli.main(argv)) == 2
    assert "not allowed with argument" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ --device
def test_auto_is_cuda_when_torch_sees_a_gpu_else_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    for available, expected in ((True, "cuda"), (False, "cpu")):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
        assert resolve_device("auto") == expected
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="torch sees no GPU"):
        resolve_device("cuda:1")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        resolve_device("tpu")


def test_models_load_on_auto(tiny_model_dir: Path) -> None:
    """``device='auto'`` loads a model on the GPU when torch sees one, else on the CPU."""
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert Elmo.load(tiny_model_dir, device="auto").device.type == expected


def device_defaults(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, str]:
    """The default of ``--device`` in every (sub)command of ``parser`` that has one."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found |= device_defaults(sub, f"{prefix}{name} ")
        elif "--device" in action.option_strings:
            found[prefix.strip()] = action.default
    return found


def test_every_device_option_defaults_to_auto() -> None:
    found = device_defaults(encoder_cli.build_parser()) | device_defaults(indexer_cli.make_parser(), "indexer ")
    assert set(found) >= {"embed", "evaluate", "train"} | {
        f"indexer {c}" for c in ("build", "add", "search", "neighbors", "senses", "stats")
    }
    assert set(found.values()) == {"auto"}, found


# ------------------------------------------------------------------------------------------ oneDNN warning
UNCLIPPED = dict(
    char_embed_dim=4, filters=[[1, 4]], projection_dim=8, lstm_dim=16, n_layers=1, cell_clip=None, proj_clip=None
)
TORCH_SAYS = """
import warnings, torch
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.nn.LSTM(8, 16, proj_size=8, batch_first=True)(torch.zeros(2, 3, 8))  # projections: what the fused path runs
print("\\n".join(str(w.message) for w in caught))
"""
EMBED_FUSED = f"""
import warnings
from encoder import Elmo
from indexer import Index
from encoder.model import BiLM, BiLMConfig
model = BiLM(BiLMConfig(**{UNCLIPPED!r}))
assert model.lstm.layers[0].fused  # unclipped: torch's own LSTM, the path that warns
before = list(warnings.filters)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")  # in front of every filter of the process
    Elmo(model).embed([["The", "bank", "of", "the", "river", "."]] * 2)
    warnings.warn("a warning of the caller's own")
assert warnings.filters == before, "embedding changed the process's warning filters"
print("\\n".join(str(w.message) for w in caught))
"""


def _python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=True
    ).stdout


def test_the_onednn_warning_is_silenced_around_the_kernel_only(tmp_path: Path) -> None:
    """torch's warning about the fused LSTM's weights never reaches the user, even under a caller's "always"
    filter, while the caller's own warnings and every other warning of the command line still do."""
    if "oneDNN" not in _python(TORCH_SAYS):
        pytest.skip("this torch build does not warn about oneDNN here, so there is nothing to silence")
    said = _python(EMBED_FUSED)
    assert "oneDNN" not in said and "a warning of the caller's own" in said
    model = BiLM(BiLMConfig(**UNCLIPPED))
    model.reset_parameters(seed=0)
    save_model(model, tmp_path / "model", extra_config={"name": "unclipped"})
    corpus = tmp_path / "docs.txt"
    corpus.write_bytes(b"The bank of the river was muddy.\nThe bank lent money \xff today.\n")
    argv = ["build", "--corpus", str(corpus), "--out", str(tmp_path / "index"), "--model", str(tmp_path / "model")]
    argv += ["--glove", "train", "--glove-epochs", "1", "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    build = subprocess.run(
        [sys.executable, "-m", "indexer", *argv], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert build.returncode == 0, build.stderr
    assert "oneDNN" not in build.stderr
    assert "warning: " in build.stderr and "1 undecodable byte sequence was replaced" in build.stderr


IMPORTS_EVERYTHING = """
import warnings, torch, numpy, scipy.special, sklearn, pandas, faiss, nltk, h5py  # their own filters come first
filters = list(warnings.filters)
flags = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
import encoder, encoder.model, encoder.elmo, indexer, app.settings
from encoder import Elmo
from indexer import Index
from encoder.model import BiLM, BiLMConfig
model = BiLM(BiLMConfig(char_embed_dim=4, filters=[[1, 4]], projection_dim=8, lstm_dim=16, n_layers=1))
for precision in ("fp32", "tf32", "bf16"):
    Elmo(model, precision=precision).embed([["a", "b"]])
assert warnings.filters == filters, "an import or an Elmo changed the warning filters"
assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == flags, "TF32 switches changed"
print("unchanged")
"""


def test_importing_and_embedding_change_no_global_state() -> None:
    """Importing the packages and making and running an Elmo of each precision leave the process's warning filters
    and torch's TF32 switches as they were (a library must not change its caller's process)."""
    assert _python(IMPORTS_EVERYTHING).strip() == "unchanged"


def test_tf32_switches_are_set_for_the_block_and_put_back() -> None:
    """``elmo.tf32`` is how a GPU Elmo computes: on (tf32) or off (fp32, exact) inside the block, as before after it,
    even when the block fails."""
    from encoder.elmo import tf32

    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    for wanted in (True, False):
        with pytest.raises(KeyError), tf32(wanted):
            assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (wanted, wanted)
            raise KeyError("inside")
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


# ------------------------------------------------------------------------------------------ app
class Served(Exception):
    """Raised instead of replacing the test process with Streamlit."""


def instead_of_streamlit(*args) -> None:
    raise Served


def test_a_busy_port_is_one_error_line_before_streamlit_starts(
    small_index: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A port in use is one error line naming it and a free one, and the app never starts."""
    index = small_index
    monkeypatch.setattr(os, "execve", instead_of_streamlit)  # raises Served: it must not be reached
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        argv = ["--index", str(index), "--model", str(tiny_model_dir), "--glove", "train"]
        argv += ["--address", "127.0.0.1", "--port", str(port)]
        assert exit_code(lambda: app_cli.main(argv)) == 2
    out, err = capsys.readouterr()
    assert f"Using the index in {index}" in out
    errors = err.strip().splitlines()
    assert errors == [
        f"error: port {port} on 127.0.0.1 is in use (ELMo Search already running, or another program); stop that "
        f"program or choose another port, e.g. --port {port + 1}"
    ]
    app_cli.check_port("127.0.0.1", port)  # closed again: free


def test_an_option_before_the_command_is_said_to_be_misplaced(capsys: pytest.CaptureFixture) -> None:
    """``indexer --json search ...`` said "search: unrecognized arguments: --json" (search takes --json) and
    ``indexer --threads 2 search`` "invalid choice: '2'": both now say where the option goes."""
    for cli, argv in ((indexer_cli, ["--json", "search", "--index", "x", "bank"]), (encoder_cli, ["--threads", "2"])):
        assert exit_code(lambda: cli.main(argv)) == 2
        error = capsys.readouterr().err.splitlines()[-1]
        assert f": error: {argv[0]} comes before the command: options follow it (" in error
        assert error.endswith(f" COMMAND {argv[0]} ...)")
    assert exit_code(lambda: indexer_cli.main(["--vers"])) == 0  # the program's own options, as argparse shortens them
    assert capsys.readouterr().out.startswith("python -m indexer ")


def test_an_empty_path_is_refused_not_taken_for_this_folder(capsys: pytest.CaptureFixture) -> None:
    """``--output ''`` was ``Path("")``, the current folder, and said to be "." and a folder."""
    given = [
        (encoder_cli, ["embed", "--input", "in.txt", "--output", ""], "--output"),
        (encoder_cli, ["prepare", "--corpus", "", "--out", "o"], "--corpus"),
        (encoder_cli, ["perplexity", "--corpus", ""], "--corpus"),
        (encoder_cli, ["ship", "--run", "", "--to", "t"], "--run"),
        (encoder_cli, ["train", "--corpus", "c.txt", "--out", ""], "--out"),
        (indexer_cli, ["stats", "--index", ""], "--index"),
    ]
    for cli, argv, option in given:
        assert exit_code(lambda: cli.main(argv)) == 2
        assert capsys.readouterr().err.strip().endswith(f": error: argument {option}: is empty; give a path")


def test_search_without_a_query_asks_for_one(capsys: pytest.CaptureFixture) -> None:
    """No query and no --queries: the error asks for a query (it said "..., not both")."""
    assert exit_code(lambda: indexer_cli.main(["search", "--index", "x"])) == 2
    assert capsys.readouterr().err.strip().endswith("for many, e.g. search --index DIR 'river bank'")
    assert exit_code(lambda: indexer_cli.main(["search", "--index", "x", "bank", "--queries", "-"])) == 2
    assert capsys.readouterr().err.strip().endswith("for many, not both")


def test_an_empty_address_is_refused_not_taken_for_every_interface(capsys: pytest.CaptureFixture) -> None:
    """An empty --host / --address would listen on every interface (Streamlit and uvicorn read it so): refused."""
    assert exit_code(lambda: indexer_cli.main(["serve", "--index", "x", "--host", ""])) == 2
    assert exit_code(lambda: app_cli.main(["--address", " "])) == 2
    errors = capsys.readouterr().err.splitlines()
    assert [line.split(": error: ")[1] for line in errors if ": error: " in line] == [
        f"argument {option}: is empty, which would listen on every interface; give an address (0.0.0.0 for every "
        "interface)"
        for option in ("--host", "--address")
    ]


def test_a_port_an_ipv4_program_holds_is_in_use_for_both_stacks(capsys: pytest.CaptureFixture) -> None:
    """Streamlit binds "::" for both stacks, so an IPv4 program on the port stops it: the app says so first."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::", 0))
    except OSError:
        pytest.skip("this machine has no IPv6")
    with socket.socket() as other:
        other.bind(("0.0.0.0", 0))
        other.listen()
        port = other.getsockname()[1]
        assert exit_code(lambda: app_cli.check_port("::", port)) == 2
    assert f"error: port {port} on :: is in use" in capsys.readouterr().err


def test_an_address_not_this_machines_is_one_error_line(capsys: pytest.CaptureFixture) -> None:
    """An address the app cannot listen on (here one of TEST-NET-1, which no machine has) is one error line, where
    Streamlit would end in a traceback."""
    assert exit_code(lambda: app_cli.check_port("192.0.2.1", 8501)) == 2
    assert capsys.readouterr().err.startswith("error: cannot listen on 192.0.2.1:8501: ")


# ------------------------------------------------------------------------------------------ stats --docs
def test_stats_docs_lists_the_ids_delete_takes(
    small_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``stats --docs`` lists each document's id (and title, when it has one), the ids ``delete`` takes."""
    copy = tmp_path / "index"
    shutil.copytree(small_index, copy)
    assert indexer_cli.main(["delete", "--index", str(copy), "--doc-id", "money"]) == 0
    capsys.readouterr()
    assert indexer_cli.main(["stats", "--index", str(copy), "--docs", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["documents"]
    assert listed == [{"doc_id": "river", "title": "The river bank"}, {"doc_id": "volcano", "title": ""}]
    assert indexer_cli.main(["stats", "--index", str(copy), "--docs"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("\n2 documents, [id] and title:\n  [river]    The river bank\n  [volcano]\n")  # a column
    Index.open(copy).add(["Trains run on rails."], ids=[" rails\x85"])  # blank space at both ends: part of the id
    assert indexer_cli.main(["stats", "--index", str(copy), "--docs"]) == 0
    assert capsys.readouterr().out.endswith("\n  [ rails\\x85]\n")  # as search shows it, escaped, nothing cut
    assert indexer_cli.main(["stats", "--index", str(copy), "--json"]) == 0
    assert "documents" not in json.loads(capsys.readouterr().out)  # only with --docs
    assert indexer_cli.main(["delete", "--index", str(copy), "--doc-id", "money"]) == 2
    assert f"`python -m indexer stats --index {copy} --docs` lists the documents" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["/venv/bin/elmo-indexer"])  # the console script: its messages name it
    assert indexer_cli.main(["delete", "--index", str(copy), "--doc-id", "money"]) == 2
    assert f"`elmo-indexer stats --index {copy} --docs` lists the documents" in capsys.readouterr().err
    assert indexer_cli.main(["stats", "--index", str(tmp_path / "none")]) == 2
    assert "build an index with `elmo-indexer build`" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ build progress
class RecordingBar:
    """tqdm's part that ``encode_shards`` uses, recording each step into ``events``."""

    def __init__(self, events: list):
        self.events, self.n = events, 0

    def update(self, n: int = 1) -> None:
        self.n += n
        self.events.append(("documents", n))

    def set_postfix(self, **kwargs) -> None:
        pass

    def close(self) -> None:
        pass


def test_build_progress_moves_per_document_as_they_are_encoded(
    corpus: Path, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list = []
    # the reading pass wraps an iterable (passed through); the encoding bar counts documents (recorded)
    monkeypatch.setattr(indexer.shards, "tqdm", lambda *args, **kwargs: args[0] if args else RecordingBar(events))
    monkeypatch.setattr(indexer.shards, "ENCODE_TOKENS", 1)  # one sentence embedded at a time
    embed = Elmo.embed

    def recording_embed(self, sentences, *args, **kwargs):
        events.append(("embed", len(sentences)))
        return embed(self, sentences, *args, **kwargs)

    monkeypatch.setattr(Elmo, "embed", recording_embed)
    build_index([corpus], tmp_path / "index", model=tiny_model_dir, settings=SETTINGS, progress=True)
    steps = [n for kind, n in events if kind == "documents" and n]
    assert steps == [1, 1, 1]  # all three documents in one shard, counted one by one
    first_document = events.index(("documents", 1))
    # the first document (2 sentences) is counted after its own sentences, before the others' are embedded
    assert events[:first_document] == [("embed", 1), ("embed", 1)]
    assert ("embed", 1) in events[first_document:]


# ------------------------------------------------------------------------------------------ optional dependencies
def test_a_missing_optional_dependency_names_its_extra(
    corpus: Path, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "kiwipiepy", None)  # import kiwipiepy now fails
    with pytest.raises(MissingExtra, match=r"Korean text \(Kiwi\) needs the optional dependencies \[ko\]"):
        KoreanText()._kiwi
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.delitem(sys.modules, "indexer.distributed", raising=False)  # imported anew, as in a process without Ray
    monkeypatch.delattr(indexer, "distributed", raising=False)
    argv = ["build", "--corpus", str(corpus), "--out", str(tmp_path / "index"), "--model", str(tiny_model_dir)]
    argv += ["--ray", "--quiet"]
    assert indexer_cli.main(argv) == 2
    assert capsys.readouterr().err == (
        "error: --ray needs the optional dependencies [ray]: pip install ray==2.60.0 (in a checkout: make install)\n"
    )
    assert not (tmp_path / "index").exists()


@pytest.mark.parametrize("kiwi", [True, False])
def test_the_korean_demo_needs_kiwi_and_says_so_without_it(
    kiwi: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    built = []
    monkeypatch.setattr(
        app_cli,
        "ensure_index",
        lambda index_dir, model, rebuild, glove, demo, build=False, model_given=True: built.append(demo),
    )
    monkeypatch.setattr(app_cli, "check_port", lambda address, port: None)
    monkeypatch.setattr(os, "execve", instead_of_streamlit)
    monkeypatch.delenv(INDEX_ENV, raising=False)  # the demo's own index, beside which the Korean one is built
    if kiwi:
        pytest.importorskip("kiwipiepy", reason="Korean text needs kiwipiepy (the [ko] extra)")
    else:
        monkeypatch.setitem(sys.modules, "kiwipiepy", None)
    with pytest.raises(Served):
        app_cli.main([])
    out = capsys.readouterr().out
    assert built == (["en", "ko"] if kiwi else ["en"])
    assert ("No Korean demo: Korean text (Kiwi) needs the optional dependencies [ko]" in out) is not kiwi
