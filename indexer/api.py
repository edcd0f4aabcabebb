"""The HTTP API over one index (FastAPI), as ``python -m indexer serve`` runs it (``serve``).

    POST /search     {"queries": ["how do volcanoes form", ...], "k": 5}   each query's answer, as `search --json`
    GET  /search?q=how+do+volcanoes+form&k=5                              one query's answer
    POST /neighbors  {"sentence": "I sat on the bank", "word": "bank"}      as `neighbors --json` (``--explain``...)
    POST /embed      {"sentences": ["The bank of the river."]}              tokens and their mixed ELMo vectors
    GET  /stats      what the index holds, as `stats --json`;  GET /docs: the OpenAPI page, offline (/openapi.json)
    POST /add, /upsert {"texts": [...], "ids": [...]};  POST /delete {"ids": [...]}   with Authorization: Bearer TOKEN

The write endpoints are off (403) unless the server was given a token (``serve --token-file``, or
``$ELMO_SEARCH_TOKEN``); a request without it, or with another, gets 401 (compared in constant time), and one while
another process writes the index (a build, add or delete) 409.

It listens on 127.0.0.1 unless told otherwise and answers only requests whose Host is one of its names
(``Limits.hosts``: a page of another site cannot reach it by DNS rebinding). Every request is checked before any
work: its Host, its body size (``Limits.body_bytes``), k, the number of queries or sentences in one request
(``Limits.batch``), the numbers an ``/embed`` answer would hold (``Limits.embed_values``). The options of each
question are read into its options type (``indexer.options``: the same fields and rules as the command line's) and
answered by the library (``indexer.answers``: the command line's schema). Every refusal is a 4xx ``{"error":
"..."}`` that says why (400 a bad value, 404, 405, 413 over a limit, 415 a body that is not JSON), or 503 where the
index on disk cannot be read (left damaged by another process), never a 500; text
in answers has its control and direction characters escaped as ``--json`` has (``encoder.terminal.json_text``).
Requests are served from several threads: the index and its model each take their own lock where they are not
thread-safe (``Index.lock``, ``Elmo.lock``).
"""

from __future__ import annotations

import hmac
import json
import socket
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any, get_type_hints
from urllib.parse import unquote_to_bytes

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, ConfigDict, Field, create_model
from starlette.exceptions import HTTPException

from encoder import LayerMix, locks
from encoder.files import RepeatedKeyError, unique_keys
from encoder.numbers import Number
from encoder.terminal import json_text

from . import layout
from .answers import answer_or_error, neighbors_answer, search_answers, search_each, with_notices
from .build import distinct_ids
from .errors import IndexerError, QueryError
from .index import Index
from .options import NeighborsOptions, SearchOptions
from .queries import MAX_QUERY_CHARS
from .serve import TOKEN_VARIABLE, Limits


class SafeJSON(JSONResponse):
    """JSON as ``--json`` writes it: control and direction characters escaped (``json_text``), and a lone surrogate
    (valid in a JSON string, not in UTF-8) written as its ``\\u`` escape instead of failing."""

    def render(self, content: Any) -> bytes:
        return json_text(content).encode("utf-8", "backslashreplace")


def _request_model(name: str, options: type, **inputs: Any) -> type[BaseModel]:
    """The JSON body of a question: its ``inputs`` (pydantic fields), then the fields of its options type with their
    defaults and help; strict types (``true`` is no number) and no field that is not one of these. The rules of
    each value are the options type's own, applied when the body is read into it."""
    hints = get_type_hints(options)
    specs = {
        spec.name: (
            hints[spec.name],
            Field(spec.default, description=spec.metadata["help"].replace("%(default)s", str(spec.default))),
        )
        for spec in fields(options)
        if spec.default is not MISSING
    }
    return create_model(name, __config__=ConfigDict(extra="forbid", strict=True), **inputs, **specs)


SearchRequest = _request_model(
    "SearchRequest", SearchOptions, queries=(list[str], Field(min_length=1, description="the queries, in order"))
)
NeighborsRequest = _request_model(
    "NeighborsRequest",
    NeighborsOptions,
    sentence=(str, Field(description="a sentence containing the word")),
    word=(str, Field(description="the word, as it appears in the sentence")),
)


class EmbedRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    sentences: list[str] = Field(min_length=1, description="texts, each tokenized by the model's rules")
    layers: str | None = Field(None, description="layer mix (default: the index's mix for words in context)")


class Texts(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    texts: list[str] = Field(min_length=1, description="the documents' texts")
    ids: list[str] | None = Field(None, description="their ids (add: default their positions after the stored ones)")


class Ids(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    ids: list[str] = Field(min_length=1, description="the ids of the documents to delete")


class EmbedAnswer(BaseModel):
    model: str
    dim: int
    layers: list[float]
    embeddings: list[dict[str, Any]] = Field(description='per sentence {"tokens": [...], "vectors": [[...], ...]}')


class BadRequest(Exception):
    """A request that breaks a rule: answered with its status and message."""

    def __init__(self, message: str, status: int = 400, headers: dict | None = None):
        super().__init__(message)
        self.status, self.headers = status, headers


def _answer_errors_as_json(app: FastAPI) -> None:
    """Every refusal answers ``{"error": "..."}``: a ``BadRequest`` with its status, a body that is not JSON with
    415, one FastAPI cannot read into its request with 400 and one line per problem, 404 and 405 with their words,
    an index that cannot be read (when the server opens it again, ``Index.refresh``) with 503."""

    @app.exception_handler(BadRequest)
    async def bad_request(request: Request, error: BadRequest) -> JSONResponse:
        return SafeJSON({"error": str(error)}, status_code=error.status, headers=error.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        if request.method == "POST" and "json" not in request.headers.get("content-type", ""):
            return SafeJSON({"error": "the body must be JSON (Content-Type: application/json)"}, status_code=415)
        problems = [
            f"the body is not JSON ({e['ctx']['error']} at character {e['loc'][-1]})"
            if e["type"] == "json_invalid"
            else f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'the body'}: {e['msg']}"
            for e in error.errors()
        ]
        return SafeJSON({"error": "; ".join(problems)}, status_code=400)

    @app.exception_handler(QueryError)
    async def bad_question(request: Request, error: QueryError) -> JSONResponse:
        return SafeJSON({"error": str(error)}, status_code=400)

    @app.exception_handler(IndexerError)
    async def index_unavailable(request: Request, error: IndexerError) -> JSONResponse:
        """The index on disk cannot be read now (damaged, or replaced by one this code cannot open): 503 with what
        to do, where a 500 and a traceback in the log said nothing."""
        return SafeJSON({"error": str(error)}, status_code=503)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        headers = error.headers
        if error.status_code == 405:  # Starlette names the first route of the path only: /search takes GET and POST
            methods = {m for route in app.routes for m in getattr(route, "methods", ()) if _same_path(route, request)}
            headers = {**(headers or {}), "Allow": ", ".join(sorted(methods))}
        return SafeJSON({"error": str(error.detail).lower()}, status_code=error.status_code, headers=headers)


def _same_path(route: Any, request: Request) -> bool:
    """Whether ``route`` serves ``request``'s path (with any method)."""
    match = getattr(route, "path_regex", None)
    return match is not None and match.match(request.url.path) is not None


def create_app(index: Index, limits: Limits = Limits(), token: str | None = None) -> Guard:
    """The API over one opened index (the FastAPI application, behind the Host check and the body limit); ``token``
    turns the write endpoints on."""
    app = FastAPIOffline(  # /docs and /redoc with their scripts served from the package: no CDN, usable offline
        title="ELMo Search",
        version="1",
        description=f"Search, neighbours in context and ELMo vectors of the index in {index.path.name}.",
        default_response_class=SafeJSON,
        dependencies=[Depends(lambda: index.refresh())],  # an index another process changed is opened again first
    )

    server_k = Number(int, 1, limits.k)

    def options_of(kind: type, values: dict) -> Any:
        """A request's options, read into their type (its rules), and ``k`` within ``--max-k``."""
        problem = server_k.problem(values["k"]) if "k" in values else None
        if problem is not None:  # this server's range, not the type's
            raise BadRequest(f"k {problem} (--max-k)")
        try:
            options = kind(**values)
        except QueryError as error:
            raise BadRequest(str(error)) from None
        if options.k > limits.k:
            raise BadRequest(f"k is {options.k}; at most {limits.k} (--max-k)")
        return options

    def check_batch(what: str, count: int) -> None:
        if count > limits.batch:
            raise BadRequest(f"{count} {what} in one request; at most {limits.batch} (--max-batch)", 413)

    _answer_errors_as_json(app)

    @app.post("/search", summary="documents (or sentences) that answer each query")
    def search_documents(request: SearchRequest) -> dict:
        check_batch("queries", len(request.queries))
        options = options_of(SearchOptions, request.model_dump(exclude={"queries"}))
        return {"answers": search_each(index, request.queries, options)}

    @app.get("/search", summary="documents (or sentences) that answer one query")
    def search_one(request: Request, q: str, k: str = "10") -> dict:
        asked = request.query_params  # a parameter this endpoint ignored would be a search the user did not ask for
        unknown = sorted(set(asked) - {"q", "k"})
        if unknown:
            parameters = "parameter" if len(unknown) == 1 else "parameters"
            raise BadRequest(f"unknown {parameters} {', '.join(unknown)}: GET /search takes q and k (POST /search all)")
        repeated = next((name for name in asked if len(asked.getlist(name)) > 1), None)
        if repeated is not None:
            raise BadRequest(f"{repeated} is given {len(asked.getlist(repeated))} times; give it once")
        problem = server_k.text_problem(k)
        if problem is not None:
            raise BadRequest(f"k {problem} (--max-k)")
        options = options_of(SearchOptions, {"k": server_k.read(k)})
        found = answer_or_error(lambda: search_answers(index, [q], options)[0])
        if "error" in found:
            raise BadRequest(found["error"])
        return found

    @app.post("/neighbors", summary="the nearest uses in context of a word in a sentence")
    def neighbors(request: NeighborsRequest) -> dict:
        if len(request.sentence) > MAX_QUERY_CHARS:
            raise BadRequest(f"the sentence is over {MAX_QUERY_CHARS:,} characters")
        options = options_of(NeighborsOptions, request.model_dump(exclude={"sentence", "word"}))
        found = answer_or_error(lambda: neighbors_answer(index, request.sentence, request.word, options))
        if "error" in found:
            raise BadRequest(found["error"])
        return found

    @app.post("/embed", summary="tokens and mixed ELMo vectors of sentences", response_model=EmbedAnswer)
    def embed(request: EmbedRequest) -> dict:
        check_batch("sentences", len(request.sentences))
        if any(len(s) > MAX_QUERY_CHARS for s in request.sentences):
            raise BadRequest(f"a sentence is over {MAX_QUERY_CHARS:,} characters")
        try:
            mix = LayerMix.parse(request.layers, index.elmo.n_layers) if request.layers else index.layer_mix
        except ValueError as error:
            raise BadRequest(f"bad layer mix: {error}") from None
        tokens = [index.elmo.text.tokenize(s) for s in request.sentences]
        if not all(tokens):
            raise BadRequest("a sentence has no tokens")
        values = sum(map(len, tokens)) * index.elmo.dim
        if values > limits.embed_values:
            raise BadRequest(
                f"the answer would hold {values:,} numbers (tokens x {index.elmo.dim}); at most "
                f"{limits.embed_values:,} (--max-embed-values)",
                413,
            )
        vectors = index.elmo.embed(tokens, mix=mix)
        return {
            "model": index.elmo.name,
            "dim": index.elmo.dim,
            "layers": list(mix.weights),
            "embeddings": [{"tokens": t, "vectors": v.tolist()} for t, v in zip(tokens, vectors)],
        }

    def may_write(request: Request) -> None:
        """The write endpoints' gate: on (a token), the right token (401 else), no other process writing (409 else;
        a write of this server's own is waited for, as every change of the index waits for the one before)."""
        if token is None:
            raise BadRequest(f"writing is off: start serve with --token-file FILE or ${TOKEN_VARIABLE}", 403)
        given = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, f"Bearer {token}".encode()):
            raise BadRequest(
                "give the server's token: Authorization: Bearer TOKEN", 401, {"WWW-Authenticate": "Bearer"}
            )
        with index.lock:  # this server's own write ends first: only another process's is a conflict
            if locks.is_locked(index.path / layout.LOCK):
                raise BadRequest(
                    f"another process is writing {index.path.name} (a build, add or delete); try later", 409
                )

    def written(change: Callable[[], None], **said: Any) -> dict:
        done = answer_or_error(lambda: change() or {})
        if "error" in done:
            raise BadRequest(done["error"])
        return {**said, "documents": len(index)}

    gate = [Depends(may_write)]

    @app.post("/add", summary="add documents (with the server's token)", dependencies=gate)
    def add(request: Texts) -> dict:
        return written(lambda: index.add(request.texts, request.ids), added=len(request.texts))

    @app.post("/upsert", summary="add or replace documents by id (with the server's token)", dependencies=gate)
    def upsert(request: Texts) -> dict:
        return written(lambda: index.upsert(request.texts, request.ids), upserted=len(request.texts))

    @app.post("/delete", summary="delete documents by id (with the server's token)", dependencies=gate)
    def delete(request: Ids) -> dict:
        return written(lambda: index.delete(request.ids), deleted=len(distinct_ids(request.ids)))

    @app.get("/stats", summary="what the index holds")
    def stats() -> dict:
        return with_notices(index.stats())

    @app.get("/health", summary="200 when the server answers")
    def health() -> dict:
        return {"status": "ok"}

    return Guard(app, limits)


class Guard:
    """ASGI middleware, before the application reads anything: a Host that is not one of ``limits.hosts`` gets 400,
    a body over ``limits.body_bytes`` 413 (uvicorn sets no limit of its own). The body is counted as it arrives,
    whatever its Content-Length says (a declared size over the limit is refused at once); a query string or a body
    that is not UTF-8, or JSON that gives a key twice, gets 400 (``_query_problem``, ``_body_problem``); then it is
    handed on."""

    def __init__(self, app: Any, limits: Limits):
        self.app, self.limits = app, limits

    def __getattr__(self, name: str) -> Any:  # the wrapped app's routes, openapi() and the rest
        return getattr(self.app, name)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers", []))
        host = headers.get(b"host", b"").decode("latin-1")
        if not self.limits.allows_host(host):
            return await self._refuse(send, 400, f"the Host {host!r} is not one of this server's names (--allow-host)")
        problem = _query_problem(scope.get("query_string", b""))
        if problem is not None:
            return await self._refuse(send, 400, problem)
        declared = headers.get(b"content-length", b"0")
        too_big = f"the request body is over {self.limits.body_bytes:,} bytes (--max-body-bytes)"
        if not declared.isdigit() or int(declared) > self.limits.body_bytes:
            return await self._refuse(send, 413, too_big)
        messages, size = [], 0
        while not messages or messages[-1].get("more_body", False):
            messages.append(await receive())
            if messages[-1]["type"] != "http.request":
                break  # the client went away
            size += len(messages[-1].get("body", b""))
            if size > self.limits.body_bytes:
                return await self._refuse(send, 413, too_big)
        problem = _body_problem(b"".join(message.get("body", b"") for message in messages))
        if problem is not None:
            return await self._refuse(send, 400, problem)

        async def replay() -> dict:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(send: Callable, status: int, message: str) -> None:
        await SafeJSON({"error": message}, status_code=status)({"type": "http"}, None, send)


def _query_problem(query: bytes) -> str | None:
    """What is wrong with a query string that is not UTF-8 once its %-escapes are decoded (``q=%ED%A0%80``), which
    the application would read with U+FFFD in its place and search for, or that holds bytes no URL holds unescaped
    (beyond ASCII: Starlette reads them as Latin-1, "cafÃ©"): URLs carry UTF-8 text, %-escaped, as bodies do."""
    if not query.isascii():
        return "the query string holds bytes beyond ASCII: %-escape its UTF-8 text (q=caf%C3%A9)"
    for field in query.split(b"&"):
        try:
            unquote_to_bytes(field.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError as error:
            return f"the query string is not UTF-8 once its %-escapes are decoded ({error.reason} in {field[:60]!r})"
    return None


def _body_problem(body: bytes) -> str | None:
    """What is wrong with a body that is not UTF-8 (JSON is UTF-8 text), or JSON that gives a key twice
    (``{"texts": ["a"], "texts": ["b"]}``: which did the client mean?); None for any other body (one that is not
    JSON is the application's to refuse)."""
    if not body:
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"the body is not UTF-8 (byte 0x{body[error.start]:02x} at byte {error.start}); JSON is UTF-8 text"
    try:
        json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKeyError as error:
        return str(error)
    except ValueError:  # not JSON
        pass
    return None


def serve(index: Index, listening: socket.socket, limits: Limits, token: str | None = None) -> None:
    """Serve the API on the ``listening`` socket (``serve.listen``) until interrupted."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(create_app(index, limits, token), log_level="warning"))
    server.run(sockets=[listening])
