"""Numbers a user gives (an option, an argument of the Python API): whole or real, finite, in range.

``Number`` is the one rule. As an argparse ``type`` it reads the option's text (``type=Number(int, 1)``) and a
bad value is argparse's usage error naming the option; at an API entry ``Number(int, 1).check("batch_size", x)``
raises a ``ValueError`` naming the argument. NaN and infinity are refused by name, whole numbers must be whole
(not 2.5, not True), and every size has a ceiling this machine can hold (``MAX_WHOLE`` unless the rule says less),
so a typo cannot turn into a silent wrong result or an allocation that fails deep inside a library.
"""

from __future__ import annotations

import argparse
import math
import numbers
import os
from dataclasses import dataclass

MAX_WHOLE = 2**53
"""The largest whole number any option takes unless its rule says less: exact as a float64, fits an int64."""


class NonFiniteError(ValueError):
    """A value that must be finite is NaN or infinite (a number given, or a model or vectors about to be written
    or just read)."""


def shown(value: object) -> str:
    """A value a user gave, as a message quotes it: its repr, but a flag as true or false, as JSON (an HTTP body, a
    --queries line) and plain words spell it, where Python's repr said "not True" to a JSON user."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


def _plain(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else f"{value:,}"


@dataclass(frozen=True)
class Number:
    """A whole (``int``) or real (``float``) number from ``at_least`` (or, exclusive, ``above``) up to ``at_most``
    (or, exclusive, ``below``); whole numbers are capped at ``MAX_WHOLE`` unless ``at_most`` says less."""

    kind: type = int
    at_least: float | None = None
    at_most: float | None = None
    above: float | None = None
    below: float | None = None

    @property
    def ceiling(self) -> float | None:
        """The largest value allowed: ``at_most``, and for whole numbers never above ``MAX_WHOLE``."""
        if self.kind is int:
            return MAX_WHOLE if self.at_most is None else min(self.at_most, MAX_WHOLE)
        return self.at_most

    def describe(self) -> str:
        """What the rule asks for, e.g. "a whole number from 1 to 1,000" or "a number above 0"."""
        what = "a whole number" if self.kind is int else "a number"
        if self.at_least is not None and self.at_most is not None:
            return f"{what} from {_plain(self.at_least)} to {_plain(self.at_most)}"
        bounds = [
            f"above {_plain(self.above)}" if self.above is not None else None,
            f"of at least {_plain(self.at_least)}" if self.at_least is not None else None,
            f"of at most {_plain(self.at_most)}" if self.at_most is not None else None,
            f"below {_plain(self.below)}" if self.below is not None else None,
        ]
        return " ".join([what, " and ".join(filter(None, bounds))]).strip()

    def fits(self, value: float) -> bool:
        """Whether a number is finite and in range."""
        if not math.isfinite(value):
            return False
        ceiling = self.ceiling
        return (
            (self.at_least is None or value >= self.at_least)
            and (self.above is None or value > self.above)
            and (ceiling is None or value <= ceiling)
            and (self.below is None or value < self.below)
        )

    def problem(self, value: object, as_given: str | None = None) -> str | None:
        """Why ``value`` breaks the rule ("must be ..., not ``as_given``", by default ``shown(value)``), or None when
        it keeps it."""
        as_given = shown(value) if as_given is None else as_given
        whole = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        real = whole or (isinstance(value, numbers.Real) and not isinstance(value, bool))
        if real and not math.isfinite(value):
            return f"must be {self.describe()}, not {as_given} (NaN and infinity are refused)"
        if real and self.ceiling is not None and value > self.ceiling and self.at_most is None:
            return f"must be {self.describe()} and at most {_plain(self.ceiling)}, not {as_given}"
        if (self.kind is int and not whole) or not real or not self.fits(value):
            return f"must be {self.describe()}, not {as_given}"
        return None

    def check(self, name: str, value: object) -> int | float:
        """``value`` when it keeps the rule, else a ``ValueError`` naming ``name`` (an option or argument)."""
        problem = self.problem(value)
        if problem is not None:
            raise (NonFiniteError if "NaN" in problem else ValueError)(f"{name} {problem}")
        return value

    def read(self, text: str) -> int | float | None:
        """The number ``text`` spells (plain ASCII, so not "²"; for a whole number also "1e6"), or None."""
        text = text.strip()
        if not text.isascii():
            return None
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = float(text)
        except ValueError:
            return None
        return int(value) if self.kind is int and value.is_integer() else value

    def parse(self, text: str) -> int | float | None:
        """The number ``text`` spells when it keeps the rule, else None (a URL parameter falls back to its default)."""
        value = self.read(text)
        return value if value is not None and self.problem(value) is None else None

    def text_problem(self, text: str) -> str | None:
        """Why the number ``text`` spells breaks the rule ("must be ..., not 'text'"), or None."""
        value = self.read(text)
        return self.problem(text if value is None else value, repr(text))

    def __call__(self, text: str) -> int | float:
        """argparse's ``type``: the option's text as a number, or its usage error saying what is wanted."""
        problem = self.text_problem(text)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
        value = self.read(text)
        return float(value) if self.kind is float else value


SEED = Number(int, 0, 2**32 - 1)
"""A random seed: what numpy's and torch's generators all take."""
THREADS = Number(int, 1, 4096)
"""CPU threads or processes."""


def check_finite(name: str, values: object) -> None:
    """Raise ``NonFiniteError`` naming ``name`` when an array or tensor holds NaN or infinity."""
    import numpy as np

    if hasattr(values, "detach"):  # a torch tensor: checked where it is, one number comes back
        import torch

        if not bool(torch.isfinite(values.detach()).all()):
            raise NonFiniteError(f"{name} holds NaN or infinite values")
        return
    if not np.isfinite(np.asarray(values)).all():
        raise NonFiniteError(f"{name} holds NaN or infinite values")


def memory_bytes() -> int:
    """This machine's physical memory, in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory(needed: int, what: str, advice: str) -> None:
    """Refuse, before allocating, work whose arrays alone (``needed`` bytes) exceed this machine's memory."""
    if needed > memory_bytes():
        raise ValueError(
            f"{what} needs {needed / 2**30:,.1f} GiB of memory, more than this machine has "
            f"({memory_bytes() / 2**30:,.1f} GiB); {advice}"
        )
