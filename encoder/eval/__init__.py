"""The evaluation suite (``python -m encoder evaluate``): does each ELMo layer carry meaning, and beside GloVe?

One module per task (wic, wsd, pos, sts, wordsim, perplexity, senses), each with ``DATA`` (its default data,
relative to the data root; senses' sentences ship with the code) and ``run(...) -> TaskResult``; ``encoder/cli/evaluate.py`` wires them to the command line and
``report`` writes the markdown report with plots.
"""

from pathlib import Path

DEFAULT_DATA_ROOT = Path(__file__).resolve().parents[2].parent / "shared" / "data"
"""The shared data sets, beside the repository (never copied into it)."""
