"""Which reading of the biLM finds passages by meaning: the ELMo layers the index pools (its search mix), or the
sense readout ("context prediction", ``encoder.readout``: what the LM expects at each word) averaged over a
document, asked on the dev queries (bench/queries_en.jsonl, split dev; never the test split), kind by kind
(paraphrase, question, keyword, ambiguous).

    python -m bench.passage_readout [--index indexes/demo-index]

Candidates, each ranking whole documents by cosine with the query (no keywords, no respelling):

- ELMo as shipped: ``Index.search(method="elmo")`` (the index's pooled passages under its search mix), and the
  same passages under other layer mixes asked at query time (the token layer, layer 1, layer 2, the average);
- readout mean: the mean of the unit readouts of a document's stored tokens (content words; the index keeps their
  readouts for Word in context), against the same mean over the query's content words;
- readout mean, centred: the same after each token's unit readout has the collection's mean readout taken away
  (what "centred" does for a word's uses, here for all words at once).

Prints recall@10 and MRR per kind and overall; writes nothing. The search default changes only where a candidate
wins on the dev queries.
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.figures import figure_block
from bench.search_quality import DEPTH, read_queries, scores
from indexer import Index
from indexer.vectors import normalize

LAYERS = {"token layer": "token", "layer 1": 1, "layer 2 (top)": "top", "the average": "average"}
"""ELMo layer mixes asked at query time (searched exactly over the stored layers)."""


def document_readouts(index: Index, centre: np.ndarray | None) -> np.ndarray:
    """(documents, dim): each document's mean unit readout over its live stored tokens (centred when ``centre``)."""
    live = np.flatnonzero(index.live.tokens)
    readouts = normalize(index.parts.readouts.gather(live, (1.0,)))
    if centre is not None:
        readouts = readouts - centre
    documents = index.parts.sentence_docs[index.tokens["sentence_id"].to_numpy()[live]]
    total = np.zeros((len(index.docs), readouts.shape[1]))
    np.add.at(total, documents, readouts)
    counts = np.bincount(documents, minlength=len(index.docs))[:, None]
    return normalize((total / np.maximum(counts, 1)).astype(np.float32))


def query_readout(index: Index, query: str, centre: np.ndarray | None) -> np.ndarray:
    """The mean unit readout over the query's content words (all its words when it has none)."""
    tokens = index.query(query).tokens
    context = index.elmo.embed([tokens], context=True)[0][-1]
    readouts = normalize(index.parts.readout.vectors(context))
    content = [
        i for i, token in enumerate(tokens) if token.lower() not in index.elmo.text.stopwords and token.isalpha()
    ]
    chosen = readouts[content] if content else readouts
    if centre is not None:
        chosen = chosen - centre
    return normalize(chosen.mean(0, keepdims=True))[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=Path("indexes/demo-index"), help="default %(default)s")
    args = parser.parse_args()
    index = Index.open(args.index)
    queries = read_queries(Path("bench/queries_en.jsonl"), "dev")
    doc_ids = index.docs["doc_id"].to_numpy()
    live_documents = index.live.documents
    live = np.flatnonzero(index.live.tokens)
    centre = normalize(index.parts.readouts.gather(live, (1.0,))).mean(0)
    rankings: dict[str, list[list[str]]] = {"ELMo as shipped (search mix)": []}
    for name, centring in (("readout mean", None), ("readout mean, centred", centre)):
        documents = document_readouts(index, centring)
        found = []
        for q in queries:
            similarity = documents @ query_readout(index, q["query"], centring)
            similarity[~live_documents] = -np.inf
            found.append([doc_ids[i] for i in np.argsort(-similarity, kind="stable")[:DEPTH]])
        rankings[name] = found
    for q in queries:
        rankings["ELMo as shipped (search mix)"].append(
            [h.doc_id for h in index.search(q["query"], k=DEPTH, method="elmo", spelling=False)]
        )
    n = index.elmo.n_layers
    for name, layers in LAYERS.items():
        weights = (
            layers if layers in ("token", "top", "average") else ",".join(str(float(i == layers)) for i in range(n))
        )
        rankings[f"ELMo, {name}"] = [
            [h.doc_id for h in index.search(q["query"], k=DEPTH, method="elmo", layers=weights, spelling=False)]
            for q in queries
        ]
    kinds = sorted({q["kind"] for q in queries})
    print(
        f"model {index.elmo.name}, index {args.index}, {len(queries)} dev queries, load average {os.getloadavg()[0]:.1f}\n"
    )
    table = [
        "| reading | "
        + " | ".join(f"{kind} ({sum(q['kind'] == kind for q in queries)})" for kind in kinds)
        + " | all |",
        "|---|" + "---:|" * (len(kinds) + 1),
    ]
    for name, found in rankings.items():
        by_kind: dict[str, list] = defaultdict(list)
        for ranked, q in zip(found, queries):
            by_kind[q["kind"]].append(scores(ranked, q["relevant"])[:2])
            by_kind["all"].append(scores(ranked, q["relevant"])[:2])
        cells = [np.mean(by_kind[kind], axis=0) for kind in [*kinds, "all"]]
        table.append(f"| {name} | " + " | ".join(f"{r:.3f} / {m:.3f}" for r, m in cells) + " |")
    print("recall@10 / MRR:\n")
    figure_block("passage_readout.table", table)


if __name__ == "__main__":
    main()
