"""Size and CPU speed of AllenNLP's published biLMs (``encoder download NAME``) beside our shipped default.

Speed depends only on a model's shape, not on its weights' values, so each published model is built with random
weights of its published shape (``PUBLISHED[name].options()``, the same options.json): nothing is downloaded.
elmo-original-5.5b has elmo-original's shape, so one row stands for both. Sentences: the first --sentences of the
English demo corpus, embedded stateless in batches of 32 (``Elmo.embed``'s defaults), after one warm-up batch.

    python -m bench.published_models [--sentences 256] [--threads 2]

Prints a table; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import time

from encoder import PUBLISHED, BiLM, BiLMConfig, Elmo
from encoder.files import shipped_data
from encoder.text import text_rules
from encoder.threads import apply_threads


def demo_sentences(n: int) -> list[list[str]]:
    rules, found = text_rules("en"), []
    for path in sorted((shipped_data() / "demo").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            found.extend(s.tokens for s in rules.split_and_tokenize(json.loads(line)["text"]))
            if len(found) >= n:
                return found[:n]
    return found


def measure(elmo: Elmo, sentences: list[list[str]]) -> float:
    """Tokens per second embedding ``sentences`` (after one warm-up batch)."""
    elmo.embed(sentences[:32])
    started = time.perf_counter()
    elmo.embed(sentences, batch_size=32)
    return sum(map(len, sentences)) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    apply_threads(args.threads)
    sentences = demo_sentences(args.sentences)
    shapes = [(name, "random, published shape") for name in PUBLISHED if name != "elmo-original-5.5b"]
    print(f"{len(sentences)} sentences, {sum(map(len, sentences)):,} tokens; {args.threads} threads")
    print(f"{'model':20s} {'weights':25s} {'parameters':>12s} {'fp32 MB':>8s} {'out dim':>7s} {'tokens/s':>9s}")
    for name, weights in [("default", "shipped"), *shapes]:
        if name == "default":
            elmo = Elmo.load("default")
        else:
            model = BiLM(BiLMConfig.from_options(PUBLISHED[name].options()))
            model.reset_parameters(seed=0)
            elmo = Elmo(model, name=name)
        parameters = sum(p.numel() for p in elmo.model.parameters())
        speed = measure(elmo, sentences)
        print(f"{name:20s} {weights:25s} {parameters:>12,} {parameters * 4 / 1e6:>8.1f} {elmo.dim:>7d} {speed:>9,.0f}")
        del elmo


if __name__ == "__main__":
    main()
