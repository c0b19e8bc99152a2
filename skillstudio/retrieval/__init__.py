"""Retrieval: what the LLM receives from a library (D057's two-tier retrieval, docs/retrieval.md).

Qt-free. Embedding providers and vectors, the retriever with its score breakdown, prompt
context within a budget, seed 002's catalog, and retrieval evaluation.
"""

from skillstudio.retrieval.context import (
    DEFAULT_BUDGET,
    Catalog,
    LeftOut,
    PromptContext,
    catalog,
    format_as_context,
    format_skill,
    skill_content,
)
from skillstudio.retrieval.indexing import EmbedProgress, embed_library, embed_now
from skillstudio.retrieval.providers import (
    LOCAL_MODEL_ID,
    PROVIDER_KINDS,
    EmbeddingProvider,
    LocalEmbeddings,
    ProviderConfig,
    ProviderError,
    make_provider,
)
from skillstudio.retrieval.retriever import Hit, Mode, RetrievalResult, Retriever, ScoreBreakdown, result_to_json

__all__ = [
    "DEFAULT_BUDGET",
    "LOCAL_MODEL_ID",
    "PROVIDER_KINDS",
    "Catalog",
    "EmbedProgress",
    "EmbeddingProvider",
    "Hit",
    "LeftOut",
    "LocalEmbeddings",
    "Mode",
    "PromptContext",
    "ProviderConfig",
    "ProviderError",
    "RetrievalResult",
    "Retriever",
    "ScoreBreakdown",
    "catalog",
    "embed_library",
    "embed_now",
    "format_as_context",
    "format_skill",
    "make_provider",
    "result_to_json",
    "skill_content",
]
