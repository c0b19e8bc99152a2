"""Paints a skill's confidence tier as a coloured badge in the browser's table."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

# Colour-blind-safe (Okabe-Ito) hues, dark enough for white text.
BADGE_COLOURS = {
    "tentative": QColor("#9a6b00"),
    "established": QColor("#0060a8"),
    "proven": QColor("#007a55"),
}
UNKNOWN = QColor("#707070")


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
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        hint = super().sizeHint(option, index)
        return QSize(hint.width() + 18, hint.height())
