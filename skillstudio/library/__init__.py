"""Which library to open: the user's default library, the bundled sample, paths given by the user."""

from skillstudio.library.locations import (
    ENV_VAR,
    chosen_library_path,
    create_library,
    default_library_path,
    open_library,
    sample_library_path,
)
from skillstudio.library.sample import SampleSkill, load_sample

__all__ = [
    "ENV_VAR",
    "SampleSkill",
    "chosen_library_path",
    "create_library",
    "default_library_path",
    "load_sample",
    "open_library",
    "sample_library_path",
]
