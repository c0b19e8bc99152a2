"""The hostile-YAML guarantees hold with libyaml's loader and with PyYAML's own (its fallback),
and libyaml's dumper writes the manifest PyYAML's own would."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.synthetic import generate_skills
from skillstudio.packages.errors import PackageError
from skillstudio.packages.icpkg import build_manifest, skill_stem
from skillstudio.packages.safe_yaml import LOADERS, MAX_DEPTH, MAX_NODES, _read_checked, dump_yaml, load_yaml
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


# --- the document built from the checked events is the one the full loader builds ------------

_TRICKY = st.sampled_from(
    ["yes", "No", "on", "OFF", "y", "null", "Null", "~", "", " padded ", "1_000", "0x1F", "0o17", "0b101", "017",
     "1:20", "190:20:30", ".inf", "-.INF", ".nan", "1e3", "6.8523015e+5", "+12", "2026-01-02", "2026-01-02 10:00:00",
     "<<", "=", "#", "a: b", "- x", "[1]", "{a}", "'q'", '"dq"', "tab\there", "line\nbreak", "Ünïcödé", "*alias",
     "&anchor", "!tag", "%", "@", "`"]
)  # fmt: skip
_SCALARS = _TRICKY | st.text(max_size=8) | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
_DATA = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(_TRICKY | st.text(max_size=6) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


def full_load(text: str, loader: type) -> object:
    """What PyYAML's own compose-and-construct makes of ``text`` (with the same loader)."""
    parser = loader(text)
    try:
        return parser.get_single_data()
    finally:
        parser.dispose()


@settings(max_examples=300, deadline=None)
@given(data=_DATA, flow=st.sampled_from([None, True, False]), width=st.sampled_from([20, 80]))
def test_any_dumped_document_is_built_from_its_events_as_the_full_loader_builds_it(
    data: object, flow: bool | None, width: int
) -> None:
    text = yaml.dump(data, Dumper=yaml.SafeDumper, default_flow_style=flow, width=width, allow_unicode=True)
    for loader in LOADERS:
        built, document = _read_checked(text, "x", 0, MAX_NODES, loader)
        assert built  # nothing here needs the full loader
        assert document == full_load(text, loader) == load_yaml(text, "x", loader=loader)


HANDWRITTEN = [
    "a: 1\nb: [x, {c: d}]\n",
    "base: {x: 1}\nother:\n  <<: {x: 2, y: 3}\n  z: 4\n",  # a merge key: the full loader
    "= : value\nb: =\n",  # value keys
    "a: !!str 12\nb: !!int '7'\nc: !!float 1\nd: !!bool 'true'\ne: !!null ''\nf: !!map {g: 1}\ng: !!seq [1]\n",
    "a: ! 12\nb: ! [1]\n",  # the non-specific tag
    "a: b\na: c\n",  # a repeated key: the last wins
    "? [1, 2]\n: complex\n",  # a collection as a key
    "? x\n: y\n? \n: empty key\n",
    "",
    "---\n...\n",
    "# only a comment\n",
    "a:\nb: ~\nc: null\n",
    "text: |\n  kept\n   lines\nfolded: >\n  one\n  two\n",
    "- - - nested\n  - x\n- {a: [1, {b: 2}]}\n",
    "a: 1\n---\nb: 2\n",  # two documents
    "!!seq {a: 1}",  # a retagged collection
    "!!int abc",
    "a: 0x1F\nb: 1:20\nc: .inf\nd: -.nan\ne: 1_000\nf: 2026-01-02\n",
]


@pytest.mark.parametrize("text", HANDWRITTEN)
def test_handwritten_documents_read_as_the_full_loader_reads_them(text: str, loader: type) -> None:
    try:
        expected = full_load(text, loader)
    except (yaml.YAMLError, ValueError) as error:
        with pytest.raises(PackageError):
            load_yaml(text, "x", loader=loader)
        assert type(error).__name__  # the full loader refused it too
        return
    document = load_yaml(text, "x", loader=loader)
    assert document == expected or (document != document and expected != expected)  # .nan


def test_anchors_where_aliases_are_allowed_are_left_to_the_full_loader(loader: type) -> None:
    assert _read_checked("a: &x [1]\nb: *x\n", "x", 1, MAX_NODES, loader) == (False, None)
    assert load_yaml("a: &x [1]\nb: *x\n", "x", max_aliases=1, loader=loader) == {"a": [1], "b": [1]}
