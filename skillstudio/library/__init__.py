"""Which library to open: the user's default library, the bundled sample, paths given by the user."""

from skillstudio.library.locations import (
    ENV_VAR,
    RECENT_LIMIT,
    RecentLibrary,
    actor_for,
    chosen_library_path,
    create_library,
    default_library_path,
    fill_with_sample,
    library_name,
    open_library,
    recent_libraries,
    remember_recent,
    sample_library_path,
)
from skillstudio.library.sample import SampleSkill, load_sample

__all__ = [
    "ENV_VAR",
    "RECENT_LIMIT",
    "RecentLibrary",
    "SampleSkill",
    "actor_for",
    "chosen_library_path",
    "create_library",
    "default_library_path",
    "fill_with_sample",
    "library_name",
    "load_sample",
    "open_library",
    "recent_libraries",
    "remember_recent",
    "sample_library_path",
]
