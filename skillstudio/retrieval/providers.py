"""Embedding providers, as D057's ``EmbeddingProvider`` has them: ``embed``, ``dimensions``, ``model_id``.

* ``local`` (the default): WordLlama's ``l2_supercat_256``, whose weights and tokenizer ship in
  the ``wordllama`` wheel. It never reaches the network (see :class:`LocalEmbeddings`).
* ``openai`` and ``ollama``: a studio's own embedding server (D047 BYOLLM), in
  :mod:`skillstudio.retrieval.remote`; the only code that may open a socket, and only when the
  user configured it.
* ``none``: no embeddings; retrieval uses FTS5 alone (D057's fallback).

Every provider returns a float32 matrix with one row per text; callers normalise.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]

PROVIDER_KINDS = ("local", "openai", "ollama", "none")
LOCAL_MODEL_ID = "wordllama/l2_supercat_256"
# Longer texts add nothing to a description's embedding but cost time (and a remote provider's
# token limit); queries are cut to this many characters before they are embedded.
MAX_EMBED_CHARS = 8000


def embeddable_text(text: str) -> str:
    """What any provider is given for a text: at most MAX_EMBED_CHARS, with anything UTF-8 cannot
    carry (lone surrogates from undecodable argv bytes) replaced, so odd input is embedded
    instead of making a tokenizer or a server fail."""
    return text[:MAX_EMBED_CHARS].encode("utf-8", "replace").decode("utf-8")


class ProviderError(Exception):
    """An embedding provider failed: unreachable, too slow, or answered something unusable.

    ``where`` names the provider (its URL for a remote one) so the message says what failed.
    """

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


@runtime_checkable
class EmbeddingProvider(Protocol):
    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix: ...


@dataclass(frozen=True)
class ProviderConfig:
    """Which provider to use; read from ``retrieval.yaml`` (:mod:`skillstudio.retrieval.settings`)
    or command-line flags. Holds the *name* of the environment variable with an API key, never
    the key itself, so a config can be shown, logged and saved safely."""

    kind: str = "local"
    model: str | None = None  # remote providers: the model name, which is also the model_id
    base_url: str | None = None
    api_key_env: str | None = None  # openai: the environment variable holding the key
    timeout: float = 10.0  # seconds per request
    batch_size: int = 64  # texts per remote request

    def describe(self) -> str:
        if self.kind == "local":
            return f"local ({LOCAL_MODEL_ID})"
        if self.kind == "none":
            return "none (FTS5 only)"
        return f"{self.kind} {self.model or '?'} at {self.base_url or '?'}"


class LocalEmbeddings:
    """WordLlama ``l2_supercat`` at 256 dimensions, loaded from the installed wheel.

    wordllama 0.4.0.post1 looks for its bundled tokenizer under the user cache and then tries to
    download it; pointing ``cache_dir`` at the package's own folder (where ``tokenizers/`` and
    ``weights/`` ship) with downloads disabled loads both offline, or fails with a clear error.
    The model is loaded once per process and shared (it is read-only, ~70 MB).

    The vectors are WordLlama's own (the mean of the texts' token embeddings, bit for bit, which
    a test checks), computed without its padding: texts are tokenized with the fast batch
    encoder and pooled in groups of equal token count, which nearly doubles the rate on one core.
    """

    _lock = threading.Lock()
    _model: _Model | None = None

    @property
    def model_id(self) -> str:
        return LOCAL_MODEL_ID

    @property
    def dimensions(self) -> int:
        return 256

    def embed(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        model = self._load()
        encodings = model.encode([embeddable_text(text) for text in texts], add_special_tokens=False)
        token_ids = [encoding.ids for encoding in encodings]
        by_length: dict[int, list[int]] = {}
        for row, ids in enumerate(token_ids):
            if ids:  # no tokens: a zero vector, as WordLlama gives
                by_length.setdefault(len(ids), []).append(row)
        highest = model.embedding.shape[0] - 1
        for length, rows in by_length.items():
            ids = np.array([token_ids[row] for row in rows], dtype=np.intp)
            np.clip(ids, 0, highest, out=ids)
            out[rows] = model.embedding[ids].sum(axis=1, dtype=np.float32) / np.float32(length)
        return out

    @classmethod
    def _load(cls) -> _Model:
        with cls._lock:
            if cls._model is None:
                cls._model = _Model(_load_wordllama())
            return cls._model


class _Model:
    """WordLlama's embedding matrix and an unpadded copy of its tokenizer."""

    def __init__(self, wordllama: Any) -> None:
        self.wordllama = wordllama  # kept for comparison in tests
        self.embedding: npt.NDArray[np.float32] = np.ascontiguousarray(wordllama.embedding, dtype=np.float32)
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(wordllama.tokenizer.to_str())
        tokenizer.no_padding()
        tokenizer.no_truncation()
        # tokenizers >= 0.21 can skip computing character offsets, which we never use.
        self.encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)


def _load_wordllama() -> object:
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError as error:  # a broken install; the wheel is a hard dependency
        raise ProviderError("local", f"the wordllama package cannot be imported ({error})") from None
    package = Path(wordllama.__file__).parent
    try:
        return WordLlama.load(config="l2_supercat", dim=256, cache_dir=package, disable_download=True)
    except (FileNotFoundError, OSError, ValueError) as error:
        raise ProviderError("local", f"cannot load the bundled WordLlama model from {package} ({error})") from None


def make_provider(config: ProviderConfig) -> EmbeddingProvider | None:
    """The provider a config names; ``None`` for ``none`` (FTS5 only)."""
    if config.kind == "none":
        return None
    if config.kind == "local":
        return LocalEmbeddings()
    from skillstudio.retrieval import remote  # the only module that opens sockets

    if config.kind == "openai":
        return remote.OpenAIEmbeddings(config)
    if config.kind == "ollama":
        return remote.OllamaEmbeddings(config)
    raise ValueError(f"unknown embedding provider {config.kind!r}; choose one of {', '.join(PROVIDER_KINDS)}")


__all__ = [
    "LOCAL_MODEL_ID",
    "MAX_EMBED_CHARS",
    "PROVIDER_KINDS",
    "EmbeddingProvider",
    "LocalEmbeddings",
    "Matrix",
    "ProviderConfig",
    "ProviderError",
    "embeddable_text",
    "make_provider",
]
