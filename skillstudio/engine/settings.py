"""Which engine plays a game module's verification batches: settings per module, per-run override.

An engine is an argv list, never a shell string. The settings file (``engines.yaml`` in the
user's config folder) maps game modules to commands::

    engines:
      ra1: [/opt/ironcurtain/ic-headless, --skill-protocol]
      td: [/opt/ironcurtain/ic-headless, --mod, td, --skill-protocol]

A module without an entry uses SkillStudio's reference engine (``python -m skillstudio.engine``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

import platformdirs
import yaml

from skillstudio.engine.protocol import reference_engine_argv
from skillstudio.files import write_atomically
from skillstudio.model.validation import Checker, Issue, ValidationError, join_path

MAX_SETTINGS_BYTES = 64 * 1024


def settings_path() -> Path:
    return platformdirs.user_config_path("SkillStudio", appauthor=False) / "engines.yaml"


def load_engine_settings(path: Path | None = None) -> dict[str, list[str]]:
    """The configured engine per game module; a missing file means none configured."""
    path = path or settings_path()
    if not path.exists():
        return {}
    raw = path.read_bytes()
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ValidationError([Issue("", f"larger than {MAX_SETTINGS_BYTES} bytes")], context=str(path))
    try:
        data = yaml.safe_load(raw.decode("utf-8")) or {}
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise ValidationError([Issue("", f"cannot be read as YAML: {error}")], context=str(path)) from None
    check = Checker()
    document = check.mapping(data, "")
    engines = check.mapping(document.get("engines", {}), "engines") if document is not None else None
    settings: dict[str, list[str]] = {}
    for module, command in (engines or {}).items():
        where = join_path("engines", module)
        argv = check.each(command, where, lambda v, p: check.text(v, p, max_len=4096, allow_empty=False), max_items=64)
        if isinstance(command, list) and not command:
            check.fail(where, "an engine command needs at least the program")
        elif argv:
            settings[module] = list(argv)
    check.raise_if_failed(str(path))
    return settings


def save_engine_settings(settings: Mapping[str, Sequence[str]], path: Path | None = None) -> None:
    path = path or settings_path()
    text = yaml.safe_dump({"engines": {m: list(a) for m, a in settings.items()}}, sort_keys=True)
    write_atomically(path, text.encode("utf-8"))  # never a half-written settings file


def engine_argv(
    game_module: str,
    *,
    override: Sequence[str] | str | None = None,
    settings: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The command for this run: the override (e.g. ``--engine``), else the module's setting,
    else the reference engine. A string override is split like a shell would, never run by one."""
    if override:
        argv = shlex.split(override) if isinstance(override, str) else list(override)
        if not argv:
            raise ValueError("the engine command is empty")
        return argv
    configured = (settings if settings is not None else load_engine_settings()).get(game_module)
    return list(configured) if configured else reference_engine_argv()
