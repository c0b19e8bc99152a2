"""Which embedding provider retrieval uses: ``retrieval.yaml`` in the user's config folder.

::

    embeddings:
      provider: openai        # local | openai | ollama | none
      model: text-embedding-3-small
      base_url: http://127.0.0.1:8080
      api_key_env: OPENAI_API_KEY
      timeout: 10
      batch_size: 64

Without the file (or without ``embeddings``) the provider is ``local``, the offline WordLlama
model. The file names the environment variable that holds an API key (``api_key_env``), never
the key: settings files get copied, synced and pasted into bug reports. A key-looking field is
refused with a message saying so. Command-line flags overlay the file
(:func:`config_from_options`) and are checked the same way.
"""

from __future__ import annotations

import math
import re
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import platformdirs
import yaml

from skillstudio.files import write_atomically
from skillstudio.model.validation import Checker, Issue, ValidationError, describe, join_path
from skillstudio.retrieval.providers import PROVIDER_KINDS, EmbeddingProvider, ProviderConfig, make_provider

MAX_SETTINGS_BYTES = 64 * 1024
MAX_TIMEOUT = 300.0  # seconds per request
MAX_BATCH_SIZE = 2048
MAX_MODEL = 256
MAX_URL = 2048
SECTION = "embeddings"
FIELDS = ("provider", "model", "base_url", "api_key_env", "timeout", "batch_size")
# Fields that would hold a secret: refused, so a key never lands in a file (or its backups).
KEY_FIELDS = frozenset({"api_key", "apikey", "key", "token", "api_token", "secret", "password", "authorization"})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER = "# SkillStudio retrieval settings. The API key stays in the environment variable api_key_env names.\n"


def settings_path() -> Path:
    return platformdirs.user_config_path("SkillStudio", appauthor=False) / "retrieval.yaml"


def configured_provider(path: Path | None = None) -> EmbeddingProvider | None:
    """The provider the settings name (``None`` for ``none``); ValidationError if they are invalid."""
    return make_provider(load_provider_config(path))


def load_provider_config(path: Path | None = None) -> ProviderConfig:
    """The configured provider; a missing file means the default (``local``).

    Raises :class:`ValidationError` listing every problem with its key path (``embeddings.timeout``).
    """
    path = path or settings_path()
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_SETTINGS_BYTES + 1)  # never read more of a file than is allowed
    except FileNotFoundError:
        return ProviderConfig()
    except OSError as error:
        raise ValidationError([Issue("", f"cannot be read ({error.strerror or error})")], context=str(path)) from None
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ValidationError([Issue("", f"larger than {MAX_SETTINGS_BYTES} bytes")], context=str(path))
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise ValidationError([Issue("", f"cannot be read as YAML: {error}")], context=str(path)) from None
    check = Checker()
    document = check.mapping({} if data is None else data, "")
    if document is None:
        check.raise_if_failed(str(path))
        return ProviderConfig()  # unreachable: a failed mapping check raised above
    for name in document:
        if name.lower() in KEY_FIELDS:  # a key in the wrong place is refused wherever it is
            _refuse_key(check, name)
    section = document.get(SECTION)
    if section is None:
        check.raise_if_failed(str(path))
        return ProviderConfig()
    fields = check.mapping(section, SECTION)
    config = _read_fields(check, fields or {}, {name: join_path(SECTION, name) for name in FIELDS}, SECTION)
    check.raise_if_failed(str(path))
    return config


def save_provider_config(config: ProviderConfig, path: Path | None = None) -> None:
    """Write ``config`` (checked first) atomically: a temporary file, then :func:`os.replace`,
    so a crash never leaves half a settings file. Only the key's variable name is written."""
    path = path or settings_path()
    fields = _as_fields(config)
    check = Checker()
    _read_fields(check, fields, {name: join_path(SECTION, name) for name in FIELDS}, SECTION)
    check.raise_if_failed(str(path))
    text = _HEADER + yaml.safe_dump({SECTION: fields}, sort_keys=False, allow_unicode=True)
    write_atomically(path, text.encode("utf-8"), mode=0o600)


def config_from_options(
    base: ProviderConfig,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    timeout: float | None = None,
) -> ProviderConfig:
    """``base`` (the settings file) with the command-line flags that were given laid over it.

    Each flag is checked like its field in the file; a :class:`ValidationError` names the flag.
    """
    given = {
        "provider": provider,
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "timeout": timeout,
    }
    fields = {**_as_fields(base), **{name: value for name, value in given.items() if value is not None}}
    paths = {name: f"--{name.replace('_', '-')}" for name in FIELDS}
    check = Checker()
    config = _read_fields(check, fields, paths, "")
    check.raise_if_failed("command line")
    return config


# --- reading fields --------------------------------------------------------------------------


def _read_fields(check: Checker, fields: Mapping[str, Any], paths: Mapping[str, str], where: str) -> ProviderConfig:
    """A ProviderConfig from ``fields``; each problem is recorded at ``paths[field]``."""
    for name in fields:
        if name.lower() in KEY_FIELDS:
            _refuse_key(check, join_path(where, name))
        elif name not in FIELDS:
            check.fail(join_path(where, name), f"unknown setting; the settings are {', '.join(FIELDS)}")
    default = ProviderConfig()
    kind = default.kind
    if fields.get("provider") is not None:
        value = fields["provider"]
        if isinstance(value, str) and value.strip().lower() in PROVIDER_KINDS:
            kind = value.strip().lower()
        else:
            check.fail(paths["provider"], f"{describe(value)} is not one of {', '.join(PROVIDER_KINDS)}")
    model = _optional(check, fields.get("model"), paths["model"], MAX_MODEL)
    base_url = _url(check, fields.get("base_url"), paths["base_url"])
    api_key_env = _env_name(check, fields.get("api_key_env"), paths["api_key_env"])
    timeout = default.timeout
    if fields.get("timeout") is not None:
        timeout = _timeout(check, fields["timeout"], paths["timeout"]) or default.timeout
    batch_size = default.batch_size
    if fields.get("batch_size") is not None:
        batch_size = check.integer(fields["batch_size"], paths["batch_size"], 1, MAX_BATCH_SIZE) or default.batch_size
    return ProviderConfig(kind, model, base_url, api_key_env, timeout, batch_size)


def _as_fields(config: ProviderConfig) -> dict[str, Any]:
    fields: dict[str, Any] = {"provider": config.kind}
    for name in ("model", "base_url", "api_key_env"):
        if getattr(config, name) is not None:
            fields[name] = getattr(config, name)
    fields["timeout"] = config.timeout
    fields["batch_size"] = config.batch_size
    return fields


def _refuse_key(check: Checker, path: str) -> None:
    check.fail(
        path,
        "an API key does not belong in the settings: put it in an environment variable and name that"
        " variable with api_key_env (e.g. api_key_env: OPENAI_API_KEY)",
    )


def _optional(check: Checker, value: object, path: str, max_len: int) -> str | None:
    if value is None:
        return None
    text = check.text(value, path, max_len=max_len, allow_empty=False, strip=True)
    if text is not None and any(ord(c) < 32 or ord(c) == 127 for c in text):
        check.fail(path, "contains a control character")
        return None
    return text


def _url(check: Checker, value: object, path: str) -> str | None:
    url = _optional(check, value, path, MAX_URL)
    if url is None:
        return None
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0..65535
    except ValueError:
        check.fail(path, f"{describe(url)} is not a URL")
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        check.fail(path, f"{describe(url)} is not an http:// or https:// URL")
    elif " " in url:
        check.fail(path, "contains a space")
    elif parts.username is not None or parts.password is not None:
        check.fail(path, "must not carry a user name or password; name the key's variable with api_key_env")
    elif parts.query or parts.fragment:
        check.fail(path, "must be the server's address, without ?query or #fragment")
    else:
        return url.rstrip("/")
    return None


def _env_name(check: Checker, value: object, path: str) -> str | None:
    name = _optional(check, value, path, MAX_MODEL)
    if name is not None and not _ENV_NAME.fullmatch(name):
        # Not echoed: a value that is not a variable name may well be the key itself.
        check.fail(path, "must be the name of an environment variable (letters, digits and _), not the key")
        return None
    return name


def _timeout(check: Checker, value: object, path: str) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        check.fail(path, f"expected a number of seconds, got {describe(value)}")
        return None
    seconds = float(value)
    if not math.isfinite(seconds) or not 0 < seconds <= MAX_TIMEOUT:
        check.fail(path, f"{seconds:g} is outside (0, {MAX_TIMEOUT:g}] seconds")
        return None
    return seconds


__all__ = [
    "MAX_SETTINGS_BYTES",
    "config_from_options",
    "configured_provider",
    "load_provider_config",
    "save_provider_config",
    "settings_path",
]
