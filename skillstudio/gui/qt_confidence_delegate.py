"""Paints a skill's confidence tier as a coloured badge in the browser's table.

A tier the skill's credited evidence contradicts (``CONTRADICTION_ROLE`` holds the
:class:`~skillstudio.verification.policy.Contradiction`) gets a warning mark beside its badge; the
cell's tooltip says why and what would settle it.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPolygonF
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

CONTRADICTION_ROLE = Qt.ItemDataRole.UserRole + 3

# Colour-blind-safe (Okabe-Ito) hues, dark enough for white text.
BADGE_COLOURS = {
    "tentative": QColor("#9a6b00"),
    "established": QColor("#0060a8"),
    "proven": QColor("#007a55"),
}
UNKNOWN = QColor("#707070")
WARNING = QColor("#c0392b")  # the contradicted mark: a red triangle, unlike any badge
_MARK_GAP = 5


class QtConfidenceDelegate(QStyledItemDelegate):
    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        text = index.data(Qt.ItemDataRole.DisplayRole) or ""
        # The background (selection, alternating rows) as the style draws it, without the text.
        self.initStyleOption(option, index)
        option.text = ""
        style = option.widget.style() if option.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        if not text:
            return
        metrics = option.fontMetrics
        width = metrics.horizontalAdvance(text) + 14
        height = min(option.rect.height() - 4, metrics.height() + 4)
        badge = QRectF(option.rect.x() + 4, option.rect.center().y() - height / 2 + 0.5, width, height)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(BADGE_COLOURS.get(text, UNKNOWN))
        painter.drawRoundedRect(badge, height / 2, height / 2)
        painter.setPen(QColor("white"))
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)
        if index.data(CONTRADICTION_ROLE) is not None:
            _paint_warning(painter, QRectF(badge.right() + _MARK_GAP, badge.top(), height, height))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        hint = super().sizeHint(option, index)
        extra = 18
        if index.data(CONTRADICTION_ROLE) is not None:
            extra += hint.height() + _MARK_GAP
        return QSize(hint.width() + extra, hint.height())


def _paint_warning(painter: QPainter, box: QRectF) -> None:
    """A red triangle with a white "!": the tier stands against its evidence."""
    triangle = QPolygonF([QPointF(box.center().x(), box.top()), box.bottomRight(), box.bottomLeft()])
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(WARNING)
    painter.drawPolygon(triangle)
    painter.setPen(QColor("white"))
    font = painter.font()
    font.setBold(True)
    painter.setFont(font)
    painter.drawText(box.adjusted(0, box.height() * 0.2, 0, 0), Qt.AlignmentFlag.AlignCenter, "!")
