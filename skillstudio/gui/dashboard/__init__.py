"""The verification dashboard (issue 6): plots of verification evidence and batches run off the
GUI thread. ``QtDashboard(state)`` is a dock the main window places under the browser."""

from skillstudio.gui.dashboard.qt_dashboard import QtDashboard

__all__ = ["QtDashboard"]
