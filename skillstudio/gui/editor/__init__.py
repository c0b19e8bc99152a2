"""The skill editor: :class:`QtSkillEditor`, its pages over the editing session
(:class:`~skillstudio.curation.session.EditSession`) and the per-body editors."""

from skillstudio.gui.editor.qt_skill_editor import QtSkillEditor

__all__ = ["QtSkillEditor"]
