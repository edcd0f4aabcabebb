"""A model's card (``README.md`` beside its weights) as the About page shows it: in the UI language where the model
ships a translation (``README.<language>.md``), without the HTML comments tools write into it (``encoder ship``
marks its figures with them), with the folders of the machine it was made on left out of its paths, its headings
under the page's own (its title a level-3 heading), and its images taken from the model's own folder. The card itself is never edited: whatever card a model ships is shown this way.

Beside the card, a model may ship what its layers were measured to hold (``layers.json``: the per-layer probes and the
scalar mixes tasks learned), the one source of those figures for the About page and the docs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from encoder.model_files import resolve_model
from indexer.manifest import Manifest

CARD = "README.md"
LAYERS_FILE = "layers.json"
WEAKNESSES = "What it still gets wrong"
"""The card's heading of what the model gets wrong, which the Word in context page links to where an example fails."""
_COMMENT = re.compile(r"^[ \t]*<!--.*?-->[ \t]*\n|<!--.*?-->", re.S | re.M)
"""An HTML comment: with its line where it stands alone on one (a mark of ``encoder ship``), else by itself (a figure's
marks, ``scripts/paste_figures.py``, keep the words around them apart)."""
_MACHINE_FOLDER = re.compile(
    r"(?<![\w./-])(?:\.\./shared/(?:data/|models/)?|/tmp/|/work/[\w.-]+/|/home/[\w.-]+/|/root/)"
)
"""Where a development machine keeps its data, as a path starts: ``../shared/data/corpus-en`` is ``corpus-en``."""
_IMAGE = re.compile(r"^!\[[^\]]*\]\(([^)\s]+)\)[ \t]*$", re.M)
_CODE_OR_HEADING = re.compile(r"^```.*?^```[ \t]*$|^#{1,4}(?=[ \t])", re.M | re.S)
HEADING_DEPTH = 2
"""How many levels a card's headings go down: under the page's "Model card" heading, not as big as the page's title."""


def _under_the_page(text: str) -> str:
    """Each markdown heading of ``text`` ``HEADING_DEPTH`` levels down (``#`` -> ``###``); code blocks as they are."""
    return _CODE_OR_HEADING.sub(lambda m: m.group() if m.group()[0] == "`" else m.group() + "#" * HEADING_DEPTH, text)


def card_file(folder: Path, language: str) -> Path | None:
    """The card in ``language`` (``README.ko.md``), else the model's own (``README.md``); None when it has none."""
    for name in (f"README.{language}.md", CARD):
        if (folder / name).is_file():
            return folder / name
    return None


def card_parts(text: str, folder: Path) -> list[str | Path]:
    """The card as markdown and images, in order: comments dropped, machine folders left out of paths, headings under
    the page's (``_under_the_page``), and each image on a line of its own (``![curve](learning_curve.png)``) as the
    file in ``folder`` (dropped when it is missing or outside ``folder``), since the browser cannot fetch a path
    relative to the card."""
    text = _under_the_page(_MACHINE_FOLDER.sub("", _COMMENT.sub("", text)))
    parts: list[str | Path] = []
    last = 0
    for image in _IMAGE.finditer(text):
        parts.append(text[last : image.start()])
        path = (folder / image.group(1)).resolve()
        if path.is_relative_to(folder.resolve()) and path.is_file():
            parts.append(path)
        last = image.end()
    parts.append(text[last:])
    return [part for part in parts if not isinstance(part, str) or part.strip()]


def model_dir(manifest: Manifest) -> Path | None:
    """Where an index's model lives (its card is the README.md there); None for published hdf5 weights."""
    source = manifest.model.source
    try:
        return resolve_model(*source).folder if isinstance(source, list) else resolve_model(source).folder
    except FileNotFoundError:
        return None


def weaknesses_anchor(folder: Path) -> str | None:
    """The About page's anchor of the card's ``WEAKNESSES`` section (as Streamlit names a heading's anchor: its
    words in lower case joined by "-"), None when the model's card has no such section."""
    card = folder / CARD
    if not card.is_file() or not re.search(rf"^#+ {WEAKNESSES}[ \t]*$", card.read_text(encoding="utf-8"), re.M):
        return None
    return "-".join(WEAKNESSES.lower().split())


@dataclass(frozen=True)
class LayerFindings:
    """What a model's layers were measured to hold (``layers.json``): per layer (token layer first), linear-probe
    accuracies (%) of part of speech on every token (``upos``), on words whose tag depends on the context
    (``upos_ambiguous``) and of Penn tags (``xpos``), and the sense probe's AUC (``sense_auc``), with the readout's
    AUC plain and centred; and the scalar mixes s_j that POS tagging and WiC learned (``pos_mix``, ``wic_mix``).
    ``probes_by`` and ``mixes_by``: the command that measured them, and the day."""

    upos: list[float]
    upos_ambiguous: list[float]
    xpos: list[float]
    sense_auc: list[float]
    readout_sense_auc: float
    readout_sense_auc_centred: float
    pos_mix: list[float]
    wic_mix: list[float]
    probes_by: tuple[str, str]
    mixes_by: tuple[str, str]


def layer_findings(folder: Path) -> LayerFindings | None:
    """The model's ``layers.json`` (None when it ships none)."""
    path = folder / LAYERS_FILE
    if not path.is_file():
        return None
    found = json.loads(path.read_text(encoding="utf-8"))
    probes, mixes = found["probes"], found["learned_mixes"]
    return LayerFindings(
        upos=probes["upos"],
        upos_ambiguous=probes["upos_ambiguous"],
        xpos=probes["xpos"],
        sense_auc=probes["sense_auc"],
        readout_sense_auc=probes["readout_sense_auc"],
        readout_sense_auc_centred=probes["readout_sense_auc_centred"],
        pos_mix=mixes["pos"],
        wic_mix=mixes["wic"],
        probes_by=(probes["command"], probes["measured"]),
        mixes_by=(mixes["command"], mixes["measured"]),
    )
