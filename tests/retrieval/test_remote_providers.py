"""Remote embedding providers against a real HTTP server on 127.0.0.1 (no mocks of urllib).

Every failure must be a ProviderError naming the URL, and the API key must never show."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from skillstudio.retrieval import remote
from skillstudio.retrieval.providers import (
    MAX_EMBED_CHARS,
    EmbeddingProvider,
    ProviderConfig,
    ProviderError,
    make_provider,
)
from skillstudio.retrieval.remote import OllamaEmbeddings, OpenAIEmbeddings

KEY = "sk-test-Zq8vX3-DISTINCTIVE-key-7731"
KEY_ENV = "SKILLSTUDIO_TEST_EMBED_KEY"

# What a handler returns: status, body, extra headers (a Content-Length is added unless given as None).
Answer = tuple[int, bytes, dict[str, str | None]]


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Server:
    port: int
    requests: list[Seen] = field(default_factory=list)
    respond: Callable[[Seen], Answer] = lambda seen: (500, b"", {})
    release: threading.Event = field(default_factory=threading.Event)  # ends a deliberately slow answer
    stream: Callable[[Callable[[bytes], Any]], None] | None = None  # writes the body slowly, after the headers

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _handler(state: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            state.requests.append(seen)
            status, payload, headers = state.respond(seen)
            self.send_response(status)
            headers = {"Content-Length": str(len(payload)), **headers}
            for name, value in headers.items():
                if value is not None:
                    self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(payload)
                if state.stream is not None:
                    state.stream(self.wfile.write)
            except OSError:
                pass  # the client gave up (timeout tests)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def server() -> Iterator[Server]:
    yield from _serve()


@pytest.fixture
def other_server() -> Iterator[Server]:
    yield from _serve()


def _serve() -> Iterator[Server]:
    state = Server(port=0)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=2)


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def _json(value: Any, status: int = 200, **headers: str | None) -> Answer:
    return status, json.dumps(value).encode(), dict(headers)


def _vector(text: str, dims: int = 4) -> list[float]:
    return [float(len(text)), float(ord(text[0]) if text else 0), 0.5, float(dims)][:dims]


def _openai_ok(seen: Seen) -> Answer:
    texts = seen.body["input"]
    # Reversed on purpose: the provider must put rows back in index order.
    data = [{"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(texts)][::-1]
    return _json({"object": "list", "data": data, "model": seen.body["model"]})


def _ollama_ok(seen: Seen) -> Answer:
    return _json({"model": seen.body["model"], "embeddings": [_vector(t) for t in seen.body["input"]]})


def _openai(server: Server, **options: Any) -> OpenAIEmbeddings:
    return OpenAIEmbeddings(ProviderConfig(kind="openai", base_url=server.base_url, **options))


def _fails(provider: EmbeddingProvider, texts: list[str] | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        provider.embed(texts or ["alpha", "beta"])
    error = caught.value
    url = provider.url
    assert error.where == url
    assert url in str(error)
    assert error.__cause__ is None and (error.__suppress_context__ or error.__context__ is None)  # no chained traceback
    assert KEY not in str(error) and KEY not in repr(error)
    return error


# --- good answers --------------------------------------------------------------------------------


def test_openai_compatible_answer_batches_orders_rows_and_sends_the_key(server: Server, key: str) -> None:
    server.respond = _openai_ok
    provider = _openai(server, model="embed-small", api_key_env=KEY_ENV, batch_size=2)
    assert provider.dimensions == 0  # not known before the first answer
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]

    matrix = provider.embed(texts)

    assert matrix.dtype == np.float32 and matrix.flags.c_contiguous
    assert matrix.shape == (5, 4)
    assert matrix[:, 0].tolist() == [1, 2, 3, 4, 5]  # input order despite reversed answers
    assert provider.dimensions == 4 and provider.model_id == "embed-small"
    assert len(server.requests) == math.ceil(len(texts) / 2)
    assert [seen.body for seen in server.requests] == [
        {"model": "embed-small", "input": ["a", "bb"]},
        {"model": "embed-small", "input": ["ccc", "dddd"]},
        {"model": "embed-small", "input": ["eeeee"]},
    ]
    for seen in server.requests:
        assert seen.path == "/v1/embeddings"
        assert seen.headers["authorization"] == f"Bearer {key}"
        assert seen.headers["content-type"] == "application/json"
    assert KEY not in repr(provider) and KEY not in provider.describe()
    assert KEY_ENV in provider.describe()


def test_openai_defaults_no_key_header_and_v1_not_doubled(server: Server) -> None:
    server.respond = _openai_ok
    provider = OpenAIEmbeddings(ProviderConfig(kind="openai", base_url=server.base_url + "/v1/"))
    assert provider.url == server.base_url + "/v1/embeddings"
    assert provider.model_id == "text-embedding-3-small"
    provider.embed(["x" * (MAX_EMBED_CHARS + 500)])
    (seen,) = server.requests
    assert seen.path == "/v1/embeddings" and "authorization" not in seen.headers
    assert seen.body["model"] == "text-embedding-3-small"
    assert len(seen.body["input"][0]) == MAX_EMBED_CHARS  # long texts are cut


def test_ollama_answer(server: Server) -> None:
    server.respond = _ollama_ok
    provider = OllamaEmbeddings(ProviderConfig(kind="ollama", base_url=server.base_url, batch_size=3))
    matrix = provider.embed(["one", "three", "seven", "x"])
    assert matrix.shape == (4, 4) and matrix.dtype == np.float32
    assert matrix[:, 0].tolist() == [3, 5, 5, 1]
    assert provider.model_id == "nomic-embed-text" and provider.dimensions == 4
    assert [seen.path for seen in server.requests] == ["/api/embed", "/api/embed"]
    assert server.requests[0].body == {"model": "nomic-embed-text", "input": ["one", "three", "seven"]}


def test_defaults_and_make_provider() -> None:
    ollama = make_provider(ProviderConfig(kind="ollama"))
    assert isinstance(ollama, OllamaEmbeddings)
    assert ollama.url == "http://127.0.0.1:11434/api/embed"
    assert isinstance(make_provider(ProviderConfig(kind="openai", model="m")), OpenAIEmbeddings)
    assert ollama.embed([]).shape == (0, 0)  # nothing to embed: no request at all


def test_dimensions_must_not_change_between_answers(server: Server) -> None:
    sizes = iter([4, 3])
    server.respond = lambda seen: _json({"embeddings": [[1.0] * next(sizes) for _ in seen.body["input"]]})
    provider = OllamaEmbeddings(ProviderConfig(kind="ollama", base_url=server.base_url))
    assert provider.embed(["a"]).shape == (1, 4)
    assert "4" in str(_fails(provider, ["b"]))
    assert provider.dimensions == 4


# --- failures ------------------------------------------------------------------------------------


def test_connection_refused() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAIEmbeddings(ProviderConfig(kind="openai", base_url=f"http://127.0.0.1:{port}"))
    assert "cannot connect" in str(_fails(provider))


def test_slow_server_times_out(server: Server) -> None:
    def slow(seen: Seen) -> Answer:
        server.release.wait(2)
        return _openai_ok(seen)

    server.respond = slow
    provider = _openai(server, timeout=0.3)
    started = time.monotonic()
    error = _fails(provider)
    assert time.monotonic() - started < 1.5
    assert "no answer within 0.3 s" in str(error)


def test_trickling_server_times_out(server: Server) -> None:
    """The socket timeout applies per read; the provider also stops at the overall timeout."""

    def trickle(write: Callable[[bytes], Any]) -> None:
        while not server.release.wait(0.05):  # a byte every 50 ms, well inside the socket timeout
            write(b" ")

    server.respond = lambda seen: (200, b"", {"Content-Length": "1000000"})
    server.stream = trickle
    provider = _openai(server, timeout=0.3)
    started = time.monotonic()
    error = _fails(provider)
    assert time.monotonic() - started < 1.5
    assert "no answer within 0.3 s" in str(error)


def test_http_error_status_with_a_bounded_body(server: Server, key: str) -> None:
    server.respond = lambda seen: (500, b"model exploded " + b"x" * 5000, {"Content-Type": "text/plain"})
    error = _fails(_openai(server, api_key_env=KEY_ENV))
    message = str(error)
    assert "HTTP 500" in message and "model exploded" in message
    assert len(message) < len(error.where) + 400


def test_rejected_key_echoed_by_the_server_is_scrubbed(server: Server, key: str) -> None:
    def echo(seen: Seen) -> Answer:
        detail = f"Incorrect API key provided: {seen.headers['authorization'].removeprefix('Bearer ')}"
        return _json({"error": {"message": detail}}, status=401)

    server.respond = echo
    error = _fails(_openai(server, api_key_env=KEY_ENV))
    assert "HTTP 401" in str(error) and "Incorrect API key" in str(error) and KEY_ENV in str(error)


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param((200, b"<html>not json</html>", {}), id="garbage"),
        pytest.param((200, b"\xff\xfe\x00binary", {}), id="binary"),
        pytest.param(_json([1, 2, 3]), id="not-an-object"),
        pytest.param(_json({"result": []}), id="no-data"),
        pytest.param(_json({"data": "nope"}), id="data-not-list"),
        pytest.param(_json({"data": [{"index": 0, "embedding": [1.0]}]}), id="wrong-count"),
        pytest.param(_json({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]}), id="dup"),
        pytest.param(
            _json({"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}]}), id="ragged"
        ),
        pytest.param(
            _json({"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": []}]}), id="empty-vectors"
        ),
        pytest.param(
            _json({"data": [{"index": 0, "embedding": ["1.5"]}, {"index": 1, "embedding": [1.0]}]}), id="string"
        ),
        pytest.param(_json({"data": [{"index": 0, "embedding": [True]}, {"index": 1, "embedding": [1.0]}]}), id="bool"),
        pytest.param(_json({"data": [{"index": 0, "embedding": [None]}, {"index": 1, "embedding": [1.0]}]}), id="null"),
        pytest.param(_json({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": 7}]}), id="not-list"),
        pytest.param(
            _json({"data": [{"index": "0", "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}]}), id="index"
        ),
        pytest.param(
            (200, b'{"data": [{"index": 0, "embedding": [NaN]}, {"index": 1, "embedding": [1]}]}', {}), id="nan"
        ),
        pytest.param(
            (200, b'{"data": [{"index": 0, "embedding": [1e999]}, {"index": 1, "embedding": [1]}]}', {}), id="inf"
        ),
        pytest.param(
            (200, b'{"data": [{"index": 0, "embedding": [1e300]}, {"index": 1, "embedding": [1]}]}', {}), id="f32"
        ),
        pytest.param((200, b"[" * 100_000 + b"]" * 100_000, {}), id="deep"),
        pytest.param(_json({"error": {"message": "model not loaded"}}), id="error-200"),
    ],
)
def test_unusable_openai_answers(server: Server, key: str, answer: Answer) -> None:
    server.respond = lambda seen: answer
    error = _fails(_openai(server, api_key_env=KEY_ENV))
    assert "answered" in str(error)


def test_error_with_status_200_is_quoted(server: Server) -> None:
    server.respond = lambda seen: _json({"error": {"message": "model not loaded"}})
    assert "model not loaded" in str(_fails(_openai(server)))


def test_nan_in_an_ollama_answer(server: Server) -> None:
    server.respond = lambda seen: (200, b'{"embeddings": [[0.1, NaN], [0.2, 0.3]]}', {})
    error = _fails(OllamaEmbeddings(ProviderConfig(kind="ollama", base_url=server.base_url)))
    assert "NaN" in str(error)


def test_wrong_number_of_ollama_vectors(server: Server) -> None:
    server.respond = lambda seen: _json({"embeddings": [[0.1, 0.2]]})
    error = _fails(OllamaEmbeddings(ProviderConfig(kind="ollama", base_url=server.base_url)))
    assert "1 vector for 2 texts" in str(error)


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "until-close"])
def test_oversized_answer(server: Server, monkeypatch: pytest.MonkeyPatch, declared: bool) -> None:
    monkeypatch.setattr(remote, "MAX_RESPONSE_BYTES", 2000)
    big = {"embeddings": [[0.25] * 400, [0.25] * 400]}  # valid, but ~4 KB
    server.respond = lambda seen: (200, json.dumps(big).encode(), {} if declared else {"Content-Length": None})
    error = _fails(OllamaEmbeddings(ProviderConfig(kind="ollama", base_url=server.base_url)))
    assert "2000 bytes" in str(error)


def test_redirects_are_not_followed(server: Server, other_server: Server, key: str) -> None:
    other_server.respond = _openai_ok
    server.respond = lambda seen: (307, b"", {"Location": other_server.base_url + "/v1/embeddings"})
    error = _fails(_openai(server, api_key_env=KEY_ENV))
    assert "HTTP 307" in str(error) and "redirect" in str(error)
    assert other_server.requests == []  # the key went nowhere else


def test_missing_key_variable_is_named(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    error = _fails(_openai(server, api_key_env=KEY_ENV))
    assert KEY_ENV in str(error)
    assert server.requests == []  # nothing sent without the key
    monkeypatch.setenv(KEY_ENV, "  ")
    assert KEY_ENV in str(_fails(_openai(server, api_key_env=KEY_ENV)))


def test_unusable_config_fails_at_embed_time_not_construction() -> None:
    openai = OpenAIEmbeddings(ProviderConfig(kind="openai", base_url="file:///etc", timeout=5))
    with pytest.raises(ProviderError, match="not an http"):
        openai.embed(["a"])
    ollama = OllamaEmbeddings(ProviderConfig(kind="ollama", timeout=0))
    with pytest.raises(ProviderError, match="timeout"):
        ollama.embed(["a"])


def test_a_lone_surrogate_in_a_text_is_sent_escaped(server: Server) -> None:
    """CLI arguments with invalid UTF-8 arrive as lone surrogates; they must not raise."""
    server.respond = _ollama_ok
    provider = OllamaEmbeddings(ProviderConfig(kind="ollama", base_url=server.base_url))
    assert provider.embed(["bad \udcff byte"]).shape == (1, 4)


@pytest.mark.parametrize(
    "respond",
    [
        pytest.param(lambda seen: (500, f"bad {seen.headers.get('authorization')}".encode(), {}), id="http-500"),
        pytest.param(lambda seen: (200, f"<{seen.headers.get('authorization')}>".encode(), {}), id="garbage"),
        pytest.param(lambda seen: _json({"error": seen.headers.get("authorization")}), id="error-field"),
        pytest.param(lambda seen: (302, b"", {"Location": f"http://x/{seen.headers.get('authorization')}"}), id="3xx"),
    ],
)
def test_the_key_never_appears_in_errors(server: Server, key: str, respond: Callable[[Seen], Answer]) -> None:
    server.respond = respond
    provider = _openai(server, api_key_env=KEY_ENV)
    error = _fails(provider)  # asserts the key is absent
    assert "***" in str(error) or "HTTP 302" in str(error)
    assert KEY not in repr(provider) and KEY not in provider.describe() and KEY not in repr(vars(provider))


@pytest.mark.parametrize("status", [500, 200])
@pytest.mark.parametrize("shown", [6, 12, len(KEY) - 1])
def test_a_key_cut_by_the_excerpt_does_not_leak_a_piece(server: Server, key: str, status: int, shown: int) -> None:
    """Error bodies are read and quoted only in part; the cut may fall inside an echoed key."""
    read = 4 * remote.MAX_ERROR_BODY_CHARS if status == 500 else 4 * 60  # what the provider looks at
    body = b" " * (read - shown) + KEY.encode() + b" and more"
    server.respond = lambda seen: (status, body, {})
    error = _fails(_openai(server, api_key_env=KEY_ENV))
    assert KEY[:6] not in str(error)
