"""Examples: sentences of the Word-in-context page (``bench/table4.py`` prints the Table 4 one as a table) and
queries of the Search page."""

from __future__ import annotations

TABLE4 = "play: the paper's Table 4"
"""Peters et al. (2018), Table 4: a sports "play" and a stage "play", each against the uses nearest to it."""

EXAMPLES: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {  # name -> two (sentence, word) pairs
    "bank: river vs money": (
        ("The otters dug a den in the muddy bank of the river.", "bank"),
        ("She opened a savings account at the bank on the high street.", "bank"),
    ),
    "play: theatre vs game": (
        ("The actors rehearsed the new play for six weeks before opening night.", "play"),
        ("After school the children went outside to play football in the park.", "play"),
    ),
    TABLE4: (
        ("The shortstop made a spectacular play to stop the ball and end the game.", "play"),
        ("The actress signed to star in a Broadway play that opens in the spring.", "play"),
    ),
}

QUERIES = (
    "how do volcanoes form",
    "my laptop will not start",
    "bass fishing on a quiet lake",
    "keeping banknotes safe from forgers",
    "actors on stage",
)
"""Example queries of the Search page, for the demo corpus."""
