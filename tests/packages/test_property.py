"""Property: whatever a mutated package holds, the importer refuses it or imports it whole.

It never raises anything but PackageError, and a refused import leaves the library exactly as
it was; an accepted one adds exactly what its plan said.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillstudio.packages.errors import PackageError
from skillstudio.packages.icpkg import read_package
from skillstudio.packages.importer import apply_plan, incoming_from_package, plan_import
from skillstudio.store import Actor, Database, SkillRepository
from tests import factories
from tests.packages.helpers import entries_of, library_state, rezip, valid_package, with_manifest

VALID = valid_package()
ENTRIES = entries_of(VALID)
NAMES = sorted(ENTRIES)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=10,
)
hostile_names = st.sampled_from(
    [
        "../x.json",
        "/abs.json",
        "skills\\a.json",
        "skills/../../a.json",
        "skills/a.json",
        "README.md",
        "skills/",
        "a" * 300,
        "résumé.json",
    ]
)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    kind = draw(
        st.sampled_from(
            ["bytes", "entry_bytes", "drop", "add", "rename", "skill_field", "manifest_field", "yaml", "extras"]
        )
    )
    entries = dict(ENTRIES)
    rehash = draw(st.booleans())
    if kind == "bytes":
        data = bytearray(VALID)
        for _ in range(draw(st.integers(1, 8))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)
    name = draw(st.sampled_from(NAMES))
    if kind == "entry_bytes":
        content = bytearray(entries[name])
        position = draw(st.integers(0, len(content)))
        content[position:position] = draw(st.binary(min_size=1, max_size=8))
        entries[name] = bytes(content)
    elif kind == "drop":
        del entries[name]
    elif kind == "add":
        entries[draw(hostile_names)] = draw(st.binary(max_size=64))
    elif kind == "rename":
        entries[draw(hostile_names)] = entries.pop(name)
    elif kind == "skill_field" and name.startswith("skills/"):
        document = json.loads(entries[name])
        path = draw(
            st.sampled_from(
                [
                    "id",
                    "domain",
                    "name",
                    "tags",
                    "quality",
                    "provenance",
                    "body",
                    "composable_with",
                    "created_at",
                    "use_count",
                ]
            )
        )
        document[path] = draw(json_values)
        entries[name] = json.dumps(document).encode()
    elif kind == "extras":
        stem = draw(st.sampled_from([n for n in NAMES if n.startswith("skills/")]))[len("skills/") : -len(".json")]
        files = draw(
            st.dictionaries(hostile_names | st.sampled_from(["scripts/a.py", "assets/x"]), json_values, max_size=3)
        )
        document = draw(st.sampled_from([{"frontmatter": draw(json_values), "files": files}, draw(json_values)]))
        entries[f"extras/{stem}.json"] = json.dumps(document).encode()
    elif kind == "manifest_field":
        manifest = yaml.safe_load(entries["manifest.yaml"])
        section = draw(st.sampled_from(["package", "skill_library", None]))
        target = manifest if section is None else manifest[section]
        key = draw(st.sampled_from([*sorted(target), "format_version", "extra"]))
        target[key] = draw(json_values)
        entries["manifest.yaml"] = yaml.safe_dump(manifest).encode()
        rehash = False
    elif kind == "yaml":
        text = entries["manifest.yaml"].decode()
        position = draw(st.integers(0, len(text)))
        insert = draw(
            st.sampled_from(["&a ", "*a", "!!python/name:os.system ", "\t", ": :", "- ", "{", "!!binary ", "\x00"])
        )
        entries["manifest.yaml"] = (text[:position] + insert + text[position:]).encode("utf-8", "surrogatepass")
        rehash = False
    if rehash and "manifest.yaml" in entries:
        with contextlib.suppress(Exception):  # a manifest mutated past reading goes in as it is
            entries = with_manifest(entries, lambda m: None)
    return rezip(entries)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutated(), existing=st.booleans())
def test_mutated_packages_are_refused_or_imported_whole(data: bytes, existing: bool) -> None:
    with tempfile.TemporaryDirectory() as folder, Database(Path(folder) / "lib.db", create=True) as database:
        repository = SkillRepository(database, Actor("prop"))
        if existing:
            repository.create(factories.ai_skill())
        before = library_state(repository)
        count = repository.count()
        try:
            package = read_package(data)
            incoming, origin = incoming_from_package(package)
            plan = apply_plan(repository, plan_import(repository, incoming, origin=origin, source="mutated"))
        except PackageError as error:
            assert str(error)  # a reason is given
            assert library_state(repository) == before
            return
        assert repository.count() == count + len(plan.added) - len(plan.trashed)
        for item in plan.added:
            assert repository.exists(item.skill.id)
