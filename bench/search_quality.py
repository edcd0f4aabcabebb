"""Search quality: recall@10, MRR and nDCG@10 of every search method on judged queries, typed clean and with typos.

    python -m bench.search_quality                          # dev queries, on indexes/demo-index
    python -m bench.search_quality --split test             # the 30 held-out queries
    python -m bench.search_quality --tune                   # also: the hybrid weight x layer mix grid (dev)
    python -m bench.search_quality --index indexes/demo-index-ko --queries bench/queries_ko.jsonl   # Korean

``bench/queries_en.jsonl`` holds 90 queries written for the English demo corpus (60 dev, 30 test; kinds: question,
paraphrase, keyword, ambiguous), ``bench/queries_ko.jsonl`` 36 Korean paraphrase and question queries for the
Korean demo (all dev); each lists every relevant document graded 2 (answers it) or 1 (partly). Each method ranks
whole documents through ``Index.search``; TF-IDF over whole documents (scikit-learn, cosine, the same unstemmed
words BM25 used before stemming) is the reference every method is compared with (the "vs TF-IDF" columns).

Typos: a copy of the queries with misspelled words (``typo_queries``: seeded, so always the same copy) is searched
too, beside the clean one, and so are two ablations: the words as typed (``spelling=False``: no respelling by
the character model) and keywords without stemming (BM25 over the words as they are, as before stemming).
The hybrid weight and the search layer mix were chosen with ``--tune`` on the dev split only.
The methods table is printed as the figure ``search_quality.<language>.<split>.methods``, and the default's and
TF-IDF's recall@10 and MRR as one-line figures (``bench/figures.py``); the off-topic tables' figure names hold no
split, so paste them from a dev run (the docs quote the dev queries').

Relevance: ``bench/offtopic_en.jsonl`` holds off-topic dev queries for the English demo (how it was made: its
header), on which the relevance line was chosen (``ranking.relevance_margin``'s two margins), and
``bench/offtopic_en_check.jsonl`` a second set, written before any of its scores was seen, that only checks it;
``bench/offtopic_ko.jsonl`` holds the Korean demo's (only reported). The margin table shows, for each rule, how
many of their documents land above the line against what the judged queries keep above it; it is printed as the
figure ``search_quality.margins.<the --offtopic file's name>``.

    python -m bench.search_quality --index indexes/demo-index-ko --queries bench/queries_ko.jsonl \
        --offtopic bench/offtopic_ko.jsonl --offtopic-check ''
"""

from __future__ import annotations

import argparse
import itertools
import json
import lzma
import math
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from tqdm.auto import tqdm

from bench.figures import figure, figure_block
from indexer import Index
from indexer.bm25 import BM25, terms
from indexer.ranking import CANDIDATES, KNOWN_WORDS_MARGIN, METHODS, RELEVANCE_MARGIN, relevance_margin
from indexer.spelling import correctable

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DEPTH = CANDIDATES  # ranks looked at for MRR
KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]  # neighbouring keys: the likeliest wrong letter
KEYBOARD_KO = ["ㅂㅈㄷㄱㅅㅛㅕㅑㅐㅔ", "ㅁㄴㅇㄹㅎㅗㅓㅏㅣ", "ㅋㅌㅊㅍㅠㅜㅡ"]  # the 2-beolsik layout's rows
INITIALS = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
VOWELS = "ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ"
FINALS = " ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"  # " ": no final consonant
TYPO_SEED = 0
RESPELLING_COPIES = 5  # typo'd copies of the queries whose respelled words are counted


def read_lines(path: Path) -> list[dict]:
    """The JSON objects of a JSONL file, leaving out blank lines and "#" comments (how the file was made)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip() and not line.startswith("#")]


def read_queries(path: Path, split: str) -> list[dict]:
    return [q for q in read_lines(path) if split == "all" or q["split"] == split]


def misspell(word: str, rng: random.Random) -> str:
    """One typing slip in ``word``: a letter dropped, doubled, swapped with the next, or a neighbouring key hit."""
    i = rng.randrange(1, len(word) - 1)  # the first and last letters are the ones people get right
    kind = rng.choice(["drop", "double", "swap", "neighbour"])
    if kind == "drop":
        return word[:i] + word[i + 1 :]
    if kind == "double":
        return word[: i + 1] + word[i:]
    if kind == "swap" and word[i] != word[i + 1]:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    row = next((r for r in KEYBOARD if word[i] in r), None)
    if row is None:
        return word[:i] + word[i + 1 :]
    j = row.index(word[i])
    near = [row[k] for k in (j - 1, j + 1) if 0 <= k < len(row)]
    return word[:i] + rng.choice(near) + word[i + 1 :]


def neighbour_keys(jamo: str, alphabet: str) -> list[str]:
    """The keys beside ``jamo`` on the Korean keyboard's row that are letters of ``alphabet`` (initial consonants,
    vowels or final consonants: a row holds all three)."""
    row = next((r for r in KEYBOARD_KO if jamo in r), "")
    j = row.find(jamo)
    return [row[k] for k in (j - 1, j + 1) if j >= 0 and 0 <= k < len(row) and row[k] in alphabet]


def hangul_parts(syllable: str) -> tuple[int, int, int]:
    """A Hangul syllable's (initial, vowel, final) as indexes of ``INITIALS``, ``VOWELS`` and ``FINALS``: its code
    point is 0xAC00 + (initial x 21 + vowel) x 28 + final."""
    initial, rest = divmod(ord(syllable) - 0xAC00, 21 * 28)
    return initial, *divmod(rest, 28)


def misspell_korean(word: str, rng: random.Random) -> str:
    """One typing slip in a Hangul ``word``, in one syllable's letters (jamo): a neighbouring key of the 2-beolsik
    layout for its initial consonant, its vowel or its final one, its final dropped, or, when it has none, the next
    syllable's initial typed twice, the first time as its final (갖지 for 가지). The first syllable is left as typed;
    a syllable no slip can change (a compound vowel, a doubled initial, no final and no next syllable), as well."""
    i = rng.randrange(1, len(word))
    initial, vowel, final = hangul_parts(word[i])
    slips = [(INITIALS.index(k), vowel, final) for k in neighbour_keys(INITIALS[initial], INITIALS)]
    slips += [(initial, VOWELS.index(k), final) for k in neighbour_keys(VOWELS[vowel], VOWELS)]
    if final:
        slips += [(initial, vowel, FINALS.index(k)) for k in neighbour_keys(FINALS[final], FINALS)]
        slips.append((initial, vowel, 0))
    elif i + 1 < len(word) and (doubled := INITIALS[hangul_parts(word[i + 1])[0]]) in FINALS:
        slips.append((initial, vowel, FINALS.index(doubled)))
    if not slips:
        return word
    initial, vowel, final = rng.choice(slips)
    return word[:i] + chr(0xAC00 + (initial * 21 + vowel) * 28 + final) + word[i + 1 :]


def typo_queries(queries: list[dict], stopwords: frozenset[str], seed: int = TYPO_SEED) -> list[dict]:
    """A copy of ``queries`` with typing slips: each content word of 5+ Latin letters (``misspell``) or of 3+
    Hangul syllables (``misspell_korean``) is misspelled with probability 1/2 (at least one per query that has
    such a word), seeded by ``seed`` and the query's text, so the copy is the same on every run."""
    typoed = []
    for q in queries:
        rng = random.Random(f"{seed}:{q['query']}")
        words = [m for m in re.finditer(r"[A-Za-z]{5,}|[가-힣]{3,}", q["query"]) if m.group().lower() not in stopwords]
        chosen = [m for m in words if rng.random() < 0.5] or words[:1]
        text = q["query"]
        for m in reversed(chosen):
            slip = misspell_korean if m.group()[0] >= "가" else misspell
            text = text[: m.start()] + slip(m.group(), rng) + text[m.end() :]
        typoed.append({**q, "query": text})
    return typoed


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


Ranker = Callable[[Index, list[dict]], list[list[str]]]


def tfidf_rankings(index: Index, queries: list[dict]) -> list[list[str]]:
    """The reference: TF-IDF cosine over whole documents (title + text), deleted documents excluded."""
    vectorizer = TfidfVectorizer(analyzer=terms)
    documents = vectorizer.fit_transform(index.parts.document_terms)
    doc_ids = index.docs["doc_id"].to_numpy()
    found = []
    for q in queries:
        similarity = (vectorizer.transform([index.query(q["query"]).tokens]) @ documents.T).toarray()[0]
        order = np.argsort(-similarity, kind="stable")
        found.append([doc_ids[i] for i in order[:DEPTH] if similarity[i] > 0])
    return found


def unstemmed_keyword_rankings(index: Index, queries: list[dict]) -> list[list[str]]:
    """BM25 over the words as they are (no stemming, no respelling): keyword search before this change."""
    bm25 = BM25(index.parts.document_terms)
    doc_ids = index.docs["doc_id"].to_numpy()
    return [[doc_ids[i] for i in bm25.search(terms(index.query(q["query"]).tokens), DEPTH)[1]] for q in queries]


def method_rankings(method: str, layers: str | None = None, spelling: bool = True) -> Ranker:
    def rank(index: Index, queries: list[dict]) -> list[list[str]]:
        return [
            [h.doc_id for h in index.search(q["query"], k=DEPTH, method=method, layers=layers, spelling=spelling)]
            for q in queries
        ]

    return rank


def table(rows: dict[str, tuple[np.ndarray, np.ndarray | None]], reference: np.ndarray) -> list[str]:
    """One row per method: the clean queries' recall@10, MRR and nDCG@10 against TF-IDF's, then the typo'd
    copy's recall@10 and MRR (when there is one)."""
    typos = any(typo is not None for _, typo in rows.values())
    head = "| method | recall@10 | MRR | nDCG@10 | recall@10 vs TF-IDF | MRR vs TF-IDF |"
    lines = [head + (" typos: recall@10 | typos: MRR |" if typos else "")]
    lines.append("|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if typos else ""))
    for name, (clean, typo) in rows.items():
        recall, mrr, ndcg = clean
        line = f"| {name} | {recall:.3f} | {mrr:.3f} | {ndcg:.3f} | {recall - reference[0]:+.3f} | "
        line += f"{mrr - reference[1]:+.3f} |"
        if typos:
            line += f" {typo[0]:.3f} | {typo[1]:.3f} |" if typo is not None else " | |"
        lines.append(line)
    return lines


def tune(index: Index, queries: list[dict]) -> None:
    """The hybrid weight grid for each layer mix: every query's hybrid candidates (each part's best
    ``CANDIDATES``, whatever the weight) re-ranked by each weight from their parts in units of chance."""
    print("\nhybrid weight of ELMo (rest: BM25) x search layer mix, dev queries: recall@10 / MRR / nDCG@10")
    weights = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)
    print("| layers | " + " | ".join(f"{w:.1f}" for w in weights) + " |\n|---|" + "---:|" * len(weights))
    for layers in ("token", "average", "top"):
        found = [
            index.search(q["query"], k=2 * CANDIDATES, layers=layers) for q in tqdm(queries, desc=layers, leave=False)
        ]
        cells = []
        for weight in weights:
            ranked = []
            for hits in found:
                fused = [
                    weight * h.parts["elmo"].above_chance + (1 - weight) * h.parts["keywords"].above_chance
                    for h in hits
                ]
                ranked.append([hits[i].doc_id for i in np.argsort(-np.asarray(fused), kind="stable")])
            recall, mrr, ndcg = evaluate(ranked, queries)
            cells.append(f"{recall:.3f} / {mrr:.3f} / {ndcg:.3f}")
        print(f"| {layers} | " + " | ".join(cells) + " |")


def line_table(index: Index, queries: list[dict], typoed: list[dict], language: str, split: str) -> None:
    """Where the relevance line falls for the default method: per kind of query, the relevant documents among the
    top 10 and how many of them it puts under the line (shown all the same, as weaker matches), and recall@10 of
    what was shown before (the documents above the line) and now (all k)."""
    print("\nthe relevance line, default method, top 10: relevant documents it puts under the line")
    lines = [
        "| queries | kind | queries | relevant in top 10 | under the line | recall@10 above the line | recall@10 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for copy, qs in (("clean", queries), ("typos", typoed)):
        found = index.search([q["query"] for q in qs], k=10)
        for kind in sorted({q["kind"] for q in qs}) + ["all"]:
            rows = [(q, hits) for q, hits in zip(qs, found) if kind in ("all", q["kind"])]
            relevant = [[h for h in hits if h.doc_id in q["relevant"]] for q, hits in rows]
            under = sum(not h.above_line for hits in relevant for h in hits)
            above = np.mean([sum(h.above_line for h in r) / len(q["relevant"]) for r, (q, _) in zip(relevant, rows)])
            recall = np.mean([len(r) / len(q["relevant"]) for r, (q, _) in zip(relevant, rows)])
            lines.append(
                f"| {copy} | {kind} | {len(rows)} | {sum(map(len, relevant))} | {under} | {above:.3f} | {recall:.3f} |"
            )
    figure_block(f"search_quality.{language}.{split}.line", lines)


MARGINS = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5)  # one margin for every query (before: ranking.RELEVANCE_MARGIN for all)
KNOWN_MARGINS = (1.0, 1.25, 1.5, 1.75, 2.0, 2.25)  # the margin when every query word is known (the rule in use)


def margin_rules() -> list[tuple[str, Callable[[bool], float]]]:
    """The relevance lines compared: (name, the margin of a query given whether the collection holds every content
    word of it). First one margin for every query, then ``ranking.relevance_margin``'s rule with each margin for
    queries whose words are all known (``RELEVANCE_MARGIN`` for the rest)."""
    rules: list[tuple[str, Callable[[bool], float]]] = [
        (f"{m:.2f} for every query", lambda known, m=m: m) for m in MARGINS
    ]
    for m in KNOWN_MARGINS:
        used = " (in use)" if m == KNOWN_WORDS_MARGIN else ""
        name = f"{m:.2f} when every word is known, else {RELEVANCE_MARGIN:.2f}{used}"
        rules.append((name, lambda known, m=m: m if known else RELEVANCE_MARGIN))
    return rules


def knows_every_word(index: Index, queries: list[dict]) -> list[bool]:
    """Whether the collection holds every content word of each query (as searched: respelled), as
    ``ranking.relevance_margin`` asks."""
    search, holds = index.document_search, index.parts.bm25.holds
    margins = [relevance_margin(search.prepare(index.query(q["query"]), True).content_stems, holds) for q in queries]
    return [margin == KNOWN_WORDS_MARGIN for margin in margins]


def hit_features(index: Index, queries: list[dict], found: list) -> list[np.ndarray]:
    """For each query, one row per hit: its score above chance, ELMo's and BM25's parts above chance, the share of
    the query's content words it holds, and the query's best score ahead of the mean of the rest of its top 10."""
    term = index.parts.keyword_terms.term
    features = []
    for q, hits in zip(queries, found):
        content = set(index.document_search.prepare(index.query(q["query"]), True).content_stems)
        z = np.array([h.above_chance for h in hits])
        lead = z[0] - z[1:].mean() if len(z) > 1 else 0.0
        rows = [
            (
                h.above_chance,
                h.parts["elmo"].above_chance,
                h.parts["keywords"].above_chance,
                len(content & {term(w) for w in h.matched_words}) / max(len(content), 1),
                lead,
            )
            for h in hits
        ]
        features.append(np.array(rows).reshape(-1, 5))
    return features


def rules_table(index: Index, lists: dict, offtopic: list[str], name: str) -> None:
    """Other relevance lines measured against the margins (default method, top 10), each at the setting a one-off
    grid found best, on the English demo, among those that put no document of the first off-topic set above the
    line; each made to fall down the list (a document under the line puts every one after it under). The logistic
    rule is fitted (seeded) on the clean dev queries' hits (relevant or not) and the first off-topic set's. Printed
    as the figure ``search_quality.rules.NAME``."""
    features = {label: hit_features(index, qs, found) for label, (qs, found, _) in lists.items()}
    relevant = [np.array([h.doc_id in q["relevant"] for h in hits]) for q, hits in zip(*lists["clean"][:2])]
    first = f"off:{offtopic[0]}"
    train = np.concatenate(features["clean"] + features[first])[:, [0, 3]]
    labels = np.concatenate(relevant + [np.zeros(len(f), bool) for f in features[first]])
    logistic = LogisticRegression(random_state=0).fit(train, labels)
    rules: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "ELMo's part 2.5 above chance, or BM25's 3.0": lambda f: (f[:, 1] >= 2.5) | (f[:, 2] >= 3.0),
        "the best 4.0 ahead of the rest, each 0.5 above chance": lambda f: (f[:, 4] >= 4.0) & (f[:, 0] >= 0.5),
        "2.0 with every content word held, else 2.5": lambda f: (f[:, 0] >= 2.0) & ((f[:, 3] >= 1) | (f[:, 0] >= 2.5)),
        "logistic on the score and the words held, p >= 0.6": lambda f: (
            logistic.predict_proba(f[:, [0, 3]])[:, 1] >= 0.6 if len(f) else np.zeros(0, bool)
        ),
    }
    print("\nother relevance lines, default method, top 10 (settings chosen on the English first off-topic set)")
    head = "| rule |" + "".join(f" {s}: off-topic documents above the line | queries with one |" for s in offtopic)
    head += ' recall@10 above the line: clean | typos | relevant first yet "no good match": clean | typos |'
    lines = [head, "|---|" + "---:|" * (2 * len(offtopic) + 4)]
    for rule_name, rule in rules.items():
        above = {label: [np.logical_and.accumulate(rule(f)) for f in fs] for label, fs in features.items()}
        cells = []
        for set_name in offtopic:
            counts = [int(a.sum()) for a in above[f"off:{set_name}"]]
            cells += [str(sum(counts)), str(sum(c > 0 for c in counts))]
        for copy in ("clean", "typos"):
            qs, found, _ = lists[copy]
            shown = [
                sum(h.doc_id in q["relevant"] for h, up in zip(hits, a) if up) / len(q["relevant"])
                for q, hits, a in zip(qs, found, above[copy])
            ]
            cells.append(f"{np.mean(shown):.3f}")
        for copy in ("clean", "typos"):
            qs, found, _ = lists[copy]
            told = sum(
                len(hits) > 0 and hits[0].doc_id in q["relevant"] and not a[0]
                for q, hits, a in zip(qs, found, above[copy])
            )
            cells.append(f"{told} of {len(qs)}")
        lines.append(f"| {rule_name} | " + " | ".join(cells) + " |")
    figure_block(f"search_quality.rules.{name}", lines)


def margin_table(
    index: Index, queries: list[dict], typoed: list[dict], offtopic: dict[str, list[dict]], name: str
) -> None:
    """Where the relevance line falls under each rule (``margin_rules``), default method, top 10: the documents of
    each set of off-topic queries (``offtopic``: its name -> its queries; the first chooses, the others check) above
    it, and the judged queries' relevant documents above it (the share of all of them: recall@10 above the line, as
    ``line_table``), and the judged queries told "no good match" (their first document under the line) though it is
    a relevant one. A document is above the line with margin m when its score beats the random queries' mean by m
    spreads (``DocumentHit.above_chance >= m``). Printed as the figure ``search_quality.margins.NAME``."""
    lists = {
        label: (qs, index.search([q["query"] for q in qs], k=10), knows_every_word(index, qs))
        for label, qs in (
            *((f"off:{set_name}", [q for q in qs if q["kind"] != "wrong"]) for set_name, qs in offtopic.items()),
            ("clean", queries),
            ("typos", typoed),
        )
    }
    sets = ", ".join(f"{set_name} ({len(lists['off:' + set_name][0])} queries)" for set_name in offtopic)
    print(f"\nthe relevance line, default method, top 10; off-topic queries of {sets}")
    head = "| margin (spreads) |"
    head += "".join(f" {set_name}: off-topic documents above the line | queries with one |" for set_name in offtopic)
    head += ' recall@10 above the line: clean | typos | relevant first yet "no good match": clean | typos |'
    lines = [head, "|---|" + "---:|" * (2 * len(offtopic) + 4)]
    for rule_name, margin_of in margin_rules():
        cells = []
        for set_name in offtopic:
            _, found, known = lists[f"off:{set_name}"]
            above = [sum(h.above_chance >= margin_of(k) for h in hits) for hits, k in zip(found, known)]
            cells += [str(sum(above)), str(sum(a > 0 for a in above))]
        recall, told_none = [], []
        for copy in ("clean", "typos"):
            qs, found, known = lists[copy]
            recall.append(
                np.mean(
                    [
                        sum(h.doc_id in q["relevant"] and h.above_chance >= margin_of(k) for h in hits)
                        / len(q["relevant"])
                        for q, hits, k in zip(qs, found, known)
                    ]
                )
            )
            told = sum(
                len(hits) > 0 and hits[0].doc_id in q["relevant"] and hits[0].above_chance < margin_of(k)
                for q, hits, k in zip(qs, found, known)
            )
            told_none.append(f"{told} of {len(qs)}")
        cells += [f"{r:.3f}" for r in recall] + told_none
        lines.append(f"| {rule_name} | " + " | ".join(cells) + " |")
    figure_block(f"search_quality.margins.{name}", lines)  # the table, printed once, between its figure lines
    rules_table(index, lists, list(offtopic), name)
    known = ", ".join(f"{label} {np.mean(k):.0%}" for label, (_, _, k) in lists.items())
    print(f"queries whose every content word the collection holds: {known}")
    print("\noff-topic queries now: the first document, its relevance and why it came up")
    print("| set | kind | query | first document | relevance | matched words |\n|---|---|---|---|---:|---|")
    for set_name in offtopic:
        off, off_found, _ = lists[f"off:{set_name}"]
        for q, hits in zip(off, off_found):
            first = hits[0] if len(hits) else None
            print(
                f"| {set_name} | {q['kind']} | {q['query']} | "
                + (
                    f"{first.title} | {first.relevance:.0%} | {', '.join(first.matched_words) or '(by meaning)'} |"
                    if first
                    else "(none) | | |"
                )
            )
    wrong = [q for q in next(iter(offtopic.values())) if q["kind"] == "wrong"]
    if not wrong:  # only the English set holds the queries
        return
    print("\nthe issue's on-topic queries whose first document was the wrong one: the first three now")
    print("| query | relevant | first three (relevance) |\n|---|---|---|")
    for q, hits in zip(wrong, index.search([q["query"] for q in wrong], k=3)):
        shown = "; ".join(f"{h.doc_id}{'*' if h.doc_id in q['relevant'] else ''} {h.relevance:.0%}" for h in hits)
        print(f"| {q['query']} | {', '.join(q['relevant'])} | {shown} |")


COMMON_WORDS, COMMON_RANK = 200, 20_000  # real words: drawn from GloVe's 20,000 most frequent
KOREAN_TEXT, KOREAN_LINES, KOREAN_COMMON = SHARED / "corpus-ko" / "valid.txt.xz", 1000, 3  # Korean real words: those
# of 3+ uses in the first 1,000 lines of corpus-ko's validation text


def common_words(index: Index) -> tuple[list[str], str]:
    """Real words of the index's language that the index lacks, alphabetic, of 4+ letters (Korean: jamo), no
    stopwords, and where they come from. English: GloVe's ``COMMON_RANK`` most frequent words. Korean: the tokens
    used ``KOREAN_COMMON`` times or more in the first ``KOREAN_LINES`` lines of corpus-ko's validation text (not
    GloVe's: its most frequent words are the respelling rule's own dictionary)."""
    text = index.elmo.text
    if text.language == "ko":
        with lzma.open(KOREAN_TEXT, "rt", encoding="utf-8") as lines:
            uses = Counter(t for line in itertools.islice(lines, KOREAN_LINES) for t in text.tokenize(line))
        found = sorted(w for w, n in uses.items() if n >= KOREAN_COMMON and re.fullmatch("[가-힣]+", w))
        where = f"Korean tokens of {KOREAN_COMMON}+ uses in the first {KOREAN_LINES:,} lines of {KOREAN_TEXT.name}"
    else:
        found = [w for w in index.parts.glove.words[:COMMON_RANK] if w.isascii()]
        where = f"English words of GloVe's {COMMON_RANK:,} most frequent"
    known = set(index.parts.bm25.vocab)
    words = [
        w
        for w in found
        if correctable(w) and w not in text.stopwords and index.parts.keyword_terms.term(w) not in known
    ]
    return words, where


def respelled_words(index: Index, queries: list[dict]) -> tuple[int, int, int]:
    """Over ``RESPELLING_COPIES`` typo'd copies of ``queries`` (seeds ``TYPO_SEED``, ``TYPO_SEED`` + 1, ...): the
    words typed wrong, and how many of them search respelled as the word typed clean, and as another word (the
    rest it searched as typed)."""
    typed = right = other = 0
    for seed in range(TYPO_SEED, TYPO_SEED + RESPELLING_COPIES):
        copy = typo_queries(queries, index.elmo.text.stopwords, seed)
        for q, typo, found in zip(queries, copy, index.search([t["query"] for t in copy], k=1)):
            searched = (found.searched_for or typo["query"]).split()
            for clean, slip, word in zip(q["query"].split(), typo["query"].split(), searched):
                if clean != slip:
                    typed += 1
                    right += word.lower() == clean.lower()
                    other += word.lower() not in (clean.lower(), slip.lower())
    return typed, right, other


def respelling_table(index: Index, queries: list[dict], typoed: list[dict], language: str, split: str) -> None:
    """Respelling of real words and of typos: ``COMMON_WORDS`` common words the index lacks (``common_words``,
    drawn seeded) searched one each, and how many are respelled; the typo'd words of ``respelled_words``, printed as
    the figure ``search_quality.LANGUAGE.SPLIT.respelled``; and the typo'd dev queries as searched."""
    words, where = common_words(index)
    sample = random.Random(TYPO_SEED).sample(words, min(COMMON_WORDS, len(words)))
    now = [w for w, found in zip(sample, index.search(sample, k=1)) if found.searched_for is not None]
    print(f"\nrespelling: {len(sample)} common words absent from the index ({where})")
    print(f"respelled: {len(now)} {now[:10]}")
    typed, right, other = respelled_words(index, queries)
    print(f"typo'd words ({RESPELLING_COPIES} seeded typo'd copies of the {len(queries)} queries):")
    figure(
        f"search_quality.{language}.{split}.respelled",
        f"{right} of {typed} ({right / max(typed, 1):.1%}) as typed clean, {other} as another word, "
        f"{typed - right - other} searched as typed",
    )
    for name, copy in (("clean", queries), ("typo'd", typoed)):
        respelled = [found.searched_for for found in index.search([q["query"] for q in copy], k=1)]
        print(f"{name} queries respelled: {sum(r is not None for r in respelled)} of {len(copy)}")
        for q, searched in zip(copy, respelled):
            if searched is not None:
                print(f"  {q['query']} -> {searched}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--index",
        type=Path,
        default=ROOT / "indexes" / "demo-index",
        help="an index of the queries' corpus (default: indexes/demo-index, which `make demo` builds)",
    )
    parser.add_argument(
        "--queries",
        type=Path,
        default=ROOT / "bench" / "queries_en.jsonl",
        help="judged queries (default: bench/queries_en.jsonl)",
    )
    parser.add_argument(
        "--offtopic",
        type=lambda text: Path(text) if text else None,
        default=ROOT / "bench" / "offtopic_en.jsonl",
        help="off-topic queries the relevance line was chosen on, for the margin table (default: "
        "bench/offtopic_en.jsonl; give another collection's, e.g. bench/offtopic_ko.jsonl, or leave the table out "
        "with --offtopic '')",
    )
    parser.add_argument(
        "--offtopic-check",
        type=lambda text: Path(text) if text else None,
        default=ROOT / "bench" / "offtopic_en_check.jsonl",
        help="a second set of off-topic queries that only checks the line, a column pair of the margin table "
        "(default: bench/offtopic_en_check.jsonl; leave it out with --offtopic-check '', e.g. for Korean)",
    )
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev", help="which queries (default: dev)")
    parser.add_argument("--tune", action="store_true", help="also print the hybrid weight x layer mix grid")
    parser.add_argument("--show-typos", action="store_true", help="print the typo'd queries")
    args = parser.parse_args()
    index = Index.open(args.index)
    queries = read_queries(args.queries, args.split)
    typoed = typo_queries(queries, index.elmo.text.stopwords)
    changed = sum(t["query"] != q["query"] for t, q in zip(typoed, queries))
    print(
        f"{len(queries)} {args.split} queries ({changed} with typos in the typo'd copy), {len(index.docs)} documents, "
        f"model {index.manifest.model.name}, search layers {index.manifest.search_layers.spec}, "
        f"pooling {index.manifest.pooling}\n"
    )
    if args.show_typos:
        for t, q in zip(typoed, queries):
            print(f"  {q['query']!r} -> {t['query']!r}")

    def measure(rank: Ranker) -> tuple[np.ndarray, np.ndarray | None]:
        return evaluate(rank(index, queries), queries), evaluate(rank(index, typoed), typoed) if changed else None

    rows = {"TF-IDF over documents (reference)": measure(tfidf_rankings)}
    for method in METHODS:
        rows[method + (" (default)" if method == METHODS[0] else "")] = measure(method_rankings(method))
    rows["hybrid, words as typed (no respelling)"] = measure(method_rankings("hybrid", spelling=False))
    rows["keywords, words as typed (no respelling)"] = measure(method_rankings("keywords", spelling=False))
    rows["keywords without stemming or respelling (BM25 before)"] = measure(unstemmed_keyword_rankings)
    default, reference = rows[METHODS[0] + " (default)"][0], rows["TF-IDF over documents (reference)"][0]
    language, split = index.elmo.text.language, args.split
    figure_block(f"search_quality.{language}.{split}.methods", table(rows, reference))
    for score, column in (("recall_at_10", 0), ("mrr", 1)):
        figure(f"search_quality.{language}.{split}.default.{score}", f"{default[column]:.3f}")
        figure(f"search_quality.{language}.{split}.tfidf.{score}", f"{reference[column]:.3f}")
    line_table(index, queries, typoed, language, split)
    if args.offtopic is not None:
        sets = [path for path in (args.offtopic, args.offtopic_check) if path is not None]
        offtopic = {path.stem: read_lines(path) for path in sets}
        margin_table(index, queries, typoed, offtopic, args.offtopic.stem)
    respelling_table(index, queries, typoed, language, split)
    if args.tune:
        tune(index, queries)


if __name__ == "__main__":
    main()
