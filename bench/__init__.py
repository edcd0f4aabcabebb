"""Benchmarks: each module prints a table; run one from the checkout's root as ``python -m bench.NAME``."""
