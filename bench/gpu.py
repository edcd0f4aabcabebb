"""Every GPU speed figure in one command (a few minutes on one H100); prints four tables.

1. Training steps (tokens of text per second; both directions predict each token): the published small shape
   with clipping (step-by-step LSTM) and without (fused cuDNN LSTM), and our ``medium`` size, in fp32 and bf16,
   at batch 256 and 1024 x 20, eager. Real windows of ``--corpus`` (the same data pipeline as ``encoder train``);
   the vocabulary is the corpus's words padded to ``--vocab-size`` classes so that the softmax has its full width.
2. Embedding (``Elmo.embed``, stateless, batches of 512 sentences): the published original shape (4096 cells,
   clipped) and ``medium`` (fused), in every precision (fp32, tf32, bf16, fp16): once with the token cache cold
   (the char CNN runs for every new word, as in a first pass over a corpus), once warm, and the LSTMs alone on
   the same batches (no char CNN, no copies to the host: what the GPU could do); and ``medium`` fp32 without
   length buckets (batches as long as their longest sentence), against the default buckets of 8 steps.
3. Deviation of tf32, bf16 and fp16 from fp32 embeddings of ``--model`` (default: random ``medium`` weights):
   max abs difference and min cosine per layer over ``--sentences`` sentences.
4. Last, as it compiles for minutes: the bf16 training step at the largest batch of the clipped published small
   shape and of ``medium``, captured (``encoder train --compile``: torch.compile with CUDA graphs), with the
   seconds its warm-up (compiling) took.

    python -m bench.gpu --corpus FILE [--model DIR] [--steps 10] [--sentences 2000]

The whole-run training figure is the ``tokens_per_second`` that ``encoder train`` writes into its log.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from bench.train_speed import padded_vocabulary, train_speed
from encoder import Elmo
from encoder.corpus import TokenizedCorpus
from encoder.elmo import PRECISIONS
from encoder.files import open_text
from encoder.model import BiLM, BiLMConfig
from encoder.text import sentences as split_sentences
from encoder.text import tokenize
from encoder.train import SIZES
from encoder.weights import load_model

UNCLIPPED_BASE = BiLMConfig(n_highway=1, projection_dim=128, lstm_dim=1024, cell_clip=None, proj_clip=None)
TRAIN_SHAPES = {
    "published small, clipped": SIZES["base"],
    "published small, unclipped": UNCLIPPED_BASE,
    "medium (our GPU size)": SIZES["medium"],
}
EMBED_SHAPES = {
    "published original, clipped": BiLMConfig(lstm_dim=4096, projection_dim=512, n_highway=2),
    "medium": SIZES["medium"],
}


DEVICE = "cuda"  # --device cpu runs the same code on the CPU (a smoke test, not a measurement)


def _sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def embed_speed(model: BiLM, sentences: list[list[str]], precision: str, length_multiple: int = 8) -> list[float]:
    """Tokens per second of embedding ``sentences`` with the token cache cold (after a warm-up on 512 of them),
    then warm, then of the LSTMs alone on the same batches (inputs on the GPU, outputs left there): what the
    GPU could do if nothing else took time."""
    elmo = Elmo(model, device=DEVICE, precision=precision)
    elmo.length_multiple = length_multiple
    elmo.embed(sentences[:512], batch_size=512, max_tokens=10**9)  # warm-up, caches those sentences' words
    n_tokens, speeds = sum(map(len, sentences)), []
    for _ in ("cold", "warm"):
        _sync()
        started = time.perf_counter()
        elmo.embed(sentences, batch_size=512, max_tokens=10**9)
        _sync()
        speeds.append(n_tokens / (time.perf_counter() - started))
    inputs = [elmo.model_inputs([sentences[i] for i in batch]) for batch in elmo._batches(sentences, 512, 10**9)]
    _sync()
    started = time.perf_counter()
    with torch.inference_mode(), elmo.computing():
        for tokens, mask in inputs:
            elmo.model.contextualize(tokens, mask, final_state=False)
    _sync()
    return [*speeds, n_tokens / (time.perf_counter() - started)]


def deviation(model: BiLM, sentences: list[list[str]]) -> list[str]:
    exact = Elmo(model, device=DEVICE, precision="fp32").embed(sentences, batch_size=512, max_tokens=10**9)
    rows = []
    for precision in PRECISIONS[1:]:
        fast = Elmo(model, device=DEVICE, precision=precision).embed(sentences, batch_size=512, max_tokens=10**9)
        cells = []
        for layer in range(exact[0].shape[0]):
            x = np.concatenate([e[layer] for e in exact])
            y = np.concatenate([f[layer] for f in fast])
            cosine = (x * y).sum(-1) / np.maximum(np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1), 1e-12)
            cells.append(f"{np.abs(x - y).max():.2e} / {cosine.min():.5f}")
        rows.append(f"| {precision} | " + " | ".join(cells) + " |")
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    return rows


def print_training_rows(
    rows: list[tuple[str, str, int]], corpus: TokenizedCorpus, vocab, steps: int, compiled: bool
) -> None:
    """One table row per (shape name, precision, batch size): tokens per second and the warm-up's seconds."""
    print("| shape | LSTM | precision | step | batch | tokens/s | warm-up s |\n|---|---|---|---|---:|---:|---:|")
    for name, precision, batch_size in rows:
        config = TRAIN_SHAPES[name]
        lstm = "fused (cuDNN)" if config.cell_clip is None and config.proj_clip is None else "step by step"
        try:
            speed, warmup = train_speed(config, corpus, vocab, batch_size, precision, steps, DEVICE, compiled)
            cells = f"{speed:,.0f} | {warmup:.1f}"
        except RuntimeError as error:  # report and go on: one failing row must not lose the table
            cells = f"failed: {str(error).splitlines()[0][:80]} | "
        step = "compiled" if compiled else "eager"
        print(f"| {name} | {lstm} | {precision} | {step} | {batch_size} | {cells} |", flush=True)


def load_sentences(path: str, n: int) -> list[list[str]]:
    result = []
    with open_text(path) as f:
        for line in f:
            for sentence in split_sentences(line):
                tokens = tokenize(sentence)
                if 0 < len(tokens) <= 100:
                    result.append(tokens)
                if len(result) == n:
                    return result
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help="text file (.txt/.xz) for training windows and sentences")
    parser.add_argument("--model", help="model directory for the deviation table (default: random medium weights)")
    parser.add_argument("--steps", type=int, default=10, help="timed training steps per row (default %(default)s)")
    parser.add_argument("--sentences", type=int, default=2000, help="sentences embedded (default %(default)s)")
    parser.add_argument("--vocab-size", type=int, default=100_000, help="softmax classes (default %(default)s)")
    parser.add_argument(
        "--skip",
        default="",
        help="comma-separated parts to skip: train, compile (the captured steps), embed, deviation",
    )
    parser.add_argument("--batch-sizes", default="256,1024", help="training batch sizes (default %(default)s)")
    parser.add_argument(
        "--device",
        default="cuda",
        help="cuda; cpu only checks that the script runs (its figures are no measurement)",
    )
    args = parser.parse_args()
    global DEVICE
    DEVICE = args.device
    if DEVICE == "cuda" and not torch.cuda.is_available():
        raise SystemExit("bench/gpu.py needs a CUDA GPU")
    skip = set(filter(None, args.skip.split(",")))
    if DEVICE == "cuda":
        print(
            f"{torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
            f"cuDNN {torch.backends.cudnn.version()}",
            flush=True,
        )
    corpus = TokenizedCorpus.from_paths([args.corpus])
    sentences = load_sentences(args.corpus, args.sentences)
    torch.manual_seed(0)

    vocab = padded_vocabulary(corpus, args.vocab_size)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    if "train" not in skip:
        print(f"\n## Training steps, eager ({args.steps} timed after 3, unroll 20, vocabulary {len(vocab):,})\n")
        rows = [(c, p, b) for c in TRAIN_SHAPES for p in ("fp32", "bf16") for b in batch_sizes]
        print_training_rows(rows, corpus, vocab, args.steps, compiled=False)
    if "embed" not in skip:
        print(f"\n## Embedding ({len(sentences)} sentences, {sum(map(len, sentences)):,} tokens, batches of 512)\n")
        print("| shape | LSTM | precision | length buckets | tokens/s, cache cold | cache warm | LSTMs alone |")
        print("|---|---|---|---|---:|---:|---:|")
        rows = [(name, precision, 8) for name in EMBED_SHAPES for precision in PRECISIONS]
        for name, precision, multiple in [*rows, ("medium", "fp32", 1)]:
            config = EMBED_SHAPES[name]
            model = BiLM(config)
            model.reset_parameters(0)
            lstm = "fused (cuDNN)" if config.cell_clip is None and config.proj_clip is None else "step by step"
            try:
                cells = " | ".join(f"{v:,.0f}" for v in embed_speed(model, sentences, precision, multiple))
            except RuntimeError as error:
                cells = f"failed: {str(error).splitlines()[0][:80]} | | "
            buckets = f"{multiple} steps" if multiple > 1 else "none"
            print(f"| {name} | {lstm} | {precision} | {buckets} | {cells} |", flush=True)
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False

    if "deviation" not in skip:
        if args.model:
            model, label = load_model(args.model), args.model
        else:
            model, label = BiLM(SIZES["medium"]), "random medium weights"
            model.reset_parameters(0)
        print(f"\n## Deviation from fp32 ({label}, {len(sentences)} sentences): max abs / min cosine per layer\n")
        print("| precision | " + " | ".join(f"layer {j}" for j in range(model.config.n_layers + 1)) + " |")
        print("|---|" + "---|" * (model.config.n_layers + 1))
        print("\n".join(deviation(model, sentences)), flush=True)

    if "compile" not in skip:  # last: compiling takes minutes, and every other figure is printed by then
        print(f"\n## Training steps, compiled (`--compile`; {args.steps} timed after 3 rounds of 4 windows)\n")
        precision = "bf16" if DEVICE == "cuda" else "fp32"  # as `encoder train`, which refuses bf16 on the CPU
        shapes = ["published small, clipped", "medium (our GPU size)"]  # the step-by-step LSTM and ours
        print_training_rows([(c, precision, max(batch_sizes)) for c in shapes], corpus, vocab, args.steps, True)


if __name__ == "__main__":
    main()
