"""Fine-tuning the shipped default model on a CPU: where a step's time goes, and how near the machine's limit it is.

Runs ``train_step`` of ``encoder train --init-from default`` (the default model, its head and vocabulary) on
windows of the validation text of corpus-en when ../shared is there, otherwise of generated sentences, and prints:

- the step's floating-point operations per token, counted by ``torch.utils.flop_counter.FlopCounterMode`` on one
  step (matmuls and convolutions, forward and backward; element-wise work is not counted);
- the machine's matmul rate: GFLOP/s of a 2048 x 2048 float32 matmul at the same thread count, the limit;
- per setting (batch x window, ``--freeze-char-cnn``, and frozen with each word's vector cached, as ``encoder train
  --freeze-char-cnn`` runs on a CPU): tokens/s of its fastest step and over all its timed steps (the settings take
  turns, with the matmul, whose best is the limit; every setting steps through the same consecutive windows, as a
  run does, so that a cache meets new words as it would), the ratio of the fastest to today's setting in the same
  run, its share of the limit (tokens/s x FLOPs per token of that setting / matmul rate; FLOPs counted on the window
  after the timed ones, a cache as warm as the timed steps left it), the share of the timed windows' words a
  cache already held, and the validation perplexity of its model after its few steps (both directions, the first
  3,000 tokens of a corpus-en shard);
- where a step spends its time: torch.profiler's table of one step of today's setting, and of it frozen.

The first steps are warm-up and not timed. The 1-minute load average is printed: the machine is shared.

    python -m bench.finetune_cpu [--rounds 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from encoder.corpus import TokenizedCorpus, held_out_paragraphs
from encoder.lm_data import Batch, LMBatches
from encoder.lm_head import LanguageModel, evaluate, load_language_model
from encoder.model_files import DEFAULT_MODEL_DIR
from encoder.threads import apply_threads
from encoder.train import TrainConfig, make_optimizer, train_step

from .train_speed import SHARED_TEXT, text_file

HELD_OUT = SHARED_TEXT.parent / "shard-007.txt.xz"
"""Validation text: the first 3,000 tokens of a corpus-en shard (else of the bench's own text)."""

SETTINGS = [  # (batch, window, frozen char CNN, its word vectors cached); the first is encoder train's defaults
    (64, 20, False, False),
    (32, 20, False, False),
    (128, 20, False, False),
    (64, 20, True, False),
    (128, 20, True, False),
    (64, 20, True, True),
    (128, 20, True, True),
]


def load_average() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def matmul_rate(size: int = 2048, repeats: int = 5) -> float:
    """GFLOP/s of a float32 ``size`` x ``size`` matmul at torch's thread count: the best of ``repeats``."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - started)
    return 2 * size**3 / best / 1e9


def fine_tuning(
    lm: LanguageModel, batch_size: int, unroll: int, frozen: bool, cached: bool = False
) -> tuple[LanguageModel, TrainConfig]:
    """A copy of ``lm`` set up as ``encoder train --init-from`` sets it up, with these options (``cached``: the frozen
    char CNN's word vectors kept, as a run on a CPU keeps them)."""
    lm = copy.deepcopy(lm).train()
    lm.freeze_char_cnn(frozen, cached)
    return lm, TrainConfig(corpus=[], out="", batch_size=batch_size, unroll=unroll, freeze_char_cnn=frozen)


def step_flops(lm: LanguageModel, cfg: TrainConfig, window: Batch) -> int:
    """Floating-point operations of one training step on ``window`` (forward, backward, clip, optimizer), counted
    on a copy of the model, so that ``lm`` is not stepped."""
    lm = copy.deepcopy(lm)
    optimizer = make_optimizer(cfg, list(lm.parameters()))
    state = lm.bilm.lstm.zero_state(cfg.batch_size)
    with FlopCounterMode(display=False) as counter:
        train_step(lm, optimizer, window, state, cfg)
    return counter.get_total_flops()


def windows(corpus: TokenizedCorpus, lm: LanguageModel, vocab, cfg: TrainConfig, n: int) -> list[Batch]:
    batches = iter(LMBatches(corpus, vocab, cfg.batch_size, cfg.unroll, 0, cutoffs=lm.head.cutoffs))
    return [next(batches)[0] for _ in range(n)]


def cached_share(batches: list[Batch]) -> float:
    """The share of the words of ``batches[1:]`` (a window's distinct words, each window counted) that an earlier
    window of ``batches`` held: what a cache of word vectors started on ``batches[0]`` serves."""
    seen = {row.tobytes() for row in batches[0].char_ids.numpy()}
    held = looked_up = 0
    for batch in batches[1:]:
        words = {row.tobytes() for row in batch.char_ids.numpy()}
        held, looked_up = held + len(words & seen), looked_up + len(words)
        seen |= words
    return held / max(looked_up, 1)


class Stepper:
    """Training steps of one setting on consecutive windows, from one untimed step on: its fastest step is its
    speed, so that a step slowed by another user of the shared machine does not count; its timed steps' total is
    its speed over them."""

    def __init__(self, lm: LanguageModel, cfg: TrainConfig, batches: list[Batch]):
        self.lm, self.cfg, self.batches = lm, cfg, batches
        self.optimizer = make_optimizer(cfg, list(lm.parameters()))
        self.state = lm.bilm.lstm.zero_state(cfg.batch_size)
        self.steps, self.fastest, self.timed = 0, float("inf"), []
        self.step()

    def step(self) -> float:
        started = time.perf_counter()
        window = self.batches[self.steps]
        _, self.state = train_step(self.lm, self.optimizer, window, self.state, self.cfg)
        self.steps += 1
        return time.perf_counter() - started

    def timed_step(self) -> None:
        self.timed.append(self.step())
        self.fastest = min(self.timed)

    def tokens_per_second(self) -> float:
        return self.cfg.batch_size * self.cfg.unroll / self.fastest

    def tokens_per_second_over_all(self) -> float:
        return self.cfg.batch_size * self.cfg.unroll * len(self.timed) / sum(self.timed)


def profile_step(lm: LanguageModel, cfg: TrainConfig, batches: list[Batch], rows: int = 10) -> str:
    """torch.profiler's table of one training step after a warm-up one: the ops by their own CPU time."""
    from torch.profiler import ProfilerActivity, profile

    optimizer = make_optimizer(cfg, list(lm.parameters()))
    state = lm.bilm.lstm.zero_state(cfg.batch_size)
    _, state = train_step(lm, optimizer, batches[0], state, cfg)
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        train_step(lm, optimizer, batches[1], state, cfg)
    return profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows, max_name_column_width=32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--rounds", type=int, default=3, help="timed steps per setting, the settings in turn (default %(default)s)"
    )
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default %(default)s)")
    args = parser.parse_args()
    apply_threads(args.threads)
    torch.manual_seed(0)
    lm, vocab = load_language_model(DEFAULT_MODEL_DIR)
    with tempfile.TemporaryDirectory() as workdir:
        text = text_file(Path(workdir))
        corpus = TokenizedCorpus.from_paths([text], workers=0, progress=False)
    print(f"cpu, {torch.get_num_threads()} threads, default model (vocabulary {len(vocab)}), text {text.name}")
    steppers, counted = [], []  # counted: the window after the timed ones, whose step's FLOPs are counted
    for batch_size, unroll, frozen, cached in SETTINGS:
        model, cfg = fine_tuning(lm, batch_size, unroll, frozen, cached)
        *timed, after = windows(corpus, model, vocab, cfg, args.rounds + 2)
        steppers.append(Stepper(model, cfg, timed))
        counted.append(after)
    rate = 0.0
    for _ in range(args.rounds):  # the settings and the limit take turns, so that each sees the same load
        rate = max(rate, matmul_rate())
        for stepper in steppers:
            stepper.timed_step()
    print(f"matmul rate (2048 x 2048 float32, the best): {rate:.1f} GFLOP/s; 1-minute load {load_average():.2f}")
    print()
    speeds = [stepper.tokens_per_second() for stepper in steppers]
    held_out = held_out_paragraphs(HELD_OUT if HELD_OUT.is_file() else text, "en", 3000)
    perplexities = [evaluate(stepper.lm, vocab, held_out)["mean"] for stepper in steppers]
    flops = []  # after the timings: a FlopCounterMode pass is not left in the way of a timed step
    for stepper, window in zip(steppers, counted):
        flops.append(step_flops(stepper.lm, stepper.cfg, window) / (stepper.cfg.batch_size * stepper.cfg.unroll))
    print(f"{'batch x window':>14} {'char CNN':>15} {'FLOPs/token (M)':>16} {'tokens/s':>9} {'all steps':>9}", end="")
    print(f" {'ratio':>6} {'of limit':>9} {'words cached':>12} {'valid ppl':>9}")
    for (batch_size, unroll, frozen, cached), stepper, speed, per_token, ppl in zip(
        SETTINGS, steppers, speeds, flops, perplexities
    ):
        kind = ("frozen, cached" if cached else "frozen") if frozen else "trained"
        share = f"{cached_share(stepper.batches):.0%}" if cached else "-"
        print(
            f"{f'{batch_size} x {unroll}':>14} {kind:>15} {per_token / 1e6:16.1f} {speed:9.0f} "
            f"{stepper.tokens_per_second_over_all():9.0f} {speed / speeds[0]:6.2f} "
            f"{speed * per_token / 1e9 / rate:9.0%} {share:>12} {ppl:9.1f}"
        )
    print(f"the default model before fine-tuning: valid ppl {evaluate(lm, vocab, held_out)['mean']:.1f}")
    print(f"1-minute load {load_average():.2f}")
    print()
    for batch_size, unroll, frozen, _ in (SETTINGS[0], SETTINGS[3]):
        model, cfg = fine_tuning(lm, batch_size, unroll, frozen)
        print(f"one step of {batch_size} x {unroll}, char CNN {'frozen' if frozen else 'trained'} (torch.profiler)")
        print(profile_step(model, cfg, windows(corpus, model, vocab, cfg, 2)))
        print(f"1-minute load {load_average():.2f}")


if __name__ == "__main__":
    main()
