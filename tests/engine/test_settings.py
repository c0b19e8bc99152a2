"""Engine commands per game module, overridable per run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillstudio.engine.protocol import reference_engine_argv
from skillstudio.engine.settings import engine_argv, load_engine_settings, save_engine_settings
from skillstudio.model import ValidationError


def test_override_then_setting_then_reference_engine(tmp_path: Path) -> None:
    path = tmp_path / "engines.yaml"
    save_engine_settings({"ra1": ["/opt/ic/ic-headless", "--skill-protocol"]}, path)
    settings = load_engine_settings(path)
    assert engine_argv("ra1", settings=settings) == ["/opt/ic/ic-headless", "--skill-protocol"]
    assert engine_argv("td", settings=settings) == reference_engine_argv()
    assert engine_argv("ra1", override="/tmp/my engine/run --fast 'two words'", settings=settings) == [
        "/tmp/my",
        "engine/run",
        "--fast",
        "two words",
    ]
    assert engine_argv("ra1", override=["/x y/engine"], settings=settings) == ["/x y/engine"]


def test_missing_settings_file_means_none(tmp_path: Path) -> None:
    assert load_engine_settings(tmp_path / "absent.yaml") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("engines: {ra1: []}", "engines.ra1: an engine command needs at least the program"),
        ("engines: {ra1: 'ic --x'}", "engines.ra1: expected a list"),
        ("engines: {ra1: [1]}", "engines.ra1[0]: expected text"),
        ("engines: [", "cannot be read as YAML"),
    ],
)
def test_bad_settings_name_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "engines.yaml"
    path.write_text(text)
    with pytest.raises(ValidationError, match=re.escape(message)) as caught:
        load_engine_settings(path)
    assert str(path) in str(caught.value)
