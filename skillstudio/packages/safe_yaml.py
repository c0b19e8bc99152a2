"""YAML from outside: the safe loader, minus the features hostile files abuse.

* anchors and aliases are refused outright in manifests, and capped elsewhere (alias bombs);
* only the core schema's tags are accepted (no ``!!python/...``, ``!!binary``, ``!foo``);
* dates stay text (no implicit timestamps), so a field's type never depends on its spelling;
* size, nesting and the number of nodes are bounded as the events are read, before PyYAML
  builds anything (its composer makes a node graph of several hundred bytes per node first: a
  16 MiB flow list of ``1,`` took 48 s and 3 GB to load); what the check pass builds meanwhile
  is the plain data, at most ``max_nodes`` values of it.
"""

from __future__ import annotations

from typing import Any

import yaml

from skillstudio.packages.errors import PackageError, refuse

_CORE_TAGS = frozenset("tag:yaml.org,2002:" + name for name in ("str", "int", "float", "bool", "null", "map", "seq"))
MAX_DEPTH = 32
MAX_NODES = 100_000  # scalars, sequences, mappings and aliases, unless the caller allows more


class _Loader(yaml.SafeLoader):
    """Holds the resolvers (no implicit timestamps) the loaders below share."""


# No implicit timestamps: copy the resolvers without the timestamp one.
_Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


# What each kind of event is to the check: (a node, may carry a tag and anchor, depth change).
_EVENT_KINDS: dict[type[Any], tuple[bool, bool, int]] = {
    yaml.ScalarEvent: (True, True, 0),
    yaml.SequenceStartEvent: (True, True, 1),
    yaml.MappingStartEvent: (True, True, 1),
    yaml.AliasEvent: (True, False, 0),
    yaml.SequenceEndEvent: (False, False, -1),
    yaml.MappingEndEvent: (False, False, -1),
    yaml.StreamStartEvent: (False, False, 0),
    yaml.StreamEndEvent: (False, False, 0),
    yaml.DocumentStartEvent: (False, False, 0),
    yaml.DocumentEndEvent: (False, False, 0),
}
_NOT_A_NODE = (False, False, 0)


def _kind(event: Any) -> tuple[bool, bool, int]:
    """An event of a class not in _EVENT_KINDS (a subclass some parser might make) by its base."""
    for cls, kind in _EVENT_KINDS.items():
        if isinstance(event, cls):
            return kind
    return _NOT_A_NODE


_TAG = "tag:yaml.org,2002:"
_STR, _NULL = _TAG + "str", _TAG + "null"
_BUILT_SCALARS = frozenset(_TAG + name for name in ("str", "int", "float", "bool", "null"))
# A collection's explicit tag that says what it is anyway; any other is left to the full loader.
_OWN_TAGS = {1: {None, _TAG + "seq"}, 2: {None, _TAG + "map"}}
_NO_KEY = object()  # a mapping's frame waiting for its next key
_RESOLVED_LIMIT = 4096  # short plain scalars (keys, mostly) whose resolved tag is remembered


def _read_checked(
    text: str, where: str, max_aliases: int, max_nodes: int, loader_class: type[Any]
) -> tuple[bool, object]:
    """One pass over the parser's events: refuse aliases beyond the cap, anchors when none are
    allowed, explicit non-core tags, deep nesting and more nodes than ``max_nodes`` before
    anything is constructed; and meanwhile build the document from the events, each scalar
    resolved and constructed by the loader's own resolver and constructors, as composing a
    node graph and constructing it would. (libyaml's node graph, with two marks per node, and
    the constructor's pass over it took 211 ms for a 10,000-skill manifest, after 52 ms of
    checks; this, checks included, 96 ms.)

    Returns (True, document), or (False, None) when the document uses what only the full
    loader builds (aliases, anchors, merge and value keys, the ``!`` tag, a retagged
    collection, a collection as a key, several documents): the checks still ran to the end."""
    aliases = depth = nodes = documents = 0
    building = True
    root: object = None
    stack: list[list[Any]] = []  # [the open sequence or mapping, its pending key]
    resolved: dict[tuple[str, Any], str] = {}
    loader = loader_class(text)
    constructors = loader.yaml_constructors

    def refused(event: Any, what: str) -> PackageError:
        mark = event.start_mark
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return refuse(where, f"not allowed YAML{at}: {what}")

    try:
        while loader.check_event():
            event = loader.get_event()
            kind = _EVENT_KINDS.get(type(event))
            node, tagged, nesting = kind if kind is not None else _kind(event)
            if not node:
                depth += nesting
                if nesting == 0:
                    if isinstance(event, yaml.DocumentStartEvent):
                        documents += 1
                        building = building and documents == 1  # get_single_data refuses a second
                    continue
                if not building:
                    continue
                value = stack.pop()[0]  # a collection ends
            else:
                nodes += 1
                if nodes > max_nodes:
                    raise refused(event, f"more than {max_nodes} values")
                if not tagged:  # an alias
                    aliases += 1
                    if aliases > max_aliases:
                        raise refused(event, f"anchors/aliases are not allowed here (more than {max_aliases})")
                    building = False
                    continue
                if event.anchor is not None:
                    if max_aliases == 0:
                        raise refused(event, "anchors/aliases are not allowed here (more than 0)")
                    building = False
                tag = event.tag
                if tag is not None and tag != "!" and tag not in _CORE_TAGS:
                    raise refused(event, f"tag {tag!r} is not allowed")
                depth += nesting
                if depth > MAX_DEPTH:
                    raise refused(event, f"nested deeper than {MAX_DEPTH} levels")
                if not building:
                    continue
                if nesting:  # a sequence or mapping starts
                    mapping = isinstance(event, yaml.MappingStartEvent)
                    if tag not in _OWN_TAGS[2 if mapping else 1]:
                        building = False
                        continue
                    stack.append([{} if mapping else [], _NO_KEY])
                    continue
                scalar = event.value
                if tag is None:
                    key = (scalar, event.implicit)
                    tag = resolved.get(key)
                    if tag is None:
                        tag = loader.resolve(yaml.ScalarNode, scalar, event.implicit)
                        if len(scalar) <= 16 and len(resolved) < _RESOLVED_LIMIT:
                            resolved[key] = tag
                if tag not in _BUILT_SCALARS:  # merge (<<) and value (=) keys, the ! tag
                    building = False
                    continue
                if tag == _STR:
                    value = scalar
                elif tag == _NULL:
                    value = None
                else:
                    value = constructors[tag](loader, yaml.ScalarNode(tag, scalar))
            if not stack:
                root = value
                continue
            frame = stack[-1]
            if type(frame[0]) is list:
                frame[0].append(value)
            elif frame[1] is _NO_KEY:
                if type(value) is list or type(value) is dict:  # unhashable: the full loader says so
                    building = False
                frame[1] = value
            else:
                frame[0][frame[1]] = value
                frame[1] = _NO_KEY
    finally:
        loader.dispose()
    return (True, root) if building else (False, None)


_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FastLoader(_Base):  # type: ignore[misc, valid-type]  # a base chosen at run time
    """libyaml's parser when present (PyYAML's pure-Python one is ~20x slower); no timestamps."""


_FastLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers

# The loaders load_yaml may use, the default first: libyaml's when PyYAML was built with it, and
# PyYAML's own, which it falls back to (the same checks and results; tests run both).
LOADERS: tuple[type[Any], ...] = (_FastLoader, _Loader) if _Base is not yaml.SafeLoader else (_Loader,)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def load_yaml(
    text: str, where: str, *, max_aliases: int = 0, max_nodes: int = MAX_NODES, loader: type[Any] = LOADERS[0]
) -> object:
    """Parse untrusted YAML text; refuse with a PackageError naming ``where`` and the line.

    The event stream is checked (aliases, anchors, tags, depth, nodes) as the document is
    built from it (:func:`_read_checked`); a document that uses what only the full loader
    builds is then loaded again by it, the same safe loader without implicit timestamps, once
    the checks have passed. ``loader`` is one of :data:`LOADERS`."""
    try:
        built, data = _read_checked(text, where, max_aliases, max_nodes, loader)
        if not built:
            parser = loader(text)
            try:
                data = parser.get_single_data()
            finally:
                parser.dispose()
    except PackageError:
        raise
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise refuse(where, f"not valid or not allowed YAML{at}: {problem}") from None
    except RecursionError:
        raise refuse(where, "YAML nested too deeply") from None
    except ValueError as error:  # e.g. libyaml on an unpaired surrogate
        raise refuse(where, f"not valid YAML: {error}") from None
    return data


def dump_yaml(document: object, *, width: int = 100, dumper: type[Any] = _DUMPER) -> str:
    """Block-style YAML of plain data, keys in their order: libyaml's emitter when PyYAML has it
    (PyYAML's own is ~10x slower on a 10,000-skill manifest), else PyYAML's."""
    text: str = yaml.dump(document, Dumper=dumper, sort_keys=False, allow_unicode=True, width=width)
    return text


def decode_utf8(data: bytes, where: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise refuse(where, f"is not valid UTF-8 (byte {error.start})") from None
    text = text.removeprefix("\ufeff")
    if "\x00" in text:
        raise refuse(where, "contains a NUL character")
    return text


__all__ = ["LOADERS", "PackageError", "decode_utf8", "dump_yaml", "load_yaml"]
