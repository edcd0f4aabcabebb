"""``python -m encoder embed``: the ELMo layers of every line of a text file, written to hdf5."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import ownership
from ..commands import path_argument
from ..device import add_device_option
from ..elmo import BATCH_SIZE, PRECISIONS
from ..errors import fail
from ..model_files import add_model_options
from ..numbers import check_finite
from ..terminal import counted, show
from ..threads import add_threads_option

# What `embed` writes for each sentence, as AllenNLP's `elmo` command does for --all, --top and --average
OUTPUT_FORMATS = {
    "all": lambda layers: layers,  # (L+1, n_tokens, dim): every layer
    "top": lambda layers: layers[-1],  # (n_tokens, dim): the top LSTM layer
    "average": lambda layers: layers.mean(axis=0),  # (n_tokens, dim): the plain mean of the L+1 layers
}
EMBEDDINGS_KIND = "embeddings"  # what ``embed --output`` records it wrote (``ownership.record_written``)


def _read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 file (a byte-order mark before the first is not text); a line that is not UTF-8 is an
    error naming it."""
    lines = []
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
                lines.append(line.removeprefix("\ufeff") if number == 1 else line)
            except UnicodeDecodeError as error:
                fail(f"{path}, line {number} is not valid UTF-8 ({error.reason} at byte {error.start})")
    return lines


def run(args: argparse.Namespace) -> dict:
    """Embed the lines of ``--input`` into ``--output``; what was written."""
    from ..elmo import Elmo
    from ..weights import write_float32, write_hdf5

    if str(args.output) == "-":
        fail("--output - : embed writes an hdf5 file, not standard output; give the file's path")
    ownership.check_replace(
        args.output, EMBEDDINGS_KIND, args.overwrite, "--output", "an hdf5 file of embeddings", inputs=[args.input]
    )
    try:
        elmo = Elmo.load(args.model, args.weights, device=args.device, stateful=args.stateful, precision=args.precision)
    except (FileNotFoundError, ValueError) as error:
        fail(str(error))
    lines = _read_lines(args.input)
    # --raw: the model's own tokenizer, each line one sequence; else tokens as the line separates them
    sentences = [elmo.text.tokenize(line) if args.raw else line.split() for line in lines]
    vectors = elmo.embed(sentences, batch_size=args.batch_size, progress=not args.quiet)
    for number, layers in enumerate(vectors, start=1):
        check_finite(f"the vectors of line {number} (the model is damaged?)", layers)
    with write_hdf5(args.output) as out:
        sentence_to_index = {}  # as AllenNLP's: each line stripped -> its dataset; a repeated line, its last
        for i, (line, layers) in enumerate(zip(lines, vectors)):
            write_float32(out, str(i), OUTPUT_FORMATS[args.output_format](layers))
            sentence_to_index[line.strip()] = str(i)
        out.create_dataset("sentence_to_index", data=[json.dumps(sentence_to_index)])
        if args.raw:  # what was embedded: one list of token strings per line, in line order
            out.create_dataset("tokens", data=json.dumps(sentences, ensure_ascii=False))
    ownership.record_written(args.output, EMBEDDINGS_KIND)
    return {
        "output": str(args.output),
        "sentences": len(sentences),
        "format": args.output_format,
        "layers": elmo.n_layers,
        "dim": elmo.dim,
    }


def show_embedded(result: dict, args: argparse.Namespace) -> None:
    layers = result["layers"]
    what = {"all": f"{layers} layers", "top": "the top layer", "average": f"the mean of {layers} layers"}
    show(
        f"wrote {counted(result['sentences'], 'sentence')} ({what[result['format']]} x {result['dim']} dims) to "
        f"{result['output']}",
        file=sys.stderr,
    )


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``embed`` sub-command."""
    embed = commands.add_parser(
        "embed",
        help="write the ELMo layers of every line of a text file to hdf5",
        description="Embed one pre-tokenized sentence per line (tokens separated by spaces) into hdf5, in the "
        "layout of AllenNLP's `elmo` command: dataset 'i' for input line i, float32 (L+1, n_tokens, 2*projection_dim) "
        "with --all (the default), (n_tokens, 2*projection_dim) with --top or --average; plus a JSON dataset "
        "'sentence_to_index' (each line, stripped, to its dataset's name; a repeated line to its last).",
    )
    add_model_options(embed)
    add_threads_option(embed)
    embed.add_argument(
        "--input",
        type=path_argument,
        required=True,
        help="UTF-8 text, one tokenized sentence per line (or raw text: --raw)",
    )
    embed.add_argument(
        "--raw",
        action="store_true",
        help="the lines are raw text: tokenize each with the model's own tokenizer (its language's rules), "
        "each line one sequence (no sentence splitting), and add a JSON string dataset 'tokens' (one list of "
        "token strings per line, in line order)",
    )
    embed.add_argument(
        "--output", type=ownership.output_file, required=True, help="hdf5 file to write (replaced atomically)"
    )
    layers = embed.add_mutually_exclusive_group()
    for name, help in (
        ("all", "write every layer: (L+1, n_tokens, dim) per sentence (the default)"),
        ("top", "write the top layer only: (n_tokens, dim) per sentence"),
        ("average", "write the mean of the L+1 layers: (n_tokens, dim) per sentence"),
    ):
        layers.add_argument(f"--{name}", dest="output_format", action="store_const", const=name, help=help)
    embed.add_argument("--batch-size", type=BATCH_SIZE, default=64, help="sentences per batch (default 64)")
    embed.add_argument(
        "--stateful",
        action="store_true",
        help="carry LSTM state from batch row b to row b of the next batch, batches in input order, "
        "as the reference implementations do (off: every sentence is embedded on its own)",
    )
    add_device_option(embed)
    embed.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="fp32",
        help="fp32: exact (default); tf32: TF32 matrix products on a GPU; bf16, fp16: autocast. Outputs "
        "are float32; docs/encoder.md gives the measured deviation of the others from fp32",
    )
    embed.add_argument(
        "--overwrite",
        action="store_true",
        help="replace --output even when embed did not write it (a file it wrote, as recorded in "
        f"{ownership.OUTPUTS} beside it, is replaced anyway)",
    )
    embed.add_argument("--quiet", action="store_true", help="no progress bar")
    embed.add_argument(
        "--json",
        action="store_true",
        help='print {"output", "sentences", "format", "layers", "dim"} on stdout instead of the line on stderr',
    )
    embed.set_defaults(run=run, show=show_embedded, output_format="all", interrupted="interrupted; nothing was written")
