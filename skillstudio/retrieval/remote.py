"""Remote embedding providers (D047 BYOLLM): an OpenAI-compatible server or Ollama.

This is the only module in SkillStudio that opens sockets, and :func:`make_provider` imports it
only when the user configured ``openai`` or ``ollama``. It uses :mod:`urllib.request`, so no
HTTP library is needed.

Everything a server answers is untrusted. Any failure (unreachable, too slow, an HTTP error, a
body that is too large, not JSON, the wrong shape, the wrong number of vectors, non-numeric or
non-finite values) becomes a :class:`ProviderError` whose ``where`` is the URL requested and whose
message says what went wrong in words; callers then fall back to FTS5 (D057). No other exception
type escapes :meth:`embed` and no traceback is chained onto the error.

The API key is read from the environment variable the config names (``api_key_env``) at call
time and is never stored on the provider, so it cannot leak through ``repr`` or ``describe``;
every error message is scrubbed of it as well, because servers like to echo a rejected key back.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from skillstudio.retrieval.providers import Matrix, ProviderConfig, ProviderError, embeddable_text

# The largest answer read from a server. 2048 texts x 3072 dimensions in JSON is ~130 MB, so a
# batch that large needs a smaller batch_size; 64 texts are well under 10 MB.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
MAX_ERROR_BODY_CHARS = 200  # of an HTTP error's body, quoted in the message
_CHUNK = 256 * 1024
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com"
OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
OLLAMA_DEFAULT_BASE_URL = "http://127.0.0.1:11434"
OLLAMA_DEFAULT_MODEL = "nomic-embed-text"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: urllib would resend the Authorization header to wherever it points
    (another host included) and turn the POST into a GET. A 3xx becomes an HTTP error instead."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _RemoteEmbeddings:
    """What both remote providers share: batching, the request, reading and checking the answer.

    ``dimensions`` is 0 until the first successful :meth:`embed` (a remote model's size is not
    known before it answers); every later answer must have the same number of dimensions.
    """

    kind = ""
    default_base_url = ""
    default_model = ""

    def __init__(self, config: ProviderConfig) -> None:
        self.base_url = (config.base_url or self.default_base_url).rstrip("/")
        self.model = config.model or self.default_model
        self.api_key_env = config.api_key_env or None
        self.timeout = config.timeout
        self.batch_size = config.batch_size
        self.url = self._endpoint(self.base_url)
        self._dimensions = 0
        self._lock = threading.Lock()
        # A config that did not come through settings.py may be unusable; say so at embed time,
        # as a ProviderError, which every caller already handles (the constructor never raises).
        self._problem = _config_problem(self.base_url, self.timeout, self.batch_size)

    # --- EmbeddingProvider ---------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        return self.model

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        if self._problem:
            raise ProviderError(self.url, self._problem)
        if not texts:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        key = self._key()
        parts: list[Matrix] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = [embeddable_text(str(text)) for text in texts[start : start + self.batch_size]]
            answer = self._post({"model": self.model, "input": chunk}, key)
            try:
                rows = self._rows(answer, len(chunk), key)
                matrix = _matrix(rows, len(chunk))
            except _Unusable as problem:
                raise self._error(f"answered something unusable: {problem}", key) from None
            self._learn_dimensions(matrix.shape[1], key)
            parts.append(matrix)
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)

    # --- description ---------------------------------------------------------------------------

    def describe(self) -> str:
        key = f", key from ${self.api_key_env}" if self.api_key_env else ""
        return f"{self.kind} {self.model} at {self.base_url}{key}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"

    # --- for subclasses ------------------------------------------------------------------------

    def _endpoint(self, base_url: str) -> str:
        raise NotImplementedError

    def _rows(self, answer: object, count: int, key: str | None) -> list[object]:
        """The vectors in ``answer`` in input order; raises :class:`_Unusable`."""
        raise NotImplementedError

    # --- the request ---------------------------------------------------------------------------

    def _key(self) -> str | None:
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            # Name the variable, never a value.
            raise ProviderError(
                self.url, f"the environment variable {self.api_key_env} (the API key) is not set or empty"
            )
        return key

    def _post(self, payload: dict[str, Any], key: str | None) -> object:
        """The decoded JSON answer to one POST, or a ProviderError that says why there is none."""
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "SkillStudio"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=json.dumps(payload).encode("utf-8"), headers=headers)
        deadline = time.monotonic() + self.timeout
        try:
            with self._opener().open(request, timeout=self.timeout) as response:
                body = self._read(response, deadline, key)
        except urllib.error.HTTPError as error:
            raise self._error(_http_error_message(error, self.api_key_env, key), key) from None
        except urllib.error.URLError as error:
            raise self._error(self._connection_message(error.reason), key) from None
        except TimeoutError:
            raise self._error(f"no answer within {self.timeout:g} s", key) from None
        except http.client.RemoteDisconnected:
            raise self._error("the server closed the connection without answering", key) from None
        except http.client.IncompleteRead:
            raise self._error("the answer was cut off before its end", key) from None
        except http.client.HTTPException as error:
            raise self._error(f"answered something that is not HTTP ({type(error).__name__})", key) from None
        except OSError as error:  # reset, broken pipe, TLS errors raised outside URLError
            raise self._error(self._connection_message(error), key) from None
        except ValueError as error:  # urllib refusing the URL itself
            raise self._error(f"not a usable URL ({error})", key) from None
        try:
            return json.loads(body)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError too
            raise self._error(
                f"answered something that is not JSON (it starts {_excerpt(body, 60, key)!r})", key
            ) from None

    def _opener(self) -> urllib.request.OpenerDirector:
        # A server on this machine (Ollama, a local llama.cpp) is never reached through the
        # proxy the environment may name; a remote one is, as any other program would.
        host = urllib.parse.urlsplit(self.url).hostname or ""
        proxies = urllib.request.ProxyHandler({}) if host in _LOOPBACK else urllib.request.ProxyHandler()
        return urllib.request.build_opener(proxies, _NoRedirect())

    def _read(self, response: Any, deadline: float, key: str | None) -> bytes:
        """The body, never more than MAX_RESPONSE_BYTES and never past the timeout: the socket
        timeout alone applies per read, so a server trickling bytes could otherwise hold on."""
        limit = MAX_RESPONSE_BYTES  # read at call time so tests can lower it
        declared = response.headers.get("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > limit:
            raise self._error(f"answered {int(declared)} bytes, more than the {limit} bytes accepted", key)
        chunks: list[bytes] = []
        size = 0
        while True:
            if time.monotonic() > deadline:
                raise self._error(f"no answer within {self.timeout:g} s", key)
            chunk = response.read1(min(_CHUNK, limit + 1 - size))  # read1: whatever arrived, not a full buffer
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise self._error(f"answered more than the {limit} bytes accepted", key)

    def _connection_message(self, reason: object) -> str:
        if isinstance(reason, TimeoutError):
            return f"no answer within {self.timeout:g} s"
        if isinstance(reason, ConnectionRefusedError):
            return "cannot connect: the connection was refused (is the server running?)"
        if isinstance(reason, socket.gaierror):
            return f"cannot connect: the host name cannot be resolved ({reason.strerror or reason})"
        if isinstance(reason, ssl.SSLError):
            return f"cannot connect: the TLS handshake failed ({getattr(reason, 'reason', None) or reason})"
        if isinstance(reason, ConnectionError):
            return f"the connection was lost ({type(reason).__name__})"
        if isinstance(reason, OSError):
            return f"cannot connect ({reason.strerror or reason})"
        return f"cannot connect ({reason})"

    def _learn_dimensions(self, dimensions: int, key: str | None) -> None:
        with self._lock:
            if self._dimensions == 0:
                self._dimensions = dimensions
            elif dimensions != self._dimensions:
                raise self._error(
                    f"answered {dimensions}-dimensional vectors, but earlier ones of {self.model} had {self._dimensions}",
                    key,
                )

    def _error(self, message: str, key: str | None) -> ProviderError:
        if key:  # servers echo a rejected key back ("Incorrect API key provided: ..."); never repeat it
            message = message.replace(key, "***")
        return ProviderError(self.url, message)


class OpenAIEmbeddings(_RemoteEmbeddings):
    """Any OpenAI-compatible server: ``POST {base_url}/v1/embeddings``.

    A ``base_url`` that already ends in ``/v1`` is not doubled. The key, when ``api_key_env`` is
    set, goes in ``Authorization: Bearer``; a local server (llama.cpp, vLLM, LM Studio) usually
    needs none.
    """

    kind = "openai"
    default_base_url = OPENAI_DEFAULT_BASE_URL
    default_model = OPENAI_DEFAULT_MODEL

    def _endpoint(self, base_url: str) -> str:
        return f"{base_url}/embeddings" if base_url.endswith("/v1") else f"{base_url}/v1/embeddings"

    def _rows(self, answer: object, count: int, key: str | None) -> list[object]:
        data = _field(answer, "data", list, key)
        items: list[tuple[int, object]] = []
        for position, item in enumerate(data):
            if not isinstance(item, dict) or "embedding" not in item:
                raise _Unusable(f"data[{position}] is not an object with an 'embedding'")
            index = item.get("index", position)  # a server that leaves index out answers in order
            if isinstance(index, bool) or not isinstance(index, int):
                raise _Unusable(f"data[{position}].index is not a whole number")
            items.append((index, item["embedding"]))
        if len(items) != count:
            raise _Unusable(f"{_count(len(items), 'vector')} for {_count(count, 'text')}")
        if sorted(index for index, _ in items) != list(range(count)):
            raise _Unusable(f"the indexes are not 0..{count - 1}, each once")
        return [vector for _, vector in sorted(items, key=lambda pair: pair[0])]


class OllamaEmbeddings(_RemoteEmbeddings):
    """Ollama's ``POST {base_url}/api/embed`` (Ollama 0.3.4 and later), local by default."""

    kind = "ollama"
    default_base_url = OLLAMA_DEFAULT_BASE_URL
    default_model = OLLAMA_DEFAULT_MODEL

    def _endpoint(self, base_url: str) -> str:
        return f"{base_url}/api/embed"

    def _rows(self, answer: object, count: int, key: str | None) -> list[object]:
        return list(_field(answer, "embeddings", list, key))


# --- checking an answer ----------------------------------------------------------------------


T = TypeVar("T")


class _Unusable(Exception):
    """Why an answer's content cannot be used; becomes a ProviderError's message."""


def _field(answer: object, name: str, kind: type[T], key: str | None) -> T:
    if not isinstance(answer, dict):
        raise _Unusable(f"expected a JSON object, got {type(answer).__name__}")
    if name not in answer:
        # Some servers say what went wrong with status 200: {"error": "..."} or {"error": {"message": "..."}}
        error = answer.get("error")
        if isinstance(error, dict):
            error = error.get("message")
        detail = (
            f" (the server says: {_excerpt(error.encode(), MAX_ERROR_BODY_CHARS, key)})"
            if isinstance(error, str)
            else ""
        )
        raise _Unusable(f"no '{name}' in the answer{detail}")
    value = answer[name]
    if not isinstance(value, kind):
        raise _Unusable(f"'{name}' is not a {'list' if kind is list else kind.__name__}")
    return value


def _matrix(rows: list[object], count: int) -> Matrix:
    """``rows`` as a float32 matrix, after checking every entry (JSON answers are untrusted)."""
    if len(rows) != count:
        raise _Unusable(f"{_count(len(rows), 'vector')} for {_count(count, 'text')}")
    width = -1
    for position, row in enumerate(rows):
        if not isinstance(row, list):
            raise _Unusable(f"vector {position} is not a list of numbers")
        if not row:
            raise _Unusable(f"vector {position} is empty")
        if width < 0:
            width = len(row)
        elif len(row) != width:
            raise _Unusable(f"vectors of unequal length (vector 0 has {width} numbers, vector {position} {len(row)})")
        # type() rather than isinstance: bool is an int, and numpy would read "1.5" as a number
        if not all(type(value) in (float, int) for value in row):
            raise _Unusable(f"vector {position} contains something that is not a number")
    try:
        wide = np.array(rows, dtype=np.float64)
    except (OverflowError, ValueError):  # an integer too large for a float
        raise _Unusable("a vector contains a number too large to use") from None
    # NaN, infinity, or a finite float64 that float32 cannot hold (casting would warn and give inf)
    bad = ~np.isfinite(wide) | (np.abs(wide) > np.finfo(np.float32).max)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        raise _Unusable(f"vector {row} contains NaN, infinity or a number too large for float32")
    matrix = wide.astype(np.float32)
    return np.ascontiguousarray(matrix)


# --- messages --------------------------------------------------------------------------------


def _http_error_message(error: urllib.error.HTTPError, api_key_env: str | None, key: str | None) -> str:
    try:
        body = error.read(4 * MAX_ERROR_BODY_CHARS)  # a bounded read: error bodies are untrusted too
    except Exception:  # noqa: BLE001 - the status alone is message enough
        body = b""
    finally:
        error.close()
    reason = f" {error.reason}" if isinstance(error.reason, str) and error.reason else ""
    message = f"answered HTTP {error.code}{reason}"
    if 300 <= error.code < 400:
        location = error.headers.get("Location") if error.headers else None
        message += f" (a redirect{f' to {_excerpt(location.encode(), 120, key)}' if location else ''}, not followed: "
        message += "set base_url to the final address)"
    elif error.code in (401, 403):
        message += (
            f" (check the key in ${api_key_env})" if api_key_env else " (the server wants a key: set api_key_env)"
        )
    text = _excerpt(body, MAX_ERROR_BODY_CHARS, key)
    return f"{message}: {text}" if text else message


def _excerpt(body: bytes, limit: int, key: str | None) -> str:
    """At most ``limit`` characters of an untrusted body, whitespace collapsed, the key scrubbed
    first: after the cut a piece of the key would no longer match it."""
    text = body[: limit * 4].decode("utf-8", errors="replace")
    if key:
        text = text.replace(key, "***")
        # The body was cut (by this slice or a bounded read): a key at the end may be cut too.
        for length in range(len(key) - 1, 3, -1):
            if text.endswith(key[:length]):
                text = text[:-length] + "***"
                break
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _config_problem(base_url: str, timeout: float, batch_size: int) -> str | None:
    try:
        parts = urllib.parse.urlsplit(base_url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0..65535
    except ValueError:
        return f"the base URL {base_url!r} cannot be parsed"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"the base URL {base_url!r} is not an http:// or https:// address"
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0:
        return f"the timeout {timeout!r} is not a positive number of seconds"
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        return f"the batch size {batch_size!r} is not a positive whole number"
    return None


__all__ = [
    "MAX_RESPONSE_BYTES",
    "OLLAMA_DEFAULT_BASE_URL",
    "OLLAMA_DEFAULT_MODEL",
    "OPENAI_DEFAULT_BASE_URL",
    "OPENAI_DEFAULT_MODEL",
    "OllamaEmbeddings",
    "OpenAIEmbeddings",
]
