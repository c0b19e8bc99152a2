"""Studio settings: the promotion policy's numbers, the reference opponent, ``headless_max_tier``,
``demote_on_verify`` and the prune limits (docs/verification.md, "Settings").

Three layers, each overriding the one before it, key by key:

1. the defaults below: D057's numbers, and **the only place in the program that holds them**
   (:class:`~skillstudio.verification.policy.VerificationPolicy` and pruning are built from a
   :class:`StudioSettings`);
2. the user's ``settings.yaml`` in the platform config folder (beside ``retrieval.yaml`` and
   ``engines.yaml``), nested by key path::

       headless_max_tier: established
       thresholds:
         proven: 0.75

3. the library's own overrides, stored in it (``studio_settings``, migration 11), so that every
   user of a shared library applies the same policy: ``repository.settings``.

Keys are dotted paths (``thresholds.proven``). Every value is checked; a bad one is refused with
its key path and the reason (``thresholds.proven: 1.4 is not a rate between 0 and 1``), and so
is a set of thresholds whose tiers would overlap. Only the keys a layer sets are stored in it,
so a layer never freezes the defaults of the version that wrote it.

The API a settings dialog needs: :func:`load_user_values` / :func:`save_user_values` (the user
layer), ``repository.settings.values()`` / ``.save()`` (the library layer), :func:`resolve`
(validate layers and build the settings) and :func:`effective_settings` (all three, with where
each value came from).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import platformdirs
import yaml
from sqlalchemy import delete, select

from skillstudio.files import write_atomically
from skillstudio.model import Confidence
from skillstudio.model.validation import Checker, Issue, ValidationError, describe
from skillstudio.store.database import Database
from skillstudio.store.events import AuditAction
from skillstudio.store.orm import SettingRow
from skillstudio.store.types import Actor, JsonValue
from skillstudio.store.unit_of_work import StorePart

MAX_SETTINGS_BYTES = 64 * 1024
MAX_GAMES = 1_000_000
MAX_DAYS = 36_500
MAX_NAME = 200
FILE_NAME = "settings.yaml"
_HEADER = '# SkillStudio settings (docs/verification.md, "Settings"); only the keys you change.\n'

# --- the settings, typed ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """D057's promotion bars. Rates are strict ("above 60%"); content ratings are ">=" (D057)."""

    candidate: float = 0.40  # "> 40% win rate against Hard AI ... promoted to Tentative"
    established: float = 0.60  # "3+ games with > 60% success"
    established_games: int = 3
    proven: float = 0.70  # "10+ uses with > 70% success"
    proven_games: int = 10
    content_candidate_rating: float = 3.0  # "completed + rated >= 3 stars"
    content_established_rating: float = 3.5  # "3+ players/plays with avg rating >= 3.5"
    content_established_plays: int = 3


@dataclass(frozen=True)
class PruneLimits:
    """D057 "Skill pruning": tentative for >30 days, unused for >90 days; an optional size cap."""

    stale_days: int = 30
    unused_days: int = 90
    max_size: int | None = None  # None: no cap unless `prune --max-size` asks for one


@dataclass(frozen=True)
class StudioSettings:
    reference_opponent: str = "IC Default Hard"
    reference_aliases: tuple[str, ...] = ("ic-default:hard",)
    # D057: automated pre-verification promotes to Tentative; "human play promotes them further".
    headless_max_tier: Confidence = Confidence.TENTATIVE
    # Off (D057): only decay lowers a tier; a verify batch only promotes.
    demote_on_verify: bool = False
    decay_tier: Confidence = Confidence.TENTATIVE
    thresholds: Thresholds = field(default_factory=Thresholds)
    prune: PruneLimits = field(default_factory=PruneLimits)


DEFAULTS = StudioSettings()

# --- keys: how each is read, checked and written -----------------------------------------------------

Reader = Callable[[Checker, object, str], Any]


def _rate(check: Checker, value: object, key: str) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not 0 <= value <= 1:
        check.fail(key, f"{describe(value)} is not a rate between 0 and 1")
        return None
    return float(value)


def _rating(check: Checker, value: object, key: str) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not 1 <= value <= 5:
        check.fail(key, f"{describe(value)} is not a rating between 1 and 5")
        return None
    return float(value)


def _whole(lo: int, hi: int, unit: str) -> Reader:
    def read(check: Checker, value: object, key: str) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            check.fail(key, f"{describe(value)} is not a whole number of {unit} between {lo:,} and {hi:,}")
            return None
        return value

    return read


def _optional_size(check: Checker, value: object, key: str) -> int | None:
    return None if value is None else _whole(0, 10**9, "skills")(check, value, key)


def _tier(check: Checker, value: object, key: str) -> Confidence | None:
    if isinstance(value, str):
        try:
            return Confidence.parse(value)
        except ValueError:
            pass
    check.fail(key, f"{describe(value)} is not a tier ({Confidence.choices()})")
    return None


def _flag(check: Checker, value: object, key: str) -> bool | None:
    if not isinstance(value, bool):
        check.fail(key, f"{describe(value)} is not true or false")
        return None
    return value


def _name(check: Checker, value: object, key: str) -> str | None:
    text = check.text(value, key, max_len=MAX_NAME, allow_empty=False, strip=True)
    if text is not None and any(ord(c) < 32 for c in text):
        check.fail(key, "contains a control character")
        return None
    return text


def _names(check: Checker, value: object, key: str) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        check.fail(key, f"{describe(value)} is not a list of names")
        return None
    issues = len(check.issues)
    names = [_name(check, item, f"{key}[{index}]") for index, item in enumerate(value[:64])]
    if len(value) > 64:
        check.fail(key, "more than 64 names")
    return None if len(check.issues) != issues else tuple(n for n in names if n is not None)


@dataclass(frozen=True)
class Setting:
    key: str  # dotted path: where it lives in the file and in StudioSettings
    read: Reader
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting("reference_opponent", _name, "the opponent headless evidence must be played against to count"),
    Setting("reference_aliases", _names, "other spellings of the reference opponent"),
    Setting("headless_max_tier", _tier, "the highest tier headless evidence alone can give an AI skill"),
    Setting("demote_on_verify", _flag, "whether a verify batch may lower a tier (off: only decay does)"),
    Setting("decay_tier", _tier, "where a Proven skill drops when revalidation no longer supports it"),
    Setting("thresholds.candidate", _rate, "an AI candidate: success rate above this"),
    Setting("thresholds.established", _rate, "AI Established: success rate above this"),
    Setting("thresholds.established_games", _whole(1, MAX_GAMES, "games"), "AI Established: at least these games"),
    Setting("thresholds.proven", _rate, "AI Proven: success rate above this"),
    Setting("thresholds.proven_games", _whole(1, MAX_GAMES, "games"), "AI Proven: at least these games"),
    Setting("thresholds.content_candidate_rating", _rating, "a content candidate: average rating at least this"),
    Setting("thresholds.content_established_rating", _rating, "content Established: average rating at least this"),
    Setting("thresholds.content_established_plays", _whole(1, MAX_GAMES, "plays"), "content Established: rated plays"),
    Setting("prune.stale_days", _whole(1, MAX_DAYS, "days"), "prune a tentative skill not verified for this long"),
    Setting("prune.unused_days", _whole(1, MAX_DAYS, "days"), "prune a skill not used for this long"),
    Setting("prune.max_size", _optional_size, "prune down to this many skills (null: no cap)"),
)
KEYS: dict[str, Setting] = {setting.key: setting for setting in SETTINGS}

Values = dict[str, JsonValue]  # a layer: dotted key -> plain value, only the keys it sets


def to_values(settings: StudioSettings) -> Values:
    """Every key with its value in ``settings``, as plain JSON data."""
    out: Values = {}
    for setting in SETTINGS:
        value = _get(settings, setting.key)
        if isinstance(value, Confidence):
            value = value.value
        elif isinstance(value, tuple):
            value = list(value)
        out[setting.key] = value
    return out


def _get(settings: StudioSettings, key: str) -> Any:
    target: Any = settings
    for part in key.split("."):
        target = getattr(target, part)
    return target


def _set(settings: Any, parts: Sequence[str], value: Any) -> Any:
    if len(parts) == 1:
        return replace(settings, **{parts[0]: value})
    return replace(settings, **{parts[0]: _set(getattr(settings, parts[0]), parts[1:], value)})


def resolve(
    *layers: Mapping[str, object], base: StudioSettings = DEFAULTS, context: str = "settings"
) -> StudioSettings:
    """``base`` with each layer's values laid over it in turn, every value and the result checked.

    Raises :class:`ValidationError` naming each problem by its key path (all of them at once)."""
    check = Checker()
    settings = base
    for layer in layers:
        for key, raw in layer.items():
            setting = KEYS.get(key)
            if setting is None:
                check.fail(key, _unknown(key))
                continue
            issues = len(check.issues)
            value = setting.read(check, raw, key)
            if len(check.issues) == issues:  # readers record an issue for every value they refuse
                settings = _set(settings, key.split("."), value)
    if not check.issues:
        _check_ladder(check, settings, layers[-1] if layers else {})
    check.raise_if_failed(context)
    return settings


def _check_ladder(check: Checker, settings: StudioSettings, latest: Mapping[str, object]) -> None:
    """The tiers must not overlap: a bar above the next tier's would make the ladder meaningless.
    The problem is named at the key ``latest`` (the layer being written) set, if it set one."""
    t = settings.thresholds
    pairs = (
        ("candidate", "established", "a higher tier needs a higher bar"),
        ("established", "proven", "a higher tier needs a higher bar"),
        ("established_games", "proven_games", "Proven needs at least as many games as Established"),
        ("content_candidate_rating", "content_established_rating", "a higher tier needs a higher bar"),
    )
    for low, high, why in pairs:
        low_value, high_value = getattr(t, low), getattr(t, high)
        if low_value <= high_value:
            continue
        if f"thresholds.{low}" in latest and f"thresholds.{high}" not in latest:
            check.fail(f"thresholds.{low}", f"{low_value:g} is above thresholds.{high} ({high_value:g}); {why}")
        else:
            check.fail(f"thresholds.{high}", f"{high_value:g} is below thresholds.{low} ({low_value:g}); {why}")


def _unknown(key: str) -> str:
    return f"unknown setting; the settings are {', '.join(KEYS)}"


def parse_value(text: str) -> JsonValue:
    """A value typed on a command line: YAML's reading of one scalar or flow list (``0.75``,
    ``true``, ``null``, ``[a, b]``, ``IC Default Hard``)."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if isinstance(value, bool | int | float | str | list) or value is None:
        return value
    return text


def flatten(document: object, *, context: str, strict: bool = True) -> Values:
    """A nested settings mapping (the file's shape) as dotted keys; unknown keys are refused
    (``strict=False``: kept under their dotted path, for a repair to remove them)."""
    check = Checker()
    mapping = check.mapping({} if document is None else document, "")
    out: Values = {}
    sections = {key.split(".", 1)[0] for key in KEYS if "." in key}

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for name, value in node.items():
            key = f"{prefix}{name}"
            if not isinstance(name, str):
                check.fail(prefix.rstrip(".") or "", f"{describe(name)} is not a setting name")
            elif key in KEYS:
                out[key] = value
            elif not prefix and name in sections and isinstance(value, Mapping):
                walk(value, f"{name}.")
            elif strict:
                check.fail(key, _unknown(key))
            else:
                out[key] = value

    if mapping is not None:
        walk(mapping, "")
    check.raise_if_failed(context)
    return out


def nest(values: Mapping[str, JsonValue]) -> dict[str, Any]:
    """Dotted keys back into the file's nested shape, in the order of :data:`SETTINGS`."""
    out: dict[str, Any] = {}
    for setting in SETTINGS:
        if setting.key in values:
            holder = out
            *parents, leaf = setting.key.split(".")
            for parent in parents:
                holder = holder.setdefault(parent, {})
            holder[leaf] = values[setting.key]
    return out


# --- the user's layer: settings.yaml in the platform config folder ------------------------------------


def user_settings_path() -> Path:
    return platformdirs.user_config_path("SkillStudio", appauthor=False) / FILE_NAME


def load_user_values(path: Path | None = None, *, checked: bool = True) -> Values:
    """The keys the user's settings file sets (checked); a missing file sets none.

    Raises :class:`ValidationError` naming the file and each bad key. ``checked=False`` reads
    the keys as they are, bad ones included, so that one can be removed (``config unset``)."""
    path = path or user_settings_path()
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise ValidationError([Issue("", f"cannot be read ({error.strerror or error})")], context=str(path)) from None
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ValidationError([Issue("", f"larger than {MAX_SETTINGS_BYTES} bytes")], context=str(path))
    try:
        document = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise ValidationError([Issue("", f"cannot be read as YAML: {error}")], context=str(path)) from None
    values = flatten(document, context=str(path), strict=checked)
    if checked:
        resolve(values, context=str(path))
    return values


def save_user_values(values: Mapping[str, JsonValue], path: Path | None = None) -> Path:
    """Write the user's layer (checked first) atomically: a crash never leaves half a file."""
    path = path or user_settings_path()
    resolve(values, context=str(path))
    text = _HEADER + (yaml.safe_dump(nest(values), sort_keys=False, allow_unicode=True) if values else "")
    write_atomically(path, text.encode("utf-8"), mode=0o600)
    return path


# --- the library's layer: studio_settings ------------------------------------------------------------


class LibrarySettings(StorePart):
    """``repository.settings``: the settings this library overrides, stored in it."""

    def values(self) -> Values:
        """The keys the library sets, as stored (values are checked by :func:`resolve`)."""
        with self.database.read() as session:
            rows = session.execute(select(SettingRow.key, SettingRow.value)).all()
        return {key: _decoded(text) for key, text in rows}

    def save(self, values: Mapping[str, JsonValue], *, below: Mapping[str, JsonValue] | None = None) -> None:
        """Replace the library's overrides with ``values`` in one transaction (and an audit entry
        naming what changed). ``below`` is the user's layer the result is checked over (default:
        the user's settings file); nothing is written if the result is invalid."""
        user = load_user_values() if below is None else below
        resolve(user, values, context="library settings")
        with self._work(AuditAction.SETTINGS) as work:
            session = work.session
            before = {key: _decoded(text) for key, text in session.execute(select(SettingRow.key, SettingRow.value))}
            # "from" absent: the key was not set here before; "to" absent: it no longer is.
            changed = {
                key: {
                    **({"from": before[key]} if key in before else {}),
                    **({"to": values[key]} if key in values else {}),
                }
                for key in sorted(set(before) | set(values))
                if before.get(key) != values.get(key) or (key in before) != (key in values)
            }
            if not changed:
                return
            session.execute(delete(SettingRow))
            session.add_all(
                SettingRow(key=key, value=json.dumps(value), updated_by=self.actor.id, updated_at=work.now)
                for key, value in values.items()
            )
            work.audit(AuditAction.SETTINGS, None, None, {"changed": changed})
            work.announce()

    def set(self, key: str, value: JsonValue, *, below: Mapping[str, JsonValue] | None = None) -> None:
        self.save({**self.values(), key: value}, below=below)

    def unset(self, key: str, *, below: Mapping[str, JsonValue] | None = None) -> None:
        values = self.values()
        if key not in KEYS and key not in values:
            raise ValidationError([Issue(key, _unknown(key))], context="library settings")
        values.pop(key, None)
        self.save(values, below=below)


def _decoded(text: object) -> JsonValue:
    """A stored value; one that is not JSON (another program wrote it) is kept as its text, for
    resolve() to refuse by its key and ``config unset --library KEY`` to remove."""
    if not isinstance(text, str):
        return None if text is None else str(text)
    try:
        value: JsonValue = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return value


# --- all three layers -------------------------------------------------------------------------------

SOURCES = ("default", "user", "library")


@dataclass(frozen=True)
class EffectiveSettings:
    settings: StudioSettings
    user: Values  # what the user's file sets
    library: Values  # what the library sets
    user_path: Path

    def source(self, key: str) -> str:
        """Where ``key``'s value comes from: default, user or library."""
        return "library" if key in self.library else "user" if key in self.user else "default"


def effective_settings(database: Database | None, *, user_path: Path | None = None) -> EffectiveSettings:
    """Defaults, the user's file and (with a library) the library's overrides, checked together."""
    path = user_path or user_settings_path()
    user = load_user_values(path)
    library: Values = LibrarySettings(database, Actor.current_user()).values() if database is not None else {}
    settings = resolve(user, library, context=f"settings ({path} and the library's)" if library else str(path))
    return EffectiveSettings(settings, user, library, path)


__all__ = [
    "DEFAULTS",
    "KEYS",
    "SETTINGS",
    "SOURCES",
    "EffectiveSettings",
    "LibrarySettings",
    "PruneLimits",
    "Setting",
    "StudioSettings",
    "Thresholds",
    "Values",
    "effective_settings",
    "flatten",
    "load_user_values",
    "nest",
    "parse_value",
    "resolve",
    "save_user_values",
    "to_values",
    "user_settings_path",
]
