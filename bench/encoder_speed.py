"""Exact-mode embedding speed on CPU for the published "small" biLM shape.

Random weights in the reference hdf5 layout (speed does not depend on their values), >= 1,000 real
sentences from WikiText-2, batches of 32 and 128, three token-layer modes:
  no-cache     every token position goes through the char CNN + highway (what AllenNLP's _ElmoBiLm does)
  batch-dedup  each distinct word type of a batch is encoded once (the default)
  vocab-cache  the corpus vocabulary is precomputed once (its cost is printed separately)
Each configuration runs in its own process so that peak memory (max RSS) is its own.

    python -m bench.encoder_speed [--sentences 1000] [--device cpu] [--shape small|original] [--allennlp DIR]

With --allennlp DIR (the folder holding AllenNLP 2.10's unpacked source, see bench/allennlp_baseline.py) the table
also times AllenNLP's own _ElmoBiLm on the same weights and sentences (CPU, stateless, batches in input order) and
ends with our speed relative to it.

Prints a table; writes nothing but a temporary weight file.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import tempfile
import time
from pathlib import Path

from encoder import BiLMConfig, Elmo
from encoder.model import BiLM
from encoder.text import sentences as split_sentences
from encoder.weights import save_hdf5

WIKITEXT = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikitext-2" / "wiki.valid.tokens"
SHAPES = {
    "small": BiLMConfig(lstm_dim=1024, projection_dim=128, n_highway=1),
    "original": BiLMConfig(lstm_dim=4096, projection_dim=512, n_highway=2),
}


def load_sentences(n: int) -> list[list[str]]:
    """The first n sentences (up to 100 tokens) of WikiText-2 valid, skipping headings."""
    if not WIKITEXT.is_file():
        raise SystemExit(f"WikiText-2 not found at {WIKITEXT}: this benchmark needs ../shared")
    result = []
    with open(WIKITEXT, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("="):
                continue
            for sentence in split_sentences(line):
                tokens = sentence.split()
                if 0 < len(tokens) <= 100:
                    result.append(tokens)
                if len(result) == n:
                    return result
    return result


def run_one(
    options: str, weights: str, sentences: list[list[str]], batch_size: int, mode: str, device: str, queue: mp.Queue
) -> None:
    import torch

    torch.manual_seed(0)
    elmo = Elmo.load(options, weights, device=device)
    precompute = 0.0
    if mode == "vocab-cache":
        start = time.perf_counter()
        elmo.cache_vocabulary(w for s in sentences for w in s)
        precompute = time.perf_counter() - start
    elmo.embed(sentences[:batch_size], batch_size=batch_size, use_cache=mode != "no-cache")  # warm-up
    start = time.perf_counter()
    elmo.embed(sentences, batch_size=batch_size, max_tokens=10**9, use_cache=mode != "no-cache")
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    tokens = sum(len(s) for s in sentences)
    queue.put(
        {
            "tokens_per_s": tokens / seconds,
            "seconds": seconds,
            "precompute_s": precompute,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    )


# --- AllenNLP baseline (bench/allennlp_baseline.py) ---------------------------------------------------------------
ALLENNLP_MODE = "allennlp _ElmoBiLm"


def run_allennlp(
    allennlp_dir: str, options: str, weights: str, sentences: list[list[str]], batch_size: int, queue: mp.Queue
) -> None:
    from bench.allennlp_baseline import allennlp_tokens_per_second

    result = allennlp_tokens_per_second(options, weights, sentences, batch_size, allennlp_dir=allennlp_dir)
    queue.put({**result, "precompute_s": 0.0, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def allennlp_ratios(results: dict[tuple[int, str], dict]) -> str:
    parts = []
    for (batch_size, mode), result in results.items():
        baseline = results.get((batch_size, ALLENNLP_MODE))
        if mode != ALLENNLP_MODE and baseline:
            parts.append(f"batch {batch_size} {mode} {result['tokens_per_s'] / baseline['tokens_per_s']:.2f}x")
    return "speed vs allennlp _ElmoBiLm at the same batch size: " + ", ".join(parts)


# ------------------------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=1000, help="number of WikiText-2 sentences (default 1000)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="small", help="model shape (default small)")
    parser.add_argument("--batch-sizes", default="32,128", help="comma-separated batch sizes (default 32,128)")
    parser.add_argument("--modes", default="no-cache,batch-dedup,vocab-cache", help="token-layer modes to time")
    parser.add_argument(
        "--allennlp",
        metavar="DIR",
        help="also time AllenNLP 2.10's _ElmoBiLm from this source folder "
        "(the one containing allennlp/; see bench/allennlp_baseline.py)",
    )
    args = parser.parse_args()
    if args.allennlp and args.device != "cpu":
        parser.error("--allennlp compares CPU throughput; use --device cpu")

    sentences = load_sentences(args.sentences)
    if args.allennlp:
        from bench.allennlp_baseline import fixture_check, format_check

        try:
            print(format_check(fixture_check(args.allennlp, extra=sentences[:4])), flush=True)
        except FileNotFoundError as error:
            raise SystemExit(str(error))
    tokens = sum(len(s) for s in sentences)
    model = BiLM(SHAPES[args.shape])
    model.reset_parameters(seed=0)
    n_params = sum(p.numel() for p in model.parameters())
    with tempfile.TemporaryDirectory() as tmp:
        options, weights = f"{tmp}/options.json", f"{tmp}/weights.hdf5"
        save_hdf5(model, options, weights)
        del model
        print(
            f"shape {args.shape}: {json.dumps(SHAPES[args.shape].to_options()['lstm'])}, "
            f"{n_params / 1e6:.1f}M parameters; {len(sentences)} sentences, {tokens} tokens; device {args.device}"
        )
        print("| batch | mode | tokens/s | seconds | precompute s | peak RSS MB |")
        print("|---:|---|---:|---:|---:|---:|")
        context = mp.get_context("spawn")
        results = {}
        for batch_size in (int(b) for b in args.batch_sizes.split(",")):
            for mode in args.modes.split(",") + ([ALLENNLP_MODE] if args.allennlp else []):
                queue = context.Queue()
                if mode == ALLENNLP_MODE:
                    process = context.Process(
                        target=run_allennlp, args=(args.allennlp, options, weights, sentences, batch_size, queue)
                    )
                else:
                    process = context.Process(
                        target=run_one, args=(options, weights, sentences, batch_size, mode, args.device, queue)
                    )
                process.start()
                result = queue.get()
                process.join()
                results[(batch_size, mode)] = result
                print(
                    f"| {batch_size} | {mode} | {result['tokens_per_s']:.0f} | {result['seconds']:.1f} | "
                    f"{result['precompute_s']:.1f} | {result['peak_rss_mb']:.0f} |",
                    flush=True,
                )
        if args.allennlp:
            print(allennlp_ratios(results))


if __name__ == "__main__":
    main()
