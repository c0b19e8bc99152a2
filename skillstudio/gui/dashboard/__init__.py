"""The verification dashboard (issue 6): plots of verification evidence and batches run on a
worker thread. ``attach_dashboard(window)`` adds it to the main window as a dock."""

from skillstudio.gui.dashboard.qt_dashboard import QtDashboard, attach_dashboard

__all__ = ["QtDashboard", "attach_dashboard"]
