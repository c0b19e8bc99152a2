"""The protocol's JSON Schemas (``skillstudio/engine/schemas/*.json``) and a small validator.

No jsonschema package is a dependency, so this implements the subset the schemas use:
``type`` (string or list), ``const``, ``enum``, ``minimum``/``maximum``, ``minLength``/``maxLength``,
``pattern``, ``required``, ``properties``, ``additionalProperties`` (bool or schema), ``items``,
``minItems``/``maxItems`` and ``if``/``then``/``else``. Unsupported keywords raise at load time,
so a schema can never silently be checked less than it says.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from importlib import resources
from typing import Any

from skillstudio.model.validation import Issue, describe, join_path

SCHEMA_NAMES = ("job", "hello", "game", "summary", "error")
_SUPPORTED = {
    "$schema",
    "$id",
    "title",
    "description",
    "type",
    "const",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "if",
    "then",
    "else",
}
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


@cache
def load_schema(name: str) -> dict[str, Any]:
    if name not in SCHEMA_NAMES:
        raise KeyError(name)
    text = resources.files("skillstudio.engine").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")
    schema = json.loads(text)
    if not isinstance(schema, dict):
        raise TypeError(f"schema {name} is not a JSON object")
    _check_supported(schema, name)
    return schema


def _check_supported(schema: Any, where: str) -> None:
    if not isinstance(schema, dict):
        return
    unknown = set(schema) - _SUPPORTED
    if unknown:
        raise ValueError(f"schema {where} uses unsupported keywords {sorted(unknown)}")
    for key in ("items", "additionalProperties", "if", "then", "else"):
        _check_supported(schema.get(key), f"{where}.{key}")
    for name, sub in schema.get("properties", {}).items():
        _check_supported(sub, f"{where}.{name}")


def validate(instance: Any, schema: dict[str, Any], path: str = "") -> list[Issue]:
    """Every way ``instance`` breaks ``schema``, as issues with field paths (empty: valid)."""
    issues: list[Issue] = []
    _validate(instance, schema, path, issues)
    return issues


def _validate(value: Any, schema: dict[str, Any], path: str, issues: list[Issue]) -> None:
    where = path or "(line)"
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            issues.append(Issue(where, f"expected {' or '.join(types)}, got {describe(value)}"))
            return
    if isinstance(value, float) and not math.isfinite(value):
        issues.append(Issue(where, f"{value} is not a finite number"))
        return
    if "const" in schema and value != schema["const"]:
        issues.append(Issue(where, f"must be {schema['const']!r}, got {describe(value)}"))
        return
    if "enum" in schema and value not in schema["enum"]:
        issues.append(Issue(where, f"{describe(value)} is not one of {'|'.join(map(str, schema['enum']))}"))
        return
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            issues.append(Issue(where, f"{value!r} is below the minimum {schema['minimum']!r}"))
        if "maximum" in schema and value > schema["maximum"]:
            issues.append(Issue(where, f"{value!r} is above the maximum {schema['maximum']!r}"))
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            issues.append(Issue(where, f"must have at least {schema['minLength']} characters"))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            issues.append(Issue(where, f"is {len(value)} characters long, at most {schema['maxLength']} allowed"))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            issues.append(Issue(where, f"{describe(value)} does not match {schema['pattern']}"))
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            issues.append(Issue(where, f"needs at least {schema['minItems']} items"))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            issues.append(Issue(where, f"has {len(value)} items, at most {schema['maxItems']} allowed"))
            return
        if "items" in schema:
            items = schema["items"]
            if _plain_numbers(items):  # fast path: arrays of bounded numbers (timelines)
                lo, hi = items.get("minimum", -math.inf), items.get("maximum", math.inf)
                integer = items["type"] == "integer"
                for index, item in enumerate(value):
                    kind = type(item)
                    if (kind is int or (kind is float and not integer)) and lo <= item <= hi:
                        continue  # NaN fails the comparison and takes the slow path
                    _validate(item, items, join_path(path, index), issues)
                    if len(issues) > 20:
                        return
                return
            for index, item in enumerate(value):
                _validate(item, items, join_path(path, index), issues)
                if len(issues) > 20:
                    return
    if isinstance(value, dict):
        issues.extend(Issue(join_path(path, key), "missing") for key in schema.get("required", []) if key not in value)
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                _validate(item, properties[key], join_path(path, key), issues)
            elif extra is False:
                issues.append(Issue(join_path(path, key), "unknown field"))
            elif isinstance(extra, dict):
                _validate(item, extra, join_path(path, key), issues)
    if "if" in schema:
        matched = not validate(value, schema["if"], path)
        branch = schema.get("then") if matched else schema.get("else")
        if branch is not None:
            _validate(value, branch, path, issues)


def _plain_numbers(schema: dict[str, Any]) -> bool:
    return schema.get("type") in ("number", "integer") and set(schema) <= {"type", "minimum", "maximum", "description"}


def check(instance: Any, name: str) -> list[Issue]:
    """Validate against one of the protocol's schemas by name (job, hello, game, summary, error)."""
    return validate(instance, load_schema(name))
