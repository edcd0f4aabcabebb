"""``python -m indexer serve``: an index answering search, neighbours and embed requests over HTTP (JSON)."""

from __future__ import annotations

import argparse
import sys

from encoder.commands import http_url, listen_address, path_argument
from encoder.errors import fail
from encoder.numbers import Number
from encoder.terminal import show

from ..options import K
from ..serve import TOKEN_VARIABLE, Limits, listen, write_token
from .common import add_model_options, open_index


def run(args: argparse.Namespace) -> int:
    """Take the port, open the index (an error is one line, as for any command), then serve it until interrupted."""
    token = write_token(args.token_file)
    try:
        listening = listen(args.host, args.port)
    except OSError as error:
        fail(f"cannot listen on {args.host}:{args.port}: {error.strerror or error} (--host, --port)")
    index = open_index(args)
    from ..api import serve  # the web framework, loaded only to serve

    limits = Limits(
        args.max_body_bytes, args.max_batch, args.max_k, args.max_embed_values, (args.host, *args.allow_host)
    )
    show(
        f"serving {index.path} on {http_url(args.host, args.port)} (API page: /docs; Ctrl+C stops it)", file=sys.stderr
    )
    serve(index, listening, limits, token)
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``serve`` sub-command."""
    serve = commands.add_parser(
        "serve",
        help="answer search, neighbours and embed requests over HTTP (JSON)",
        description="Serve an index as a JSON HTTP API: POST /search, /neighbors, /embed; GET /stats; the OpenAPI "
        "page at /docs. Requests over the limits below are answered 4xx with a message.",
    )
    serve.add_argument("--index", required=True, type=path_argument, help="the index directory")
    add_model_options(serve, None)
    serve.add_argument("--no-verify", action="store_true", help="skip checking file hashes on open")
    serve.add_argument(
        "--host",
        type=listen_address,
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: only this machine can connect)",
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
    serve.add_argument(
        "--max-embed-values",
        type=Number(int, 1),
        default=Limits.embed_values,
        help="numbers an /embed answer may hold at most: its tokens times the model's dimension (default %(default)s)",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name the Host header of a request may give besides localhost, 127.0.0.1, ::1 and --host (repeat for "
        "more); other requests are refused, so that a web page cannot reach the server by DNS rebinding",
    )
    serve.add_argument(
        "--token-file",
        type=path_argument,
        metavar="FILE",
        help=f"turn on the write endpoints (POST /add, /upsert, /delete) for requests that give the token on FILE's "
        f"first line, visible ASCII only (Authorization: Bearer TOKEN); default: ${TOKEN_VARIABLE} if set, else "
        "writing is off",
    )
    serve.set_defaults(run=run)
