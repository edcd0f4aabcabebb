"""Background load for benches that measure a machine busy with other work: ``with busy(4): ...`` runs four
busy-loop processes for the block (each ends by itself after ``LIMIT_S`` even if the bench is killed)."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from contextlib import contextmanager

LIMIT_S = 1800


def _spin(deadline: float) -> None:
    while time.monotonic() < deadline:
        pass


@contextmanager
def busy(load: int, settle: float = 10.0) -> Iterator[None]:
    """``load`` busy-loop processes while the block runs, started ``settle`` seconds before it."""
    deadline = time.monotonic() + LIMIT_S
    spinning = [multiprocessing.Process(target=_spin, args=(deadline,), daemon=True) for _ in range(load)]
    for process in spinning:
        process.start()
    try:
        if load:
            time.sleep(settle)
        yield
    finally:
        for process in spinning:
            process.terminate()
            process.join()
