"""How people change a library: the editing rules (HumanRefined provenance, reverts) and the
editing session an editor shows (:class:`EditSession`).

These rules live in the core so the GUI, the CLI and tests apply the same ones.
"""

from skillstudio.curation.edits import StoredEdit, new_skill, retag, revert_to_revision, save_edit
from skillstudio.curation.form import FormState
from skillstudio.curation.session import EditSession, SaveOutcome

__all__ = [
    "EditSession",
    "FormState",
    "SaveOutcome",
    "StoredEdit",
    "new_skill",
    "retag",
    "revert_to_revision",
    "save_edit",
]
