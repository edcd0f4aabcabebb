"""Search quality: recall@10, MRR and nDCG@10 of every search method on judged queries over the demo corpus.

    python bench/search_quality.py                          # dev queries, on build/demo-index
    python bench/search_quality.py --split test             # the 30 held-out queries
    python bench/search_quality.py --tune                   # also: the hybrid weight x layer mix grid (dev)

``bench/queries_en.jsonl`` holds 90 queries written for this corpus (60 dev, 30 test; kinds: question,
paraphrase, keyword, ambiguous) with every relevant document graded 2 (answers it) or 1 (partly). Each
method ranks whole documents through ``Index.search``; TF-IDF over whole documents (scikit-learn, cosine,
same terms as BM25) is the reference every method is compared with (the "vs TF-IDF" columns).
The hybrid weight and the search layer mix were chosen with ``--tune`` on the dev split only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from tqdm.auto import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer import Index, QueryNotice  # noqa: E402
from indexer.bm25 import terms  # noqa: E402
from indexer.ranking import CANDIDATES, METHODS, Ranking, fuse  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEPTH = CANDIDATES  # ranks looked at for MRR


def read_queries(path: Path, split: str) -> list[dict]:
    queries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [q for q in queries if split == "all" or q["split"] == split]


def scores(ranked: list[str], relevant: dict[str, int]) -> tuple[float, float, float]:
    """(recall@10, reciprocal rank of the first relevant document, nDCG@10 with gains 2^grade - 1)."""
    top = ranked[:10]
    recall = sum(d in relevant for d in top) / len(relevant)
    rr = next((1 / rank for rank, d in enumerate(ranked[:DEPTH], start=1) if d in relevant), 0.0)
    dcg = sum((2 ** relevant.get(d, 0) - 1) / math.log2(rank + 1) for rank, d in enumerate(top, start=1))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum((2**g - 1) / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return recall, rr, dcg / idcg


def evaluate(rankings: list[list[str]], queries: list[dict]) -> np.ndarray:
    """Mean (recall@10, MRR, nDCG@10) over the queries."""
    return np.mean([scores(r, q["relevant"]) for r, q in zip(rankings, queries)], axis=0)


def tfidf_rankings(index: Index, queries: list[dict]) -> list[list[str]]:
    """The reference: TF-IDF cosine over whole documents (title + text), deleted documents excluded."""
    vectorizer = TfidfVectorizer(analyzer=terms)
    documents = vectorizer.fit_transform(index.document_terms)
    doc_ids = index.docs["doc_id"].to_numpy()
    found = []
    for q in queries:
        similarity = (vectorizer.transform([index.query_tokens(q["query"])]) @ documents.T).toarray()[0]
        order = np.argsort(-similarity, kind="stable")
        found.append([doc_ids[i] for i in order[:DEPTH] if similarity[i] > 0])
    return found


def method_rankings(index: Index, queries: list[dict], method: str, layers: str | None = None) -> list[list[str]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryNotice)
        return [[h.doc_id for h in index.search(q["query"], k=DEPTH, method=method, layers=layers)] for q in queries]


def table(rows: dict[str, np.ndarray], reference: np.ndarray) -> None:
    print(
        "| method | recall@10 | MRR | nDCG@10 | recall@10 vs TF-IDF | MRR vs TF-IDF |\n|---|---:|---:|---:|---:|---:|"
    )
    for name, (recall, mrr, ndcg) in rows.items():
        print(
            f"| {name} | {recall:.3f} | {mrr:.3f} | {ndcg:.3f} | {recall - reference[0]:+.3f} | "
            f"{mrr - reference[1]:+.3f} |"
        )


def tune(index: Index, queries: list[dict]) -> None:
    """The hybrid weight grid for each layer mix, from the ELMo and keyword rankings of every query."""
    rows = {doc_id: row for row, doc_id in enumerate(index.docs["doc_id"])}
    doc_ids = index.docs["doc_id"].to_numpy()

    def as_ranking(query: str, method: str, layers: str | None) -> Ranking:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", QueryNotice)
            hits = index.search(query, k=DEPTH, method=method, layers=layers)
        return Ranking(np.array([rows[h.doc_id] for h in hits], np.int64), np.array([h.score for h in hits]))

    keywords = [as_ranking(q["query"], "keywords", None) for q in queries]
    print("\nhybrid weight of ELMo (rest: BM25) x search layer mix, dev queries: recall@10 / MRR / nDCG@10")
    weights = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
    print("| layers | " + " | ".join(f"{w:.1f}" for w in weights) + " |\n|---|" + "---:|" * len(weights))
    for layers in ("token", "average", "top"):
        elmo = [as_ranking(q["query"], "elmo", layers) for q in tqdm(queries, desc=layers, leave=False)]
        cells = []
        for weight in weights:
            fused = [fuse(e, b, DEPTH, weight) for e, b in zip(elmo, keywords)]
            recall, mrr, ndcg = evaluate([[doc_ids[i] for i in f.ids] for f in fused], queries)
            cells.append(f"{recall:.3f} / {mrr:.3f} / {ndcg:.3f}")
        print(f"| {layers} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--index",
        type=Path,
        default=ROOT / "build" / "demo-index",
        help="an index of data/demo (default: build/demo-index, which `make demo` builds)",
    )
    parser.add_argument(
        "--queries",
        type=Path,
        default=ROOT / "bench" / "queries_en.jsonl",
        help="judged queries (default: bench/queries_en.jsonl)",
    )
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev", help="which queries (default: dev)")
    parser.add_argument("--tune", action="store_true", help="also print the hybrid weight x layer mix grid")
    args = parser.parse_args()
    index = Index.open(args.index)
    queries = read_queries(args.queries, args.split)
    print(
        f"{len(queries)} {args.split} queries, {len(index.docs)} documents, model {index.manifest.model.name}, "
        f"search layers {index.manifest.search_layers.spec}, pooling {index.manifest.pooling}\n"
    )
    reference = evaluate(tfidf_rankings(index, queries), queries)
    rows = {"TF-IDF over documents (reference)": reference}
    for method in METHODS:
        rows[method + (" (default)" if method == METHODS[0] else "")] = evaluate(
            method_rankings(index, queries, method), queries
        )
    table(rows, reference)
    if args.tune:
        tune(index, queries)


if __name__ == "__main__":
    main()
