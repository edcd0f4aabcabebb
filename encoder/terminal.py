"""What a command line prints for people (not ``--json``): text from documents and users, made harmless.

A document may hold terminal escape sequences (clear the screen, set the window title, plant a hidden link) or
right-to-left overrides that disguise what follows; printed as they are, they act instead of being read. Every
printer of the command lines passes such text through ``visible`` (``show`` prints a line so), which writes each
control character as its Python escape (ESC as ``\\x1b``, a newline inside a document as ``\\n``). JSON output
(``json_text``) escapes the same characters as JSON escapes, so it stays exact once parsed.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TextIO

_BEYOND_C0 = "\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"  # DEL, C1 (CSI among them), text direction
_INVISIBLE = re.compile(f"[\x00-\x1f{_BEYOND_C0}]")
"""C0 and C1 control characters (ESC and CSI among them), DEL, and the marks and overrides of text direction."""
_RAW_IN_JSON = re.compile(f"[{_BEYOND_C0}]")
"""What of ``_INVISIBLE`` ``json.dumps`` leaves as it is (it escapes C0 itself, and its indentation is C0)."""


def visible(text: object) -> str:
    """``text`` with every control character written as its escape, e.g. "\\x1b[2J" for a clear-screen sequence."""
    return _INVISIBLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def json_text(data: object, indent: int | None = None) -> str:
    """``data`` as JSON (``ensure_ascii=False``: text stays readable) with every character ``visible`` escapes
    written as a JSON escape too ("\\u009b", "\\u202e"; ``json.dumps`` escapes only C0 controls): the same data
    once parsed, and nothing a terminal acts on when the output is shown raw."""
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def show(line: object = "", file: TextIO | None = None) -> None:
    """Print one line of output (to stdout unless ``file``) with ``visible`` text."""
    print(visible(line), file=file or sys.stdout)
