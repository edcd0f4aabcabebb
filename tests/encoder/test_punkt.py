"""Tests for encoder.punkt: the shipped Punkt parameters, training them, and the `punkt` command."""

import gzip
import json
import random

import pytest

from encoder import punkt
from encoder.punkt import punkt_tokenizer, save_punkt, train_punkt


def test_shipped_parameters():
    """The shipped Punkt parameters are small and know the common abbreviations and sentence starters, not names."""
    assert punkt.PUNKT_PATH.stat().st_size < 300_000
    params = json.loads(punkt.PUNKT_PATH.read_text(encoding="utf-8"))
    assert {"dr", "mr", "st", "u.s", "e.g", "i.e", "p.m", "etc"} <= set(params["abbrev_types"])
    assert {"however", "the", "in"} <= set(params["sent_starters"])
    assert "louis" not in params["sent_starters"]  # a name, which would split "St. Louis"
    assert all(len(pair) == 2 for pair in params["collocations"])
    assert all(isinstance(flags, int) for flags in params["ortho_context"].values())


def invented_corpus(n_lines: int) -> list[str]:
    """Paragraphs of made-up text in which "Blvd." (not a common abbreviation of ours) is used."""
    rng = random.Random(1)
    nouns = ["shop", "bakery", "museum", "station", "library", "garden", "theatre", "school"]
    names = ["Maple", "Cedar", "Harbor", "Sunset", "Lake", "Oak", "River", "Hill"]
    patterns = [
        "The {n} on {s} Blvd. is open every day.",
        "Our {n} moved to {s} Blvd. last year.",
        "They walked along {s} Blvd. and found a {n}.",
        "A {n} stands at the end of the road.",
        "However, the {n} was closed in winter.",
        "Nobody liked the old {n} near the river.",
        "In the evening, the {n} was full of people.",
    ]
    lines = []
    for _ in range(n_lines):
        sentences_ = [rng.choice(patterns).format(n=rng.choice(nouns), s=rng.choice(names)) for _ in range(4)]
        lines.append(" ".join(sentences_))
    return lines


def test_train_punkt_learns_usable_parameters(tmp_path):
    lines = invented_corpus(400)
    params = train_punkt(["", *lines, ""], max_chars=1_000_000)

    assert params == json.loads(json.dumps(params))  # JSON-ready as it is
    assert params["trained_on_chars"] == sum(map(len, lines))
    assert "blvd" in params["abbrev_types"]
    assert punkt.COMMON_ABBREVIATIONS <= set(params["abbrev_types"])

    save_punkt(params, tmp_path / "punkt.json")
    tokenizer = punkt_tokenizer(tmp_path / "punkt.json")
    doc = "The shop on Maple Blvd. is small. We liked it."
    assert [doc[a:b] for a, b in tokenizer.span_tokenize(doc)] == [
        "The shop on Maple Blvd. is small.",
        "We liked it.",
    ]


def test_train_punkt_stops_after_max_chars():
    lines = invented_corpus(400)
    params = train_punkt(lines, max_chars=5_000)
    assert 5_000 <= params["trained_on_chars"] < 5_000 + max(map(len, lines))


def test_train_punkt_needs_text():
    with pytest.raises(ValueError):
        train_punkt(["", "   "], max_chars=1000)


def test_cli_retrains_parameters(tmp_path, capsys):
    """``encoder punkt`` trains on a compressed corpus up to --max-chars and replaces its own earlier output."""
    (tmp_path / "corpus").mkdir()
    with gzip.open(tmp_path / "corpus" / "part.txt.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(invented_corpus(200)) + "\n")
    from encoder.__main__ import main

    corpus, out = str(tmp_path / "corpus"), str(tmp_path / "p.json")
    command = ["punkt", "--corpus", corpus, "--out", out, "--max-chars", "20000"]
    main(command)
    params = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert 20_000 <= params["trained_on_chars"] < 21_000
    assert "blvd" in params["abbrev_types"]
    assert "trained on 20," in capsys.readouterr().out
    main(command)  # its own earlier output is replaced (another file only with --overwrite: test_bad_input_punkt)
    assert json.loads((tmp_path / "p.json").read_text(encoding="utf-8")) == params
