"""The skill editor: :class:`QtSkillEditor` and the per-body editors it is built from."""

from skillstudio.gui.editor.qt_skill_editor import QtSkillEditor

__all__ = ["QtSkillEditor"]
