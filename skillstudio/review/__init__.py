"""Reviewing skills: the risk linter (rules in ``resources/lint_rules.yaml``) and the review
workflow (queue, decisions, the change since the last approval). Qt-free (docs/review.md)."""

from skillstudio.review.linter import Linter, RuleError, lint_skill, load_rules
from skillstudio.review.workflow import (
    SERVED_STATES,
    PendingChange,
    QueueItem,
    approve,
    change_since_approved,
    findings_for,
    is_served,
    pending_queue,
    reject,
    request_changes,
    undo,
)

__all__ = [
    "SERVED_STATES",
    "Linter",
    "PendingChange",
    "QueueItem",
    "RuleError",
    "approve",
    "change_since_approved",
    "findings_for",
    "is_served",
    "lint_skill",
    "load_rules",
    "pending_queue",
    "reject",
    "request_changes",
    "undo",
]
