"""What a command line prints: text from documents, file names and users, made harmless, in text and in JSON.

A document (or a file name, which becomes a document id) may hold terminal escape sequences (clear the screen,
set the window title, plant a hidden link) or right-to-left overrides that disguise what follows; printed as
they are, they act instead of being read. This is the one rule for everything a command prints:

- text: ``visible`` (``show`` prints a line so) writes each control character as its Python escape (ESC as
  ``\\x1b``, a newline inside a document as ``\\n``, a right-to-left override as ``\\u202e``);
- JSON: ``json_text`` (``show_json`` prints it) is exact, since it reads back as the same value, and readable,
  since letters of every script stay as they are, but ``json.dumps`` writes C1 controls (CSI, U+009B, acts as
  ESC [), DEL and the marks and overrides of text direction raw; they are written as ``\\u`` escapes;
- a web page (the app): ``visible_on_page`` escapes as ``visible`` does but keeps line breaks and tabs, which the
  page lays out; an override of text direction would otherwise reorder what the page shows after it.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

_BEYOND_C0 = "\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_INVISIBLE = re.compile(f"[\x00-\x1f{_BEYOND_C0}]")
"""C0 and C1 control characters (ESC and CSI among them), DEL, and the marks and overrides of text direction."""
_RAW_IN_JSON = re.compile(f"[{_BEYOND_C0}]")
"""What of ``_INVISIBLE`` ``json.dumps`` leaves raw (it escapes C0 itself)."""


def _escape(control: re.Match) -> str:
    return control.group().encode("unicode_escape").decode("ascii")


def visible(text: object) -> str:
    """``text`` with every control character written as its escape, e.g. "\\x1b[2J" for a clear-screen sequence."""
    return _INVISIBLE.sub(_escape, str(text))


_ACTING_ON_PAGE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_BEYOND_C0}]")
"""What of ``_INVISIBLE`` a page does not lay out as text itself: all of it but tab, line feed and carriage return."""


def visible_on_page(text: object) -> str:
    """``text`` for a web page: as ``visible`` writes it, but with its line breaks and tabs as they are."""
    return _ACTING_ON_PAGE.sub(_escape, str(text))


def show(line: object = "", file: TextIO | None = None) -> None:
    """Print one line of output (to stdout unless ``file``) with ``visible`` text."""
    print(visible(line), file=file or sys.stdout)


def json_text(value: Any, **options: Any) -> str:
    """``value`` as JSON (``json.dumps`` ``options``: indent, sort_keys) with non-ASCII letters kept and every
    character ``visible`` would escape written as a ``\\u`` escape: it parses back to exactly ``value``."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False, **options))


def show_json(value: Any, file: TextIO | None = None, **options: Any) -> None:
    """Print ``value`` as ``json_text`` (to stdout unless ``file``), flushed: a reader of a pipe gets it at once."""
    print(json_text(value, **options), file=file or sys.stdout, flush=True)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and its noun, singular for one: "1 sentence", "1,204 sentences" (``plural``: when not noun + "s")."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
