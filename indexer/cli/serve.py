"""``python -m indexer serve``: an index answering search, neighbours and embed requests over HTTP (JSON)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from encoder.numbers import Number
from encoder.terminal import show

from ..index import K
from ..serve import Limits, serve
from .common import add_model_options, open_index


def run(args: argparse.Namespace) -> int:
    """Open the index (an error is one line, as for any command), then serve it until interrupted."""
    index = open_index(args)
    show(f"serving {index.path} on http://{args.host}:{args.port} (API page: /docs; Ctrl+C stops it)", file=sys.stderr)
    serve(index, args.host, args.port, Limits(args.max_body_bytes, args.max_batch, args.max_k))
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``serve`` sub-command."""
    serve = commands.add_parser(
        "serve",
        help="answer search, neighbours and embed requests over HTTP (JSON)",
        description="Serve an index as a JSON HTTP API: POST /search, /neighbors, /embed; GET /stats; the OpenAPI "
        "page at /docs. Requests over the limits below are answered 4xx with a message.",
    )
    serve.add_argument("--index", required=True, type=Path, help="the index directory")
    add_model_options(serve, None)
    serve.add_argument("--no-verify", action="store_true", help="skip checking file hashes on open")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: only this machine can connect)"
    )
    serve.add_argument("--port", type=Number(int, 1, 65_535), default=8000, help="port (default 8000)")
    serve.add_argument(
        "--max-body-bytes",
        type=Number(int, 1),
        default=Limits.body_bytes,
        help="largest request body accepted (default %(default)s)",
    )
    serve.add_argument(
        "--max-batch",
        type=Number(int, 1, 10_000),
        default=Limits.batch,
        help="queries or sentences in one request at most (default %(default)s)",
    )
    serve.add_argument("--max-k", type=K, default=Limits.k, help="largest k a request may ask (default %(default)s)")
    serve.set_defaults(run=run)
