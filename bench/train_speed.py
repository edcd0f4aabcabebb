"""Training throughput (tokens of text per second; both directions predict each token) of biLM shapes.

Runs real training steps (char CNN, both LSTMs, adaptive softmax, backward, clipping, Adagrad; ``train_step`` of
``encoder train``) on windows of the validation text of corpus-en when ../shared is there, otherwise of
generated sentences, and prints a table. The first steps are warm-up and not timed; windows are built before
timing (the whole-run figure, data pipeline included, is the ``tokens_per_second`` that ``encoder train`` logs).
``bench/gpu.py`` uses the same measurement on a GPU.

    python -m bench.train_speed [--steps 10] [--batch-size 64] [--threads 2]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import torch

from encoder.corpus import TokenizedCorpus
from encoder.lm_data import LMBatches, Vocabulary
from encoder.lm_head import LanguageModel, LMHead
from encoder.model import BiLM, BiLMConfig
from encoder.model_files import DEFAULT_MODEL_DIR
from encoder.threads import apply_threads
from encoder.train import SIZES, TYPE_MULTIPLE, TrainConfig, captured_top_layer, make_optimizer, train_step
from encoder.weights import read_config

SHARED_TEXT = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus-en" / "valid.txt.xz"


def text_file(workdir: Path) -> Path:
    if SHARED_TEXT.is_file():
        return SHARED_TEXT
    rng = random.Random(0)
    words = [f"w{i}" for i in range(5000)]
    path = workdir / "generated.txt"
    path.write_text("\n".join(" ".join(rng.choice(words) for _ in range(60)) + "." for _ in range(3000)) + "\n")
    return path


def padded_vocabulary(corpus: TokenizedCorpus, size: int) -> Vocabulary:
    """The corpus's most frequent words, padded with unused classes so that the softmax has its full width."""
    words = [w for w, _ in corpus.word_counts().most_common(size - 3)]
    return Vocabulary(["<S>", "</S>", "<UNK>", *words, *(f"<unused{i}>" for i in range(size - 3 - len(words)))])


def train_speed(
    config: BiLMConfig,
    corpus: TokenizedCorpus,
    vocab: Vocabulary,
    batch_size: int,
    precision: str,
    steps: int,
    device: str,
    compiled: bool = False,
) -> tuple[float, float]:
    """Tokens of text per second of ``steps`` training steps after untimed warm-up ones, and the warm-up's seconds.

    Four windows take turns; the warm-up is 3 steps, or 3 rounds of the windows with ``compiled`` (``encoder train
    --compile``), where each shape of window compiles, runs once more, and is recorded as a CUDA graph.
    """
    bilm = BiLM(config)
    bilm.reset_parameters(0)
    lm = LanguageModel(bilm, LMHead(config.projection_dim, len(vocab))).to(device).train()
    top_layer = captured_top_layer(lm, torch.device(device)) if compiled else None
    cfg = TrainConfig(corpus=[], out="", batch_size=batch_size)
    optimizer = make_optimizer(cfg, list(lm.parameters()))
    type_multiple = TYPE_MULTIPLE if compiled else 1
    batches = LMBatches(corpus, vocab, batch_size, cfg.unroll, 0, type_multiple=type_multiple, cutoffs=lm.head.cutoffs)
    batches = iter(batches)
    state = bilm.lstm.zero_state(batch_size, device)
    windows = [next(batches)[0] for _ in range(4)]
    warmup = 12 if compiled else 3
    started = time.perf_counter()
    for step in range(warmup + steps):
        if step == warmup:
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            warmup_seconds = time.perf_counter() - started
            started = time.perf_counter()
        _, state = train_step(lm, optimizer, windows[step % 4].to(device), state, cfg, precision, top_layer=top_layer)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return steps * batch_size * cfg.unroll / (time.perf_counter() - started), warmup_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per shape (default %(default)s)")
    parser.add_argument("--batch-size", type=int, default=64, help="default %(default)s")
    parser.add_argument("--vocab-size", type=int, default=100_000, help="softmax classes (default %(default)s)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: the thread rule)")
    args = parser.parse_args()
    apply_threads(args.threads)
    shapes = {
        "shipped default": BiLMConfig(
            **{k: v for k, v in read_config(DEFAULT_MODEL_DIR).items() if k in BiLMConfig.__dataclass_fields__}
        )
    }
    shapes["size 'small' (clipped)"] = SIZES["small"]
    shapes["published small (2x1024, 2048 filters)"] = SIZES["base"]
    with tempfile.TemporaryDirectory() as workdir:
        text = text_file(Path(workdir))
        corpus = TokenizedCorpus.from_paths([text])
        vocab = padded_vocabulary(corpus, args.vocab_size)
        print(
            f"cpu, {torch.get_num_threads()} threads, batch {args.batch_size} x 20, vocabulary {len(vocab)}, "
            f"text {text.name}"
        )
        print(f"{'shape':42} {'params (M)':>10} {'tokens/s':>9}")
        for name, config in shapes.items():
            speed, _ = train_speed(config, corpus, vocab, args.batch_size, "fp32", args.steps, "cpu")
            n_params = sum(p.numel() for p in BiLM(config).parameters()) / 1e6
            print(f"{name:42} {n_params:10.2f} {speed:9.0f}", flush=True)


if __name__ == "__main__":
    main()
