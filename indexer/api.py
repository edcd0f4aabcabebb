"""The HTTP API over one index (FastAPI), as ``python -m indexer serve`` (``indexer.serve``) runs it.

    POST /search     {"queries": ["how do volcanoes form", ...], "k": 5}   each query's answer, as `search --json`
    POST /neighbors  {"sentence": "I sat on the bank", "word": "bank"}      as `neighbors --json` (``--explain``...)
    POST /embed      {"sentences": ["The bank of the river."]}              tokens and their mixed ELMo vectors
    GET  /stats      what the index holds, as `stats --json`;  GET /docs: the OpenAPI page (/openapi.json)

It listens on 127.0.0.1 unless told otherwise. Every request is checked before any work: its body size
(``Limits.body_bytes``), k, the number of queries or sentences in one request (``Limits.batch``); a request that
breaks a rule gets a 4xx answer ``{"error": "..."}`` that says which, never a 500. The answers are those of the
command line (``indexer.cli``), so both have one schema (docs/indexer.md). Questions run one at a time: the
model's token cache is not thread-safe.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from encoder import LayerMix

from .index import MAX_K, MAX_QUERY_CHARS, Index
from .ranking import METHODS
from .serve import Limits


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not a silent default


class SearchRequest(Strict):
    queries: list[str] = Field(min_length=1, description="the queries, answered in order")
    k: int = Field(10, ge=1, le=MAX_K, description="results per query (at most the server's --max-k)")
    method: str = Field(METHODS[0], description=f"one of {', '.join(METHODS)}")
    layers: str | None = Field(None, description="layer mix: token, top, average or weights like 0.2,0.3,0.5")
    sentences: bool = Field(False, description="rank single sentences instead of documents")
    baseline: bool = Field(False, description="also the GloVe baseline's results")
    as_typed: bool = Field(False, description="no word replaced by a nearest indexed spelling")


class NeighborsRequest(Strict):
    sentence: str = Field(max_length=MAX_QUERY_CHARS)
    word: str
    position: int | None = Field(None, ge=0, description="the word's token position if it occurs more than once")
    k: int = Field(10, ge=1, le=MAX_K)
    same_word: bool = False
    layers: str | None = None
    representation: str | None = Field(
        None, description="'readout' (the sense readout; the default unless layers are given) or 'elmo'"
    )
    explain: bool = Field(False, description="also what the model expects at the word, from each side")


class EmbedRequest(Strict):
    sentences: list[str] = Field(min_length=1, description="texts, each tokenized by the model's rules")
    layers: str | None = Field(None, description="layer mix (default: the index's mix for words in context)")


class EmbedAnswer(BaseModel):
    model: str
    dim: int
    layers: list[float]
    embeddings: list[dict[str, Any]] = Field(description='per sentence {"tokens": [...], "vectors": [[...], ...]}')


class BadRequest(Exception):
    """A request that breaks a rule: answered with its status and message."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _answer_errors_as_json(app: FastAPI) -> None:
    """Every refusal answers ``{"error": "..."}``: a ``BadRequest`` with its status, a body FastAPI cannot validate
    with 422 and one line per problem."""

    @app.exception_handler(BadRequest)
    async def bad_request(request: Request, error: BadRequest) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=error.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'the body'}: {e['msg']}" for e in error.errors()
        ]
        return JSONResponse({"error": "; ".join(problems)}, status_code=422)


def create_app(index: Index, limits: Limits = Limits()) -> BodyLimit:
    """The API over one opened index (the FastAPI application, behind the body limit)."""
    from .cli.common import answer_or_error  # the command line's answers: one schema for both
    from .cli.search import answers

    app = FastAPI(
        title="ELMo Search",
        version="1",
        description=f"Search, neighbours in context and ELMo vectors of the index in {index.path.name}.",
    )
    one_at_a_time = threading.Lock()

    def answer(question: Callable[[], dict]) -> dict:
        with one_at_a_time:
            return answer_or_error(question)

    def check(what: str, count: int, k: int | None = None) -> None:
        if count > limits.batch:
            raise BadRequest(f"{count} {what} in one request; at most {limits.batch} (--max-batch)", 413)
        if k is not None and k > limits.k:
            raise BadRequest(f"k is {k}; at most {limits.k} (--max-k)")

    _answer_errors_as_json(app)

    @app.post("/search", summary="documents (or sentences) that answer each query")
    def search_documents(request: SearchRequest) -> dict:
        check("queries", len(request.queries), request.k)
        if request.method not in METHODS:
            raise BadRequest(f"method must be one of {', '.join(METHODS)}, not {request.method!r}", 422)
        options = argparse.Namespace(**request.model_dump(exclude={"queries"}))
        batch = answer(lambda: {"answers": answers(index, request.queries, options)})  # one batched search
        if "error" not in batch:
            return {"answers": batch["answers"]}
        # a query the batch refused: each query asked alone, so that only its own answer is an error
        return {"answers": [answer(lambda: answers(index, [query], options)[0]) for query in request.queries]}

    @app.post("/neighbors", summary="the nearest uses in context of a word in a sentence")
    def neighbors(request: NeighborsRequest) -> dict:
        check("sentences", 1, request.k)
        question = request.model_dump()
        found = answer(
            lambda: {"sentence": request.sentence, "word": request.word, **asdict(index.neighbors(**question))}
        )
        if "error" in found:
            raise BadRequest(found["error"])
        return found

    @app.post("/embed", summary="tokens and mixed ELMo vectors of sentences", response_model=EmbedAnswer)
    def embed(request: EmbedRequest) -> dict:
        check("sentences", len(request.sentences))
        if any(len(s) > MAX_QUERY_CHARS for s in request.sentences):
            raise BadRequest(f"a sentence is over {MAX_QUERY_CHARS:,} characters")
        try:
            mix = LayerMix.parse(request.layers, index.elmo.n_layers) if request.layers else index.layer_mix
        except ValueError as error:
            raise BadRequest(f"bad layer mix: {error}") from None
        with one_at_a_time:
            tokens = [index.elmo.text.tokenize(s) for s in request.sentences]
            if not all(tokens):
                raise BadRequest("a sentence has no tokens")
            vectors = index.elmo.embed(tokens, mix=mix)
        return {
            "model": index.elmo.name,
            "dim": index.elmo.dim,
            "layers": list(mix.weights),
            "embeddings": [{"tokens": t, "vectors": v.tolist()} for t, v in zip(tokens, vectors)],
        }

    @app.get("/stats", summary="what the index holds")
    def stats() -> dict:
        return index.stats()

    @app.get("/health", summary="200 when the server answers")
    def health() -> dict:
        return {"status": "ok"}

    return BodyLimit(app, limits.body_bytes)


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes gets 413 before the application reads it (uvicorn sets
    no limit of its own). A declared Content-Length is checked (the HTTP parser holds the body to it); a chunked
    body is read here up to the limit, then handed on."""

    def __init__(self, app: Any, limit: int):
        self.app, self.limit = app, limit

    def __getattr__(self, name: str) -> Any:  # the wrapped app's routes, openapi() and the rest
        return getattr(self.app, name)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None:
            if not declared.isdigit() or int(declared) > self.limit:
                return await self._refuse(send)
            return await self.app(scope, receive, send)
        messages, size = [], 0
        while not messages or messages[-1].get("more_body", False):
            messages.append(await receive())
            if messages[-1]["type"] != "http.request":
                break  # the client went away
            size += len(messages[-1].get("body", b""))
            if size > self.limit:
                return await self._refuse(send)

        async def replay() -> dict:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Callable) -> None:
        message = f"the request body is over {self.limit:,} bytes (--max-body-bytes)"
        await JSONResponse({"error": message}, status_code=413)({"type": "http"}, None, send)
