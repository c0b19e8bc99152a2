"""Embedding a library: the vectors that are missing or stale for one model, in batches.

:func:`embed_library` is a plain generator (as superqt's workers want): it yields an
:class:`EmbedProgress` after every stored batch, so the CLI draws a progress bar, the GUI runs
it on a worker, and either can stop it between batches. Every batch is committed on its own,
and what still needs a vector is recomputed from the library each time, so an interrupted run
resumes simply by running again (seed 001: re-embed only when the description changed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from skillstudio.retrieval.providers import EmbeddingProvider, ProviderError
from skillstudio.retrieval.vectors import encode_vector
from skillstudio.store import SkillRepository
from skillstudio.store.embeddings import description_hash

BATCH = 512  # descriptions per embed call and per transaction


@dataclass(frozen=True)
class EmbedProgress:
    model_id: str
    done: int  # vectors stored so far in this run
    total: int  # vectors this run set out to compute
    skipped: tuple[tuple[str, str], ...] = ()  # (skill id, why) the provider gave no usable vector

    @property
    def finished(self) -> bool:
        return self.done + len(self.skipped) >= self.total


def embed_library(
    repository: SkillRepository,
    provider: EmbeddingProvider,
    *,
    everything: bool = False,
    ids: Sequence[str] | None = None,
    batch: int = BATCH,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[EmbedProgress]:
    """Embed what lacks a current vector for ``provider`` (all skills with ``everything``; only
    ``ids`` if given). Raises ProviderError when the provider fails; the batches stored before
    stay stored."""
    store = repository.embeddings
    pending = store.pending(provider.model_id, everything=everything, ids=ids)
    total, done = len(pending), 0
    skipped: list[tuple[str, str]] = []
    yield EmbedProgress(provider.model_id, 0, total)
    for start in range(0, total, max(1, batch)):
        if cancelled():
            return
        chunk = pending[start : start + batch]
        # One embed call per batch for both texts a skill may need: its description (D057's
        # vector) and its label (name and tags).
        texts = [item.description for item in chunk if item.needs_description]
        texts += [item.label for item in chunk if item.needs_label]
        vectors = provider.embed(texts)
        if vectors.shape[0] != len(texts):
            raise ProviderError(provider.model_id, f"answered {vectors.shape[0]} vectors for {len(texts)} texts")
        rows = iter(vectors)
        described = [(item, next(rows)) for item in chunk if item.needs_description]
        labelled = [(item, next(rows)) for item in chunk if item.needs_label]
        unusable = {item.skill_id for item, vector in [*described, *labelled] if not _usable(vector)}
        skipped.extend(
            (skill_id, "the provider answered an unusable vector (NaN, infinity or zeros)")
            for skill_id in sorted(unusable)
        )
        items = [
            (item.skill_id, encode_vector(vector), description_hash(item.description))
            for item, vector in described
            if item.skill_id not in unusable
        ]
        labels = [
            (item.skill_id, encode_vector(vector), description_hash(item.label))
            for item, vector in labelled
            if item.skill_id not in unusable
        ]
        done += store.put_many(provider.model_id, items, labels)
        yield EmbedProgress(provider.model_id, done, total, tuple(skipped))


def _usable(vector: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(vector)) and np.any(vector))


def embed_now(repository: SkillRepository, provider: EmbeddingProvider | None, ids: Sequence[str]) -> str | None:
    """Vectors for just-written skills (a save, an import, an agent's create), in one go.

    Returns a message when it could not (the write itself stands: the skill is only missing a
    vector, which ``skillstudio embed`` or the GUI's Embed action will add later).
    """
    if provider is None or not ids:
        return None
    try:
        for _progress in embed_library(repository, provider, ids=ids):
            pass
    except ProviderError as error:
        return f"no vectors were computed ({error}); run `skillstudio embed` when the provider is back"
    return None


__all__ = ["BATCH", "EmbedProgress", "embed_library", "embed_now"]
