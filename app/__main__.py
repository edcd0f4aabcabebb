"""``python -m app``: build the demo index the first time, then serve the UI with Streamlit (on localhost).

This is what ``make demo`` runs. Later runs find the index and start at once; ``--rebuild`` builds it again. The
app builds, and rebuilds, only the demo indexes it made itself (marked so in their manifest): ``--index`` may
name any index, which is served as it is; a folder that holds none is built only when ``--build`` asks for it.
"""

# ruff: noqa: E402 (Ctrl-C is answered with one line from the first moment: before the imports that follow)
from __future__ import annotations

from encoder.errors import interrupts_at_start

interrupts_at_start(__name__, "elmo-search")

import argparse
import errno
import os
import socket
import sys
import time
from pathlib import Path

from demo.corpora import DEMOS, demo_corpus
from encoder.commands import http_url, listen_address, parser_for, path_argument
from encoder.errors import MissingExtra, describe, fail, interrupted, interruptible
from encoder.files import checkout_root
from encoder.model_files import PUBLISHED, model_hash, resolve_model
from encoder.numbers import Number
from encoder.readout import ReadoutSettings
from encoder.text import kiwi_installed
from encoder.threads import THREADS_ENV, add_threads_option, apply_threads
from indexer import build_index
from indexer.errors import IndexerError
from indexer.manifest import FORMAT_VERSION, FolderInfo, glove_source_name, rebuild_command
from indexer.parts import model_source

from .settings import (
    CODE_ROOT,
    INDEX_ENV,
    MAIN_SCRIPT,
    PRIMARY_COLOR,
    TEXT_COLOR,
    build_command,
    configured_index_dir,
    demo_of,
    variant_dir,
)

DESCRIPTION = """\
Serve ELMo Search's web app (search by meaning, a word in context, its senses) on
http://localhost:8501, for this machine only unless --address says otherwise.

The first run builds the demo indexes from the shipped demo documents (the README
gives the time it takes); later runs start at once; --rebuild builds them again.
--index serves an index of yours as it is (built with `elmo-indexer build`); the
app builds or rebuilds only the demo indexes it made itself."""


def make_parser() -> argparse.ArgumentParser:
    """The ``python -m app`` / ``elmo-search`` options."""
    parser = parser_for("app", DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--demo",
        choices=list(DEMOS),
        default="en",
        help=f"which demo collection to open: en ({DEMOS['en'].corpus_dir}, the 'default' model) or ko "
        f"({DEMOS['ko'].corpus_dir}, the 'ko' "
        "model); without --demo and --index both are built, Korean when its model is installed (default en)",
    )
    parser.add_argument(
        "--index",
        type=path_argument,
        help=f"index folder to serve (default: ${INDEX_ENV}, else {DEMOS['en'].index_dir} or {DEMOS['ko'].index_dir}, which are "
        "built from the demo corpus on the first run); any index is served as it is, and rebuilt only if the app "
        "built it from the demo corpus",
    )
    parser.add_argument(
        "--build",
        action="store_true",
        help="build the demo index into --index when that folder holds no index (a new or empty folder)",
    )
    parser.add_argument(
        "--model",
        help="model to build the demo index with: the demo's ('default' or 'ko'), a published model once downloaded "
        f"({', '.join(PUBLISHED)}; its index goes beside the demo's, e.g. demo-index-elmo-small, and Word in context "
        "can show it beside ours) or a model folder",
    )
    parser.add_argument(
        "--glove",
        help="GloVe baseline of the demo index: 'stanford' (Stanford's glove.6B 50-d vectors, English's default), "
        "'korean' (ours, trained on Korean Wikipedia, Korean's default), a GloVe text file, or 'train' (trained on "
        "the demo corpus itself)",
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="build the demo index again even if it exists (only one the app built)"
    )
    parser.add_argument(
        "--address",
        type=listen_address,
        default="localhost",
        help="address to listen on (default localhost: only this machine can connect)",
    )
    parser.add_argument("--port", type=Number(int, 1, 65_535), default=8501, help="port to listen on (default 8501)")
    add_threads_option(parser)
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return make_parser().parse_args(argv)


def ensure_index(
    index_dir: Path,
    model: str,
    rebuild: bool,
    glove: str,
    demo: str = "en",
    build: bool = False,
    model_given: bool = True,
) -> None:
    """Make sure ``index_dir`` holds an index to serve, building the demo index of ``demo`` where the app may.

    The app builds the demo index in its own place (``DEMOS[demo].index_dir``), or where ``build`` asks for it (a
    folder holding no index). It rebuilds only a demo index it built itself (``settings.demo_of``): when another
    model is asked for, the model changed (the shipped one, after a ``git pull``), the index format or the demo's
    GloVe changed, or ``rebuild`` asks; built with another model than the demo's, it is served as it is unless
    ``model_given`` (``--model`` named the model). Any other index is served as it is; one that needs rebuilding gets the command that rebuilds it from
    its own corpus.
    """
    try:
        found = FolderInfo.of(index_dir)  # not Index.open: an index of an older format is read to be replaced
    except IndexerError as error:  # a manifest this code cannot read: not the app's to replace
        fail(str(error))
    if index_dir.exists() and not index_dir.is_dir():
        fail(f"--index {index_dir} is a file, not an index folder; give the folder of an index")
    if not found.has_index:
        if not build and index_dir != DEMOS[demo].index_dir:
            fail(
                f"--index {index_dir} holds no index; give the folder of an index, or pass --build to build the "
                f"demo index there (`{build_command(index_dir)}`)"
            )
    elif demo_of(index_dir, found) != demo:
        reason = "--rebuild asks to build it again" if rebuild else _outdated(found)
        if reason is not None:
            fail(
                f"{index_dir} is not the demo index this app built, so the app will not rebuild it ({reason}); "
                f"rebuild it from its own corpus with: {rebuild_command(index_dir)}"
            )
        print(f"Using the index in {index_dir}")
        return
    elif not rebuild:
        if not model_given and found.model_hash != model_hash(model) and found.model_source != model_source(model):
            print(
                f"Using the index in {index_dir} (built with {found.model_source}; --model names the one to rebuild "
                "it with)"
            )
            return
        due = _rebuild_due(found, model, glove)
        if due is None:  # up to date
            print(f"Using the index in {index_dir}")
            return
        print(f"{due}: rebuilding the demo index in {index_dir}.", flush=True)
        rebuild = True
    corpus, where = demo_corpus(demo), DEMOS[demo].corpus_dir
    if not corpus:
        root = checkout_root()
        fix = f"git checkout {where.relative_to(root)}" if root else "pip install --force-reinstall elmo-search"
        fail(f"the demo corpus ({where}/*.jsonl) is missing; restore it: {fix}")
    first = "Rebuilding" if rebuild else "First run: building"
    print(
        f"{first} the demo index in {index_dir} from {len(corpus)} files in {where} with the {model!r} model.\n"
        "This happens once; later runs reuse the index.",
        flush=True,
    )
    started = time.perf_counter()
    try:
        build_index(corpus, index_dir, model=model, glove=glove, progress=True, overwrite=rebuild, demo=demo)
    except (IndexerError, OSError, ValueError, MissingExtra) as error:
        fail(f"building the demo index failed: {describe(error)}")
    except KeyboardInterrupt:
        interrupted("interrupted; run the same command again to finish building the demo index")
    minutes, seconds = divmod(round(time.perf_counter() - started), 60)
    print(f"Built the demo index in {minutes} min {seconds} s.", flush=True)


def _outdated(found: FolderInfo) -> str | None:
    """Why an index (not the app's) cannot be served as it is: another index format, or its model changed since it
    was built (None: it can, or its model is not here to tell; the page then says what is wrong)."""
    if found.format_version != FORMAT_VERSION:
        return f"it is of index format {found.format_version!r}, this ELMo Search reads {FORMAT_VERSION}"
    source = found.model_source
    try:
        current = model_hash(*source) if isinstance(source, list) else model_hash(source)
    except (OSError, ValueError, TypeError):
        return None
    return None if current == found.model_hash else f"its model {source} has changed since it was built"


def _rebuild_due(found: FolderInfo, model: str, glove: str) -> str | None:
    """Why the app's demo index should be built again for ``model`` (and the demo's ``glove``), or None."""
    if found.model_hash != model_hash(model) and found.model_source != model_source(model):  # another model asked
        return f"The demo index was built with another model ({found.model_source}) than {model!r}"
    if found.format_version != FORMAT_VERSION:
        return (
            f"The index was built by another version of ELMo Search (format {found.format_version}, this one uses "
            f"{FORMAT_VERSION})"
        )
    if found.glove_source != glove_source_name(glove):
        return f"The demo's GloVe baseline is now {glove!r}"
    if found.model_hash != model_hash(model):
        return f"The {model!r} model has changed since the index was built with it"
    try:
        readout = ReadoutSettings.of_folder(resolve_model(model).folder)
    except ValueError as error:  # a damaged readout.json: the build would stop on it too
        fail(str(error))
    if found.readout != readout.to_json():
        return f"The {model!r} model's sense readout has changed since the index was built with it"
    return None


def _installed(model: str) -> bool:
    try:
        resolve_model(model)
    except FileNotFoundError:
        return False
    return True


def check_port(address: str, port: int) -> None:
    """One ``error:`` line (exit 2) where Streamlit would end with its own message or a traceback: another program
    already listens on ``address:port``, or the address does not resolve or is not this machine's. Binds as
    Streamlit's server (1.67, on Starlette) does: one socket, IPv6 when the address holds ":" (both stacks, as for
    "::"), else IPv4, with SO_REUSEADDR, so a port whose last connections are still closing counts as free, as it is
    for Streamlit."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        try:
            probe.bind((address, port))
        except socket.gaierror as error:
            fail(f"cannot listen on {address}:{port}: {error.strerror or error} (--address)")
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                fail(
                    f"port {port} on {address} is in use (ELMo Search already running, or another program); "
                    f"stop that program or choose another port, e.g. --port {port + 1}"
                )
            fail(f"cannot listen on {address}:{port}: {error.strerror or error} (--address, --port)")


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
        "--theme.textColor",
        TEXT_COLOR,
    ]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    interruptible()
    try:  # chosen before the demo build loads the machine, for the build and the UI's process (below)
        threads = apply_threads(args.threads)
    except ValueError as error:  # a bad $ELMO_SEARCH_THREADS
        fail(str(error))
    demo = DEMOS[args.demo]
    model = args.model or demo.model
    try:
        resolve_model(model)  # a published model not downloaded: the command that downloads it, before anything
    except (FileNotFoundError, ValueError) as error:
        fail(str(error))
    index_dir = (args.index or configured_index_dir(args.demo)).expanduser().resolve()
    if args.index is None and model in PUBLISHED:  # the demo with a published model: its own index beside ours
        index_dir = variant_dir(index_dir, model)
    ensure_index(
        index_dir, model, args.rebuild, args.glove or demo.glove, args.demo, args.build, args.model is not None
    )
    if index_dir == DEMOS["en"].index_dir and _installed("ko"):  # the Korean demo beside the English one
        korean = DEMOS["ko"]
        if not kiwi_installed():
            print(f"No Korean demo: {MissingExtra('Korean text (Kiwi)', 'ko')}", flush=True)
        else:
            ensure_index(korean.index_dir, korean.model, args.rebuild, korean.glove, "ko")
    check_port(args.address, args.port)
    host = "localhost" if args.address in ("0.0.0.0", "::") else args.address
    print(f"\nELMo Search is starting: open {http_url(host, args.port)} in your browser (Ctrl+C stops it).", flush=True)
    env = {
        **os.environ,
        INDEX_ENV: str(index_dir),
        THREADS_ENV: str(threads),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE_ROOT), os.environ.get("PYTHONPATH")])),
    }
    os.execve(sys.executable, streamlit_command(args.address, args.port), env)


if __name__ == "__main__":
    main()
