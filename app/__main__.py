"""``python -m app``: build the demo index the first time, then serve the UI with Streamlit (on localhost).

This is what ``make demo`` runs. Later runs find the index and start at once; ``--rebuild`` builds it again.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from encoder.elmo import model_hash
from encoder.errors import fail
from encoder.glove import STANFORD
from indexer import build_index
from indexer.errors import IndexerError
from indexer.manifest import FORMAT_VERSION, FolderInfo

from .settings import CODE_ROOT, INDEX_ENV, MAIN_SCRIPT, PRIMARY_COLOR, configured_index_dir, demo_corpus


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m app", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--index",
        type=Path,
        default=configured_index_dir(),
        help=f"index folder (default: ${INDEX_ENV}, else build/demo-index); built from data/demo if it holds no index",
    )
    parser.add_argument(
        "--model",
        default="default",
        help="model to build the demo index with: 'default' (data/models/default) or a model folder",
    )
    parser.add_argument(
        "--glove",
        default=STANFORD,
        help="GloVe baseline of the demo index: 'stanford' (Stanford's glove.6B 50-d vectors, the "
        "default), a GloVe text file, or 'train' (trained on the demo corpus itself)",
    )
    parser.add_argument("--rebuild", action="store_true", help="build the index again even if it exists")
    parser.add_argument(
        "--address", default="localhost", help="address to listen on (default localhost: only this machine can connect)"
    )
    parser.add_argument("--port", type=int, default=8501, help="port to listen on (default 8501)")
    return parser.parse_args(argv)


def ensure_index(index_dir: Path, model: str, rebuild: bool, glove: str = STANFORD) -> None:
    """Build ``index_dir`` from the demo corpus unless it already holds an index; say how long it took.

    An index built with ``model`` before that model changed (the shipped one, after a ``git pull``), or by another
    version of the index format, is rebuilt; an index of any other model is used as it is (it may be the user's own).
    """
    found = FolderInfo.of(index_dir)  # not Index.open: an index of an older format is read to be replaced
    if found.has_index and not rebuild:
        source = model if model == "default" else str(Path(model).resolve())  # as the manifest names it
        if found.model_source != source:
            print(f"Using the index in {index_dir}")
            return
        if found.format_version != FORMAT_VERSION:
            print(
                f"The index in {index_dir} was built by another version of ELMo Search (format "
                f"{found.format_version}, this one uses {FORMAT_VERSION}): rebuilding it.",
                flush=True,
            )
        elif found.model_hash == model_hash(model):
            print(f"Using the index in {index_dir}")
            return
        else:
            print(
                f"The {model!r} model has changed since the index in {index_dir} was built with it: rebuilding it.",
                flush=True,
            )
        rebuild = True
    corpus = demo_corpus()
    if not corpus:
        fail("the demo corpus (data/demo/*.jsonl) is missing; restore it: git checkout data/demo")
    first = "Rebuilding" if rebuild else "First run: building"
    print(
        f"{first} the demo index in {index_dir} from {len(corpus)} files in data/demo with the {model!r} model.\n"
        "This happens once; later runs reuse the index.",
        flush=True,
    )
    started = time.perf_counter()
    try:
        build_index(corpus, index_dir, model=model, glove=glove, progress=True, overwrite=rebuild)
    except (IndexerError, OSError, ValueError) as error:
        fail(f"building the demo index failed: {error}")
    minutes, seconds = divmod(round(time.perf_counter() - started), 60)
    print(f"Built the demo index in {minutes} min {seconds} s.", flush=True)


def streamlit_command(address: str, port: int) -> list[str]:
    """Streamlit headless on ``address:port``; no usage statistics sent (the app must not reach the network),
    no source watching, no developer toolbar and no tracebacks in the page (a served app, not one being edited).
    Every setting is a flag, so an installed copy (no .streamlit/config.toml beside it) looks and acts the same."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(MAIN_SCRIPT),
        "--server.address",
        address,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "minimal",
        "--client.showErrorDetails",
        "type",
        "--theme.primaryColor",
        PRIMARY_COLOR,
    ]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    index_dir = args.index.expanduser().resolve()
    ensure_index(index_dir, args.model, args.rebuild, args.glove)
    host = "localhost" if args.address in ("0.0.0.0", "::") else args.address
    print(f"\nELMo Search is starting: open http://{host}:{args.port} in your browser (Ctrl+C stops it).", flush=True)
    env = {
        **os.environ,
        INDEX_ENV: str(index_dir),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE_ROOT), os.environ.get("PYTHONPATH")])),
    }
    os.execve(sys.executable, streamlit_command(args.address, args.port), env)


if __name__ == "__main__":
    main()
