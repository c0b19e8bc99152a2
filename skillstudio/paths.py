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


def documentation() -> Path | None:
    """The README the documentation starts from (it links to docs/), where this copy has it: a
    checkout, or an app bundle that ships it beside its resources; None if it was not installed."""
    for folder in (Path(__file__).resolve().parent.parent, resources_dir().parent):
        readme = folder / "README.md"
        if readme.is_file():
            return readme
    return None
