"""The dashboard's plots (pyqtgraph): created once, updated in place with ``setData``/``setOpts``.

Each :class:`QtPlotPanel` is a titled plot with a read-out line (the exact values of the point
under the mouse), and PNG and CSV export of what it shows. Data comes as the plain dataclasses
of :mod:`skillstudio.verification.dashboard_data`; nothing here reads the library.

They live in a dock a third of the window high, so every pixel of height counts: legends sit
beside the plot (one entry a line, never over the data), axis titles are short, threshold lines
are named in the legend rather than over the bands, the left axis is as wide as its widest tick
label and the right margin as wide as half the bottom axis' widest one (nothing cut: "5000",
not "500"). Past a handful of series, a legend names the ones drawn and sums up the others.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from skillstudio.gui.workers import show_error
from skillstudio.verification.dashboard_data import (
    TIERS,
    Histogram,
    OpponentRate,
    Others,
    SkillSeries,
    TierGroup,
    write_csv,
)

MAX_SERIES = 5  # skills drawn at once; the legend sums up the others
LEGEND_CHARS = 24  # names in legends are shortened to this (the read-out has them in full)
TICK_POINTS = 8.0  # axis and legend text: small, as in a chart
MIN_PLOT_HEIGHT = 110
HINT = "Point at a value to read it"
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
TIER_COLOURS = {"tentative": "#c9c9c9", "established": "#6baed6", "proven": "#2171b5"}
THRESHOLD_COLOURS = {"candidate": "#999999", "established": "#6baed6", "proven": "#2171b5"}
FLAG = "⚠ "  # before the name of a skill whose tier its credited evidence contradicts
_DOMAIN_SHORT = {"ai_strategy": "AI", "content_generation": "Content"}
_log = logging.getLogger(__name__)

pg.setConfigOptions(background="w", foreground="#333333")  # antialiasing only where it is cheap (per item)


def _short(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pct(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value * 100:.1f}%"


def _threshold_pen(name: str) -> Any:
    return pg.mkPen(THRESHOLD_COLOURS[name], width=1, style=Qt.PenStyle.DashLine)


def others_text(others: Others) -> str:
    """The legend line for the selected skills not drawn: how many, and their pooled figures."""
    figures = f": {others.rate:.0%} of {others.games:,} games" if others.rate is not None else ""
    return f"+{others.skills:,} more{figures}"


class QtPlotPanel(QWidget):
    """A titled pyqtgraph plot with hover read-out and PNG/CSV export; ``legend``: one beside
    the plot (one entry a line), or none (the title says what the marks are)."""

    csv_headers: tuple[str, ...] = ()
    export_name = "plot"

    def __init__(self, title: str, parent: QWidget | None = None, *, legend: bool = True) -> None:
        super().__init__(parent)
        self.plot = pg.GraphicsLayoutWidget(self)
        self.plot.setMinimumHeight(MIN_PLOT_HEIGHT)
        self.plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.plot.ci.layout.setContentsMargins(2, 2, 2, 2)
        self.plot.ci.layout.setSpacing(0)
        self.item = self.plot.addPlot(row=0, col=0)
        self.item.setMenuEnabled(False)
        self.item.showGrid(x=False, y=True, alpha=0.25)
        self.item.setTitle(title, size="9pt")
        self.tick_font = QFont(self.font())
        self.tick_font.setPointSizeF(TICK_POINTS)
        for side in ("left", "bottom", "right"):
            axis = self.item.getAxis(side)
            axis.enableAutoSIPrefix(False)
            axis.setStyle(tickFont=self.tick_font)
        # A legend beside the plot, never over the data; at the top, its entries together
        # (stretched to the plot's height they would spread out).
        self.legend = pg.LegendItem(labelTextSize=f"{TICK_POINTS:g}pt", frame=False, verSpacing=-8)
        if legend:
            self.plot.addItem(self.legend, row=0, col=1)
            self.legend.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
            self.plot.ci.layout.setAlignment(self.legend, Qt.AlignmentFlag.AlignTop)
        self.readout = QLabel(HINT, self)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setStyleSheet("color: #555;")
        self.readout.setMinimumWidth(40)  # a long read-out is cut, it never widens the dock
        self.png_button = QPushButton("PNG…", self)
        self.csv_button = QPushButton("CSV…", self)
        for button, tip in (
            (self.png_button, "Save this plot as a PNG image"),
            (self.csv_button, "Save this plot's data as CSV"),
        ):
            button.setToolTip(tip)
            button.setFlat(True)
            button.setMaximumWidth(56)
        self.png_button.clicked.connect(lambda: self._ask_export("png"))
        self.csv_button.clicked.connect(lambda: self._ask_export("csv"))
        bottom = QHBoxLayout()
        bottom.setContentsMargins(4, 0, 4, 0)
        bottom.addWidget(self.readout, 1)
        bottom.addWidget(self.png_button)
        bottom.addWidget(self.csv_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.plot, 1)
        layout.addLayout(bottom)
        self._hover_points: Sequence[tuple[float, float, str]] = []  # (x, y in view coordinates, text)
        self._rows: Sequence[Sequence[Any]] = []
        self._categories: dict[str, list[str]] = {}  # the labels of axes with named ticks
        self._right_room = 2  # the layout's right margin: half the bottom axis' widest label
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        # The view's range settles when the plot is laid out: fit the axes to it then.
        self.item.getViewBox().sigRangeChanged.connect(lambda *_args: self.fit_axes())

    @property
    def legend_names(self) -> list[str]:
        """The legend's entries as shown."""
        return [label.text for _sample, label in self.legend.items]

    def set_label(self, side: str, text: str) -> None:
        """A short axis title (a long one would be cut on a plot a third of a window high)."""
        self.item.setLabel(side, text, **{"font-size": f"{TICK_POINTS:g}pt", "color": "#555"})

    # --- axes that fit their labels -------------------------------------------------------------------

    def set_ticks(self, side: str, ticks: Sequence[tuple[float, str]]) -> None:
        """These ticks, and no others, on the ``side`` axis."""
        self._categories[side] = [label for _value, label in ticks]
        self.item.getAxis(side).setTicks([list(ticks)])
        self.fit_axes()

    def set_categories(self, side: str, labels: Sequence[str]) -> None:
        """Named ticks at 0, 1, 2, ... on the ``side`` axis."""
        self.set_ticks(side, list(enumerate(labels)))

    def tick_labels(self, side: str) -> list[str]:
        """The labels the ``side`` axis shows for the current range."""
        if side in self._categories:
            return self._categories[side]
        axis = self.item.getAxis(side)
        view = self.item.getViewBox().viewRange()
        low, high = view[1] if side in ("left", "right") else view[0]
        length = axis.height() if side in ("left", "right") else axis.width()
        labels: list[str] = []
        for spacing, values in axis.tickValues(low, high, max(length, 100.0)):
            labels.extend(axis.tickStrings(values, axis.scale, spacing))
        return labels

    def text_width(self, text: str) -> float:
        return QFontMetricsF(self.tick_font).horizontalAdvance(text)

    def fit_axes(self) -> None:
        """The left axis as wide as its widest label; room on the right for half the bottom axis'
        widest label (centred on the last tick, it would be cut at the edge)."""
        left = self.item.getAxis("left")
        if left.isVisible():
            widest = max((self.text_width(label) for label in self.tick_labels("left")), default=0.0)
            title = left.label.boundingRect().height() if left.label.isVisible() else 0.0
            left.setWidth(
                math.ceil(widest + left.style["tickTextOffset"][0] + max(0, left.style["tickLength"]) + title + 4)
            )
        half = max((self.text_width(label) for label in self.tick_labels("bottom")), default=0.0) / 2
        room = math.ceil(half + 4)
        if room != self._right_room:
            self._right_room = room
            self.plot.ci.layout.setContentsMargins(2, 2, room, 2)
            self.plot.ci.layout.setHorizontalSpacing(room)  # between the plot and a legend beside it

    # --- what subclasses provide --------------------------------------------------------------------

    def set_hover_points(self, points: Sequence[tuple[float, float, str]]) -> None:
        self._hover_points = points
        self.readout.setText(HINT if points else "")

    def set_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self._rows = rows

    def rows(self) -> list[Sequence[Any]]:
        return list(self._rows)

    # --- hover --------------------------------------------------------------------------------------

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        view = self.item.getViewBox()
        if not self._hover_points or not view.sceneBoundingRect().contains(scene_pos):
            return
        best, best_distance = None, 30.0  # pixels
        for x, y, text in self._hover_points:
            point = view.mapViewToScene(QPointF(x, y))
            distance = math.hypot(point.x() - scene_pos.x(), point.y() - scene_pos.y())
            if distance < best_distance:
                best, best_distance = text, distance
        if best is not None:
            self.readout.setText(best)

    def readout_at(self, x: float, y: float) -> str | None:
        """The read-out the mouse at view position (x, y) would show (tests)."""
        self._on_mouse_moved(self.item.getViewBox().mapViewToScene(QPointF(x, y)))
        return self.readout.text()

    # --- export -------------------------------------------------------------------------------------

    def _ask_export(self, kind: str) -> None:
        filters = "PNG images (*.png)" if kind == "png" else "CSV files (*.csv)"
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", f"{self.export_name}.{kind}", filters)
        if not path:
            return
        try:
            self.export_png(path) if kind == "png" else self.export_csv(path)
        except OSError as error:  # a folder one cannot write to, a full disk
            show_error(self, f"{kind.upper()} not exported", error)

    def export_png(self, path: str | Path) -> Path:
        """The plot and its legend as a PNG; OSError if no image could be written there."""
        path = Path(path)
        try:
            from pyqtgraph.exporters import ImageExporter

            exporter = ImageExporter(self.plot.scene())  # the plot and its legend
            exporter.parameters()["width"] = max(600, int(self.plot.width() * 2))
            exporter.export(str(path))
        except Exception:  # noqa: BLE001 - an exporter that cannot render: the widget's pixels
            _log.debug("pyqtgraph's image exporter failed; saving the widget's pixels", exc_info=True)
        # Both say a failure only by writing nothing (QImage.save returns False).
        if not path.exists() and not self.plot.grab().save(str(path), "PNG"):
            raise OSError(f"could not write an image to {path}")
        return path

    def export_csv(self, path: str | Path) -> Path:
        return write_csv(path, self.csv_headers, self.rows())


class QtSuccessHistoryPlot(QtPlotPanel):
    """Cumulative success rate of the selected skills, session by session, with the Wilson 95%
    band and the promotion thresholds. Past :data:`MAX_SERIES` skills, the ones with the most
    credited games are drawn and the legend sums up the others."""

    csv_headers = (
        "skill_id",
        "skill",
        "session",
        "recorded_at",
        "wins",
        "decided",
        "success_rate",
        "wilson_low",
        "wilson_high",
        "note",
    )
    export_name = "success-rate-history"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Cumulative success rate by session (Wilson 95% band)", parent)
        self.set_label("left", "success %")
        self.set_label("bottom", "credited session")
        self.item.setYRange(0, 100, padding=0.02)
        self.curves, self.bands = [], []
        for index in range(MAX_SERIES):
            colour = pg.mkColor(PALETTE[index])
            low = pg.PlotDataItem(pen=pg.mkPen(colour, width=0.5, style=Qt.PenStyle.DotLine))
            high = pg.PlotDataItem(pen=pg.mkPen(colour, width=0.5, style=Qt.PenStyle.DotLine))
            band_colour = pg.mkColor(PALETTE[index])
            band_colour.setAlpha(45)
            band = pg.FillBetweenItem(low, high, brush=pg.mkBrush(band_colour))
            curve = pg.PlotDataItem(
                pen=pg.mkPen(colour, width=2),
                antialias=True,
                symbol="o",
                symbolSize=6,
                symbolBrush=colour,
                symbolPen=None,
            )
            for item in (band, low, high, curve):
                self.item.addItem(item)
            self.curves.append(curve)
            self.bands.append((band, low, high))
        # Threshold lines are named in the legend, in one line (labels on the lines would cover
        # the bands, and a line each would leave no room for the skills).
        self.thresholds: dict[str, pg.InfiniteLine] = {}
        for name in ("candidate", "established", "proven"):
            line = pg.InfiniteLine(angle=0, movable=False, pen=_threshold_pen(name))
            self.item.addItem(line)
            self.thresholds[name] = line
        self.threshold_sample = pg.PlotDataItem(pen=_threshold_pen("candidate"))  # a legend sample only
        self.others_sample = pg.PlotDataItem(pen=None)  # the legend's text line for the skills not drawn

    def update_data(
        self,
        skills: Sequence[SkillSeries],
        thresholds: dict[str, float],
        others: Others | None = None,
        flagged: Sequence[str] = (),
    ) -> None:
        """``others``: the selected skills not drawn (summed up in the legend); ``flagged``: the
        ids of skills whose tier is contradicted (marked in the legend)."""
        self.legend.clear()
        hover, rows = [], []
        shown = [s for s in skills if s.history][:MAX_SERIES]
        for index, curve in enumerate(self.curves):
            band, low, high = self.bands[index]
            if index < len(shown):
                series = shown[index]
                x = np.array([p.session for p in series.history], dtype=float)
                curve.setData(x, np.array([p.rate * 100 for p in series.history]))
                low.setData(x, np.array([p.low * 100 for p in series.history]))
                high.setData(x, np.array([p.high * 100 for p in series.history]))
                self.legend.addItem(
                    curve, (FLAG if series.skill_id in flagged else "") + _short(series.name, LEGEND_CHARS)
                )
                for p in series.history:
                    hover.append(
                        (
                            p.session,
                            p.rate * 100,
                            (
                                f"{_short(series.name, 40)} · session {p.session} ({p.recorded_at[:10]}): "
                                f"{p.wins}/{p.decided} = {_pct(p.rate)}, Wilson 95% [{_pct(p.low)}, {_pct(p.high)}]"
                            ),
                        )
                    )
                    rows.append(
                        (
                            series.skill_id,
                            series.name,
                            p.session,
                            p.recorded_at,
                            p.wins,
                            p.decided,
                            round(p.rate, 6),
                            round(p.low, 6),
                            round(p.high, 6),
                            p.note,
                        )
                    )
            else:
                for item in (curve, low, high):
                    item.setData([], [])
            for item in (curve, band, low, high):
                item.setVisible(index < len(shown))
        if others is not None and others.skills:
            self.legend.addItem(self.others_sample, others_text(others))
        bars = []
        for name, line in self.thresholds.items():
            line.setVisible(name in thresholds)
            if name in thresholds:
                line.setValue(thresholds[name] * 100)
                bars.append(f"{name} {thresholds[name] * 100:.0f}")
        if bars:
            self.legend.addItem(self.threshold_sample, " · ".join(bars) + "%")
        last = max((max(p.session for p in s.history) for s in shown), default=1)
        self.item.setXRange(0.5, last + 0.5, padding=0)
        step = max(1, math.ceil(last / 8))  # sessions are whole numbers: no tick at 1.5
        self.set_ticks("bottom", [(n, str(n)) for n in range(1, last + 1, step)])
        self.set_hover_points(hover)
        self.set_rows(rows)
        if not skills:
            self.readout.setText("Select skills in the browser to see how their success rate moved")
        elif not shown:
            self.readout.setText("No credited evidence for the selected skills yet")


class QtTierPlot(QtPlotPanel):
    """Skills per tier, stacked, for each domain and game module of the filtered skills."""

    csv_headers = ("domain", "game_module", *TIERS, "total")
    export_name = "tier-distribution"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Tiers by domain and module (filtered skills)", parent)
        self.set_label("left", "skills")
        self.bars = {}
        for tier in TIERS:
            bar = pg.BarGraphItem(x=[], height=[], width=0.6, y0=[], brush=TIER_COLOURS[tier], pen=pg.mkPen("w"))
            self.item.addItem(bar)
            self.legend.addItem(bar, tier)
            self.bars[tier] = bar

    def update_data(self, groups: Sequence[TierGroup]) -> None:
        x = np.arange(len(groups), dtype=float)
        base = np.zeros(len(groups))
        hover: list[tuple[float, float, str]] = []
        rows: list[Sequence[Any]] = []
        for tier in TIERS:
            heights = np.array([g.counts.get(tier, 0) for g in groups], dtype=float)
            self.bars[tier].setOpts(x=x, height=heights, y0=base.copy(), width=0.6)
            for index, group in enumerate(groups):
                if heights[index]:
                    hover.append(
                        (
                            index,
                            base[index] + heights[index] / 2,
                            (
                                f"{_DOMAIN_SHORT.get(group.domain, group.domain)} · {group.game_module}: {int(heights[index])} {tier}"
                                f" of {group.total} skills ({heights[index] / group.total:.0%})"
                            ),
                        )
                    )
            base = base + heights
        rows.extend(
            (group.domain, group.game_module, *(group.counts.get(t, 0) for t in TIERS), group.total) for group in groups
        )
        if groups:
            self.item.setXRange(-0.6, len(groups) - 0.4, padding=0)
            self.item.setYRange(0, max(base.max(), 1) * 1.25, padding=0)
        self.set_categories("bottom", [f"{_DOMAIN_SHORT.get(g.domain, g.domain)} · {g.game_module}" for g in groups])
        self.set_hover_points(hover)
        self.set_rows(rows)


class QtHistogramPlot(QtPlotPanel):
    """How the filtered skills with decided games spread over success rates."""

    csv_headers = ("bin_low", "bin_high", "skills")
    export_name = "success-rate-histogram"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Success rates of the filtered skills", parent, legend=False)
        self.set_label("left", "skills")
        self.set_label("bottom", "success %")
        self.bars = pg.BarGraphItem(x=[], height=[], width=9, brush="#6baed6", pen=pg.mkPen("#2171b5"))
        self.item.addItem(self.bars)
        self.item.setXRange(0, 100, padding=0.02)

    def update_data(self, histogram: Histogram) -> None:
        edges = np.array(histogram.edges) * 100
        centres = (edges[:-1] + edges[1:]) / 2
        heights = np.array(histogram.counts, dtype=float)
        self.bars.setOpts(x=centres, height=heights, width=(edges[1] - edges[0]) * 0.9)
        self.item.setYRange(0, max(heights.max() if len(heights) else 0, 1) * 1.15, padding=0)
        last = len(centres) - 1
        self.set_hover_points(
            [
                (
                    c,
                    h / 2 if h else 0,
                    (
                        f"{edges[i]:.0f}–{edges[i + 1]:.0f}%{']' if i == last else ')'}: {int(h)} skills "
                        f"({histogram.verified} verified, {histogram.unverified} without decided games)"
                    ),
                )
                for i, (c, h) in enumerate(zip(centres, heights, strict=False))
            ]
        )
        self.set_rows(
            [(histogram.edges[i], histogram.edges[i + 1], histogram.counts[i]) for i in range(len(histogram.counts))]
        )
        self.item.setTitle(f"Success rates of the filtered skills ({histogram.verified} verified)", size="9pt")


class QtOpponentPlot(QtPlotPanel):
    """Headless evidence of the selected skills per opponent: rate and Wilson 95% interval.
    Horizontal bars, so opponents' names read in full on the left axis."""

    csv_headers = ("opponent", "wins", "losses", "draws", "errors", "win_rate", "wilson_low", "wilson_high")
    export_name = "win-rate-by-opponent"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Win rate by opponent, Wilson 95% whiskers (selected skills)", parent, legend=False)
        self.set_label("bottom", "win %")
        self.item.showGrid(x=True, y=False, alpha=0.25)
        self.bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.6, brush="#9ecae1", pen=pg.mkPen("#3182bd"))
        self.errors = pg.ErrorBarItem(
            x=np.array([]),
            y=np.array([]),
            left=np.array([]),
            right=np.array([]),
            beam=0.2,
            pen=pg.mkPen("#333333", width=1.5),
        )
        self.item.addItem(self.bars)
        self.item.addItem(self.errors)
        self.item.setXRange(0, 100, padding=0.02)
        self.item.invertY(True)  # the most played opponent on top

    def update_data(self, opponents: Sequence[OpponentRate]) -> None:
        y = np.arange(len(opponents), dtype=float)
        rates = np.array([o.rate * 100 for o in opponents], dtype=float)
        self.bars.setOpts(x0=np.zeros(len(opponents)), y=y, width=rates, height=0.6)
        self.errors.setData(
            x=rates,
            y=y,
            right=np.array([o.high * 100 for o in opponents]) - rates,
            left=rates - np.array([o.low * 100 for o in opponents]),
            beam=0.2,
        )
        if opponents:
            self.item.setYRange(-0.6, len(opponents) - 0.4, padding=0)
        self.set_categories("left", [_short(o.opponent, 24) for o in opponents])
        self.set_hover_points(
            [
                (
                    o.rate * 100,
                    i,
                    (
                        f"{o.opponent}: {o.wins} W / {o.losses} L / {o.draws} D ({o.errors} errors) = {_pct(o.rate)}, "
                        f"Wilson 95% [{_pct(o.low)}, {_pct(o.high)}]"
                    ),
                )
                for i, o in enumerate(opponents)
            ]
        )
        self.set_rows(
            [
                (o.opponent, o.wins, o.losses, o.draws, o.errors, round(o.rate, 6), round(o.low, 6), round(o.high, 6))
                for o in opponents
            ]
        )


class QtContentPlot(QtPlotPanel):
    """Completion rate (left axis) and average rating (right axis) over plays of the first
    selected content skill."""

    csv_headers = (
        "skill_id",
        "skill",
        "plays",
        "recorded_at",
        "completed",
        "completion_rate",
        "average_rating",
        "rated",
    )
    export_name = "content-plays"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Plays of a content skill", parent)
        self.set_label("left", "completed %")
        self.set_label("bottom", "plays (cumulative)")
        self.item.setYRange(0, 100, padding=0.02)
        self.item.showAxis("right")
        self.set_label("right", "rating ★")
        self.rating_view = pg.ViewBox()
        self.item.scene().addItem(self.rating_view)
        self.item.getAxis("right").linkToView(self.rating_view)
        self.rating_view.setXLink(self.item)
        self.rating_view.setYRange(1, 5, padding=0.02)
        self.rating_view.setMouseEnabled(x=False, y=False)
        self.item.getViewBox().sigResized.connect(self._sync_views)
        self.completion = pg.PlotDataItem(
            pen=pg.mkPen("#2ca02c", width=2),
            antialias=True,
            symbol="o",
            symbolSize=6,
            symbolBrush="#2ca02c",
            symbolPen=None,
        )
        self.rating = pg.PlotDataItem(
            pen=pg.mkPen("#ff7f0e", width=2, style=Qt.PenStyle.DashLine),
            antialias=True,
            symbol="s",
            symbolSize=6,
            symbolBrush="#ff7f0e",
            symbolPen=None,
        )
        self.item.addItem(self.completion)
        self.rating_view.addItem(self.rating)
        self.legend.addItem(self.completion, "completion rate")
        self.legend.addItem(self.rating, "average rating")

    def _sync_views(self) -> None:
        self.rating_view.setGeometry(self.item.getViewBox().sceneBoundingRect())
        self.rating_view.linkedViewChanged(self.item.getViewBox(), self.rating_view.XAxis)

    def update_data(self, skills: Sequence[SkillSeries]) -> None:
        series = next((s for s in skills if s.plays), None)
        if series is None:
            self.completion.setData([], [])
            self.rating.setData([], [])
            self.set_hover_points([])
            self.set_rows([])
            self.readout.setText("Select a content skill with recorded plays")
            self.item.setTitle("Plays of a content skill", size="9pt")
            return
        x = np.array([p.plays for p in series.plays], dtype=float)
        self.completion.setData(x, np.array([p.completion_rate * 100 for p in series.plays]))
        rated = [p for p in series.plays if p.average_rating is not None]
        self.rating.setData(
            np.array([p.plays for p in rated], dtype=float), np.array([p.average_rating for p in rated])
        )
        self.item.setXRange(0, x.max() * 1.05 + 1, padding=0)
        self.item.setTitle(f"Plays of {_short(series.name, 40)}", size="9pt")
        self.set_hover_points(
            [
                (
                    p.plays,
                    p.completion_rate * 100,
                    f"after {p.plays} plays ({p.recorded_at[:10]}): {p.completed} completed = "
                    f"{_pct(p.completion_rate)}; average rating {p.average_rating:.2f} over {p.rated} rated"
                    if p.average_rating is not None
                    else f"after {p.plays} plays: {p.completed} completed = {_pct(p.completion_rate)}; no ratings",
                )
                for p in series.plays
            ]
        )
        self.set_rows(
            [
                (
                    series.skill_id,
                    series.name,
                    p.plays,
                    p.recorded_at,
                    p.completed,
                    round(p.completion_rate, 6),
                    None if p.average_rating is None else round(p.average_rating, 6),
                    p.rated,
                )
                for p in series.plays
            ]
        )


class QtLiveRatePlot(QtPlotPanel):
    """The running success rate of the batch in progress: overall, and for the first few skills
    of the batch (the legend says how many more the overall curve holds)."""

    csv_headers = ("games_done", "series", "success_rate")
    export_name = "batch-running-rate"
    MAX_LIVE = 5
    MAX_POINTS = 2_000  # older points are thinned out: a long batch never grows the curves unbounded
    REDRAW_MS = 250  # the curves repaint at most 4 times a second, whatever the progress rate

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Running success rate of the batch", parent)
        self.set_label("left", "success %")
        self.set_label("bottom", "games played in this batch")
        self.item.setYRange(0, 100, padding=0.02)
        self.item.disableAutoRange()  # fixed axes (0..games, 0..100%): a new point repaints curves only
        self.item.setXRange(0, 1, padding=0)
        self._redraw_timer = QTimer(self, singleShot=True, interval=self.REDRAW_MS)
        self._redraw_timer.timeout.connect(self._redraw)
        self.overall = pg.PlotDataItem(pen=pg.mkPen("#000000", width=2.5))
        self.item.addItem(self.overall)
        self.curves = []
        for index in range(self.MAX_LIVE):
            curve = pg.PlotDataItem(pen=pg.mkPen(PALETTE[index % len(PALETTE)], width=1.2))
            self.item.addItem(curve)
            self.curves.append(curve)
        self.more_sample = pg.PlotDataItem(pen=None)  # the legend's text line for the skills not drawn
        self.reset([], {})

    def reset(self, skill_ids: Sequence[str], names: dict[str, str]) -> None:
        self._redraw_timer.stop()
        self.skill_ids = list(skill_ids)[: self.MAX_LIVE]
        self.names = names
        self.games: list[float] = []
        self.ys: dict[str, list[float]] = {skill_id: [] for skill_id in self.skill_ids}
        self.overall_y: list[float] = []
        self._last: dict[str, tuple[int, int]] = {}
        self.legend.clear()
        self.legend.addItem(self.overall, f"all {len(skill_ids):,} skills" if len(skill_ids) > 1 else "all skills")
        for index, curve in enumerate(self.curves):
            curve.setData([], [])
            curve.setVisible(index < len(self.skill_ids))
            if index < len(self.skill_ids):
                skill_id = self.skill_ids[index]
                self.legend.addItem(curve, _short(names.get(skill_id, skill_id[:8]), LEGEND_CHARS))
        if len(skill_ids) > self.MAX_LIVE:
            more = len(skill_ids) - self.MAX_LIVE
            self.legend.addItem(self.more_sample, f"+{more:,} more not drawn")
        self.overall.setData([], [])
        self.set_total(0)
        self.set_hover_points([])
        self.set_rows([])

    def add_progress(self, progress: Any) -> None:  # a runner Progress event
        if progress.games_total != self.total:  # until decided: the games still needed shrink
            self.set_total(progress.games_total)
        wins = sum(c.wins for c in progress.per_skill.values())
        decided = sum(c.decided for c in progress.per_skill.values())
        self.games.append(float(progress.games_done))
        self.overall_y.append(wins / decided * 100 if decided else math.nan)
        self._last = {"all skills": (wins, decided)}
        for skill_id in self.skill_ids:
            counts = progress.per_skill.get(skill_id)
            rate = counts.wins / counts.decided * 100 if counts is not None and counts.decided else math.nan
            self.ys[skill_id].append(rate)
            if counts is not None:
                self._last[self.names.get(skill_id, skill_id)] = (counts.wins, counts.decided)
        if len(self.games) > self.MAX_POINTS:  # keep every other point of the older half
            half = len(self.games) // 2
            thin = lambda values: values[:half:2] + values[half:]  # noqa: E731
            self.games, self.overall_y = thin(self.games), thin(self.overall_y)
            self.ys = {k: thin(v) for k, v in self.ys.items()}
        if not self._redraw_timer.isActive():
            self._redraw_timer.start()

    def set_total(self, games: int) -> None:
        """The x axis spans the batch's games (an until-decided batch's shrink as skills decide)."""
        self.total = games
        self.item.setXRange(0, max(1, games), padding=0.01)

    def flush(self) -> None:
        """Draw what arrived since the last repaint now (a batch ended; tests)."""
        self._redraw_timer.stop()
        self._redraw()

    def _redraw(self) -> None:
        x = np.array(self.games)
        self.overall.setData(x, np.array(self.overall_y), connect="finite", skipFiniteCheck=True)
        for index, skill_id in enumerate(self.skill_ids):
            self.curves[index].setData(x, np.array(self.ys[skill_id]), connect="finite", skipFiniteCheck=True)
        if len(x):
            last_x = x[-1]
            self.set_hover_points(
                [
                    (
                        last_x,
                        self.overall_y[-1] if not math.isnan(self.overall_y[-1]) else 0,
                        f"after {int(last_x)} games: "
                        + "; ".join(
                            f"{_short(name, 24)} {w}/{d} = {_pct(w / d if d else None)}"
                            for name, (w, d) in self._last.items()
                        ),
                    )
                ]
            )

    def rows(self) -> list[Sequence[Any]]:
        """Every point of every curve, as plotted (rates 0..1; empty before a series' first decided game)."""
        out: list[Sequence[Any]] = []
        series = [("all skills", self.overall_y)] + [(self.names.get(i, i), self.ys[i]) for i in self.skill_ids]
        for index, games in enumerate(self.games):
            for name, values in series:
                value = values[index]
                out.append((int(games), name, None if math.isnan(value) else round(value / 100, 6)))
        return out


class QtLiftPlot(QtPlotPanel):
    """Each selected skill's latest lift over the module's default plan: the point and its
    Newcombe 95% interval, one row per skill, zero marked. Red: worse than the default plan
    (the whole interval below zero); grey: measured with an older body."""

    csv_headers = (
        "skill_id",
        "skill",
        "run",
        "pairs",
        "skill_rate",
        "baseline_rate",
        "lift",
        "low",
        "high",
        "worse_than_default_plan",
        "current_body",
    )
    export_name = "lift-over-default-plan"
    COLOURS: ClassVar[dict[str, str]] = {"worse": "#d62728", "current": "#1f77b4", "older": "#aaaaaa"}

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Lift over the default plan (Newcombe 95%)", parent)
        self.set_label("bottom", "win rate minus the default plan's (points)")
        self.item.showGrid(x=True, y=False, alpha=0.25)
        self.zero = pg.InfiniteLine(pos=0, angle=90, movable=False, pen=pg.mkPen("#555555", width=1))
        self.item.addItem(self.zero)
        self.errors = pg.ErrorBarItem(
            x=np.array([]), y=np.array([]), left=np.array([]), right=np.array([]), beam=0.2, pen=pg.mkPen("#333333")
        )
        self.points = pg.ScatterPlotItem(size=9, pen=None)
        self.item.addItem(self.errors)
        self.item.addItem(self.points)
        for key, label in (("current", "lift"), ("worse", "worse than the default plan"), ("older", "older body")):
            self.legend.addItem(pg.ScatterPlotItem(size=8, pen=None, brush=self.COLOURS[key]), label)
        self.more_sample = pg.PlotDataItem(pen=None)  # the legend's text line for the lifts not drawn
        self.item.setXRange(-100, 100, padding=0.02)
        self.item.invertY(True)  # the first selected skill on top

    def update_data(self, lifts: Sequence[Any], more: int = 0) -> None:  # SkillLift
        """``more``: selected skills with a lift that are not drawn (past the first few)."""
        self.legend.removeItem(self.more_sample)
        if more:
            self.legend.addItem(self.more_sample, f"+{more:,} more not drawn")
        y = np.arange(len(lifts), dtype=float)
        x = np.array([(s.lift.lift or 0.0) * 100 for s in lifts], dtype=float)
        low = np.array([s.lift.low * 100 for s in lifts], dtype=float)
        high = np.array([s.lift.high * 100 for s in lifts], dtype=float)
        self.errors.setData(x=x, y=y, left=x - low, right=high - x, beam=0.2)
        brushes = [self.COLOURS["worse" if s.lift.worse else "current" if s.current_body else "older"] for s in lifts]
        self.points.setData(x=x, y=y, brush=brushes)
        if lifts:
            self.item.setYRange(-0.6, len(lifts) - 0.4, padding=0)
        self.set_categories("left", [_short(s.name, LEGEND_CHARS) for s in lifts])
        hover = []
        rows: list[Sequence[Any]] = []
        for i, s in enumerate(lifts):
            record = s.lift
            verdict = " — worse than the default plan" if record.worse else ""
            body = "" if s.current_body else " (measured with an older body)"
            hover.append(
                (
                    x[i],
                    i,
                    (
                        f"{_short(s.name, 40)}: {x[i]:+.1f} points [{low[i]:+.1f}, {high[i]:+.1f}] over {record.pairs} "
                        f"pairs (skill {_pct(record.skill_rate)}, default plan {_pct(record.baseline_rate)}), "
                        f"run {record.run_id}{verdict}{body}"
                    ),
                )
            )
            rows.append(
                (
                    s.skill_id,
                    s.name,
                    record.run_id,
                    record.pairs,
                    record.skill_rate,
                    record.baseline_rate,
                    record.lift,
                    round(record.low, 6),
                    round(record.high, 6),
                    record.worse,
                    s.current_body,
                )
            )
        self.set_hover_points(hover)
        self.set_rows(rows)
        if not lifts:
            self.readout.setText("Select skills verified with a baseline (Verify… › Also play the default plan)")


class QtCompositionPlot(QtPlotPanel):
    """The compositions of the first selected skill that has any: per partner, the win rate of
    its verified composition runs with the Wilson 95% interval, and D057's success count in the
    label; the candidate bar marked."""

    csv_headers = (
        "skill_id",
        "partner_id",
        "partner",
        "order",
        "success_count",
        "composable",
        "runs",
        "credited_runs",
        "wins",
        "decided",
        "win_rate",
        "wilson_low",
        "wilson_high",
    )
    export_name = "compositions"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Compositions (select a skill)", parent)
        self.set_label("bottom", "win % of the composition runs")
        self.item.showGrid(x=True, y=False, alpha=0.25)
        self.bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.6, brush="#c7e9c0", pen=pg.mkPen("#31a354"))
        self.errors = pg.ErrorBarItem(
            x=np.array([]), y=np.array([]), left=np.array([]), right=np.array([]), beam=0.2, pen=pg.mkPen("#333333")
        )
        self.bar_line = pg.InfiniteLine(pos=40, angle=90, movable=False, pen=_threshold_pen("candidate"))
        for item in (self.bars, self.errors, self.bar_line):
            self.item.addItem(item)
        self.legend.addItem(self.bars, "win rate")
        self.legend.addItem(self.errors, "Wilson 95%")
        self.bar_sample = pg.PlotDataItem(pen=_threshold_pen("candidate"))  # a legend sample only
        self.legend.addItem(self.bar_sample, "candidate >40%")
        self.item.setXRange(0, 100, padding=0.02)
        self.item.invertY(True)

    def update_data(self, skill_id: str, name: str, partners: Sequence[Any], candidate: float = 0.4) -> None:
        y = np.arange(len(partners), dtype=float)
        rates = np.array([(p.rate or 0.0) * 100 for p in partners], dtype=float)
        low = np.array([p.interval.low * 100 if p.decided else 0.0 for p in partners], dtype=float)
        high = np.array([p.interval.high * 100 if p.decided else 0.0 for p in partners], dtype=float)
        self.bars.setOpts(x0=np.zeros(len(partners)), y=y, width=rates, height=0.6)
        self.errors.setData(x=rates, y=y, left=rates - low, right=high - rates, beam=0.2)
        self.bar_line.setValue(candidate * 100)
        self.legend.getLabel(self.bar_sample).setText(f"candidate >{candidate:.0%}")
        if partners:
            self.item.setYRange(-0.6, len(partners) - 0.4, padding=0)
        self.set_categories(
            "left",
            [f"{'→' if p.first else '←'} {_short(p.partner_name, 16)} ×{p.success_count}" for p in partners],
        )
        title = f"Compositions of {_short(name, 32)}" if skill_id else "Compositions (select a skill)"
        self.item.setTitle(title, size="9pt")
        hover, rows = [], []
        for i, p in enumerate(partners):
            order = (
                f"{_short(name, 24)} then {p.partner_name}" if p.first else f"{p.partner_name} then {_short(name, 24)}"
            )
            runs = (
                f"{p.wins}/{p.decided} won = {_pct(p.rate)} [{_pct(p.interval.low)}, {_pct(p.interval.high)}] over "
                f"{p.runs} runs ({p.credited_runs} counted)"
                if p.decided
                else "no composition run yet"
            )
            stored = f"success count {p.success_count}" + ("" if p.composable else ", not composable")
            hover.append((rates[i], i, f"{order}: {runs}; {stored}"))
            rows.append(
                (
                    skill_id,
                    p.partner_id,
                    p.partner_name,
                    "first" if p.first else "second",
                    p.success_count,
                    p.composable,
                    p.runs,
                    p.credited_runs,
                    p.wins,
                    p.decided,
                    None if p.rate is None else round(p.rate, 6),
                    round(p.interval.low, 6) if p.decided else None,
                    round(p.interval.high, 6) if p.decided else None,
                )
            )
        self.set_hover_points(hover)
        self.set_rows(rows)
        if not partners:
            self.readout.setText("Select a skill with compositions (skillstudio verify --sequence A,B)")
