"""``python -m indexer serve``: an index's questions as a JSON HTTP API (``indexer.api``), served by uvicorn.

The limits live here so that the command line can show them without importing the web framework.
"""

from __future__ import annotations

from dataclasses import dataclass

from .index import Index


@dataclass(frozen=True)
class Limits:
    """What one request may ask for (``serve --max-body-bytes``, ``--max-batch``, ``--max-k``)."""

    body_bytes: int = 1 << 20
    batch: int = 64
    k: int = 100


def serve(index: Index, host: str, port: int, limits: Limits) -> None:
    """Serve the API until interrupted."""
    import uvicorn

    from .api import create_app

    uvicorn.run(create_app(index, limits), host=host, port=port, log_level="warning")
