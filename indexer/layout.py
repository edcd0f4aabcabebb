"""The names in an index folder: the one module that makes them and recognises them.

INDEX_DIR/manifest.json              what the index is (``manifest.Manifest``); written last, atomically (the commit
                                     point)
INDEX_DIR/build-state.json           only while a build/add runs or after one was killed (for resuming)
INDEX_DIR/.lock                      held by the one process writing the folder (``folder.locked``)
INDEX_DIR/shards/NNNNN/              one folder per shard of documents (appears atomically): ``SHARD_FILES`` and
                                     its own record, shard.json
INDEX_DIR/KIND.gG.EXT                the files of generation G (``GENERATION_FILES``: FAISS indexes, word counts,
                                     calibration queries); ``add`` writes G+1 beside G
INDEX_DIR/glove.txt                  only when GloVe was trained on the corpus (``--glove train``); Stanford's
                                     vectors or another GloVe file are referred to by the manifest, not copied

Every other module asks here for a name (``shard_file``, ``generation_file``, ...), and ``role`` says what a name
found in the folder is, from the same tables: a name is recognised by making it again from what it claims to be
(shard 7 is "00007" and only that), so what is written and what is recognised cannot disagree. A new file is
one entry in ``SHARD_FILES`` or ``GENERATION_FILES``.
"""

from __future__ import annotations

from pathlib import Path

MANIFEST = "manifest.json"
STATE = "build-state.json"
LOCK = ".lock"
GLOVE = "glove.txt"
SHARDS = "shards"
SHARD_RECORD = "shard.json"

SHARD_FILES = {
    "docs": "docs.parquet",  # one row per document: id, title, title tokens, source, counts
    "sentences": "sentences.parquet",  # one row per sentence: its document, text, tokens and their offsets
    "tokens": "tokens.parquet",  # one row per token vector: its sentence, position, word and offsets
    "sentence_layers": "sentence_layers.npy",  # pooled sentence vectors per layer (sentences, layers, dim)
    "token_layers": "token_layers.npy",  # token vectors per layer (token vectors, layers, dim); optional
    "title_layers": "title_layers.npy",  # pooled title vectors per layer (documents, layers, dim)
    "token_readout": "token_readout.npy",  # each token vector's sense readout (token vectors, 1, readout dim)
    "token_substitutes": "token_substitutes.npy",  # the words that weigh most in each readout: vocabulary ids
    # (token vectors, k); none (k = 0) for a published model, which has no LM head
    "token_substitute_probs": "token_substitute_probs.npy",  # their probabilities (token vectors, k), float16
}
"""A shard's files by what they hold; ``shards.write_shard`` writes each, and the shard's record lists them. To
add one, name it here (an index of an older format simply lacks it: its shard records do not list it)."""

GENERATION_FILES = {
    "sentences": ("sentences", ".faiss"),  # FAISS index of the sentence vectors (the search layer mix)
    "tokens": ("tokens", ".faiss"),  # FAISS index of the token vectors (the token layer mix)
    "glove": ("glove", ".faiss"),  # FAISS index of the sentences' GloVe vectors
    "vocab": ("vocab", ".parquet"),  # word counts of the indexed text
    "calibration_words": ("calibration", ".parquet"),  # random-word queries relevance is calibrated on
    "calibration_vectors": ("calibration", ".npy"),  # their pooled ELMo vectors per layer
}
"""The files of one generation by what they hold: (stem, suffix) of ``STEM.gG.SUFFIX``."""

SHARD_DIGITS = 5  # shard folders are numbered 00000, 00001, ... (more digits past 99999)

TOP_LEVEL = {MANIFEST: "manifest", STATE: "state", LOCK: "lock", GLOVE: "glove", SHARDS: "shards"}


def shard_name(number: int) -> str:
    """The folder name of shard ``number``."""
    return f"{number:0{SHARD_DIGITS}d}"


def shard_number(name: str) -> int | None:
    """The number of the shard folder ``name``; None when ``name`` is not one."""
    if not (name.isascii() and name.isdigit()):
        return None
    return int(name) if shard_name(int(name)) == name else None


def shard_dir(out: Path, name: str) -> Path:
    """The folder of the shard named ``name`` (``shard_name``) in the index at ``out``."""
    return out / SHARDS / name


def shard_file(out: Path, shard: str, part: str) -> Path:
    """The file holding ``part`` (a key of ``SHARD_FILES``) of the shard named ``shard``."""
    return shard_dir(out, shard) / SHARD_FILES[part]


def generation_file(kind: str, generation: int) -> str:
    """The name of the file of ``kind`` (a key of ``GENERATION_FILES``) of generation ``generation``."""
    stem, suffix = GENERATION_FILES[kind]
    return f"{stem}.g{generation}{suffix}"


def generation_of(name: str) -> int | None:
    """The generation of the generation file ``name``; None when ``name`` is not one."""
    for kind, (stem, suffix) in GENERATION_FILES.items():
        number = name.removeprefix(f"{stem}.g").removesuffix(suffix)
        if number != name and number.isascii() and number.isdigit() and generation_file(kind, int(number)) == name:
            return int(number)
    return None


def role(name: str) -> str | None:
    """What an entry of the index folder named ``name`` is: "manifest", "state", "lock", "glove", "shards" or
    "generation"; None for a name no index writes there."""
    return TOP_LEVEL.get(name) or ("generation" if generation_of(name) is not None else None)


def is_shard_entry(name: str) -> bool:
    """Whether ``name`` is one a shard folder holds: one of its files, or its record."""
    return name in SHARD_FILES.values() or name == SHARD_RECORD


def state_marker(out: Path, nonce: str) -> Path:
    """A marker file named as a temporary of the build state (``encoder.files.atomic_path``'s names), so that it
    is recognised as a build's own file; ``nonce`` makes it unique (``distributed.encoders``)."""
    return out / f".{STATE}.{nonce}.tmp"
