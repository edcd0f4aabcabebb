"""``python -m indexer serve``: a real server process on a small index, asked by a real HTTP client; answers match
the Python API's, bad requests get a 4xx with a message (never a 500), the OpenAPI page is served from this server
alone, writes need the token, and requests generated from the schema (schemathesis) keep it."""

from __future__ import annotations

import fcntl
import http.client
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import hypothesis
import numpy as np
import pytest
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import negative_data_rejection, response_schema_conformance
from starlette.requests import Request

from indexer import Index, delete_documents
from indexer.__main__ import make_parser
from indexer.api import BadRequest, create_app

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def started(index: Path, log: Path, *options: object) -> Iterator[str]:
    """The server as a user starts it, with ``options``; yields its base URL, stops it after."""
    with running(index, log, *options) as (url, _):
        yield url


@contextmanager
def running(index: Path, log: Path, *options: object) -> Iterator[tuple[str, subprocess.Popen]]:
    """``started``, yielding its process too."""
    port = free_port()
    command = [sys.executable, "-m", "indexer", "serve", "--index", index, "--port", port, *options]
    with open(log, "w") as out:
        process = subprocess.Popen(list(map(str, command)), cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as answer:
                assert json.load(answer) == {"status": "ok"}
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"the server did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
    yield url, process
    process.terminate()
    process.wait(timeout=30)
    assert "Traceback" not in log.read_text()


@pytest.fixture(scope="module")
def server(small_index, tmp_path_factory):
    """The server with small limits to test; yields its base URL."""
    log = tmp_path_factory.mktemp("log") / "serve.log"
    limits = ["--max-batch", 4, "--max-k", 20, "--max-body-bytes", 4000, "--max-embed-values", 1_000]
    with started(small_index, log, *limits) as url:
        yield url


@pytest.fixture(scope="module")
def writable(small_index, tmp_path_factory):
    """A server of a copy of the small index, given a token: (its URL, the token, the index folder)."""
    folder = tmp_path_factory.mktemp("writable")
    index = Index.open(small_index).save(folder / "index")
    (folder / "token").write_text("s3cret-token\n")
    with started(index, folder / "serve.log", "--token-file", folder / "token") as url:
        yield url, "s3cret-token", index


def ask(url: str, path: str, body: dict | bytes | None = None, headers: dict | None = None) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_serve_listens_on_localhost_unless_told():
    assert make_parser().parse_args(["serve", "--index", "x"]).host == "127.0.0.1"


def test_a_method_not_allowed_names_every_method_of_its_path(server):
    """405's Allow header lists what the path takes: GET and POST for /search (two routes), POST for /neighbors."""
    for path, allowed in (("/search", "GET, POST"), ("/neighbors", "POST")):
        request = urllib.request.Request(server + path, method="DELETE")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)
        assert refused.value.code == 405 and refused.value.headers["Allow"] == allowed
        assert json.load(refused.value) == {"error": "method not allowed"}


def test_search_answers_a_batch_in_order_as_the_python_api(server, small_index):
    status, answer = ask(server, "/search", {"queries": ["muddy river bank", "magma erupts", "  "], "k": 3})
    assert status == 200
    first, second, empty = answer["answers"]
    index = Index.open(small_index)
    expected = [h.doc_id for h in index.search("muddy river bank", k=3)]
    assert [h["doc_id"] for h in first["results"]] == expected and first["query"] == "muddy river bank"
    assert second["results"][0]["doc_id"] == "volcano"
    assert "error" in empty and "empty" in empty["error"]  # one query's error in its place, the rest answered
    status, batch = ask(server, "/search", {"queries": ["muddy river bank", "magma erupts"], "k": 3})
    assert status == 200 and batch["answers"] == [first, second]  # searched as one batch: the same answers


def test_neighbors_and_embed_answer_as_the_python_api(server, small_index):
    status, found = ask(server, "/neighbors", {"sentence": "The bank of the river.", "word": "bank", "k": 3})
    index = Index.open(small_index)
    expected = index.neighbors("The bank of the river.", "bank", k=3)
    assert status == 200 and [h["token_index"] for h in found["hits"]] == [h.token_index for h in expected.hits]
    status, embedded = ask(server, "/embed", {"sentences": ["The bank of the river."], "layers": "top"})
    assert status == 200 and embedded["dim"] == index.elmo.dim
    tokens = embedded["embeddings"][0]["tokens"]
    assert tokens == ["The", "bank", "of", "the", "river", "."]
    np.testing.assert_allclose(
        embedded["embeddings"][0]["vectors"], index.elmo.embed([tokens], mix="top")[0], rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize(
    "path, body, status, says",
    [
        ("/search", b"{not json", 400, "JSON"),
        ("/search", b"null", 400, "body"),
        ("/search", b"[1, 2]", 400, "body"),
        ("/search", {"queries": [1, None]}, 400, "queries"),
        ("/search", {"queries": []}, 400, "queries"),
        ("/search", {"queries": ["x"], "colour": "red"}, 400, "colour"),
        ("/search", {"queries": "bank"}, 400, "queries"),
        ("/search", {"queries": ["bank"], "k": 0}, 400, "k must be a whole number from 1 to 20, not 0 (--max-k)"),
        ("/search", {"queries": ["bank"], "k": 21}, 400, "--max-k"),
        ("/search", {"queries": ["bank"], "k": 1000}, 400, "--max-k"),
        ("/search", {"queries": ["bank"], "k": True}, 400, "k"),
        ("/search", {"queries": ["bank"], "k": 2.0}, 400, "k"),
        ("/search", {"queries": ["bank"], "k": "many"}, 400, "k"),
        ("/search", {"queries": ["bank"], "baseline": 1}, 400, "baseline"),
        ("/search", {"queries": ["a", "b", "c", "d", "e"]}, 413, "--max-batch"),
        ("/search", {"queries": ["bank"], "method": "magic"}, 400, "method must be one of"),
        ("/search", {"queries": ["x" * 5000]}, 413, "--max-body-bytes"),
        ("/search?q=bank&k=0", None, 400, "k must be a whole number from 1 to 20"),
        ("/search?q=bank&k=true", None, 400, "k must be"),
        ("/search?q=bank&k=21", None, 400, "--max-k"),
        ("/search?k=3", None, 400, "q"),
        ("/search?q=monney&as_typed=true", None, 400, "unknown parameter as_typed"),
        ("/search?q=bank&method=magic&k=2", None, 400, "unknown parameter method"),
        ("/search?q=bank&q=loan", None, 400, "q is given 2 times"),
        ("/search?q=bank&k=1&k=5", None, 400, "k is given 2 times"),
        ("/search?q=%ED%A0%80&k=1", None, 400, "the query string is not UTF-8 once its %-escapes are decoded"),
        ("/search?q=caf%C3%A9+bank&k=1", None, 200, None),
        ("/search", b'{"queries": [', 400, "the body is not JSON (Expecting value at character 13)"),
        ("/search", b'{"queries": ["\xff"]}', 400, "the body is not UTF-8 (byte 0xff at byte 14)"),
        ("/search", b'{"queries": ["bank"], "k": 1, "queries": ["loan"]}', 400, "'queries' is given 2 times"),
        ("/add", b'{"texts": ["a"], "ids": ["x"], "ids": ["y"]}', 400, "'ids' is given 2 times"),  # before the gate
        ("/neighbors", {"sentence": "The bank of the river.", "word": "castle"}, 400, "castle"),
        ("/neighbors", {"sentence": "The bank.", "word": "bank", "position": -1}, 400, "position"),
        ("/neighbors", {"sentence": "The bank.", "word": "bank", "position": 7}, 400, "position"),
        ("/neighbors", {"sentence": "The bank.", "word": "bank", "representation": "x"}, 400, "representation"),
        ("/neighbors", {"word": "bank"}, 400, "sentence"),
        ("/neighbors", None, 405, "method not allowed"),
        ("/embed", {"sentences": ["bank"], "layers": "9,9"}, 400, "layer mix"),
        ("/embed", {"sentences": ["..."]}, 200, None),
        ("/embed", {"sentences": [" "]}, 400, "no tokens"),
        ("/embed", {"sentences": ["bank " * 300]}, 413, "--max-embed-values"),
        ("/nowhere", {}, 404, "not found"),
    ],
)
def test_bad_requests_get_a_4xx_with_a_message(server, path, body, status, says):
    got, answer = ask(server, path, body)
    assert got == status, answer
    if says:
        assert says.lower() in answer["error"].lower()


def test_a_query_string_is_utf8_text_percent_escaped():
    """Raw bytes beyond ASCII (Starlette would read them as Latin-1: "cafÃ©") and %-escapes that are not UTF-8 are
    refused; %-escaped UTF-8 and plain ASCII pass. (The HTTP server in use refuses raw bytes itself; another may not.)"""
    from indexer.api import _query_problem

    assert _query_problem(b"q=caf\xc3\xa9&k=1").startswith("the query string holds bytes beyond ASCII")
    assert _query_problem(b"q=%ED%A0%80").startswith("the query string is not UTF-8 once its %-escapes are decoded")
    assert _query_problem(b"q=caf%C3%A9+bank&k=1") is None and _query_problem(b"") is None


def test_a_chunked_body_over_the_limit_is_refused_as_it_arrives(server):
    host, port = server.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    body = json.dumps({"queries": ["y" * 6000]}).encode()
    connection.request(
        "POST", "/search", body=iter([body[:3000], body[3000:]]), headers={"Content-Type": "application/json"}
    )
    answer = connection.getresponse()
    assert answer.status == 413 and "--max-body-bytes" in json.load(answer)["error"]


def test_the_openapi_page_describes_the_api_from_this_server_alone(server):
    """/docs works offline: every script, style sheet and icon it loads is served here, none from a CDN."""
    status, schema = ask(server, "/openapi.json")
    assert status == 200 and {"/search", "/neighbors", "/embed", "/stats"} <= set(schema["paths"])
    with urllib.request.urlopen(server + "/docs", timeout=30) as page:
        html = page.read().decode()
    assert page.status == 200 and "swagger" in html.lower()
    loaded = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: *['"]([^'"]+)['"]""", html)
    urls = [url for pair in loaded for url in pair if url]
    assert any(url.endswith(".js") for url in urls) and not re.search(r"https?://", html)
    for url in urls:
        assert url.startswith("/"), url
        with urllib.request.urlopen(server + url, timeout=30) as asset:
            assert asset.status == 200 and asset.read()


def test_get_search_answers_one_query_as_post_does(server):
    status, posted = ask(server, "/search", {"queries": ["muddy river bank"], "k": 2})
    got, answer = ask(server, "/search?" + urllib.parse.urlencode({"q": "muddy river bank", "k": 2}))
    assert status == got == 200 and answer == posted["answers"][0]


def test_a_body_that_is_not_json_is_refused_by_its_content_type(server):
    status, answer = ask(server, "/search", b'{"queries": ["bank"]}', headers={"Content-Type": "text/plain"})
    assert status == 415 and "application/json" in answer["error"]


def test_a_request_for_another_host_is_refused(server):
    """A page of another site that rebinds its name to 127.0.0.1 sends its own name as the Host."""
    status, answer = ask(server, "/stats", headers={"Host": "rebound.example:8000"})
    assert status == 400 and "rebound.example" in answer["error"]
    assert ask(server, "/health", headers={"Host": "localhost:1"})[0] == 200


def test_answers_escape_control_characters_and_lone_surrogates(server):
    """Text from the request comes back escaped as `--json` writes it, and a lone surrogate (valid JSON, not UTF-8)
    is answered, not a 500."""
    body = json.dumps({"queries": ["bank\u0085\u202e river", "bank \ud800"]}).encode()
    request = urllib.request.Request(server + "/search", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        raw = answer.read()
    assert b"\\u0085" in raw and b"\\u202e" in raw and "\u0085".encode() not in raw
    first, second = json.loads(raw)["answers"]
    assert first["query"] == "bank\u0085\u202e river" and second["query"] == "bank \ud800"


def test_a_chunked_body_with_a_small_content_length_is_still_limited(server):
    host, port = server.removeprefix("http://").split(":")
    body = json.dumps({"queries": ["y" * 6000]}).encode()
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:3000], body[3000:])) + b"0\r\n\r\n"
    head = f"POST /search HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n"
    with socket.create_connection((host, int(port)), timeout=60) as connection:
        connection.sendall(head.encode() + b"Transfer-Encoding: chunked\r\n\r\n" + chunks)
        status_line = connection.recv(4096).split(b"\r\n", 1)[0]
    assert status_line.split()[1] in (b"400", b"413")  # refused by the limit, or by the HTTP parser: never 200


def test_a_port_in_use_is_one_error_line_before_serving(server, small_index):
    port = server.rsplit(":", 1)[1]
    command = [sys.executable, "-m", "indexer", "serve", "--index", str(small_index), "--port", port]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: cannot listen on 127.0.0.1:") and done.stderr.count("\n") == 1


def test_writing_is_off_without_a_token(server):
    status, answer = ask(server, "/add", {"texts": ["A new text."]})
    assert status == 403 and "--token-file" in answer["error"]


def test_writes_need_the_token_and_change_what_search_finds(writable):
    url, token, index = writable
    body = {"texts": ["Glaciers carve deep valleys in the mountains."], "ids": ["glacier"]}
    assert ask(url, "/add", body)[0] == 401
    status, answer = ask(url, "/add", body, headers={"Authorization": "Bearer s3cret-tokeN"})
    assert status == 401 and "Authorization: Bearer" in answer["error"]
    mine = {"Authorization": f"Bearer {token}"}
    assert ask(url, "/add", body, headers=mine) == (200, {"added": 1, "documents": 4})
    found = ask(url, "/search", {"queries": ["glaciers and valleys"], "k": 1})[1]["answers"][0]["results"]
    assert found[0]["doc_id"] == "glacier"
    replaced = {"texts": ["Bread rises in a warm oven."], "ids": ["glacier"]}
    assert ask(url, "/upsert", replaced, headers=mine) == (200, {"upserted": 1, "documents": 4})
    blank = {"texts": ["", "Giraffes eat leaves."], "ids": ["glacier", "giraffe"]}  # no silent skip, no count of it
    assert ask(url, "/upsert", blank, headers=mine) == (400, {"error": "text 0 is empty: every text becomes a "
                                                                     "document, and a document needs text"})  # fmt: skip
    status, answer = ask(url, "/delete", {"ids": ["castle"]}, headers=mine)
    assert status == 400 and "castle" in answer["error"]
    status, answer = ask(url, "/add", {"texts": ["A lone \ud800 surrogate."], "ids": ["lone"]}, headers=mine)
    assert status == 400 and answer["error"] == "text 0 is not valid Unicode: a lone surrogate ('\\ud800') at 7"
    assert ask(url, "/delete", {"ids": ["glacier", "glacier"]}, headers=mine) == (200, {"deleted": 1, "documents": 3})
    assert len(Index.open(index)) == 3
    with open(index / ".lock", "a") as lock:  # another process's build, as the kernel sees it
        fcntl.flock(lock, fcntl.LOCK_EX)
        status, answer = ask(url, "/delete", {"ids": ["river"]}, headers=mine)
    assert status == 409 and "another process is writing" in answer["error"]
    assert len(Index.open(index)) == 3


def test_a_write_waits_for_this_servers_own_write_and_is_refused_only_for_another_process(small_index, tmp_path):
    """While this server's own add holds the index (its lock, then the folder's lock), a second write waits for it
    instead of answering 409 as if another process were writing: the gate asks under the index's lock."""
    index = Index.open(Index.open(small_index).save(tmp_path / "index"))
    route = next(r for r in create_app(index, token="t").app.routes if getattr(r, "path", None) == "/add")
    gate = next(d.call for d in route.dependant.dependencies if d.call.__name__ == "may_write")
    request = Request({"type": "http", "headers": [(b"authorization", b"Bearer t")]})
    outcomes = []

    def write() -> None:
        try:
            gate(request)
            outcomes.append("passed")
        except BadRequest as refused:
            outcomes.append(refused.status)

    with index.lock, open(index.path / ".lock", "a") as lock:  # this server's own add, under way
        fcntl.flock(lock, fcntl.LOCK_EX)
        second = threading.Thread(target=write)
        second.start()
        second.join(1)
        assert second.is_alive() and outcomes == []  # waiting, not refused
        fcntl.flock(lock, fcntl.LOCK_UN)
    second.join(30)
    assert outcomes == ["passed"]


def test_the_server_answers_from_the_index_as_another_process_left_it(writable):
    """A delete or an add by another process (here, this one) is what the next request sees: the server opens the
    changed index again, never answering from documents that are gone nor failing on files the change removed."""
    url, _, index = writable

    def found(query: str) -> list[str]:
        status, answer = ask(url, "/search", {"queries": [query], "k": 10})
        assert status == 200, answer
        return [hit["doc_id"] for hit in answer["answers"][0]["results"]]

    before = found("the bank of the river")
    delete_documents(index, [before[0]])
    assert before[0] not in found("the bank of the river") and ask(url, "/stats")[1]["counts"]["documents"] == 2
    Index.open(index).add(["Icebergs drift south in the spring."], ids=["iceberg"])
    assert "iceberg" in found("icebergs drifting") and ask(url, "/stats")[1]["counts"]["documents"] == 3


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_operation_answers_what_its_schema_allows_without_a_server_error(server, mode):
    """Requests made from the served OpenAPI schema (schemathesis), valid and not, 25 per operation with a fixed
    seed: never a 500, a request that breaks the schema is refused (4xx), every answer is the JSON it promises."""
    schema = schemathesis.openapi.from_url(server + "/openapi.json")
    schema.config.checks.negative_data_rejection.expected_statuses.append("413")  # over a limit is refused too
    checks = [not_a_server_error, negative_data_rejection, response_schema_conformance]
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {"/search", "/neighbors", "/embed", "/add", "/delete"} <= {operation.path for operation in operations}
    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not (len(operation.body) or len(operation.query)):
            continue  # nothing to send that the schema forbids (/stats, /health)

        @hypothesis.given(case=operation.as_strategy(mode))
        @hypothesis.settings(
            max_examples=25, derandomize=True, deadline=None, suppress_health_check=list(hypothesis.HealthCheck)
        )
        def answers(case: schemathesis.Case) -> None:
            case.call_and_validate(checks=checks)

        answers()


def test_searches_during_an_add_wait_for_it_and_answer_whole(writable):
    """Eight searches sent while an add runs on the same index each answer 200 (one question at a time: they wait
    for the add), from the documents before it or after it, never a mix."""
    url, token, _ = writable
    texts = [f"Comet number {i} leaves a long tail of dust and ice near the sun." for i in range(40)]
    body = {"texts": texts, "ids": [f"comet-{i}" for i in range(len(texts))]}
    query = {"queries": ["comets with tails of dust"], "k": 3, "method": "keywords"}
    with ThreadPoolExecutor(9) as pool:
        adding = pool.submit(ask, url, "/add", body, {"Authorization": f"Bearer {token}"})
        searches = [pool.submit(ask, url, "/search", query) for _ in range(8)]
        assert adding.result(timeout=300)[0] == 200
        answers = [search.result(timeout=300) for search in searches]
    for status, answer in answers:
        assert status == 200, answer
        found = [hit["doc_id"].startswith("comet-") for hit in answer["answers"][0]["results"]]
        assert found in ([], [True] * 3), found  # before the add: no comet; after it: the top 3 are comets
    assert ask(url, "/search", query)[1]["answers"][0]["results"][0]["doc_id"].startswith("comet-")


@pytest.mark.parametrize("number, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_server_with_one_line(small_index, tmp_path, number, status):
    log = tmp_path / "serve.log"
    with running(small_index, log) as (url, process):
        assert ask(url, "/search", {"queries": ["the river bank"], "k": 1})[0] == 200
        process.send_signal(number)
        assert process.wait(timeout=60) == status
    assert log.read_text().splitlines()[-1] == "interrupted"


def test_after_http_writes_every_reader_agrees_with_a_fresh_build(tiny_model_dir, tmp_path):
    """What POST /add, /upsert and /delete leave in the folder is what a fresh build of the live documents holds:
    searches, Word in context, Senses, the counts and the export of documents and tokens (``test_live_state``'s
    readers) agree, read by another process once the server has stopped."""
    from live_answers import SETTINGS, answers, write_corpus

    from indexer import build_index

    first = [("a", "The river bank was muddy after the rain."), ("b", "She paid the money into her bank account.")]
    build_index(
        [write_corpus(tmp_path / "first", first)], tmp_path / "index", tiny_model_dir, settings=SETTINGS, progress=False
    )
    (tmp_path / "token").write_text("t0ken\n")
    mine = {"Authorization": "Bearer t0ken"}
    with started(tmp_path / "index", tmp_path / "serve.log", "--token-file", tmp_path / "token") as url:
        assert ask(url, "/add", {"texts": ["Children play football by the bank."], "ids": ["c"]}, mine)[0] == 200
        assert ask(url, "/upsert", {"texts": ["The actors rehearsed the new play."], "ids": ["a"]}, mine)[0] == 200
        assert ask(url, "/delete", {"ids": ["b"]}, mine)[0] == 200
    live = {"a": "The actors rehearsed the new play.", "c": "Children play football by the bank."}
    index = Index.open(tmp_path / "index")
    order = [document["doc_id"] for document in index.documents()]
    corpus = write_corpus(tmp_path / "live", [(doc_id, live[doc_id]) for doc_id in order])
    fresh = build_index([corpus], tmp_path / "fresh", tiny_model_dir, settings=SETTINGS, progress=False)
    changed, built = answers(index, tmp_path / "changed-export"), answers(fresh, tmp_path / "fresh-export")
    assert sorted(order) == ["a", "c"] and changed.keys() == built.keys()
    for question, answer in changed.items():
        if isinstance(answer, tuple):
            assert answer[0] == built[question][0], question
            np.testing.assert_allclose(answer[1], built[question][1], rtol=1e-4, atol=1e-5, err_msg=question)
        else:
            assert answer == built[question], question


def test_an_index_damaged_under_the_server_is_a_503_with_what_to_do_not_a_500(small_index, tmp_path):
    """Each request first opens again an index another process changed (``Index.refresh``); one that cannot be
    read then is answered as every refusal is, in JSON, and the next request after it is mended is answered."""
    import asyncio

    index = Index.open(Index.open(small_index).save(tmp_path / "index"))
    app = create_app(index)

    def get(path: str) -> tuple[int, dict]:
        sent = []

        async def receive() -> dict:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict) -> None:
            sent.append(message)

        target, _, query = path.partition("?")
        scope = {"type": "http", "method": "GET", "path": target, "raw_path": target.encode(), "root_path": "",
                 "query_string": query.encode(), "headers": [(b"host", b"127.0.0.1")], "http_version": "1.1",
                 "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1)}  # fmt: skip
        asyncio.run(app(scope, receive, send))
        return sent[0]["status"], json.loads(b"".join(m.get("body", b"") for m in sent[1:]))

    assert get("/search?q=river&k=1")[0] == 200 and "notices" in get("/stats")[1]
    manifest = index.path / "manifest.json"
    kept = manifest.read_bytes()
    manifest.write_text('{"broken": ')
    for path in ("/search?q=river&k=1", "/stats", "/health"):
        status, answer = get(path)
        assert status == 503 and "manifest.json cannot be read" in answer["error"], (path, answer)
    manifest.write_bytes(kept)
    assert get("/search?q=river&k=1")[0] == 200
