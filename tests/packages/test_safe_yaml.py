"""The hostile-YAML guarantees hold with libyaml's loader and with PyYAML's own (its fallback),
and libyaml's dumper writes the manifest PyYAML's own would."""

from __future__ import annotations

import pytest
import yaml

from benchmarks.synthetic import generate_skills
from skillstudio.packages.errors import PackageError
from skillstudio.packages.icpkg import build_manifest, skill_stem
from skillstudio.packages.safe_yaml import LOADERS, MAX_DEPTH, MAX_NODES, dump_yaml, load_yaml
from tests.packages.helpers import META


def test_libyaml_is_used_where_pyyaml_has_it() -> None:
    if not hasattr(yaml, "CSafeLoader"):
        assert len(LOADERS) == 1 and issubclass(LOADERS[0], yaml.SafeLoader)
        pytest.skip("this PyYAML lacks libyaml: only the fallback loader is tested")
    assert issubclass(LOADERS[0], yaml.CSafeLoader)
    assert issubclass(LOADERS[1], yaml.SafeLoader)
    assert not issubclass(LOADERS[1], yaml.CSafeLoader)


@pytest.fixture(params=LOADERS, ids=lambda loader: loader.__mro__[1].__name__)  # CSafeLoader, SafeLoader
def loader(request: pytest.FixtureRequest) -> type:
    return request.param


def refused(text: str, message: str, loader: type, *, max_aliases: int = 0, max_nodes: int = MAX_NODES) -> None:
    with pytest.raises(PackageError, match=message):
        load_yaml(text, "manifest.yaml", max_aliases=max_aliases, max_nodes=max_nodes, loader=loader)


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b]\n"


def test_aliases_and_anchors_are_refused_where_none_are_allowed(loader: type) -> None:
    refused(BOMB, r"anchors/aliases are not allowed here \(more than 0\)", loader)
    refused("a: &a x\n", "anchors/aliases are not allowed", loader)  # an anchor alone


def test_aliases_beyond_the_cap_are_refused_and_within_it_resolved(loader: type) -> None:
    refused(BOMB, r"more than 10\)", loader, max_aliases=10)
    assert load_yaml("a: &a [1, 2]\nb: *a\n", "x", max_aliases=1, loader=loader) == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize(
    "tag", ["!!python/object/apply:os.system ['echo pwned']", "!!binary aGVsbG8=", "!custom thing", "!!set {a, b}"]
)
def test_tags_outside_the_core_schema_are_refused(loader: type, tag: str) -> None:
    refused(f"description: {tag}\n", "is not allowed", loader)


def test_nesting_is_bounded(loader: type) -> None:
    assert load_yaml("a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1), "x", loader=loader)
    refused("a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH, f"nested deeper than {MAX_DEPTH} levels", loader)
    refused("[" * 5000 + "]" * 5000, "nested deeper", loader)


def test_values_are_counted_before_any_is_built(loader: type) -> None:
    flat = "[" + "1, " * 2_000 + "1]"  # a sequence and 2,001 scalars
    assert len(load_yaml(flat, "x", max_nodes=2_002, loader=loader)) == 2_001  # type: ignore[arg-type]
    refused(
        flat, r"manifest.yaml: not allowed YAML \(line 1, column \d+\): more than 2001 values", loader, max_nodes=2_001
    )
    # aliases count too: each is a value the document holds
    refused("a: &a [1]\nb: [*a, *a, *a]\n", "more than 6 values", loader, max_aliases=3, max_nodes=6)
    assert load_yaml("a: &a [1]\nb: [*a, *a, *a]\n", "x", max_aliases=3, max_nodes=9, loader=loader)


def test_a_parser_making_subclasses_of_the_events_is_checked_by_their_bases() -> None:
    """The check looks an event's class up for speed; a parser whose events subclass PyYAML's
    must still have every one counted and checked, not passed over."""

    class Relabelled(LOADERS[-1]):  # type: ignore[misc, valid-type]
        def get_event(self):  # type: ignore[no-untyped-def]
            event = super().get_event()
            return type("Sub" + type(event).__name__, (type(event),), {})(**vars(event))

    with pytest.raises(PackageError, match="more than 3 values"):
        load_yaml("[1, 2, 3]", "x", max_nodes=3, loader=Relabelled)
    with pytest.raises(PackageError, match="nested deeper"):
        load_yaml("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "x", loader=Relabelled)
    with pytest.raises(PackageError, match="anchors/aliases are not allowed"):
        load_yaml(BOMB, "x", loader=Relabelled)
    assert load_yaml("a: [1, 2]", "x", loader=Relabelled) == {"a": [1, 2]}


def test_invalid_yaml_names_its_line(loader: type) -> None:
    refused("package: [unclosed", r"not valid or not allowed YAML \(line \d", loader)
    refused("a: 1\nb: [\n  c: d: e", r"not valid or not allowed YAML \(line", loader)


def test_dates_stay_text_and_core_scalars_keep_their_types(loader: type) -> None:
    text = "when: 2025-01-02\nat: 2025-01-02T03:04:05Z\nn: 3\nf: 1.5\nb: true\nz: null\ns: '007'\n"
    assert load_yaml(text, "x", loader=loader) == {
        "when": "2025-01-02",
        "at": "2025-01-02T03:04:05Z",
        "n": 3,
        "f": 1.5,
        "b": True,
        "z": None,
        "s": "007",
    }


def _manifest(description: str = "Naval patterns") -> dict:
    skills = generate_skills(300, seed=57)
    files = {f"skills/{skill_stem(skill.id)}.json": skill.description.encode() for skill in skills}
    files["README.md"] = b"readme"
    manifest = build_manifest(META, skills, files)
    manifest["package"]["description"] = description
    manifest["package"]["tags"] = ["yes", "no", "on", "1.0", "2025-01-01", "null", "~", "", " padded ", "Ünïcödé"]
    return manifest


def test_both_dumpers_write_the_same_manifest_and_both_loaders_read_it_back() -> None:
    manifest = _manifest()
    fast = dump_yaml(manifest)
    assert fast == dump_yaml(manifest, dumper=yaml.SafeDumper)
    for loader in LOADERS:
        assert load_yaml(fast, "manifest.yaml", loader=loader) == manifest


def test_a_long_quoted_description_reads_back_from_either_dumper() -> None:
    # The two emitters may fold a long double-quoted line at different places: same data.
    manifest = _manifest("Ünïcödé: a long line " + "word " * 40 + "\nline: text\n  - not a list\n\ttab # 'q' \"dq\"")
    for dumper in dict.fromkeys((getattr(yaml, "CSafeDumper", yaml.SafeDumper), yaml.SafeDumper)):
        for loader in LOADERS:
            assert load_yaml(dump_yaml(manifest, dumper=dumper), "manifest.yaml", loader=loader) == manifest
