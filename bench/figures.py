"""Figures the docs quote, printed by the bench that measures them, so that ``scripts/paste_figures.py`` can paste
them into every page that quotes them (the README, docs/, the model cards) and no page retypes one.

A bench prints, beside its table, one line per figure::

    figure word_in_context.ko.met = 9 of 10

or a block (a table) between ``figure NAME begin`` and ``figure NAME end``. A page quotes a figure between
``<!--figure NAME-->`` and ``<!--/figure-->`` (invisible on the rendered page). A name starts with the bench's
module (``bench/word_in_context.py``: ``word_in_context.``).
"""

from __future__ import annotations

from collections.abc import Sequence


def figure(name: str, value: object) -> None:
    """Print a one-line figure for the pages that quote ``name``."""
    text = str(value)
    if "\n" in text or "<!--" in text:
        raise ValueError(f"figure {name}: a one-line figure holds no line break or comment: {text!r}")
    print(f"figure {name} = {text}")


def figure_block(name: str, lines: Sequence[str]) -> None:
    """Print ``lines`` (a table, shown as they are) as the block figure ``name``."""
    print(f"figure {name} begin")
    for line in lines:
        print(line)
    print(f"figure {name} end")
