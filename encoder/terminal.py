"""What a command line prints for people (not ``--json``): text from documents and users, made harmless.

A document may hold terminal escape sequences (clear the screen, set the window title, plant a hidden link) or
right-to-left overrides that disguise what follows; printed as they are, they act instead of being read. Every
printer of the command lines passes such text through ``visible`` (``show`` prints a line so), which writes each
control character as its Python escape (ESC as ``\\x1b``, a newline inside a document as ``\\n``). JSON output
stays exact: ``json.dumps`` escapes control characters itself.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 control characters (ESC and CSI among them), DEL, and the marks and overrides of text direction."""


def visible(text: object) -> str:
    """``text`` with every control character written as its escape, e.g. "\\x1b[2J" for a clear-screen sequence."""
    return _INVISIBLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def show(line: object = "", file: TextIO | None = None) -> None:
    """Print one line of output (to stdout unless ``file``) with ``visible`` text."""
    print(visible(line), file=file or sys.stdout)
