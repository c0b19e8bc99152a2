"""The reviewer's windows: the review queue and the audit log (docs/review.md)."""

from skillstudio.gui.review.qt_audit_log import QtAuditLog
from skillstudio.gui.review.qt_review_queue import QtReviewQueue, findings_html

__all__ = ["QtAuditLog", "QtReviewQueue", "findings_html"]
