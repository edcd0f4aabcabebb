"""How every command line of the project (``python -m encoder``, ``indexer``, ``app``) ends on an error.

Exit status: 0 done; 2 with one ``error: ...`` line on stderr that names the file or option and says what to do
(bad input, a missing or damaged file; argparse's own usage errors also exit 2); 130 when interrupted (Ctrl-C).
"""

from __future__ import annotations

import sys
from typing import NoReturn

ERROR_EXIT = 2


def fail(message: str) -> NoReturn:
    """Print ``error: message`` and exit with status 2."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(ERROR_EXIT)
