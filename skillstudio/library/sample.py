"""The bundled sample library: hand-written skills with their verification histories.

Each ``resources/sample_library/**/*.yaml`` file holds one skill document (the canonical form
of :mod:`skillstudio.model.document`) plus a ``verifications`` list of evidence records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from skillstudio.model import Skill, ValidationError, parse_skill_with_notes
from skillstudio.model.evidence import VerificationRecord, read_verification_record
from skillstudio.model.validation import Checker, Issue
from skillstudio.paths import resource

MAX_SAMPLE_FILE = 256 * 1024


@dataclass(frozen=True)
class SampleSkill:
    skill: Skill
    verifications: tuple[VerificationRecord, ...]
    path: Path


def sample_dir() -> Path:
    return resource("sample_library")


def load_sample(directory: Path | None = None) -> list[SampleSkill]:
    """Every sample skill, sorted by file name; a bad file raises ValidationError naming it."""
    root = directory or sample_dir()
    return [load_sample_file(path) for path in sorted(root.rglob("*.yaml"))]


def load_sample_file(path: Path) -> SampleSkill:
    context = str(path)
    raw = path.read_bytes()
    if len(raw) > MAX_SAMPLE_FILE:
        raise ValidationError([Issue("", f"file is larger than {MAX_SAMPLE_FILE} bytes")], context=context)
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise ValidationError([Issue("", f"cannot be read as YAML: {error}")], context=context) from None
    if not isinstance(data, dict):
        raise ValidationError([Issue("", "expected a skill document (a mapping)")], context=context)
    history = data.pop("verifications", [])
    check = Checker()
    records = check.each(history, "verifications", lambda v, p: read_verification_record(check, v, p))
    check.raise_if_failed(context)
    skill, notes = parse_skill_with_notes(data, context=context)
    if notes:  # our own files are canonical: an unknown key is a typo that would lose data
        raise ValidationError(notes, context=context)
    return SampleSkill(skill, records, path)
