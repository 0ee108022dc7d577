"""Validation checks for `pi_tui.util.record`: one small function per field type, built on first use.

`build_check` turns an annotation (``str``, ``int | None``, ``list[TextContent | ImageContent]`` ...) into
a function that returns the value (converted where pydantic's lax mode converts) or raises `Invalid`.
`Invalid` collects the path of the bad value as it unwinds; the public entry points of `Record` turn it
into a `ValidationError`.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

if TYPE_CHECKING:
    from .record import FieldInfo, Record

__all__ = [
    "MISSING",
    "Missing",
    "NoneType",
    "ValidationError",
    "Invalid",
    "Check",
    "Loc",
    "build_check",
    "constrained",
    "dotted",
    "to_camel",
    "key_of",
    "kind_name",
    "strip_annotated",
    "is_record_class",
    "CheckParts",
    "check_parts",
]

Loc = tuple[str | int, ...]
Check = Callable[[Any], Any]


class CheckParts:
    """What some checks are made of, for the makers `record_unrolled` writes (which then do a check's
    usual case inline and leave every other value to the check itself). Filled as checks are built;
    a check absent from a table is one those makers only call.

    Attributes:
        lists: a list check → the check of its items (None: items kept as they are).
        records: a record check → its record class (whose maker it calls for a dict).
        unions: a check of a union of record classes → the one-element list that holds the check it
            resolves to on its first dict (empty until then).
        tagged: a tagged-union check → (tag key, the record makers by tag value); a dict without the
            key (or with its Python name instead) goes to the check.
    """

    def __init__(self) -> None:
        # Weak keys: a check lives as long as the field tables (or validators) that use it.
        self.lists: weakref.WeakKeyDictionary[Check, Check | None] = weakref.WeakKeyDictionary()
        self.records: weakref.WeakKeyDictionary[Check, type] = weakref.WeakKeyDictionary()
        self.unions: weakref.WeakKeyDictionary[Check, list[Check]] = weakref.WeakKeyDictionary()
        self.tagged: weakref.WeakKeyDictionary[Check, tuple[str, dict[Any, Callable[..., Any]]]] = (
            weakref.WeakKeyDictionary()
        )


check_parts = CheckParts()


class Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = Missing()
"""The ``default`` of a field that has none (required, or filled by a ``default_factory``)."""


class ValidationError(ValueError):
    """A value does not fit a record's field types.

    ``str(error)`` is one line: what was validated, the path of the bad value, and what is wrong, e.g.
    ``AssistantMessage: usage.input: expected an integer, got 3.5``. ``loc`` is that path (JSON keys and
    list indexes); ``errors()`` and ``error_count()`` mirror pydantic's (validation stops at the first
    problem, so there is one error).
    """

    def __init__(self, title: str, loc: Loc, msg: str, kind: str = "value_error") -> None:
        self.title = title
        self.loc = loc
        self.msg = msg
        self.kind = kind
        where = dotted(loc)
        super().__init__(f"{title}: {where}: {msg}" if where else f"{title}: {msg}")

    def errors(self) -> list[dict[str, Any]]:
        return [{"loc": self.loc, "msg": self.msg, "type": self.kind}]

    def error_count(self) -> int:
        return 1


class Invalid(Exception):
    """Raised inside validation; turned into a `ValidationError` at the public entry points."""

    __slots__ = ("msg", "kind", "loc")

    def __init__(self, msg: str, kind: str = "value_error") -> None:
        super().__init__(msg)
        self.msg = msg
        self.kind = kind
        self.loc: list[str | int] = []

    def public(self, title: str) -> ValidationError:
        return ValidationError(title, tuple(self.loc), self.msg, self.kind)


def dotted(loc: Loc) -> str:
    """``("content", 0, "text")`` -> ``"content.0.text"``."""
    return ".".join(str(part) for part in loc)


def to_camel(name: str) -> str:
    """``tool_call_id`` -> ``toolCallId``: the JSON key of a snake_case field or event name (a name
    without ``_`` passes through). The one converter for records, stream events and extension results."""
    if "_" not in name:
        return name
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


# --- checks ---------------------------------------------------------------------------------------

NoneType = type(None)


def kind_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _fail(expected: str, value: Any, kind: str) -> Invalid:
    return Invalid(f"expected {expected}, got {kind_name(value)}", kind)


def _check_str(value: Any) -> Any:
    if isinstance(value, str):
        return value
    raise _fail("a string", value, "string_type")


def _check_int(value: Any) -> Any:
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise _fail("an integer", value, "int_from_float")
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise _fail("an integer", value, "int_type")


def _check_int_strict(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _fail("an integer", value, "int_type")


def _check_float(value: Any) -> Any:
    if isinstance(value, (float, int)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise _fail("a number", value, "float_type")


def _check_float_strict(value: Any) -> Any:
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        return float(value)
    raise _fail("a number", value, "float_type")


_TRUE = frozenset({"true", "1", "yes", "on", "t", "y"})
_FALSE = frozenset({"false", "0", "no", "off", "f", "n"})


def _check_bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    raise _fail("a boolean", value, "bool_type")


def _check_bool_strict(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    raise _fail("a boolean", value, "bool_type")


def _check_none(value: Any) -> Any:
    if value is None:
        return None
    raise _fail("null", value, "none_required")


def _literal(values: tuple[Any, ...]) -> Check:
    allowed = frozenset(values)
    types_ = frozenset(type(v) for v in values)  # keeps True from matching 1 (and 1 from matching True)
    # A declared string is kept rather than the equal one from the input: a session's thousands of
    # ``"toolUse"`` strings then share one object instead of holding one each.
    strings = {v: v for v in values if type(v) is str}
    shown = ", ".join(repr(v) for v in values)

    def check(value: Any) -> Any:
        if type(value) in types_ and value in allowed:
            return strings.get(value, value) if type(value) is str else value
        raise Invalid(f"expected one of {shown}, got {value!r}", "literal_error")

    return check


def _list_of(item: Check | None, strict: bool) -> Check:
    def check(value: Any) -> Any:
        if type(value) is not list and (strict or not isinstance(value, list | tuple)):
            raise _fail("a list", value, "list_type")
        if item is None:
            return list(value)
        try:
            return [item(x) for x in value]
        except Invalid:
            for index, x in enumerate(value):  # find which item failed, for the error's path
                try:
                    item(x)
                except Invalid as exc:
                    exc.loc.insert(0, index)
                    raise
            raise

    check_parts.lists[check] = item
    return check


def _dict_of(key: Check | None, item: Check | None) -> Check:
    def check(value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise _fail("an object", value, "dict_type")
        if key is None and item is None:
            return dict(value)
        out = {}
        for k, v in value.items():
            try:
                out[k if key is None else key(k)] = v if item is None else item(v)
            except Invalid as exc:
                exc.loc.insert(0, k)
                raise
        return out

    return check


def _record_check(cls: type[Record]) -> Check:
    make: Callable[[Mapping[Any, Any]], Any] | None = None

    def check(value: Any) -> Any:
        nonlocal make
        if type(value) is dict or (not isinstance(value, cls) and isinstance(value, Mapping)):
            if make is None:
                make = cls._maker()
            return make(value)
        if isinstance(value, cls):
            return value
        raise _fail(f"an object ({cls.__name__})", value, "model_type")

    check_parts.records[check] = cls
    return check


def _optional(inner: Check) -> Check:
    def check(value: Any) -> Any:
        return None if value is None else inner(value)

    return check


def constrained(inner: Check | None, info: FieldInfo) -> Check:
    ge, gt, min_length = info.ge, info.gt, info.min_length

    def check(value: Any) -> Any:
        if inner is not None:
            value = inner(value)
        if value is None:
            return None
        if ge is not None and value < ge:
            raise Invalid(f"must be >= {ge}, got {value!r}", "greater_than_equal")
        if gt is not None and value <= gt:
            raise Invalid(f"must be > {gt}, got {value!r}", "greater_than")
        if min_length is not None and len(value) < min_length:
            what = "must not be empty" if min_length == 1 else f"must have at least {min_length} items"
            raise Invalid(what, "too_short")
        return value

    return check


def _tagged_union(classes: tuple[type[Record], ...]) -> Check | None:
    """A check dispatching on the ``Literal`` field every class fixes; None when there is no such field."""
    specs = [cls._spec or cls._build() for cls in classes]
    for candidate in specs[0].fields:
        table: dict[Any, Callable[[Mapping[Any, Any]], Any]] = {}
        for cls, spec in zip(classes, specs, strict=True):
            info = spec.by_name.get(candidate.name)
            if info is None or get_origin(strip_annotated(info.annotation)) is not Literal:
                break
            for tag in get_args(strip_annotated(info.annotation)):
                table[tag] = cls._maker(candidate.name)
        else:
            return _dispatch(candidate.name, key_of(candidate, classes[0]), table, classes)
    return None


def key_of(info: FieldInfo, cls: type[Record]) -> str:
    return info.explicit_alias or (to_camel(info.name) if cls.camel_case else info.name)


def _dispatch(
    name: str,
    key: str,
    table: dict[Any, Callable[[Mapping[Any, Any]], Any]],
    classes: tuple[type[Record], ...],
) -> Check:
    shown = ", ".join(repr(tag) for tag in table)

    def check(value: Any) -> Any:
        if type(value) is dict:
            tag = value.get(key, MISSING)
            if tag is MISSING and name != key:
                tag = value.get(name, MISSING)
            try:
                make = table[tag]
            except (KeyError, TypeError):  # an unknown or unhashable tag (a list, say)
                make = None
            if make is not None:
                return make(value)
            problem = f"missing {key!r}" if tag is MISSING else f"unknown {key} {tag!r}"
            raise Invalid(f"{problem} (expected one of {shown})", "union_tag_invalid")
        if isinstance(value, classes):
            return value
        names = " or ".join(cls.__name__ for cls in classes)
        raise _fail(f"an object ({names})", value, "model_type")

    check_parts.tagged[check] = (key, table)
    return check


def _union(members: list[tuple[type, Check | None]], shown: str) -> Check:
    def check(value: Any) -> Any:
        first: Invalid | None = None
        for base, member in members:  # a member of the value's own type first (pydantic's smart mode)
            if isinstance(value, base) and not (base is int and isinstance(value, bool)):
                if member is None:
                    return value
                try:
                    return member(value)
                except Invalid as exc:
                    first = first or exc
        if first is not None:
            raise first
        for _base, member in members:  # then lax conversions, in declared order
            if member is None:
                return value
            try:
                return member(value)
            except Invalid:
                continue
        raise _fail(shown, value, "union_type")

    return check


def strip_annotated(annotation: Any) -> Any:
    if isinstance(annotation, type):  # the common case, without typing's slower introspection
        return annotation
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


_LAX: dict[type, Check | None] = {
    str: _check_str,
    bool: _check_bool,
    int: _check_int,
    float: _check_float,
    NoneType: _check_none,
    object: None,
}
_STRICT: dict[type, Check | None] = {
    **_LAX,
    bool: _check_bool_strict,
    int: _check_int_strict,
    float: _check_float_strict,
}

_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", NoneType: "null"}


def build_check(annotation: Any, strict: bool) -> Check | None:
    """The check for ``annotation``; None when any value is accepted as is."""
    tp = strip_annotated(annotation)
    plain = (_STRICT if strict else _LAX).get(tp, MISSING) if isinstance(tp, type) else MISSING
    if plain is not MISSING:
        return plain
    if tp is Any:
        return None
    if tp is None:
        return _check_none
    origin = get_origin(tp)
    if origin is Literal:
        return _literal(get_args(tp))
    if origin is list or tp is list:
        args = get_args(tp)
        return _list_of(build_check(args[0], strict) if args else None, strict)
    if origin is dict or tp is dict:
        args = get_args(tp)
        key = build_check(args[0], strict) if args else None
        return _dict_of(None if key is _check_str else key, build_check(args[1], strict) if args else None)
    if origin is Union or origin is types.UnionType:
        return _build_union(get_args(tp), strict)
    if is_record_class(tp):
        return _record_check(tp)
    raise TypeError(f"Record fields cannot have the type {annotation!r}")


def _records_union(classes: tuple[type[Record], ...]) -> Check:
    """A union of record classes: an instance of one passes; a dict goes by its tag (see `_tagged_union`).

    The dispatch table is built on the first dict, not before: building it builds every member class,
    and a run that only ever passes instances (a new session) needs none of that.
    """
    resolved: list[Check] = []

    def check(value: Any) -> Any:
        if resolved:
            return resolved[0](value)
        if type(value) is not dict and isinstance(value, classes):
            return value
        resolved.append(
            _tagged_union(classes) or _union([(c, _record_check(c)) for c in classes], "an object")
        )
        return resolved[0](value)

    check_parts.unions[check] = resolved
    return check


def _build_union(args: tuple[Any, ...], strict: bool) -> Check | None:
    args = tuple(strip_annotated(a) for a in args)
    nullable = NoneType in args
    rest = tuple(a for a in args if a is not NoneType)
    if any(a is Any for a in rest):
        return None
    inner: Check | None
    if len(rest) == 1:
        inner = build_check(rest[0], strict)
    elif all(is_record_class(a) for a in rest):
        inner = _records_union(rest)
    else:
        members = []
        for a in rest:
            base = get_origin(a) or a
            if base is Literal:
                base = object
            elif is_record_class(a):
                base = a
            members.append((base, build_check(a, strict)))
        shown = " or ".join(_NAMES.get(a, a.__name__ if isinstance(a, type) else str(a)) for a in rest)
        inner = _union(members, shown)
    if inner is None:
        return None
    return _optional(inner) if nullable else inner


def is_record_class(tp: Any) -> bool:
    """Whether ``tp`` is a `Record` subclass (checked by its hooks: this module cannot import record)."""
    return isinstance(tp, type) and hasattr(tp, "_maker") and hasattr(tp, "_build")
