"""Training throughput (tokens per second per direction) of biLM shapes: the shipped one and the published small.

Runs real training steps (data streaming, char CNN, both LSTMs, adaptive softmax, backward, clipping, Adagrad)
on the validation text of corpus-en when ../shared is there, otherwise on generated sentences, and prints a
table. The first steps are warm-up and not timed.

    python bench/train_speed.py [--steps 10] [--batch-size 64] [--threads 2] [--device cpu]
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from encoder.elmo import DEFAULT_MODEL_DIR
from encoder.lm_data import LMBatches, Vocabulary, count_words
from encoder.lm_head import LanguageModel, LMHead
from encoder.model import BiLM, BiLMConfig
from encoder.train import SIZES
from encoder.weights import read_config

SHARED_TEXT = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus-en" / "valid.txt.xz"


def _text_file(workdir: Path) -> Path:
    if SHARED_TEXT.is_file():
        return SHARED_TEXT
    rng = random.Random(0)
    words = [f"w{i}" for i in range(5000)]
    path = workdir / "generated.txt"
    path.write_text("\n".join(" ".join(rng.choice(words) for _ in range(60)) + "." for _ in range(3000)) + "\n")
    return path


def measure(name: str, config: BiLMConfig, text: Path, vocab: Vocabulary, args: argparse.Namespace) -> dict:
    bilm = BiLM(config)
    bilm.reset_parameters(0)
    lm = LanguageModel(bilm, LMHead(config.projection_dim, len(vocab))).to(args.device).train()
    optimizer = torch.optim.Adagrad(lm.parameters(), lr=0.2, initial_accumulator_value=1.0)
    batches = iter(LMBatches([text], vocab, args.batch_size, args.unroll, seed=0))
    state = bilm.lstm.zero_state(args.batch_size, args.device)
    timed = 0.0
    for step in range(args.warmup + args.steps):
        started = time.perf_counter()
        batch = next(batches).to(args.device)
        nll, count, state = lm(batch, state, dropout=0.1)
        optimizer.zero_grad(set_to_none=True)
        ((nll / count).mean() * args.unroll).backward()
        torch.nn.utils.clip_grad_norm_(lm.parameters(), 10.0)
        optimizer.step()
        state = [(h.detach(), c.detach()) for h, c in state]
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        if step >= args.warmup:
            timed += time.perf_counter() - started
    tokens = args.steps * args.batch_size * args.unroll
    return {"shape": name, "params": sum(p.numel() for p in bilm.parameters()) / 1e6,
            "ms_per_step": 1000 * timed / args.steps, "tokens_per_s": tokens / timed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per shape (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first (default %(default)s)")
    parser.add_argument("--batch-size", type=int, default=64, help="default %(default)s")
    parser.add_argument("--unroll", type=int, default=20, help="default %(default)s")
    parser.add_argument("--vocab-size", type=int, default=100_000,
                        help="softmax classes, from the shipped model's vocabulary (default %(default)s)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--device", default="cpu", help="default %(default)s")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    shapes = {}
    if (DEFAULT_MODEL_DIR / "config.json").is_file():
        shipped = read_config(DEFAULT_MODEL_DIR)
        shapes["shipped default"] = BiLMConfig(**{k: v for k, v in shipped.items() if k in BiLMConfig.__dataclass_fields__})
    else:
        shapes["size 'small' (default recipe)"] = SIZES["small"]
    shapes["published small (2x1024, 2048 filters)"] = SIZES["base"]
    with tempfile.TemporaryDirectory() as workdir:
        text = _text_file(Path(workdir))
        shipped_vocab = DEFAULT_MODEL_DIR / "vocab.txt"
        if shipped_vocab.is_file():
            vocab = Vocabulary(Vocabulary.load(shipped_vocab).words[: args.vocab_size])
        else:  # a small text has fewer word types than --vocab-size
            vocab = Vocabulary.from_counts(count_words([text], 300_000), args.vocab_size)
        print(f"{args.device}, {torch.get_num_threads()} threads, batch {args.batch_size} x {args.unroll}, "
              f"vocabulary {len(vocab)}, text {text.name}")
        print(f"{'shape':42} {'params (M)':>10} {'ms/step':>9} {'tokens/s':>9}")
        for name, config in shapes.items():
            r = measure(name, config, text, vocab, args)
            print(f"{r['shape']:42} {r['params']:10.2f} {r['ms_per_step']:9.0f} {r['tokens_per_s']:9.0f}", flush=True)


if __name__ == "__main__":
    main()
