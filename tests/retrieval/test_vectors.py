"""Vectors and the in-memory index: the BLOB format, malformed rows, other models, staying
current after any writer's change, freshness status and (resumable) embedding runs."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace

import numpy as np
import pytest

from skillstudio.model import ReviewState
from skillstudio.retrieval import Mode, Retriever, embed_library
from skillstudio.retrieval.vectors import Similarities, VectorIndex, decode_vector, encode_vector, normalise
from skillstudio.store import Actor, SkillRepository
from skillstudio.store import embeddings as embeddings_module
from skillstudio.store.embeddings import description_hash, label_text
from tests.factories import ai_skill
from tests.outside import QmarkConnection, engine_writes

MODEL = "test/axes"


class AxisProvider:
    """A deterministic stand-in for an external model: one axis per topic word, counted."""

    AXES = ("air", "armour", "naval", "economy")
    model_id = MODEL
    dimensions = 4

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            words = re.findall(r"\w+", text.lower())
            rows.append([words.count(axis) + 0.01 for axis in self.AXES])
        return np.array(rows, dtype=np.float32).reshape(len(texts), 4)

    def texts(self) -> list[str]:
        return [text for call in self.calls for text in call]


def axis(*values: float) -> bytes:
    return encode_vector(np.array(values, dtype=np.float32))


def run(repository: SkillRepository, provider: AxisProvider, **options: object) -> list[object]:
    return list(embed_library(repository, provider, **options))


def engine(repository: SkillRepository) -> AbstractContextManager[QmarkConnection]:
    """Another connection to the library, as an engine writing D057's tables would have."""
    return engine_writes(repository.database)


def make_skills(repository: SkillRepository, descriptions: dict[str, str]) -> dict[str, str]:
    """Skills named ``Plan <key>`` (no topic word in name or tags), by key -> id."""
    skills = {key: ai_skill(name=f"Plan {key}", description=text, tags=()) for key, text in descriptions.items()}
    repository.create_many(list(skills.values()))
    return {key: skill.id for key, skill in skills.items()}


# --- the BLOB format --------------------------------------------------------------------------


def test_encode_decode_round_trip() -> None:
    rng = np.random.default_rng(7)
    for dimensions in (1, 3, 256, 1024):
        vector = rng.normal(size=dimensions).astype(np.float32)
        blob = encode_vector(vector)
        assert len(blob) == 4 * dimensions
        decoded = decode_vector(blob, dimensions)
        assert not isinstance(decoded, str)
        assert decoded.dtype == np.float32
        np.testing.assert_array_equal(decoded, vector)
    # D057's serialization: f32 little-endian, whatever the input type
    assert encode_vector([1.0, -2.5]) == struct.pack("<2f", 1.0, -2.5)
    assert encode_vector(np.array([1.0, -2.5], dtype=np.float64)) == struct.pack("<2f", 1.0, -2.5)


@pytest.mark.parametrize(
    ("blob", "dimensions", "words"),
    [
        (b"\x00\x00\x80?\x00\x00", 4, "whole number"),  # 6 bytes
        (b"abc", 1, "whole number"),
        (b"", 4, "0 dimensions"),
        (struct.pack("<8f", *range(1, 9)), 4, "8 dimensions, the model has 4"),
        (struct.pack("<2f", 1.0, 2.0), 4, "2 dimensions"),
        (struct.pack("<4f", 1.0, float("nan"), 0.0, 0.0), 4, "NaN"),
        (struct.pack("<4f", 1.0, float("inf"), 0.0, 0.0), 4, "infinity"),
        (struct.pack("<4f", 1.0, float("-inf"), 0.0, 0.0), 4, "infinity"),
        (struct.pack("<4f", 0.0, 0.0, -0.0, 0.0), 4, "zeros"),
    ],
)
def test_decode_vector_says_why_a_blob_is_unusable(blob: bytes, dimensions: int, words: str) -> None:
    reason = decode_vector(blob, dimensions)
    assert isinstance(reason, str)
    assert words in reason


def test_normalise_and_top() -> None:
    matrix = np.array([[3, 4], [0, 0], [0, -2]], dtype=np.float32)
    unit = normalise(matrix)
    np.testing.assert_allclose(unit, [[0.6, 0.8], [0, 0], [0, -1]], atol=1e-6)
    # Rows 1..4 of an index's id list ("x" is filtered out).
    all_ids = ["x", "c", "a", "b", "d"]
    row_of = {skill_id: row for row, skill_id in enumerate(all_ids)}
    cosines = np.array([0.5, 0.9, 0.5, 0.1], dtype=np.float32)
    similarities = Similarities(np.arange(1, 5), cosines, all_ids, row_of)
    assert similarities.ids == ["c", "a", "b", "d"] and len(similarities) == 4
    assert [sid for sid, _ in similarities.top(3)] == ["a", "b", "c"]  # ties by id
    assert [sid for sid, _ in similarities.top(99)] == ["a", "b", "c", "d"]
    empty = Similarities(np.zeros(0, dtype=np.intp), np.zeros(0, np.float32), all_ids, row_of)
    assert similarities.top(0) == [] and empty.top(5) == []
    # any skill's cosine by id: not one filtered out ("x"), without a vector ("y") or added later ("z")
    assert similarities.of(["d", "x", "a", "y", "z"]) == pytest.approx({"d": 0.1, "a": 0.9})
    assert empty.of(["a"]) == {}
    later = Similarities(np.array([0, 2]), np.array([0.3, 0.7], dtype=np.float32), all_ids, {**row_of, "z": 5})
    assert later.of(["x", "a", "c", "z"]) == pytest.approx({"x": 0.3, "a": 0.7})


# --- malformed and foreign vectors ------------------------------------------------------------


def test_malformed_engine_blobs_are_skipped_and_reported(repository: SkillRepository) -> None:
    ids = make_skills(repository, {k: f"Skill {k} for the front." for k in "abcdefg"})
    repository.embeddings.put_many(
        MODEL,
        [(ids["a"], axis(1, 0, 0, 0), "x"), (ids["b"], axis(0.7, 0.7, 0, 0), "x"), (ids["c"], axis(0, 0, 1, 0), "x")],
    )
    with engine(repository) as connection:
        bad = {
            "d": b"\x01\x02\x03",  # not f32 values
            "e": struct.pack("<4f", 1.0, float("nan"), 0.0, 0.0),
            "f": bytes(16),  # zeros
            "g": struct.pack("<5f", 1, 0, 0, 0, 0),  # the wrong dimension
        }
        for key, blob in bad.items():
            connection.execute(
                "INSERT INTO skill_embeddings(skill_id, embedding, model_id) VALUES (?, ?, ?)", (ids[key], blob, MODEL)
            )
    retriever = Retriever(repository, AxisProvider())
    result = retriever.retrieve("air", mode=Mode.SEMANTIC, k=10)
    assert result.used is Mode.SEMANTIC
    assert set(result.invalid_vectors) == {ids[key] for key in bad}
    assert "whole number" in result.invalid_vectors[ids["d"]]
    assert "NaN" in result.invalid_vectors[ids["e"]]
    assert "zeros" in result.invalid_vectors[ids["f"]]
    assert "5 dimensions" in result.invalid_vectors[ids["g"]]
    index = retriever.index()
    assert index is not None and index.invalid == result.invalid_vectors and len(index) == 3
    assert any("malformed" in note for note in result.notes)
    # the good vectors still work: pure air first, then half air; naval is below typical
    assert result.ids == [ids["a"], ids["b"]]
    # hybrid mode too: the malformed ones are found by words only, with no semantic relevance
    hybrid = retriever.retrieve("skill front air", mode=Mode.HYBRID, k=10)
    for key in bad:
        hit = next(h for h in hybrid.hits if h.skill_id == ids[key])
        assert hit.score.cosine is None and hit.score.semantic == 0.0


def test_a_blob_broken_after_loading_is_skipped_then_repaired(repository: SkillRepository) -> None:
    ids = make_skills(repository, {k: f"Skill {k}." for k in "abc"})
    repository.embeddings.put_many(
        MODEL,
        [(ids["a"], axis(1, 0, 0, 0), "x"), (ids["b"], axis(0.9, 0.1, 0, 0), "x"), (ids["c"], axis(0, 0, 1, 0), "x")],
    )
    retriever = Retriever(repository, AxisProvider())
    assert retriever.retrieve("air", mode=Mode.SEMANTIC).ids[0] == ids["a"]
    with engine(repository) as connection:
        connection.execute("UPDATE skill_embeddings SET embedding = ? WHERE skill_id = ?", (bytes(16), ids["a"]))
    result = retriever.retrieve("air", mode=Mode.SEMANTIC)
    assert ids["a"] not in result.ids and result.ids[0] == ids["b"]
    assert set(result.invalid_vectors) == {ids["a"]}
    with engine(repository) as connection:
        connection.execute("UPDATE skill_embeddings SET embedding = ? WHERE skill_id = ?", (axis(1, 0, 0, 0), ids["a"]))
    result = retriever.retrieve("air", mode=Mode.SEMANTIC)
    assert result.ids[0] == ids["a"] and result.invalid_vectors == {}


def test_vectors_of_another_model_are_never_compared(repository: SkillRepository) -> None:
    ids = make_skills(
        repository, {"mine": "Skill mine.", "theirs": "Skill theirs.", "wide": "Skill wide.", "c": "Skill c."}
    )
    repository.embeddings.put_many(MODEL, [(ids["mine"], axis(1, 0.2, 0, 0), "x"), (ids["c"], axis(0, 0, 1, 0), "x")])
    with engine(repository) as connection:
        # exactly the query's direction, but another model's space: meaningless here
        connection.execute(
            "INSERT INTO skill_embeddings(skill_id, embedding, model_id) VALUES (?, ?, 'other/model')",
            (ids["theirs"], axis(1.01, 0.01, 0.01, 0.01)),
        )
        connection.execute(
            "INSERT INTO skill_embeddings(skill_id, embedding, model_id) VALUES (?, ?, 'other/wide')",
            (ids["wide"], encode_vector(np.ones(768))),
        )
    retriever = Retriever(repository, AxisProvider())
    semantic = retriever.retrieve("air", mode=Mode.SEMANTIC, k=10)
    assert semantic.ids == [ids["mine"]]
    assert semantic.invalid_vectors == {}  # not malformed: simply not this model's
    hybrid = retriever.retrieve("skill theirs air", mode=Mode.HYBRID, k=10)
    theirs = next(h for h in hybrid.hits if h.skill_id == ids["theirs"])  # found by its words
    assert theirs.score.cosine is None and theirs.score.semantic == 0.0
    status = repository.embeddings.status(MODEL)
    assert status.missing == 2 and status.other_models == {"other/model": 1, "other/wide": 1}


# --- staying current --------------------------------------------------------------------------


@pytest.fixture
def count_full_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = VectorIndex._full_load

    def counting(self: VectorIndex) -> None:
        calls.append(1)
        original(self)

    monkeypatch.setattr(VectorIndex, "_full_load", counting)
    return calls


def test_index_follows_every_writer_without_reloading(repository: SkillRepository, count_full_loads: list[int]) -> None:
    ids = make_skills(
        repository,
        {"a": "air armour", "b": "armour", "c": "naval", "d": "economy", "e": "naval economy"},
    )
    provider = AxisProvider()
    run(repository, provider, ids=[ids[k] for k in "abce"])  # d has no vector yet
    retriever = Retriever(repository, provider)

    def top(**filters: object) -> str:
        return retriever.retrieve("air", mode=Mode.SEMANTIC, **filters).ids[0]

    assert top() == ids["a"]
    assert len(count_full_loads) == 1

    # an edited description, re-embedded: only that description is computed again
    skill_b = repository.get(ids["b"])
    repository.update(replace(skill_b, description="air"))
    assert top() == ids["a"]  # the stored vector is still the old description's
    provider.calls.clear()
    run(repository, provider, ids=[ids["b"], ids["c"]])  # (d stays without a vector for now)
    assert provider.texts() == ["air"]
    assert top() == ids["b"]

    # trashed: gone at once
    repository.trash.delete(ids["b"])
    assert ids["b"] not in retriever.retrieve("air", mode=Mode.SEMANTIC, k=10).ids
    assert top() == ids["a"]

    # rejected by review: gone at once
    repository.reviews.review(ids["a"], ReviewState.REJECTED, comment="no", version=repository.get(ids["a"]).version)
    assert ids["a"] not in retriever.retrieve("air", mode=Mode.SEMANTIC, k=10).ids

    # another process writes a vector into the same file
    script = (
        "import struct, sys\n"
        "from sqlalchemy import create_engine, text\n"
        "with create_engine(sys.argv[1]).begin() as c:\n"
        "    c.execute(text('INSERT INTO skill_embeddings(skill_id, embedding, model_id) VALUES (:i, :e, :m)'),"
        " {'i': sys.argv[2], 'e': struct.pack('<4f', 1, 0, 0, 0), 'm': sys.argv[3]})\n"
    )
    url = repository.database.engine.url.render_as_string(hide_password=False)
    subprocess.run([sys.executable, "-c", script, url, ids["d"], MODEL], check=True)
    assert top() == ids["d"]

    # another connection moves it to another module: the filter follows
    with engine(repository) as connection:
        connection.execute("UPDATE skills SET game_module = 'td' WHERE id = ?", (ids["d"],))
    assert ids["d"] not in retriever.retrieve("air", mode=Mode.SEMANTIC, game_module="ra1", k=10).ids
    index = retriever.index()
    assert index is not None
    assert index.similarities(np.array([1, 0, 0, 0], np.float32), game_module="td").ids == [ids["d"]]

    # restored from the trash, with its vector
    repository.trash.restore(ids["b"])
    assert top(game_module="ra1") == ids["b"]

    assert len(count_full_loads) == 1  # all of the above by replaying the change log


def test_index_reloads_when_the_change_log_was_pruned(
    repository: SkillRepository, count_full_loads: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embeddings_module, "CHANGE_LOG_KEEP", 1)
    ids = make_skills(repository, {"a": "air", "b": "armour", "c": "naval", "d": "economy"})
    provider = AxisProvider()
    run(repository, provider, ids=[ids[k] for k in "abc"])
    retriever = Retriever(repository, provider)
    index = retriever.index()
    assert index is not None
    assert retriever.retrieve("air", mode=Mode.SEMANTIC).ids[0] == ids["a"]
    assert len(count_full_loads) == 1
    cursor = index._cursor

    repository.trash.delete(ids["a"])
    with engine(repository) as connection:
        connection.execute(
            "INSERT INTO skill_embeddings(skill_id, embedding, model_id) VALUES (?, ?, ?)",
            (ids["d"], axis(2, 0, 0, 0.1), MODEL),
        )
    repository.update(replace(repository.get(ids["c"]), description="air naval"))
    run(repository, provider)  # stores vectors, which prunes the log to its last entry
    with engine(repository) as connection:
        lowest = connection.execute("SELECT MIN(seq) FROM studio_retrieval_changes").fetchone()[0]
    assert lowest > cursor + 1  # the log no longer reaches back to the index

    result = retriever.retrieve("air", mode=Mode.SEMANTIC, k=10)
    assert len(count_full_loads) == 2
    assert ids["a"] not in result.ids
    assert result.ids[0] == ids["d"]
    assert ids["c"] in result.ids  # its new vector leans towards air
    assert ids["b"] not in result.ids


# --- freshness ----------------------------------------------------------------------------------


def test_status_counts_missing_stale_and_current(repository: SkillRepository) -> None:
    ids = make_skills(repository, {k: f"{k} air" for k in "abcdefg"})
    provider = AxisProvider()
    run(repository, provider, ids=[ids[k] for k in "abc"])
    status = repository.embeddings.status(MODEL)
    assert (status.total, status.current, status.stale, status.missing) == (7, 3, 0, 4)
    assert status.lacking == 4 and status.other_models == {}
    assert Retriever(repository, provider).embedding_status() == status

    # an engine changes a description by raw SQL: the trigger makes the vector stale
    with engine(repository) as connection:
        connection.execute("UPDATE skills SET description = 'armour now' WHERE id = ?", (ids["a"],))
    status = repository.embeddings.status(MODEL)
    assert (status.current, status.stale, status.missing) == (2, 1, 4)
    info = repository.embeddings.info(ids["a"])
    assert info is not None and info.current is False and info.dimensions == 4
    pending = {item.skill_id: item for item in repository.embeddings.pending(MODEL)}
    assert set(pending) == {ids[k] for k in "adefg"}
    assert pending[ids["a"]].needs_description and not pending[ids["a"]].needs_label
    assert pending[ids["a"]].description == "armour now"
    # the same text written again is no change
    with engine(repository) as connection:
        connection.execute("UPDATE skills SET description = description WHERE id = ?", (ids["b"],))
    assert repository.embeddings.status(MODEL).stale == 1

    # another model's vector is still missing for this one
    with engine(repository) as connection:
        connection.execute(
            "INSERT INTO skill_embeddings(skill_id, embedding, model_id) VALUES (?, ?, 'other/model')",
            (ids["d"], axis(1, 1, 1, 1)),
        )
    status = repository.embeddings.status(MODEL)
    assert status.missing == 4 and status.other_models == {"other/model": 1}

    run(repository, provider)
    status = repository.embeddings.status(MODEL)
    assert (status.total, status.current, status.stale, status.missing) == (7, 7, 0, 0)


def test_an_engine_written_vector_without_meta_is_trusted(repository: SkillRepository) -> None:
    ids = make_skills(repository, {"a": "air", "b": "armour"})
    engine_blob = axis(0.5, 0.5, 0.5, 0.5)  # not what AxisProvider would compute for "air"
    with engine(repository) as connection:
        connection.execute(
            "INSERT INTO skill_embeddings(skill_id, embedding, model_id) VALUES (?, ?, ?)",
            (ids["a"], engine_blob, MODEL),
        )
    pending = {item.skill_id: item for item in repository.embeddings.pending(MODEL)}
    assert not pending[ids["a"]].needs_description  # its description vector counts as current
    provider = AxisProvider()
    run(repository, provider)
    assert "air" not in provider.texts()  # the engine's vector was not recomputed...
    assert repository.embeddings.get(ids["a"]) == (engine_blob, MODEL)  # ...nor overwritten
    info = repository.embeddings.info(ids["a"])
    assert info is not None and info.current and info.embedded_at is None
    status = repository.embeddings.status(MODEL)
    assert (status.current, status.stale, status.missing) == (2, 0, 0)
    # a description change by any writer makes even an engine's vector stale
    with engine(repository) as connection:
        connection.execute("UPDATE skills SET description = 'naval' WHERE id = ?", (ids["a"],))
    assert repository.embeddings.status(MODEL).stale == 1


# --- storing vectors --------------------------------------------------------------------------


def test_put_many_skips_skills_deleted_meanwhile(repository: SkillRepository) -> None:
    ids = make_skills(repository, {k: f"{k} air" for k in "abcd"})
    victim = ids["b"]
    other_writer = repository.as_actor(Actor("someone-else"))

    class DeletingProvider(AxisProvider):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            if not self.calls:
                other_writer.trash.delete(victim, message="deleted while embedding")
            return super().embed(texts)

    progress = run(repository, DeletingProvider())
    assert progress[-1].total == 4 and progress[-1].done == 3
    with engine(repository) as connection:
        assert connection.execute("SELECT COUNT(*) FROM skill_embeddings WHERE skill_id = ?", (victim,)).fetchone() == (
            0,
        )
        assert connection.execute(
            "SELECT COUNT(*) FROM studio_label_embeddings WHERE skill_id = ?", (victim,)
        ).fetchone() == (0,)
        assert connection.execute("SELECT COUNT(*) FROM skill_embeddings").fetchone() == (3,)
        assert connection.execute("SELECT embedding FROM studio_trash WHERE skill_id = ?", (victim,)).fetchone() == (
            None,
        )
    # directly: only present skills are stored and counted
    stored = repository.embeddings.put_many(
        MODEL,
        [(ids["a"], axis(1, 0, 0, 0), "h"), (victim, axis(1, 0, 0, 0), "h"), ("no-such-skill", axis(1, 0, 0, 0), "h")],
    )
    assert stored == 1


def test_embedding_is_resumable_and_never_duplicates(repository: SkillRepository) -> None:
    ids = make_skills(repository, {k: f"{k} air" for k in "abcdefg"})
    provider = AxisProvider()
    checks = []

    def cancel_after_first_batch() -> bool:
        checks.append(1)
        return len(checks) > 1

    first = run(repository, provider, batch=3, cancelled=cancel_after_first_batch)
    assert [p.done for p in first] == [0, 3]
    assert not first[-1].finished
    assert repository.embeddings.status(MODEL).current == 3
    first_texts = set(provider.texts())

    provider.calls.clear()
    second = run(repository, provider, batch=3)
    assert second[0].total == 4 and second[-1].done == 4 and second[-1].finished
    assert not first_texts & set(provider.texts())  # nothing computed twice
    assert len(provider.texts()) == 8  # 4 descriptions and 4 labels
    with engine(repository) as connection:
        assert connection.execute("SELECT COUNT(*), COUNT(DISTINCT skill_id) FROM skill_embeddings").fetchone() == (
            7,
            7,
        )
        assert connection.execute("SELECT COUNT(*) FROM studio_label_embeddings").fetchone() == (7,)
    assert repository.embeddings.status(MODEL).current == 7

    provider.calls.clear()
    assert run(repository, provider)[-1].total == 0
    assert provider.texts() == []

    # only what changed is computed again: a description, then a name (the label)
    skill = repository.get(ids["c"])
    repository.update(replace(skill, description="c naval"))
    run(repository, provider)
    assert provider.texts() == ["c naval"]
    provider.calls.clear()
    skill = repository.get(ids["d"])
    stored = repository.update(replace(skill, name="Plan delta"))
    run(repository, provider)
    assert provider.texts() == [label_text("Plan delta", json.dumps(list(stored.tags)))]
    info = repository.embeddings.info(ids["c"])
    assert info is not None and info.current
    assert repository.embeddings.status(MODEL).current == 7


def test_storing_vectors_writes_no_revision_and_one_audit_entry_per_batch(repository: SkillRepository) -> None:
    ids = make_skills(repository, {k: f"{k} air" for k in "abcdefg"})
    revisions = {skill_id: len(repository.history.revisions(skill_id)) for skill_id in ids.values()}
    versions = {skill_id: repository.get(skill_id).version for skill_id in ids.values()}
    run(repository, AxisProvider(), batch=3)
    entries = repository.history.audit(action="skill.embed")
    assert len(entries) == 3
    assert sorted(entry.details["count"] for entry in entries) == [1, 3, 3]
    assert all(entry.details["model_id"] == MODEL and entry.revision is None for entry in entries)
    assert {skill_id: len(repository.history.revisions(skill_id)) for skill_id in ids.values()} == revisions
    assert {skill_id: repository.get(skill_id).version for skill_id in ids.values()} == versions
    # a single vector through the repository: one entry, naming the skill, still no revision
    repository.embeddings.put(ids["a"], axis(1, 0, 0, 0), MODEL)
    entries = repository.history.audit(action="skill.embed")
    assert len(entries) == 4 and entries[0].skill_id == ids["a"]
    assert len(repository.history.revisions(ids["a"])) == revisions[ids["a"]]
    info = repository.embeddings.info(ids["a"])
    assert info is not None and info.current
    assert description_hash("a air") == description_hash(repository.get(ids["a"]).description)
