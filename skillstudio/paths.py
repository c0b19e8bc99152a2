"""Where SkillStudio's bundled data lives, in a checkout, an editable install and a wheel alike."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def resources_dir() -> Path:
    """The ``resources/`` folder: shipped as the ``skillstudio.resources`` package in a wheel."""
    try:
        from importlib.resources import files

        packaged = Path(str(files("skillstudio.resources")))
        if packaged.is_dir():
            return packaged
    except ModuleNotFoundError:  # running from a checkout that was never installed
        pass
    return Path(__file__).resolve().parent.parent / "resources"


def resource(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)
