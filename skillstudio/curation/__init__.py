"""How people change a library: the editing rules (HumanRefined provenance, reverts).

These rules live in the core so the GUI, the CLI and tests apply the same ones.
"""

from skillstudio.curation.edits import SaveOutcome, new_skill, retag, revert_to_revision, save_edit

__all__ = ["SaveOutcome", "new_skill", "retag", "revert_to_revision", "save_edit"]
