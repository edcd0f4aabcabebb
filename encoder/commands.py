"""What the project's programs are called and which version they are, for usage lines, ``--version`` and the
commands that messages tell the user to run.

Each program runs two ways: ``python -m encoder`` (in a checkout, with its environment active) and the console
script ``elmo-encoder`` that ``pip install`` puts on the PATH; ``python -m app`` is ``elmo-search``.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import NoReturn

from .files import checkout_root
from .terminal import visible

DISTRIBUTION = "elmo-search"
SCRIPTS = {"app": "elmo-search", "encoder": "elmo-encoder", "indexer": "elmo-indexer"}
"""Each program's console script (``[project.scripts]`` of pyproject.toml)."""


def http_url(host: str, port: int) -> str:
    """The address a server on ``host`` and ``port`` is opened at: an IPv6 address in brackets (``http://[::1]:8000``)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def program(package: str) -> str:
    """How to run ``package`` here: the name it was started by (``elmo-encoder`` or ``python -m encoder``); for a
    message of another program, ``python -m PACKAGE`` in a checkout and the console script in an installed copy."""
    started = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if started == SCRIPTS[package]:
        return started
    return f"python -m {package}" if checkout_root() is not None else SCRIPTS[package]


def project_version() -> str:
    """The installed distribution's version, else (a checkout run without installing) pyproject.toml's."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        root = checkout_root()
        if root is None:
            return "unknown"
        return tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage error shows the arguments it quotes as every message shows text
    (``terminal.visible``): an argument holding a terminal's control sequence is written out, not obeyed."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {visible(message)}\n")


def parser_for(package: str, description: str | None, **kwargs) -> argparse.ArgumentParser:
    """A program's parser (``Parser``, its sub-commands' too): usage lines under the name it was started by, and
    ``--version``."""
    parser = Parser(prog=program(package), description=description, **kwargs)
    parser.add_argument("--version", action="version", version=f"%(prog)s {project_version()}")
    return parser


def listen_address(text: str) -> str:
    """``--host`` / ``--address``: where a server listens. An empty address would listen on every interface (the
    opposite of this machine only), so it is refused; 0.0.0.0 says "every interface" when that is meant."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "is empty, which would listen on every interface; give an address (0.0.0.0 for every interface)"
        )
    return text


def path_argument(text: str) -> Path:
    """A path given on a command line. An empty one is refused: ``Path("")`` is the current folder, so ``--output ''``
    was said to be "." and a folder."""
    if not text:
        raise argparse.ArgumentTypeError("is empty; give a path")
    return Path(text)


def path_text(text: str) -> str:
    """``path_argument`` for an option kept as the text given (a field of a config written to JSON)."""
    path_argument(text)
    return text
