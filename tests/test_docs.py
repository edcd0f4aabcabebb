"""The docs name the code as it is: every module of the four packages has its line in docs/development.md's map."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("encoder", "indexer", "app", "demo")


def test_the_module_map_names_every_module_and_no_other():
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    modules = text.split("## Modules", 1)[1].split("\n## ", 1)[0]
    named: set[str] = set()
    for section in re.split(r"^\*\*(\w+)/\*\*$", modules, flags=re.MULTILINE)[1:]:
        if section in PACKAGES:
            package = section
            continue
        named |= {f"{package}/{name}" for name in re.findall(r"`([\w/]+\.py)`", section)}
    actual = {str(p.relative_to(REPO)) for package in PACKAGES for p in (REPO / package).rglob("*.py")}
    assert named == actual, f"missing: {sorted(actual - named)}; not modules: {sorted(named - actual)}"
