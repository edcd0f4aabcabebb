"""A model's card (``README.md`` beside its weights) as the About page shows it: in the UI language where the model
ships a translation (``README.<language>.md``), without the HTML comments tools write into it (``encoder ship``
marks its figures with them), with the folders of the machine it was made on left out of its paths, its headings
under the page's own (its title a level-3 heading), and its images taken from the model's own folder. The card itself is never edited: whatever card a model ships is shown this way."""

from __future__ import annotations

import re
from pathlib import Path

CARD = "README.md"
_COMMENT = re.compile(r"<!--.*?-->[ \t]*\n?", re.S)
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
