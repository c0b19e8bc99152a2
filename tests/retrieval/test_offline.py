"""The local model and retrieval never need the network: with sockets blocked, they work."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillstudio.library import create_library
from skillstudio.retrieval import LOCAL_MODEL_ID, LocalEmbeddings, Mode, Retriever, embed_library, format_as_context
from skillstudio.store import Actor, SkillRepository

BLOCK = textwrap.dedent(
    """
    import socket

    def _refuse(*args, **kwargs):
        raise OSError("network access is blocked in this test")

    socket.socket.connect = _refuse
    socket.socket.connect_ex = _refuse
    socket.create_connection = _refuse
    socket.getaddrinfo = _refuse
    """
)

SCRIPT = BLOCK + textwrap.dedent(
    """
    import json, socket, sys
    assert "wordllama" not in sys.modules
    from skillstudio.retrieval.providers import LocalEmbeddings
    assert LocalEmbeddings._model is None  # nothing cached: this process loads the model itself
    import numpy as np
    matrix = LocalEmbeddings().embed(["Early anti-air against a Yak rush", "naval landing", "ore trucks"])
    try:
        socket.create_connection(("example.com", 80), timeout=1)
        blocked = False
    except OSError:
        blocked = True
    print(json.dumps({
        "shape": list(matrix.shape), "dtype": str(matrix.dtype), "blocked": blocked,
        "finite": bool(np.isfinite(matrix).all()), "distinct": bool(np.abs(matrix[0] - matrix[1]).max() > 0),
        "loaded": "wordllama" in sys.modules,
    }))
    """
)


def test_local_model_loads_and_embeds_with_sockets_blocked_in_a_fresh_process(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HF_", "TRANSFORMERS_"))}
    # an empty home and cache: the model must come from the installed wheel, not a download cache
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), HF_HOME=str(tmp_path / "hf"))
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT], check=False, capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report == {
        "shape": [3, 256],
        "dtype": "float32",
        "blocked": True,
        "finite": True,
        "distinct": True,
        "loaded": True,
    }


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network access is blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_retrieve_on_the_sample_library_with_sockets_blocked(no_network: None, tmp_path: Path) -> None:
    with pytest.raises(OSError):
        socket.create_connection(("example.com", 80))
    with create_library(tmp_path / "sample.db", sample=True) as database:
        repository = SkillRepository(database, Actor("tester"))
        provider = LocalEmbeddings()
        progress = list(embed_library(repository, provider))
        assert progress[-1].finished and progress[-1].done == 47
        retriever = Retriever(repository, provider)
        for mode in Mode:
            result = retriever.retrieve("enemy Yak aircraft early anti-air", mode=mode, k=5)
            assert result.used is mode and result.hits, mode
            assert "Early AA against Yak rush" in [hit.name for hit in result.hits[:3]], mode
        result = retriever.retrieve("enemy Yak aircraft early anti-air")
        assert result.model_id == LOCAL_MODEL_ID
        context = format_as_context(retriever.load(result))
        assert "Early AA against Yak rush" in context.text and context.size <= 4000


def test_local_vectors_are_wordllamas_own_bit_for_bit() -> None:
    """The unpadded, length-grouped pooling is only faster: it must give WordLlama's vectors."""
    import numpy as np

    from skillstudio.retrieval import LocalEmbeddings

    provider = LocalEmbeddings()
    texts = [
        "Two AA guns between the ore refinery and the war factory.",
        "",
        "x",
        "Mammoth tanks push late " * 40,
        "Ünïcödé and emoji 🚀 and tabs\tand\nnewlines",
        "yak rush",
        "a b",
    ]
    ours = provider.embed(texts)
    theirs = provider._load().wordllama.embed(texts, norm=False)
    assert ours.dtype == np.float32 and ours.shape == (len(texts), 256)
    np.testing.assert_array_equal(ours, theirs)
