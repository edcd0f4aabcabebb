"""``python -m indexer serve``: what a server takes (``Limits``) and where it listens (``listen``); the API itself
is ``indexer.api``.

Nothing here imports the web framework, so that the command line can show the limits and refuse a port in use
before it loads it.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
"""The names a request's Host may give besides the address the server listens on and those ``--allow-host`` adds."""


TOKEN_VARIABLE = "ELMO_SEARCH_TOKEN"
"""The environment variable that holds the write endpoints' token when ``serve`` is given no ``--token-file``."""


def write_token(token_file: Path | None) -> str | None:
    """The token of the write endpoints (add, upsert, delete): the first line of ``token_file``, else
    ``$ELMO_SEARCH_TOKEN``, without the spaces around it; None (writing off) when neither is given. An empty token
    is refused, and so is one with a character other than visible ASCII (a header carries no other as it is: a
    client would send other bytes for it, and no request would ever match; U+FFFD: a byte that is not UTF-8)."""
    if token_file is None:
        token = os.environ.get(TOKEN_VARIABLE)
        if token is None:
            return None
        where = f"${TOKEN_VARIABLE}"
    else:
        lines = token_file.read_bytes().decode("utf-8", "replace").splitlines()  # a byte that is no UTF-8: U+FFFD
        token, where = (lines[0] if lines else ""), str(token_file)
    token = token.strip()
    if not token:
        raise ValueError(f"{where} holds no token; put a long random one there (or give none: writing stays off)")
    odd = next((c for c in token if not "!" <= c <= "~"), None)
    if odd is not None:
        raise ValueError(
            f"the token in {where} holds {odd!r} (U+{ord(odd):04X}), which a Bearer token cannot hold as it is; use "
            "ASCII letters, digits and punctuation (e.g. python -c 'import secrets; print(secrets.token_urlsafe())')"
        )
    return token


@dataclass(frozen=True)
class Limits:
    """What one request may ask for (``serve --max-body-bytes``, ``--max-batch``, ``--max-k``,
    ``--max-embed-values``) and the names its Host header may give (``hosts``, with ``LOCAL_HOSTS``)."""

    body_bytes: int = 1 << 20
    batch: int = 64
    k: int = 100
    embed_values: int = 1 << 20
    hosts: tuple[str, ...] = ()

    def allows_host(self, host: str) -> bool:
        """Whether a request's Host header (``name`` or ``name:port``, ``[::1]:port``) names this server."""
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 or host.startswith("[") else host
        name = name.removeprefix("[").removesuffix("]").lower()
        return name in (*LOCAL_HOSTS, *(h.lower() for h in self.hosts))


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port`` (an ``OSError`` that says why not: the port in use, no such address)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
        listening.listen(2048)  # taken now: no other server can bind it while the index opens
    except OSError:
        listening.close()
        raise
    return listening
