"""Training, perplexity and the shipped default model, on tiny models and text written here."""

from __future__ import annotations

import json
import math
import os
import random
import socket
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from encoder.corpus import TokenizedCorpus
from encoder.elmo import Elmo
from encoder.lm_data import UNK_ID, LMBatches, Vocabulary, paragraph_pairs, paragraph_sentences
from encoder.lm_head import evaluate, load_language_model, perplexity
from encoder.model_files import DEFAULT_MODEL_DIR
from encoder.ownership import NotOwnedError
from encoder.text import text_rules
from encoder.train import TrainConfig, make_optimizer, train, train_step

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(__file__).resolve().parents[3] / "shared"

TINY = {
    "size": "tiny",
    "batch_size": 8,
    "unroll": 10,
    "vocab_size": 200,
    "progress": False,
    "threads": 1,
    "checkpoint_every": 60.0,
    "log_every": 5,
}
FINE_TUNE = {key: value for key, value in TINY.items() if key not in ("size", "vocab_size")}
"""TINY for a run from a model: its shape, and its vocabulary when it has one, are the model's (``check_start``)."""

ENGLISH = text_rules("en")


def _synthetic_paragraphs(n: int, seed: int) -> list[str]:
    """A small grammar with agreement and topical structure, so a tiny LM has something to learn."""
    rng = random.Random(seed)
    topics = {
        "river": (["river", "bank", "boat", "water", "fisherman"], ["flooded", "crossed", "watched", "reached"]),
        "money": (["bank", "loan", "account", "teller", "customer"], ["approved", "closed", "opened", "checked"]),
        "music": (["band", "song", "guitar", "singer", "crowd"], ["played", "recorded", "heard", "loved"]),
    }
    adjectives = ["old", "new", "quiet", "busy", "small", "famous"]
    paragraphs = []
    for _ in range(n):
        nouns, verbs = topics[rng.choice(sorted(topics))]
        sentences = []
        for _ in range(rng.randint(2, 4)):
            sentences.append(
                f"The {rng.choice(adjectives)} {rng.choice(nouns)} {rng.choice(verbs)} "
                f"the {rng.choice(nouns)} near the {rng.choice(nouns)}."
            )
        paragraphs.append(" ".join(sentences))
    return paragraphs


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("corpus")
    train_file, valid_file = directory / "train.txt", directory / "valid.txt"
    train_file.write_text("\n".join(_synthetic_paragraphs(400, seed=1)) + "\n", encoding="utf-8")
    valid_file.write_text("\n".join(_synthetic_paragraphs(40, seed=2)) + "\n", encoding="utf-8")
    return {"train": train_file, "valid": valid_file}


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory) -> tuple[Path, dict, dict]:
    """A tiny model trained for 200 steps: its directory, validation perplexity before and after."""
    out = tmp_path_factory.mktemp("trained")
    cfg = TrainConfig(corpus=[str(corpus["train"])], out=str(out), max_tokens=8 * 10 * 200, lr=0.2, **TINY)
    valid = [paragraph_sentences(line, ENGLISH) for line in corpus["valid"].read_text().splitlines()]
    torch.manual_seed(0)
    from encoder.train import build_language_model

    fresh, vocab = build_language_model(cfg, TokenizedCorpus.from_paths(cfg.corpus, progress=False))
    before = evaluate(fresh, vocab, valid)
    train(cfg)
    lm, vocab = load_language_model(out)
    after = evaluate(lm, vocab, valid)
    return out, before, after


def test_vocabulary_frequency_order_and_unk(tmp_path):
    """A vocabulary lists the specials, then words by frequency (ties alphabetical), maps unseen words to <UNK>, and round-trips."""
    vocab = Vocabulary.from_counts(Counter({"the": 5, "bank": 3, "river": 3, "rare": 1}), size=5)
    assert vocab.words == ["<S>", "</S>", "<UNK>", "the", "bank"]  # ties broken alphabetically, size cut
    assert vocab.ids(["the", "river", "unseen"]) == [3, UNK_ID, UNK_ID]
    vocab.save(tmp_path / "vocab.txt")
    assert Vocabulary.load(tmp_path / "vocab.txt").words == vocab.words
    with pytest.raises(ValueError):
        Vocabulary(["the", "<S>"])


def test_the_head_computes_torchs_adaptive_softmax_with_rows_found_on_the_host():
    """``LMHead.forward`` gives ``AdaptiveLogSoftmaxWithLoss``'s log-probabilities and gradients exactly, whether
    the rows of each tail cluster come from the host (training windows, ``cluster_rows``) or are found on the
    device; a cluster without targets included."""
    from encoder.lm_data import cluster_rows
    from encoder.lm_head import LMHead

    head = LMHead(32, 60, cutoffs=[10, 20, 40])
    head.reset_parameters(0)
    targets = torch.tensor([[0, 45, 9, 12, 59], [10, 3, 44, 19, 41]])  # nothing in 20..39
    hidden = torch.randn(10, 32, requires_grad=True)
    rows, sizes = cluster_rows(targets.numpy(), head.cutoffs)
    assert sizes == (3, 0, 4) and rows.tolist() == [3, 5, 8, 1, 4, 7, 9]
    inputs = [hidden, *head.parameters()]

    def gradients(log_probs: torch.Tensor) -> list[torch.Tensor]:  # an unused cluster's layers: zero
        grads = torch.autograd.grad(log_probs.sum(), inputs, allow_unused=True)
        return [torch.zeros_like(x) if g is None else g for x, g in zip(inputs, grads)]

    reference = head.softmax(hidden, targets.reshape(-1)).output
    expected = gradients(reference)
    for tail_rows in (list(rows.split(sizes)), None):
        log_probs = head(hidden, targets.reshape(-1), tail_rows)
        assert torch.equal(log_probs, reference)
        for got, want in zip(gradients(log_probs), expected):
            assert torch.allclose(got, want, atol=1e-7)


def test_paragraph_framing_both_directions():
    """A paragraph's inputs and targets are framed by <S> and </S> as the reference does, forwards and backwards."""
    inputs, targets = paragraph_pairs(paragraph_sentences("The bank closed. It rained.", ENGLISH))
    assert inputs == ["<S>", "The", "bank", "closed", ".", "<S>", "It", "rained", "."]
    assert targets == ["The", "bank", "closed", ".", "</S>", "It", "rained", ".", "</S>"]
    back_in, back_out = paragraph_pairs(paragraph_sentences("The bank closed. It rained.", ENGLISH), backward=True)
    assert back_in == ["</S>", ".", "rained", "It", "</S>", ".", "closed", "bank", "The"]
    assert back_out == [".", "rained", "It", "<S>", ".", "closed", "bank", "The", "<S>"]


def _words(corpus: TokenizedCorpus, ids) -> list[str]:
    return [corpus.types[i] for i in np.asarray(ids).ravel()]


def _rows(corpus: TokenizedCorpus, vocab: Vocabulary, batches, n: int) -> dict:
    """The first n windows joined per (direction, row): (input words, target words)."""
    from encoder.chars import word_to_ids

    word_of = {tuple(word_to_ids(w)): w for w in corpus.types}
    rows: dict = {}
    for _, (batch, _) in zip(range(n), batches):
        for d, b in np.ndindex(*batch.targets.shape[:2]):
            words, targets = rows.setdefault((d, b), ([], []))
            words.extend(word_of[tuple(batch.char_ids[i].tolist())] for i in batch.token_index[d, b].tolist())
            targets.extend(vocab.words[t] for t in batch.targets[d, b].tolist())
    return rows


@pytest.fixture()
def small_text(tmp_path) -> tuple[TokenizedCorpus, Vocabulary, list[str]]:
    paragraphs = ["The bank closed. It rained.", "A boat sank near the bank.", "We swam. They ran home. Done."]
    (tmp_path / "a.txt").write_text("\n".join(paragraphs[:2]) + "\n\n")
    (tmp_path / "b.txt").write_text(paragraphs[2] + "\n")
    corpus = TokenizedCorpus.from_paths([tmp_path], workers=0, progress=False)
    return corpus, Vocabulary.from_counts(corpus.word_counts(), 100), paragraphs


def test_tokenized_files_hold_framed_sentences(small_text):
    corpus, _, _ = small_text
    first = corpus.names()[0]
    assert _words(corpus, corpus.files[first]) == (
        "<S> The bank closed . </S> <S> It rained . </S> <S> A boat sank near the bank . </S>".split()
    )
    assert corpus.word_counts()["bank"] == 2 and "<S>" not in corpus.word_counts()


def test_windows_are_the_reference_pairs_in_both_directions(small_text):
    corpus, vocab, paragraphs = small_text
    n_pairs = sum(len(paragraph_pairs(paragraph_sentences(p, ENGLISH))[0]) for p in paragraphs)
    rows = _rows(corpus, vocab, iter(LMBatches(corpus, vocab, batch_size=1, unroll=3, seed=5)), n_pairs // 3)
    for d in (0, 1):
        reference = {
            pair for p in paragraphs for pair in zip(*paragraph_pairs(paragraph_sentences(p, ENGLISH), backward=d == 1))
        }
        words, targets = rows[(d, 0)]
        assert len(words) == 3 * (n_pairs // 3)
        assert set(zip(words, targets)) <= reference  # every (input, target) is one the reference makes
        assert len(set(zip(words, targets))) >= len(reference) - 3  # and a pass makes nearly all of them
    assert rows[(0, 0)][0][:3] != rows[(1, 0)][1][:3][::-1]  # the backward LM reads other text at the same step


def test_batches_resume_exactly_and_ranks_split_rows(small_text):
    corpus, vocab, _ = small_text
    straight = iter(LMBatches(corpus, vocab, batch_size=2, unroll=2, seed=3))
    first = [next(straight) for _ in range(12)]  # more than one pass
    assert first[-1][1]["pass"] >= 1
    resumed = LMBatches(corpus, vocab, batch_size=2, unroll=2, seed=3)
    resumed.load_state(first[4][1])
    for (expected, _), (got, _) in zip(first[5:], iter(resumed)):
        assert torch.equal(expected.targets, got.targets) and torch.equal(expected.char_ids, got.char_ids)
    ranks = [iter(LMBatches(corpus, vocab, batch_size=1, unroll=2, seed=3, rank=r, world_size=2)) for r in (0, 1)]
    for expected, _ in first[:3]:
        parts = [next(ranks[r])[0] for r in (0, 1)]
        assert torch.equal(torch.cat([p.targets for p in parts], dim=1), expected.targets)


def _three_steps(corpus, vocab, config, compiled: bool) -> tuple[list[torch.Tensor], list[torch.Tensor], list[int]]:
    """Summed NLL of three training steps (dropout on) from one initialisation, the parameters after them, and how
    many graphs dynamo had compiled before the first step and after each."""
    from encoder.lm_head import LanguageModel, LMHead
    from encoder.model import BiLM
    from encoder.train import TYPE_MULTIPLE, captured_top_layer, make_optimizer, train_step

    cfg = TrainConfig(corpus=[], out="", batch_size=2, unroll=3)
    bilm = BiLM(config)
    bilm.reset_parameters(0)
    head = LMHead(config.projection_dim, len(vocab), cutoffs=[len(vocab) // 2])
    head.reset_parameters(0)
    lm = LanguageModel(bilm, head).train()
    top_layer = captured_top_layer(lm, torch.device("cpu")) if compiled else None
    optimizer = make_optimizer(cfg, list(lm.parameters()))
    multiple = TYPE_MULTIPLE if compiled else 1
    batches = iter(LMBatches(corpus, vocab, 2, 3, seed=1, type_multiple=multiple, cutoffs=head.cutoffs))
    state, losses, graphs = bilm.lstm.zero_state(2), [], [torch._dynamo.utils.counters["stats"]["unique_graphs"]]
    torch.manual_seed(7)
    for _ in range(3):
        batch = next(batches)[0]
        assert len(batch.char_ids) == (TYPE_MULTIPLE if compiled else batch.token_index.max() + 1)
        nll, state = train_step(lm, optimizer, batch, state, cfg, top_layer=top_layer)
        losses.append(nll)
        graphs.append(torch._dynamo.utils.counters["stats"]["unique_graphs"])
    return losses, [p.detach().clone() for p in lm.parameters()], graphs


@pytest.mark.parametrize("clipped", [False, True])
def test_compiled_training_step_gives_the_eager_losses_and_updates(small_text, clipped, monkeypatch):
    """``--compile``: the captured step (padded type table, the top layer under torch.compile) computes the eager
    step's losses and parameter updates, and compiles once: new windows (other types, other rows per softmax
    cluster) recompile nothing. Traced by dynamo and AOT autograd here (backend aot_eager: no C compiler, the eager
    kernels and random numbers); a GPU adds inductor's kernels and CUDA graphs."""
    import encoder.train
    from encoder.train import SIZES

    torch._dynamo.reset()
    monkeypatch.setattr(encoder.train, "compile_options", lambda device: {"backend": "aot_eager"})
    corpus, vocab, _ = small_text
    config = SIZES["tiny"] if clipped else replace(SIZES["tiny"], cell_clip=None, proj_clip=None)
    eager, compiled = _three_steps(corpus, vocab, config, False), _three_steps(corpus, vocab, config, True)
    before, *after = compiled[2]
    assert after[0] > before and after == [after[0]] * 3  # dynamo captured graphs, all at the first step
    for a, b in zip(eager[0] + eager[1], compiled[0] + compiled[1]):
        assert (a - b).abs().max() <= 1e-5 * max(1.0, a.abs().max().item())


def test_a_step_that_fails_to_compile_runs_eagerly(small_text, monkeypatch):
    """A part that fails to compile falls back to eager execution: the run goes on with the eager results."""
    import encoder.train
    from encoder.train import SIZES

    calls = []

    def failing_backend(graph, inputs):
        calls.append(graph)
        raise RuntimeError("no compiler here")

    torch._dynamo.reset()
    monkeypatch.setattr(encoder.train, "compile_options", lambda device: {"backend": failing_backend})
    corpus, vocab, _ = small_text
    eager, compiled = (
        _three_steps(corpus, vocab, SIZES["tiny"], False),
        _three_steps(corpus, vocab, SIZES["tiny"], True),
    )
    assert calls  # compiling was tried
    for a, b in zip(eager[0] + eager[1], compiled[0] + compiled[1]):
        assert torch.allclose(a, b, atol=1e-6)


def test_training_lowers_validation_perplexity(trained):
    out, before, after = trained
    assert before["vocab_size"] == after["vocab_size"] <= 200
    assert before["tokens"] == after["tokens"] > 1000
    assert after["forward"] < 0.5 * before["forward"] and after["backward"] < 0.5 * before["backward"]
    assert after["mean"] < 20, after
    records = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert records[-1]["train_ppl"] < records[0]["train_ppl"]
    assert (out / "learning_curve.png").stat().st_size > 1000
    for name in ("config.json", "model.safetensors", "head.safetensors", "vocab.txt"):
        assert (out / name).is_file()


def test_resume_reproduces_uninterrupted_run(corpus, tmp_path):
    common = dict(corpus=[str(corpus["train"])], **TINY)
    train(TrainConfig(out=str(tmp_path / "straight"), max_tokens=8 * 10 * 12, **common))
    train(TrainConfig(out=str(tmp_path / "split"), max_tokens=8 * 10 * 5, **common))
    train(TrainConfig(out=str(tmp_path / "split"), max_tokens=8 * 10 * 12, resume=True, **common))
    for name in ("model.safetensors", "head.safetensors"):
        a, b = load_file(tmp_path / "straight" / name), load_file(tmp_path / "split" / name)
        assert a.keys() == b.keys()
        for key in a:
            assert torch.equal(a[key], b[key]), f"{name}:{key} differs after resume"
    steps = [json.loads(line)["step"] for line in (tmp_path / "split" / "log.jsonl").read_text().splitlines()]
    assert steps == sorted(steps)


@pytest.mark.parametrize("start", ["fresh", "continue"])
def test_a_run_stopped_and_resumed_keeps_its_warm_up_and_schedule(corpus, trained, tmp_path, monkeypatch, start):
    """Killed (SIGTERM after its 5th step: a checkpoint, then ``Interrupted``) and resumed, a run with a warm-up and
    a cosine schedule takes the learning rates, and ends with the weights, of the same run never stopped: one from
    scratch with its --warmup-steps, one that continued a model with the default warm-up of --continue (which the
    --resume does not name)."""
    import signal

    from encoder import train as training

    common = dict(corpus=[str(corpus["train"])], max_tokens=8 * 10 * 12, schedule="cosine")
    common |= dict(warmup_steps=4, **TINY) if start == "fresh" else dict(**FINE_TUNE)
    common["log_every"] = 1
    begin = {} if start == "fresh" else {"continue_from": str(trained[0])}
    train(TrainConfig(out=str(tmp_path / "straight"), **common, **begin))
    step = training.train_step

    def stopped_after_five(*args, **kwargs):
        result = step(*args, **kwargs)
        stopped_after_five.steps += 1
        if stopped_after_five.steps == 5:
            os.kill(os.getpid(), signal.SIGTERM)  # as `kill` does: the run stops after this step
        return result

    stopped_after_five.steps = 0
    monkeypatch.setattr(training, "train_step", stopped_after_five)
    with pytest.raises(training.Interrupted):
        train(TrainConfig(out=str(tmp_path / "split"), **common, **begin))
    monkeypatch.setattr(training, "train_step", step)
    train(TrainConfig(out=str(tmp_path / "split"), resume=True, **common))

    def rates(run: str) -> list[tuple[int, float]]:
        lines = (tmp_path / run / "log.jsonl").read_text().splitlines()
        return [(r["step"], r["lr"]) for r in map(json.loads, lines) if "lr" in r]

    assert rates("split") == rates("straight") and len(rates("straight")) == 12
    for name in ("model.safetensors", "head.safetensors"):
        a, b = load_file(tmp_path / "straight" / name), load_file(tmp_path / "split" / name)
        assert all(torch.equal(a[key], b[key]) for key in a), f"{name} differs after the resume"


def test_time_budget_stops_cleanly_with_a_checkpoint(corpus, tmp_path):
    threads = torch.get_num_threads()
    train(
        TrainConfig(
            corpus=[str(corpus["train"])],
            out=str(tmp_path),
            time_budget=1e-6,
            **{**TINY, "threads": 3 - min(threads, 2)},
        )
    )
    assert torch.get_num_threads() == threads  # --threads is the run's, not the calling process's from then on
    pointer = json.loads((tmp_path / "checkpoints" / "latest.json").read_text())
    assert (tmp_path / "checkpoints" / pointer["checkpoint"] / "optimizer.safetensors").is_file()
    assert load_language_model(tmp_path)[1].words[:3] == ["<S>", "</S>", "<UNK>"]


DDP_WORKER = """
import sys, torch
from safetensors.torch import save_file
from encoder.train import TrainConfig, train
lm, _ = train(TrainConfig(corpus=[sys.argv[1]], out=sys.argv[2], size="tiny", batch_size=4, unroll=8,
                          vocab_size=100, max_tokens=4 * 8 * 2 * 4, progress=False, threads=1))
save_file({k: v.contiguous() for k, v in lm.state_dict().items()}, sys.argv[3])
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_process_ddp_stays_in_sync(corpus, tmp_path):
    port = _free_port()
    procs = []
    for rank in (0, 1):
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
            "WORLD_SIZE": "2",
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "OMP_NUM_THREADS": "1",
        }
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    DDP_WORKER,
                    str(corpus["train"]),
                    str(tmp_path / "out"),
                    str(tmp_path / f"rank{rank}.st"),
                ],
                env=env,
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    for proc in procs:
        output, _ = proc.communicate(timeout=180)
        assert proc.returncode == 0, output
    ranks = [load_file(tmp_path / f"rank{r}.st") for r in (0, 1)]
    saved = load_language_model(tmp_path / "out")[0].state_dict()  # written by rank 0 at the end
    for key in ranks[0]:
        assert torch.equal(ranks[0][key], ranks[1][key]), f"ranks differ in {key}"
        assert torch.equal(ranks[0][key], saved[key])
    progress = json.loads((tmp_path / "out" / "config.json").read_text())["training"]
    assert progress["tokens"] == 4 * 8 * 2 * 4 and progress["step"] == 4  # 2 ranks x 4 rows x 8 steps per step
    assert not list((tmp_path / "out").glob(".vocab.txt*"))  # the vocabulary the ranks shared is gone
    assert {p.name for p in (tmp_path / "out" / "checkpoints").glob("step-*/rank*.json")} == {
        "rank0.json",
        "rank1.json",
    }


def test_perplexity_cli_json(trained, corpus):
    """``encoder perplexity --json`` prints the perplexities the Python API computes; --max-tokens caps what is read."""
    out, _, after = trained
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "encoder",
            "perplexity",
            "--model",
            str(out),
            "--corpus",
            str(corpus["valid"]),
            "--json",
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    numbers = json.loads(result.stdout)
    assert list(numbers) == ["forward", "backward", "mean", "tokens", "vocab_size", "unknown"]
    assert numbers == pytest.approx(after) and numbers["unknown"] == 0  # the share of <UNK> targets: none here
    limited = perplexity(str(out), corpus["valid"].read_text().splitlines(), max_tokens=100)
    assert 100 <= limited["tokens"] < 200


def test_fine_tune_from_our_model_keeps_head_and_vocabulary(trained, corpus, tmp_path):
    out, _, _ = trained
    train(
        TrainConfig(
            corpus=[str(corpus["valid"])], out=str(tmp_path), init_from=str(out), max_tokens=8 * 10 * 3, **FINE_TUNE
        )
    )
    assert (tmp_path / "vocab.txt").read_text() == (out / "vocab.txt").read_text()


def test_fine_tune_from_allennlp_weights_makes_a_fresh_head(corpus, tmp_path):
    fixture = SHARED / "fixtures" / "elmo"
    if not (fixture / "lm_weights.hdf5").is_file():
        pytest.skip(f"reference fixture not found at {fixture} (../shared is absent in this clone)")
    train(
        TrainConfig(
            corpus=[str(corpus["train"])],
            out=str(tmp_path),
            init_from=str(fixture),
            max_tokens=8 * 10 * 3,
            **FINE_TUNE,
            vocab_size=TINY["vocab_size"],
        )
    )
    lm, vocab = load_language_model(tmp_path)
    assert lm.bilm.config.lstm_dim == 64 and len(vocab) <= 200


KOREAN = [
    "서울은 대한민국의 수도이다. 한강이 도시를 가로질러 흐른다.",
    "나는 아침마다 공원에서 산책을 한다. 날씨가 좋으면 친구와 함께 간다.",
    "이 책은 조선 시대의 역사를 다룬다. 많은 학생들이 이 책을 읽었다.",
    "강가에 앉아 물소리를 들었다. 배 한 척이 천천히 지나갔다.",
    "은행에서 새 계좌를 열었다. 직원이 친절하게 설명해 주었다.",
]


def test_korean_text_trains(tmp_path):
    """A Korean model trains on Kiwi's morphemes, records its language, and is refused as the start of an English one."""
    corpus_file = tmp_path / "ko.txt"
    corpus_file.write_text("\n".join(KOREAN * 20) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    lm, vocab = train(
        TrainConfig(corpus=[str(corpus_file)], out=str(out), max_tokens=8 * 10 * 10, language="ko", **TINY)
    )
    assert "서울" in vocab.words and "서울은" not in vocab.words  # Kiwi's morphemes: the noun without its particle
    assert json.loads((out / "config.json").read_text())["language"] == "ko"
    assert Elmo.load(out).text.language == "ko"
    result = evaluate(lm, vocab, [paragraph_sentences(line, text_rules("ko")) for line in KOREAN])
    assert math.isfinite(result["mean"]) and result["tokens"] > 40
    with pytest.raises(ValueError, match="is a model of language 'ko'"):
        train(
            TrainConfig(
                corpus=[str(corpus_file)], out=str(tmp_path / "en"), init_from=str(out), language="en", **FINE_TUNE
            )
        )


def test_shared_korean_corpus_trains(tmp_path):
    """The shared Korean corpus (xz-compressed) trains a tiny model to a finite perplexity."""
    source = SHARED / "data" / "corpus-ko" / "valid.txt.xz"
    if not source.is_file():
        pytest.skip(f"{source} not found (../shared is absent in this clone)")
    from encoder.files import open_text

    with open_text(source) as f:
        lines = [line for _, line in zip(range(30), f)]
    (tmp_path / "ko.txt").write_text("".join(lines), encoding="utf-8")
    lm, vocab = train(
        TrainConfig(
            corpus=[str(tmp_path / "ko.txt")], out=str(tmp_path / "out"), max_tokens=8 * 10 * 3, language="ko", **TINY
        )
    )
    paragraphs = [paragraph_sentences(line, text_rules("ko")) for line in lines[:5]]
    assert math.isfinite(evaluate(lm, vocab, paragraphs)["mean"])


@pytest.fixture(scope="module")
def default_elmo() -> Elmo:
    if not (DEFAULT_MODEL_DIR / "config.json").is_file():
        pytest.skip("the default model is not in data/models/default yet")
    return Elmo.load("default")


def test_default_model_loads_embeds_and_has_its_head(default_elmo):
    layers = default_elmo.embed(["The bank of the river was flooded ."])[0]
    assert layers.shape == (3, 8, default_elmo.dim) and layers.dtype == "float32"
    result = perplexity(default_elmo, ["The bank of the river was flooded. Nobody crossed it."])
    assert result["vocab_size"] >= 100_000 and math.isfinite(result["mean"])


SENSES = {  # the sense probe of data/models/default/README.md
    "bank": (
        [
            "We sat on the bank of the river and watched the boats .",
            "The river overflowed its bank after the heavy rain .",
            "Fishermen lined the muddy bank of the stream .",
        ],
        [
            "She deposited the money in the bank on Monday .",
            "The bank approved his loan for the new house .",
            "He works as a teller at a large bank in London .",
        ],
    ),
    "play": (
        [
            "The children play football in the park every afternoon .",
            "The dogs play in the garden all day .",
            "They like to play cards after dinner .",
        ],
        [
            "We saw a play by Shakespeare at the theatre .",
            "The play was performed in three acts .",
            "She wrote a play about the war .",
        ],
    ),
}


@pytest.mark.parametrize("word", sorted(SENSES))
def test_default_model_separates_senses(default_elmo, word):
    """Top-layer vectors of a word are closer within a sense than across senses (on average)."""
    groups = []
    for sentences in SENSES[word]:
        tokens = [s.split() for s in sentences]
        top = [layers[2, t.index(word)] for layers, t in zip(default_elmo.embed(tokens), tokens)]
        groups.append(torch.nn.functional.normalize(torch.tensor(np.array(top)), dim=1))
    within = torch.cat([(g @ g.T)[torch.triu_indices(3, 3, 1).unbind()] for g in groups]).mean()
    across = (groups[0] @ groups[1].T).mean()
    assert within > across, (float(within), float(across))


def test_continue_carries_counters_and_does_not_start_the_loss_over(trained, corpus, tmp_path):
    """--continue: tokens and steps go on from the model's own, and --max-tokens counts this run's (it counted the
    model's too: a budget under them trained nothing and said "model written"); the first logged loss stays near
    where the model left off (within 25 % of its last training perplexity), far from a fresh model's."""
    model, _, _ = trained
    before = json.loads((model / "config.json").read_text())["training"]
    last_ppl = [
        json.loads(line) for line in (model / "log.jsonl").read_text().splitlines() if "train_ppl" in json.loads(line)
    ][-1]["train_ppl"]
    cfg = TrainConfig(
        corpus=[str(corpus["train"])],
        out=str(tmp_path / "continued"),
        continue_from=str(model),
        max_tokens=8 * 10 * 10,
        warmup_steps=5,
        **FINE_TUNE,
    )
    train(cfg)
    assert json.loads((tmp_path / "continued" / "run.json").read_text())["tokens_at_start"] == before["tokens"]
    after = json.loads((tmp_path / "continued" / "config.json").read_text())
    assert after["training"]["tokens"] == before["tokens"] + 8 * 10 * 10
    assert after["training"]["step"] == before["step"] + 10
    train(replace(cfg, continue_from=None, resume=True, max_tokens=8 * 10 * 12))  # on to the run's total, as recorded
    assert json.loads((tmp_path / "continued" / "config.json").read_text())["training"]["step"] == before["step"] + 12
    assert after["name"] == json.loads((model / "config.json").read_text())["name"]
    first = [json.loads(line) for line in (tmp_path / "continued" / "log.jsonl").read_text().splitlines()][0]
    assert first["train_ppl"] < 1.25 * last_ppl
    assert (model / "model.safetensors").stat().st_mtime < (
        tmp_path / "continued" / "model.safetensors"
    ).stat().st_mtime


def test_training_modes_refuse_each_others_misuse(trained, corpus, tmp_path):
    model, _, _ = trained
    common = dict(corpus=[str(corpus["train"])], out=str(tmp_path / "x"), max_tokens=80, **TINY)
    with pytest.raises(ValueError, match="exclude each other"):
        train(TrainConfig(resume=True, continue_from=str(model), **common))
    with pytest.raises(ValueError, match="exclude each other"):
        train(TrainConfig(init_from=str(model), continue_from=str(model), **common))
    headless = tmp_path / "headless"
    headless.mkdir()
    for name in ("config.json", "model.safetensors"):
        (headless / name).write_bytes((model / name).read_bytes())
    with pytest.raises(ValueError, match="no LM head"):
        train(TrainConfig(continue_from=str(headless), **common))


def test_ship_continued_run_replaces_the_model_whole_and_its_log_goes_on(trained, corpus, tmp_path):
    import shutil

    from encoder.ship import ship

    model, _, _ = trained
    shipped = tmp_path / "models" / "default"
    shutil.copytree(model, shipped, ignore=shutil.ignore_patterns("checkpoints"))
    from encoder.ship import FIGURES_END, FIGURES_START

    (shipped / "README.md").write_text(f"the model card\n{FIGURES_START}\nold figures\n{FIGURES_END}\nmore card\n")
    (shipped / "glove-ko-50d.txt.xz").write_bytes(b"shipped beside the model")
    weights = (shipped / "model.safetensors").read_bytes()
    before = json.loads((shipped / "config.json").read_text())["training"]
    run = tmp_path / "run"
    train(
        TrainConfig(
            corpus=[str(corpus["train"])],
            out=str(run),
            continue_from=str(shipped),
            max_tokens=8 * 10 * 10,
            warmup_steps=5,
            **FINE_TUNE,
        )
    )
    assert (shipped / "model.safetensors").read_bytes() == weights  # training never writes into the model it continues
    ship(run, shipped)
    after = json.loads((shipped / "config.json").read_text())["training"]
    assert after["tokens"] == before["tokens"] + 8 * 10 * 10 and after["hardware"] == ["1 x CPU"]
    assert {t.dtype for t in load_file(shipped / "model.safetensors").values()} == {torch.float16}
    card = (shipped / "README.md").read_text()
    assert card.startswith("the model card\n") and card.endswith(f"{FIGURES_END}\nmore card\n")
    assert "old figures" not in card and f"| tokens seen | {after['tokens']:,} |" in card and "1 x CPU" in card
    steps = [json.loads(line)["step"] for line in (shipped / "log.jsonl").read_text().splitlines()]
    assert steps[0] < before["step"] < steps[-1] == after["step"] and steps == sorted(steps)
    assert sorted(p.name for p in shipped.parent.iterdir()) == ["default"]  # no staging or old folder left
    assert (shipped / "glove-ko-50d.txt.xz").read_bytes() == b"shipped beside the model"  # kept
    assert load_language_model(shipped)[1].words == load_language_model(model)[1].words


@pytest.mark.parametrize("name", ["vocab.txt", "model.safetensors", "head.safetensors"])
def test_a_users_file_of_a_model_files_name_in_out_is_refused_not_replaced(corpus, tmp_path, name):
    """A run writes its model into --out at the end: a user's own file of one of the model's names there (a folder
    with no run record or config.json) was replaced without a word. It is refused before any work, --overwrite too."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / name).write_text("mine\n")
    common = dict(corpus=[str(corpus["train"])], out=str(out), max_tokens=8 * 10 * 3, **TINY)
    with pytest.raises(
        FileExistsError, match=f"already holds a training run, a model or files of a model's names \\({name}\\)"
    ):
        train(TrainConfig(**common))
    with pytest.raises(NotOwnedError, match="not a training run"):
        train(TrainConfig(overwrite=True, **common))
    assert [p.name for p in out.iterdir() if p.name != ".lock"] == [name] and (out / name).read_text() == "mine\n"


def test_a_run_never_replaces_another_run_or_a_model_unless_told(trained, corpus, tmp_path):
    """Training into a folder holding a run or a model refuses without --resume/--overwrite, before any work;
    --resume needs a checkpoint of the same shape; --overwrite starts over and keeps unrelated files."""
    import shutil

    model, _, _ = trained
    out = tmp_path / "run"
    shutil.copytree(model, out)
    (out / "notes.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    common = dict(corpus=[str(corpus["train"])], out=str(out), max_tokens=8 * 10 * 3, **TINY)
    with pytest.raises(FileExistsError, match="already holds a training run"):
        train(TrainConfig(**common))
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # nothing touched
    with pytest.raises(ValueError, match="other --unroll"):
        train(TrainConfig(resume=True, **{**common, "unroll": 5}))
    with pytest.raises(ValueError, match="holds no checkpoint"):
        train(TrainConfig(resume=True, **{**common, "out": str(tmp_path / "empty")}))
    train(TrainConfig(overwrite=True, **common))
    assert (out / "notes.txt").read_text() == "mine" and (out / "config.json").is_file()
    assert json.loads((out / "config.json").read_text())["training"]["step"] == 3  # a new run, not the old one
    assert not (out / "log.jsonl").exists() or (out / "log.jsonl").read_bytes() != before["log.jsonl"]
    latest = json.loads((out / "checkpoints" / "latest.json").read_text())["checkpoint"]
    assert (out / "checkpoints" / latest).is_dir()  # pruning never removes what latest.json names


def test_learning_rate_schedules():
    """The learning rate: constant by default, warmed up when continuing a model, cosine and linear decays to their floor."""
    from encoder.train import learning_rate

    fresh = TrainConfig(corpus=[], out="", lr=1.0)
    assert learning_rate(fresh, 0, 0.0) == learning_rate(fresh, 10, 0.9) == 1.0  # the reference: constant
    continued = replace(fresh, continue_from="default")
    assert learning_rate(continued, 0, 0.0) == pytest.approx(1 / 300)  # a fresh optimizer on a trained model
    assert learning_rate(continued, 299, 0.5) == 1.0
    cosine = replace(fresh, schedule="cosine", warmup_steps=10, final_lr_ratio=0.1)
    assert learning_rate(cosine, 4, 0.0) == pytest.approx(0.5)
    assert learning_rate(cosine, 10, 0.5) == pytest.approx(0.55)
    assert learning_rate(cosine, 10, 1.0) == pytest.approx(0.1) == learning_rate(cosine, 10, 1.7)
    linear = replace(fresh, schedule="linear", final_lr_ratio=0.0)
    assert [learning_rate(linear, 5, f) for f in (0.0, 0.25, 1.0)] == [1.0, 0.75, 0.0]


def test_recipes_fill_options_and_explicit_ones_win(tmp_path, corpus):
    from encoder.train_config import RECIPES, TrainConfig

    cfg = TrainConfig.from_recipe("adamw-cosine", corpus=[], out="", batch_size=8)
    assert (cfg.size, cfg.optimizer, cfg.schedule, cfg.batch_size, cfg.recipe) == (
        "medium",
        "adamw",
        "cosine",
        8,
        "adamw-cosine",
    )
    assert RECIPES["reference"].size == TrainConfig.from_recipe("reference", corpus=[], out="").size == "medium"
    with pytest.raises(ValueError, match="unknown recipe 'fast'"):
        TrainConfig.from_recipe("fast", corpus=[], out="")
    from encoder.train import check_modes

    check_modes(TrainConfig.from_recipe("reference", corpus=[], out=str(tmp_path / "a"), continue_from="default"))
    with pytest.raises(ValueError, match="'wide' shape and default has another"):
        check_modes(TrainConfig.from_recipe("wide", corpus=[], out=str(tmp_path / "b"), continue_from="default"))
    out = tmp_path / "run"
    cli = subprocess.run(
        [sys.executable, "-m", "encoder", "train", "--recipe", "adamw-cosine", "--size", "tiny", "--batch-size", "4",
         "--unroll", "5", "--vocab-size", "60", "--max-tokens", "400", "--log-every", "1", "--warmup-steps", "2",
         "--corpus", str(corpus["train"]), "--out", str(out), "--no-progress", "--workers", "0"],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    config = json.loads(sorted((out / "checkpoints").glob("step-*"))[-1].joinpath("trainer.json").read_text())["config"]
    assert (config["recipe"], config["optimizer"], config["size"], config["batch_size"]) == (
        "adamw-cosine",
        "adamw",
        "tiny",
        4,
    )
    lrs = [r["lr"] for r in map(json.loads, (out / "log.jsonl").read_text().splitlines()) if "lr" in r]
    assert lrs[0] == pytest.approx(1e-3) and lrs[1] == pytest.approx(
        2e-3 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.05)))
    )
    assert len(lrs) == 20 and lrs[-1] < 4e-4 and lrs[1:] == sorted(lrs[1:], reverse=True)
    refused = subprocess.run(
        [sys.executable, "-m", "encoder", "train", "--schedule", "cosine", "--corpus", str(corpus["train"]), "--out",
         str(tmp_path / "x")], capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert refused.returncode == 2 and "give --max-tokens or --time-budget" in refused.stderr


def test_a_run_from_a_model_refuses_a_shape_or_vocabulary_it_would_ignore(tmp_path):
    """--init-from and --continue keep the model's shape, softmax and vocabulary: asking for others is an error, not
    silence; published weights (no softmax) take a vocabulary size."""
    from encoder.train import check_modes

    fixture = SHARED / "fixtures" / "elmo"
    out = str(tmp_path / "out")
    for start in ({"init_from": "default"}, {"continue_from": "default"}):
        check_modes(TrainConfig(corpus=[], out=out, size="medium", **start))  # the model's own shape: nothing ignored
        for option, refusal in (
            ({"size": "wide"}, "--size asks for the 'wide' shape and default has another"),
            ({"config": str(fixture / "options.json")}, "keeps default's shape: --config"),
            ({"vocab_size": 5000}, "keeps default's own softmax and vocabulary: --vocab-size"),
            ({"vocab": str(tmp_path / "vocab.txt")}, "keeps default's own softmax and vocabulary: --vocab "),
        ):
            with pytest.raises(ValueError, match=refusal):
                check_modes(TrainConfig(corpus=[], out=out, **start, **option))
    if fixture.is_dir():
        check_modes(TrainConfig(corpus=[], out=out, init_from=str(fixture), vocab_size=5000))
    cli = subprocess.run(
        [sys.executable, "-m", "encoder", "train", "--continue", "default", "--size", "wide", "--corpus", out, "--out", out],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert (cli.returncode, cli.stderr.count("error:"), cli.stdout) == (2, 1, ""), cli.stderr
    assert "--size asks for the 'wide' shape" in cli.stderr and not Path(out).exists()


def test_overwrite_into_a_new_folder_starts_a_run(corpus, tmp_path):
    """--overwrite where nothing is yet (as bench/clip_rule.py and recipe_rule.py pass it) simply trains."""
    out = tmp_path / "new" / "run"
    train(TrainConfig(corpus=[str(corpus["train"])], out=str(out), overwrite=True, max_tokens=8 * 10, **TINY))
    assert (out / "config.json").is_file() and (out / "run.json").is_file()


def test_a_corpus_too_small_for_a_batch_is_refused_before_the_folder_holds_a_run(corpus, tmp_path):
    """A run refused for its corpus leaves no run behind (no run.json), so the same command with a larger corpus
    starts without --overwrite."""
    small = tmp_path / "small.txt"
    small.write_text("one two three four five six seven\n", encoding="utf-8")
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="too few for 8 rows of 10"):
        train(TrainConfig(corpus=[str(small)], out=str(out), max_tokens=8 * 10, **TINY))
    assert not (out / "run.json").exists()
    train(TrainConfig(corpus=[str(corpus["train"])], out=str(out), max_tokens=8 * 10, **TINY))
    assert (out / "config.json").is_file()


def test_frozen_char_cnn_gives_the_rest_the_same_gradients_and_stays_as_it_was(trained, small_text, corpus, tmp_path):
    """``--freeze-char-cnn``: the LSTMs and the head get the gradients of the unfrozen step, bit for bit (the same
    operations; only the char CNN's backward is left out), the char CNN gets none; and a fine-tuning run leaves its
    weights exactly as they were while the LSTMs move."""
    out, _, _ = trained
    text, _, _ = small_text
    gradients = []
    for frozen in (False, True):
        lm, vocab = load_language_model(out)
        lm.train().bilm.char_cnn.requires_grad_(not frozen)
        batch = next(iter(LMBatches(text, vocab, 2, 5, 0, cutoffs=lm.head.cutoffs)))[0]
        torch.manual_seed(0)
        nll, count, _ = lm(batch, lm.bilm.lstm.zero_state(2), dropout=0.1)
        (nll / count).mean().backward()
        gradients.append({name: p.grad for name, p in lm.named_parameters()})
    trained_grads, frozen_grads = gradients
    for name, grad in frozen_grads.items():
        if name.startswith("bilm.char_cnn."):
            assert grad is None and trained_grads[name] is not None
        else:
            assert torch.equal(grad, trained_grads[name]), name
    before = load_file(out / "model.safetensors")
    cfg = TrainConfig(
        corpus=[str(corpus["valid"])], out=str(tmp_path), init_from=str(out), max_tokens=8 * 10 * 3, **FINE_TUNE
    )
    train(replace(cfg, freeze_char_cnn=True))
    after = load_file(tmp_path / "model.safetensors")
    moved = {name for name in before if not torch.equal(before[name], after[name])}
    assert moved and all(name.startswith("lstm.") for name in moved), moved


@pytest.mark.parametrize("max_words", [None, 20])
def test_a_frozen_char_cnn_s_cached_word_vectors_train_bit_for_bit_as_the_uncached(trained, corpus, max_words):
    """``freeze_char_cnn(cached=True)`` (``--freeze-char-cnn`` on a CPU): over consecutive training windows the
    losses and every weight are those of the uncached frozen steps, bit for bit, while the later windows' words come
    mostly from the cache; and so when the cache is full (20 words: the others computed window by window)."""
    out, _, _ = trained
    text = TokenizedCorpus.from_paths([corpus["valid"]], workers=0, progress=False)
    cfg = TrainConfig(corpus=[], out="", **TINY)
    runs = []
    for cached in (False, True):
        lm, vocab = load_language_model(out)
        lm.train().freeze_char_cnn(True, cached=cached)
        if cached and max_words is not None:
            lm.frozen_tokens.cache.max_words = max_words
        optimizer = make_optimizer(cfg, list(lm.parameters()))
        state = lm.bilm.lstm.zero_state(cfg.batch_size)
        windows = [batch for (batch, _), _ in zip(LMBatches(text, vocab, cfg.batch_size, cfg.unroll, 0), range(6))]
        torch.manual_seed(0)  # the same dropout masks
        losses = []
        for window in windows:
            nll, state = train_step(lm, optimizer, window, state, cfg)
            losses.append(nll)
        runs.append((lm, torch.stack(losses)))
    (plain, plain_losses), (cached, cached_losses) = runs
    assert torch.equal(plain_losses, cached_losses)
    for (name, weight), cached_weight in zip(plain.state_dict().items(), cached.state_dict().values()):
        assert torch.equal(weight, cached_weight), name
    looked_up = sum(len(window.char_ids) for window in windows)
    held = len(cached.frozen_tokens.cache)
    assert plain.frozen_tokens is None and (held == max_words if max_words else held < 0.7 * looked_up), (
        held,
        looked_up,
    )


def test_the_fine_tuning_bench_counts_the_flops_a_hand_count_gives():
    """``bench.finetune_cpu.step_flops`` on a tiny model: the char CNN's forward is the hand count of its
    convolutions (each filter over every window of the 50 characters), highway and projection; its backward is twice
    that, and freezing it removes that backward and the first LSTM layer's input gradient, both directions."""
    from bench.finetune_cpu import fine_tuning, step_flops
    from encoder.lm_data import Batch
    from encoder.lm_head import LanguageModel, LMHead
    from encoder.model import BiLM
    from encoder.train import SIZES

    config, n_types, rows, steps = SIZES["tiny"], 7, 3, 4
    bilm = BiLM(config)
    bilm.reset_parameters(0)
    lm = LanguageModel(bilm, LMHead(config.projection_dim, 100))
    generator = torch.Generator().manual_seed(0)
    batch = Batch(
        torch.randint(1, 200, (n_types, 50), generator=generator),
        torch.randint(0, n_types, (2, rows, steps), generator=generator),
        torch.randint(0, 100, (2, rows, steps), generator=generator),
    )
    E, F, P, H = config.char_embed_dim, config.n_filters, config.projection_dim, config.lstm_dim
    char_cnn = n_types * (
        sum(2 * E * width * n * (50 - width + 1) for width, n in config.filters)
        + config.n_highway * 2 * (2 * F * F)
        + 2 * F * P
    )
    lstm_input_gradient = 2 * (2 * rows * steps * P * 4 * H)
    trained, frozen = (step_flops(*fine_tuning(lm, rows, steps, f), batch) for f in (False, True))
    assert trained - frozen == 2 * char_cnn + lstm_input_gradient
