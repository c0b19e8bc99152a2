"""retrieval.yaml: round trip, defaults, every invalid field refused with its key path, no keys."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skillstudio.model.validation import ValidationError
from skillstudio.retrieval import settings
from skillstudio.retrieval.providers import ProviderConfig
from skillstudio.retrieval.settings import (
    MAX_SETTINGS_BYTES,
    config_from_options,
    load_provider_config,
    save_provider_config,
    settings_path,
)


def _write(path: Path, embeddings: object) -> Path:
    path.write_text(yaml.safe_dump({"embeddings": embeddings}), encoding="utf-8")
    return path


def _refused(path: Path) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        load_provider_config(path)
    assert caught.value.context == str(path)
    return caught.value


def test_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-written-9f3a")
    config = ProviderConfig("openai", "text-embedding-3-small", "http://127.0.0.1:8080", "OPENAI_API_KEY", 2.5, 16)
    path = tmp_path / "nested" / "retrieval.yaml"
    save_provider_config(config, path)
    assert load_provider_config(path) == config
    text = path.read_text(encoding="utf-8")
    assert "sk-never-written" not in text and "api_key_env: OPENAI_API_KEY" in text
    assert [p.name for p in path.parent.iterdir()] == ["retrieval.yaml"]  # no temporary file left behind
    save_provider_config(ProviderConfig(), path)  # replaced, not appended
    assert load_provider_config(path) == ProviderConfig()


def test_the_documented_example_reads(tmp_path: Path) -> None:
    path = tmp_path / "retrieval.yaml"
    path.write_text(
        "embeddings:\n"
        "  provider: openai        # local | openai | ollama | none\n"
        "  model: text-embedding-3-small\n"
        "  base_url: http://127.0.0.1:8080/\n"
        "  api_key_env: OPENAI_API_KEY\n"
        "  timeout: 10\n"
        "  batch_size: 64\n",
        encoding="utf-8",
    )
    assert load_provider_config(path) == ProviderConfig(
        "openai", "text-embedding-3-small", "http://127.0.0.1:8080", "OPENAI_API_KEY", 10.0, 64
    )


def test_defaults_when_missing_or_empty(tmp_path: Path) -> None:
    assert load_provider_config(tmp_path / "absent.yaml") == ProviderConfig()
    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")
    assert load_provider_config(empty) == ProviderConfig()
    other = tmp_path / "other.yaml"
    other.write_text("something_else: 1\n", encoding="utf-8")
    assert load_provider_config(other) == ProviderConfig()
    assert load_provider_config(_write(tmp_path / "partial.yaml", {"provider": "ollama"})) == ProviderConfig("ollama")


def test_default_location_is_the_user_config_folder() -> None:
    path = settings_path()
    assert path.name == "retrieval.yaml" and path.parent.name == "SkillStudio"
    assert load_provider_config() == ProviderConfig()  # conftest points the config folder into tmp
    save_provider_config(ProviderConfig("none"))
    assert load_provider_config() == ProviderConfig("none")


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("provider", "chatgpt", "is not one of local, openai, ollama, none"),
        ("provider", 3, "is not one of"),
        ("model", "", "must not be empty"),
        ("model", ["a"], "expected text"),
        ("model", "x" * 300, "at most 256"),
        ("base_url", "ftp://example.com", "http:// or https://"),
        ("base_url", "localhost:8080", "http:// or https://"),
        ("base_url", "http://user:pw@example.com", "user name or password"),
        ("base_url", "http://example.com/?key=1", "without ?query"),
        ("base_url", "http://example.com:99999", "is not a URL"),
        ("api_key_env", "sk-abc123", "name of an environment variable"),
        ("api_key_env", "1ABC", "name of an environment variable"),
        ("timeout", 0, "outside (0, 300]"),
        ("timeout", -1, "outside (0, 300]"),
        ("timeout", 301, "outside (0, 300]"),
        ("timeout", ".inf", "outside (0, 300]"),
        ("timeout", "ten", "expected a number of seconds"),
        ("timeout", True, "expected a number of seconds"),
        ("batch_size", 0, "outside 1..2048"),
        ("batch_size", 2049, "outside 1..2048"),
        ("batch_size", 1.5, "whole number"),
        ("colour", "blue", "unknown setting"),
    ],
)
def test_each_invalid_field_is_refused_with_its_path(tmp_path: Path, field: str, value: object, expected: str) -> None:
    path = tmp_path / "retrieval.yaml"
    if value == ".inf":
        path.write_text(f"embeddings:\n  {field}: .inf\n", encoding="utf-8")
    else:
        _write(path, {"provider": "openai", field: value})
    error = _refused(path)
    assert [issue.path for issue in error.issues] == [f"embeddings.{field}"]
    assert expected in error.issues[0].message


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = _write(tmp_path / "retrieval.yaml", {"provider": "x", "timeout": 0, "batch_size": 0, "base_url": "nope"})
    error = _refused(path)
    assert {issue.path for issue in error.issues} == {
        "embeddings.provider",
        "embeddings.timeout",
        "embeddings.batch_size",
        "embeddings.base_url",
    }
    assert str(path) in str(error)


@pytest.mark.parametrize("where", ["embeddings", "top"])
def test_an_api_key_is_refused(tmp_path: Path, where: str) -> None:
    secret = "sk-live-should-not-be-here-4411"
    document = (
        {"embeddings": {"provider": "openai", "api_key": secret}} if where == "embeddings" else {"api_key": secret}
    )
    path = tmp_path / "retrieval.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    error = _refused(path)
    assert [issue.path for issue in error.issues] == ["embeddings.api_key" if where == "embeddings" else "api_key"]
    assert "api_key_env" in str(error) and secret not in str(error)


def test_a_key_given_as_api_key_env_is_not_echoed(tmp_path: Path) -> None:
    secret = "sk-live-misplaced-key-8812"
    error = _refused(_write(tmp_path / "retrieval.yaml", {"api_key_env": secret}))
    assert secret not in str(error)


def test_file_too_large(tmp_path: Path) -> None:
    path = tmp_path / "retrieval.yaml"
    path.write_text("embeddings:\n  provider: local\n" + "#" * MAX_SETTINGS_BYTES + "\n", encoding="utf-8")
    error = _refused(path)
    assert f"larger than {MAX_SETTINGS_BYTES} bytes" in str(error)


@pytest.mark.parametrize(
    "text",
    ["embeddings: [unclosed\n", "- a list\n", "embeddings: 3\n", "embeddings:\n  1: x\n"],
    ids=["yaml", "list", "scalar", "int-key"],
)
def test_malformed_documents(tmp_path: Path, text: str) -> None:
    path = tmp_path / "retrieval.yaml"
    path.write_text(text, encoding="utf-8")
    _refused(path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "retrieval.yaml"
    path.write_bytes(b"embeddings:\n  model: \xff\xfe\n")
    assert "YAML" in str(_refused(path))


def test_save_refuses_an_invalid_config_and_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "retrieval.yaml"
    save_provider_config(ProviderConfig("ollama"), path)
    with pytest.raises(ValidationError) as caught:
        save_provider_config(ProviderConfig("openai", base_url="file:///etc/passwd", batch_size=0), path)
    assert {issue.path for issue in caught.value.issues} == {"embeddings.base_url", "embeddings.batch_size"}
    assert load_provider_config(path) == ProviderConfig("ollama")


def test_command_line_options_overlay_the_file() -> None:
    base = ProviderConfig("openai", "m1", "http://a:1", "KEY_A", 10.0, 32)
    assert config_from_options(base) == base
    overlaid = config_from_options(base, provider="ollama", model="m2", base_url="https://b/", timeout=3)
    assert overlaid == ProviderConfig("ollama", "m2", "https://b", "KEY_A", 3.0, 32)
    assert config_from_options(base, api_key_env="KEY_B").api_key_env == "KEY_B"


def test_invalid_command_line_options_name_the_flag() -> None:
    with pytest.raises(ValidationError) as caught:
        config_from_options(ProviderConfig(), provider="gpt", base_url="nope", api_key_env="sk-1", timeout=0)
    assert caught.value.context == "command line"
    assert {issue.path for issue in caught.value.issues} == {"--provider", "--base-url", "--api-key-env", "--timeout"}


def test_limits_match_the_brief() -> None:
    assert settings.MAX_SETTINGS_BYTES == 64 * 1024
    assert settings.MAX_TIMEOUT == 300 and settings.MAX_BATCH_SIZE == 2048
