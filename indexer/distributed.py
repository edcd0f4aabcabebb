"""Encoding shards on a Ray cluster: ``python -m indexer build|add ... --ray [ADDRESS|auto]``.

Only the encoding of shards moves. The driver (the process running the command) reads and checks the corpus,
plans the shards and finalizes (vocabulary, GloVe, FAISS, manifest) with the same code as a local build;
``shards.encode_shards`` hands the shards that are not on disk yet to a pool of actors (``ShardEncoder``), each of
which loads the model once, by the rule the local build uses (``parts.open_model``, checked by hash), and
writes its shards with the same ``shards.write_shard``, atomically, into the index folder. That folder must be on
storage every node sees (NFS or another shared file system): each actor first checks that it sees a marker file
the driver wrote there and names its node if it does not, and the driver checks that it sees every shard written.

One actor per GPU when the cluster has GPUs, otherwise one per CPU (torch with one thread each). A shard is the
unit of work and of resuming: an actor that dies is restarted and its shards retried (``MAX_RESTARTS`` times);
if the cluster still fails, or the driver is killed, the shards written so far stay, and the same command
(with or without ``--ray``) encodes only the rest. This module imports Ray: ``build.py`` imports it only for
``--ray``.
"""

from __future__ import annotations

import dataclasses
import secrets
import signal
import socket
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from encoder import ownership
from encoder.errors import MissingExtra, describe
from encoder.files import TMP_DIR_PREFIX, temporary_target
from encoder.readout import Readout
from encoder.threads import apply_threads

try:
    import ray
    from ray.exceptions import RayActorError, RayTaskError
except ImportError:
    raise MissingExtra("--ray", "ray") from None

from . import layout, shards, storage
from .errors import IndexerError
from .folder import is_ours, read_state
from .manifest import ModelRecord, ModelSpec, Shard
from .parts import open_model
from .shards import Encoding, ShardJob, ShardWriter

IN_FLIGHT = 2  # shards queued per actor: one being encoded, the next one's documents already there
MAX_RESTARTS = 3  # how often Ray restarts a dead actor (retrying its shards) before the build fails
STOP_TIMEOUT = 30  # seconds to wait for killed actors to be gone


class ClusterError(IndexerError):
    """The Ray cluster cannot do the encoding: no cluster there, a node that does not see the index folder,
    workers that keep dying. The shards written so far are kept: the same command resumes."""


RESUME = "the shards written so far are kept: re-run the same command (with or without --ray) to resume"


def _this_node() -> str:
    return f"{socket.gethostname()} ({ray.util.get_node_ip_address()})"


@contextmanager
def connected(address: str | None) -> Iterator[None]:
    """Use this process's Ray connection if it has one, else connect for the block: to ``address`` ("auto": the
    cluster ``ray start`` started here or ``RAY_ADDRESS`` names, HOST:PORT, ray://HOST:PORT) or, for None, to
    that same cluster if there is one and otherwise to a new Ray instance on this machine."""
    if ray.is_initialized():
        yield
        return
    # Ray's core worker puts a crash handler of its own on SIGTERM, which aborted the command (exit 134, a C++ stack
    # on stderr) where it says "interrupted" and exits 143: the command's handlers are put back once Ray is up
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        ray.init(address=address)
    except (ConnectionError, ValueError, RuntimeError) as error:
        said = str(error).split(". ")[0].rstrip(".")
        where = f"connect to a Ray cluster at {address}" if address else "join or start Ray on this machine"
        raise ClusterError(
            f"cannot {where} ({said}); start a cluster (`ray start --head`) and give its address "
            "(--ray HOST:PORT, or --ray auto on one of its nodes), or leave the address out to start Ray here"
        ) from None
    if threading.current_thread() is threading.main_thread():  # signal handlers are set from there only
        for number, handler in handlers.items():
            if handler is not None:  # None: set outside Python, not to be set again from here
                signal.signal(number, handler)
    try:
        yield
    finally:
        ray.shutdown()


class ShardEncoder:
    """A Ray actor that holds one model and encodes shards with it into the shared index folder."""

    def __init__(
        self,
        out: Path,
        marker: Path,
        nonce: str,
        expected: ModelRecord,
        model: ModelSpec | None,
        device: str,
        threads: int | None,
    ):
        self.out, self.marker, self.nonce = out, marker, nonce
        self.expected, self.model, self.device, self.threads = expected, model, device, threads
        self.encoding: Encoding | None = None

    def _ready(self, shared: list) -> Encoding:
        """Check the folder, then load the model (once per actor; again after a restart). ``shared`` is [a reference
        to (settings, word counts, kept words)]: every call carries it (in a list, which Ray passes as it is), so
        that neither the actor's arguments nor its restart depend on the object store."""
        if self.encoding is None:
            if not self.marker.is_file() or self.marker.read_text() != self.nonce:
                raise ClusterError(
                    f"the Ray worker on node {_this_node()} does not see the index folder {self.out} that the "
                    "driver writes (its check file is not there): put the index folder (--out / --index) on "
                    "storage every node of the cluster mounts at the same path, e.g. NFS"
                )
            apply_threads(self.threads)
            elmo = open_model(self.expected, self.model, self.device)
            settings, frequencies, keep, readout = ray.get(shared[0])
            self.encoding = Encoding(
                elmo, Readout.of_model(elmo.folder, readout, elmo.model), settings, frequencies, keep
            )
        return self.encoding

    def check(self, shared: list) -> str:
        """Ready to encode (raises otherwise); returns where this actor runs."""
        self._ready(shared)
        return _this_node()

    def node(self) -> str:
        return _this_node()

    def encode(self, job: ShardJob, shared: list) -> Shard:
        """Write the shard of ``job`` (returns its record); a retry of a shard already written just reads it."""
        if (job.path / layout.SHARD_RECORD).is_file():  # this actor died after writing it, before answering
            return Shard.from_json(storage.read_json(job.path / layout.SHARD_RECORD))
        return shards.write_shard(job.path, job.group, job.first_sentence, job.first_token, self._ready(shared))


def _get(refs):
    """``ray.get``, with a worker's own errors raised as themselves and lost workers as a ``ClusterError``."""
    try:
        return ray.get(refs)
    except RayTaskError as error:
        cause = error.cause
        if isinstance(cause, IndexerError):  # ours: it says what to do
            raise cause from None
        raise ClusterError(
            f"encoding failed on the Ray worker at {error.ip}: {type(cause).__name__}: {describe(cause)}; {RESUME}"
        ) from None
    except RayActorError as error:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()] or [type(error).__name__]
        said = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"
        raise ClusterError(f"a Ray worker was lost, and restarting it did not help ({said}); {RESUME}") from None


def _placement(workers: int | None) -> tuple[int, float, float, str]:
    """How many actors, the GPUs and CPUs each asks for, and the device they encode on."""
    resources = ray.cluster_resources()
    gpus, cpus = resources.get("GPU", 0), resources.get("CPU", 0)
    if gpus >= 1:
        count = workers or int(gpus)
        return count, min(1.0, gpus / count), 0, "cuda"
    if cpus < 1:
        raise ClusterError("the Ray cluster has no CPU to run on; add a worker node (`ray start --address ...`)")
    count = workers or int(cpus)
    return count, 0, min(1.0, cpus / count), "cpu"


def _leave_marker(marker: Path, nonce: str) -> None:
    """The check file every actor must see (written directly, not through a temporary: only this name is known
    as the build's own)."""
    marker.write_text(nonce)


@contextmanager
def encoders(
    out: Path, expected: ModelRecord, model: ModelSpec | None, encoding: Encoding, workers: int | None = None
) -> Iterator[ShardWriter]:
    """A pool of ``ShardEncoder`` actors on the connected cluster, as a ``ShardWriter`` for ``encode_shards``.

    ``expected`` is the manifest's record of the model, ``model`` what to load it from (None: the record's source;
    a name or an absolute path, never a loaded model: every actor loads its own); ``encoding`` is the driver's
    (its settings, word counts and kept words go to the actors, its model does not).
    """
    count, gpus, cpus, device = _placement(workers)
    nonce = secrets.token_hex(8)
    marker = layout.state_marker(out, nonce)
    _leave_marker(marker, nonce)
    actors = []
    try:
        shared = [ray.put((encoding.settings, encoding.frequencies, encoding.keep, encoding.readout.settings))]
        actor_class = ray.remote(ShardEncoder).options(
            num_cpus=cpus, num_gpus=gpus, max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS
        )
        # each CPU actor its share of the cluster's cores (the rule's count on a GPU, where the model is not on them)
        threads = max(1, int(ray.cluster_resources().get("CPU", 1) // count)) if device == "cpu" else None
        actors = [
            actor_class.remote(out.resolve(), marker.resolve(), nonce, expected, model, device, threads)
            for _ in range(count)
        ]
        _get([actor.check.remote(shared) for actor in actors])  # every node sees the folder and loads the model
        yield _writer(actors, shared)
    finally:
        _stop(actors)
        marker.unlink(missing_ok=True)
    leftovers = [  # what a worker killed mid-shard left
        path
        for path in (out / layout.SHARDS).glob(f"{TMP_DIR_PREFIX}*")
        if layout.shard_number(temporary_target(path.name) or "") is not None
    ]
    ownership.remove(out, leftovers, is_ours(out, read_state(out)))


def _stop(actors: list) -> None:
    """Kill the actors and wait (a while) until Ray reports them dead: none may still be writing a shard when the
    build stops, or later beside a re-run."""
    for actor in actors:
        ray.kill(actor)
    calls = [actor.node.options(max_task_retries=0).remote() for actor in actors]  # fail once the actor is dead
    ray.wait(calls, num_returns=len(calls), timeout=STOP_TIMEOUT)


def _writer(actors: list, shared: list) -> ShardWriter:
    def write(jobs: Iterable[ShardJob]) -> Iterator[Shard]:
        pending = iter(jobs)
        running: dict = {}  # ObjectRef -> (actor number, job)
        load = [0] * len(actors)
        more = True
        while True:
            while more and min(load) < IN_FLIGHT:
                job = next(pending, None)
                if job is None:
                    more = False
                    break
                number = load.index(min(load))
                job = dataclasses.replace(job, path=job.path.resolve())  # workers may run in another directory
                running[actors[number].encode.remote(job, shared)] = (number, job)
                load[number] += 1
            if not running:
                return
            ready, _ = ray.wait(list(running), num_returns=1)
            number, job = running.pop(ready[0])
            load[number] -= 1
            shard = _get(ready[0])
            if not (job.path / layout.SHARD_RECORD).is_file():
                raise ClusterError(
                    f"a Ray worker wrote shard {job.path.name}, but this machine does not see it in {job.path.parent}: "
                    "put the index folder on storage every node mounts at the same path, e.g. NFS; " + RESUME
                )
            yield shard

    return write
