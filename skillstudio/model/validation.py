"""Reading untrusted data: every problem is collected with the path of the field it concerns.

A parser walks a JSON/YAML tree with a :class:`Checker`, which records an :class:`Issue` such
as ``body.plan.priority_targets[2].priority: 14 is outside 1..10`` instead of raising at the
first one, so a user fixing a file sees every problem at once. Parsers raise
:class:`ValidationError` at the end if anything was recorded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, TypeVar

from skillstudio.model.enums import SpelledEnum

E = TypeVar("E", bound=SpelledEnum)
T = TypeVar("T")

# Hard limits that keep a hostile file from exhausting memory or the prompt budget downstream.
# Style limits (D057's "1-5 KB per skill") are lint findings, not validation errors.
MAX_NAME = 200
MAX_SHORT_TEXT = 256
MAX_DESCRIPTION = 20_000
MAX_LONG_TEXT = 500_000
MAX_LIST = 2_000
MAX_TAGS = 100
MAX_TAG = 64
MAX_ID = 128
MAX_JSON_DEPTH = 16
MAX_JSON_NODES = 20_000


@dataclass(frozen=True)
class Issue:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ValidationError(ValueError):
    """Untrusted data did not describe a valid value; ``issues`` says what and where."""

    def __init__(self, issues: Iterable[Issue], *, context: str = "") -> None:
        self.issues: tuple[Issue, ...] = tuple(issues)
        self.context = context
        super().__init__(self._render())

    def _render(self) -> str:
        lines = [str(issue) for issue in self.issues]
        head = f"{self.context}: " if self.context else ""
        if len(lines) == 1:
            return head + lines[0]
        return head + f"{len(lines)} problems:\n  " + "\n  ".join(lines)


def join_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


_CONTAINER_NAMES: dict[type[object], str] = {dict: "a mapping", list: "a list", tuple: "a list"}


def describe(value: object) -> str:
    """How a wrong value is named in a message: its type for containers, itself for scalars."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return repr(shown)
    if isinstance(value, int | float):
        return repr(value)
    return _CONTAINER_NAMES.get(type(value), type(value).__name__)


@dataclass
class Checker:
    """Collects issues while a parser reads one untrusted document."""

    issues: list[Issue] = field(default_factory=list)
    notes: list[Issue] = field(default_factory=list)

    def fail(self, path: str, message: str) -> None:
        self.issues.append(Issue(path, message))

    def note(self, path: str, message: str) -> None:
        """Record a normalisation that was applied (another spelling accepted), not an error."""
        self.notes.append(Issue(path, message))

    def raise_if_failed(self, context: str = "") -> None:
        if self.issues:
            raise ValidationError(self.issues, context=context)

    # --- containers -------------------------------------------------------------------------

    def mapping(self, value: object, path: str) -> Mapping[str, Any] | None:
        # type() first: JSON's dicts skip the Mapping ABC's slower isinstance
        if type(value) is not dict and not isinstance(value, Mapping):
            self.fail(path, f"expected a mapping, got {describe(value)}")
            return None
        for key in value:
            if not isinstance(key, str):
                self.fail(path, f"keys must be text, got {describe(key)}")
                return None
        return value

    def sequence(self, value: object, path: str, *, max_items: int = MAX_LIST) -> list[Any] | None:
        if not isinstance(value, list | tuple):
            self.fail(path, f"expected a list, got {describe(value)}")
            return None
        if len(value) > max_items:
            self.fail(path, f"has {len(value)} items, at most {max_items} allowed")
            return None
        return list(value)

    def each(
        self, value: object, path: str, read: Callable[[Any, str], T | None], *, max_items: int = MAX_LIST
    ) -> tuple[T, ...]:
        items = self.sequence(value, path, max_items=max_items)
        if items is None:
            return ()
        out = [read(item, f"{path}[{index}]") for index, item in enumerate(items)]  # join_path, inlined: many
        return tuple(item for item in out if item is not None)

    # --- scalars ----------------------------------------------------------------------------

    def text(
        self,
        value: object,
        path: str,
        *,
        max_len: int = MAX_SHORT_TEXT,
        allow_empty: bool = True,
        strip: bool = False,
    ) -> str | None:
        if not isinstance(value, str):
            self.fail(path, f"expected text, got {describe(value)}")
            return None
        if strip:
            value = value.strip()
        if "\x00" in value:
            self.fail(path, "contains a NUL character")
            return None
        if not allow_empty and not value.strip():
            self.fail(path, "must not be empty")
            return None
        if len(value) > max_len:
            self.fail(path, f"is {len(value)} characters long, at most {max_len} allowed")
            return None
        return value

    def optional_text(self, value: object, path: str, *, max_len: int = MAX_SHORT_TEXT) -> str | None:
        if value is None:
            return None
        return self.text(value, path, max_len=max_len)

    def integer(self, value: object, path: str, lo: int, hi: int) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(path, f"expected a whole number, got {describe(value)}")
            return None
        if isinstance(value, float):
            if not value.is_integer():
                self.fail(path, f"expected a whole number, got {value!r}")
                return None
            value = int(value)
        if not lo <= value <= hi:
            self.fail(path, f"{value} is outside {lo}..{hi}")
            return None
        return value

    def number(self, value: object, path: str, lo: float, hi: float) -> float | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(path, f"expected a number, got {describe(value)}")
            return None
        value = float(value)
        if not math.isfinite(value):
            self.fail(path, f"{value} is not a finite number")
            return None
        if not lo <= value <= hi:
            self.fail(path, f"{value:g} is outside {lo:g}..{hi:g}")
            return None
        return value

    def boolean(self, value: object, path: str) -> bool | None:
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {describe(value)}")
            return None
        return value

    def enum(self, cls: type[E], value: object, path: str) -> E | None:
        try:
            member = cls.parse(value)
        except ValueError as error:
            self.fail(path, str(error))
            return None
        # value first: the usual spelling then never builds the serde one (many per skill)
        if isinstance(value, str) and value != member.value and value != member.serde:
            self.note(path, f"read {value!r} as {member.value!r}")
        return member

    def timestamp(self, value: object, path: str) -> str | None:
        if not isinstance(value, str | datetime | date):
            self.fail(path, f"expected an ISO 8601 time, got {describe(value)}")
            return None
        try:
            return normalize_timestamp(value)
        except ValueError:
            self.fail(path, f"{describe(value)} is not an ISO 8601 time")
            return None

    def optional_timestamp(self, value: object, path: str) -> str | None:
        return None if value in (None, "") else self.timestamp(value, path)

    def json_value(self, value: object, path: str) -> Any:
        """A free-form JSON value (scene parameters): bounded in depth and size, no odd types;
        plain lists and dicts whatever sequence and mapping types came in."""
        copy = _json_copy(self, value, path, 0, [MAX_JSON_NODES], path)
        return None if copy is _INVALID else copy


_INVALID = object()  # _json_copy's answer for a value it refused


def _json_copy(check: Checker, node: object, where: str, depth: int, budget: list[int], path: str) -> Any:
    """``node`` (at ``where``, under the value at ``path``) as plain JSON, or _INVALID if it is
    not a JSON value within the limits (each problem goes to ``check``): checked and copied in
    one walk. A module function, not a closure: a recursive closure is a reference cycle per
    call, and a 100,000-skill import left 500,000 objects of them for the collector."""
    budget[0] -= 1
    if budget[0] < 0:
        check.fail(path, f"has more than {MAX_JSON_NODES} values")
        return _INVALID
    if depth > MAX_JSON_DEPTH:
        check.fail(where, f"is nested deeper than {MAX_JSON_DEPTH} levels")
        return _INVALID
    if node is None or isinstance(node, bool | int | str):
        if isinstance(node, str) and (len(node) > MAX_DESCRIPTION or "\x00" in node):
            check.fail(where, "text is too long or contains NUL")
            return _INVALID
        return node
    if isinstance(node, float):
        if not math.isfinite(node):
            check.fail(where, f"{node} is not a finite number")
            return _INVALID
        return node
    if isinstance(node, list | tuple):
        items = []
        for index, item in enumerate(node):
            copied = _json_copy(check, item, f"{where}[{index}]", depth + 1, budget, path)
            if copied is _INVALID:
                return _INVALID
            items.append(copied)
        return items
    if isinstance(node, Mapping):
        mapping = {}
        for key, item in node.items():
            if not isinstance(key, str):
                check.fail(where, f"keys must be text, got {describe(key)}")
                return _INVALID
            copied = _json_copy(check, item, join_path(where, key), depth + 1, budget, path)
            if copied is _INVALID:
                return _INVALID
            mapping[key] = copied
        return mapping
    check.fail(where, f"{describe(node)} is not a JSON value")
    return _INVALID


# A time already written as normalize_timestamp writes it (years from 1000: strftime's %Y does
# not pad a smaller one); most stored and packaged times are, two or three per skill.
_CANONICAL_TIME = re.compile(r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def normalize_timestamp(value: str | datetime | date) -> str:
    """Any ISO 8601 time as D034 writes it: UTC, milliseconds, ``Z`` (strftime '%Y-%m-%dT%H:%M:%fZ')."""
    if isinstance(value, str) and _CANONICAL_TIME.fullmatch(value):
        datetime.fromisoformat(value[:-1])  # a day or hour that does not exist: ValueError, as below
        return value
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    else:
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def utc_now() -> str:
    return normalize_timestamp(datetime.now(UTC))
