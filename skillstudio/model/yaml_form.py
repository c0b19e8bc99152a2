"""A skill as YAML text: what the editor's raw tab shows and reads back."""

from __future__ import annotations

from typing import Any

import yaml

from skillstudio.model.document import parse_skill, skill_to_document
from skillstudio.model.skill import Skill
from skillstudio.model.validation import Issue, ValidationError

MAX_YAML = 2 * 1024 * 1024


class _Dumper(yaml.SafeDumper):
    pass


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None  # multi-line text stays readable
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def skill_to_yaml(skill: Skill, *, local: bool = False) -> str:
    """The canonical document as YAML, in field order; library-local fields left out by default."""
    return document_to_yaml(skill_to_document(skill, local=local))


def document_to_yaml(document: dict[str, Any]) -> str:
    """Any skill document as YAML in the same style, also one that does not validate (yet)."""
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def skill_from_yaml(text: str) -> Skill:
    """Parse YAML text into a skill; any problem is a ValidationError naming the line or field."""
    if len(text) > MAX_YAML:
        raise ValidationError([Issue("", f"text is larger than {MAX_YAML} characters")])
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ValidationError([Issue(where, f"not valid YAML: {problem}")]) from None
    return parse_skill(data)
