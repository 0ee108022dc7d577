"""`Record`: small, fast, validated records for JSON shapes (pi-tui's replacement for pydantic models).

A record class declares its fields with annotations, like a dataclass::

    class ToolCall(Record):
        camel_case = True                      # JSON keys are camelCase, Python names snake_case
        type: Literal["toolCall"] = "toolCall"
        id: str
        arguments: dict[str, Any] = field(default_factory=dict)

It keeps the part of pydantic's model API that pi-tui uses, with the same meaning: construction by name
(and by JSON key), ``model_validate``, ``model_dump``, ``model_copy``, ``model_fields``,
``model_fields_set``, ``model_extra``, pydantic's equality, and a `ValidationError` (a ``ValueError``)
naming the path of the bad value. Unknown keys are kept under their original names and written back
as they came (even a ``null`` one, which pydantic's ``exclude_none`` dropped), so data written by a
newer pi survives a round trip.

Why not pydantic: importing it and building pi-tui's ~40 models cost ~100 ms of every start-up (a
third of a one-turn answer). Here a class costs nothing until it is first used: its annotations are
resolved and its field checks built then (no code generation), and validation is one loop over the
given keys with a table lookup and a type test each. A field left at a plain default is not stored
per record (the class attribute is the default): ``__dict__`` holds what was given or made by a factory.

Types a field may have: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``, ``Literal[...]``,
``list[X]``, ``dict[str, X]``, another record class, and unions of those. A union of record classes
that each fix the same ``Literal`` field (``type``, ``role``) is a tagged union: a dict is dispatched on
that key. Coercions follow pydantic's lax mode (an int from ``3.0``, a float from ``3``, a list from a
tuple); ``strict = True`` on a class turns them off (a float still takes an int, as in pydantic).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import PurePath
from typing import Any, ClassVar, Generic, Literal, TypeVar, Union, dataclass_transform, get_args, get_origin

from .record_annotations import resolve_annotation
from .record_checks import (
    MISSING,
    Check,
    Invalid,
    Missing,
    NoneType,
    ValidationError,
    build_check,
    check_parts,
    constrained,
    key_of,
    kind_name,
    strip_annotated,
    to_camel,
)

__all__ = [
    "MISSING",
    "Record",
    "FieldInfo",
    "ValidationError",
    "Validator",
    "field",
    "to_camel",
]

_T = TypeVar("_T")
_R = TypeVar("_R", bound="Record")


class FieldInfo:
    """One declared field. Create with `field`; read through ``Record.model_fields``."""

    __slots__ = (
        "name",
        "alias",
        "explicit_alias",
        "annotation",
        "default",
        "default_factory",
        "ge",
        "gt",
        "min_length",
    )

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Callable[[], Any] | None = None,
        alias: str | None = None,
        ge: float | None = None,
        gt: float | None = None,
        min_length: int | None = None,
    ) -> None:
        self.name = ""
        self.alias = alias  # the JSON key once the class is built (pydantic's meaning)
        self.explicit_alias = alias
        self.annotation: Any = None
        self.default = default
        self.default_factory = default_factory
        self.ge = ge
        self.gt = gt
        self.min_length = min_length

    def is_required(self) -> bool:
        return self.default is MISSING and self.default_factory is None

    def _copy(self) -> FieldInfo:
        out = FieldInfo(
            self.default, self.default_factory, self.explicit_alias, self.ge, self.gt, self.min_length
        )
        out.name, out.annotation = self.name, self.annotation
        return out

    def __repr__(self) -> str:
        return f"FieldInfo(name={self.name!r}, alias={self.alias!r}, default={self.default!r})"


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | None = None,
    alias: str | None = None,
    ge: float | None = None,
    gt: float | None = None,
    min_length: int | None = None,
) -> Any:
    """Declare a field's default, default factory, JSON key or bounds (pydantic's ``Field``).

    Args:
        default: The value when the field is missing (used as is: use ``default_factory`` for lists).
        default_factory: Called for each record that lacks the field.
        alias: The JSON key, when it is not the (camelCased) name.
        ge: Numbers must be >= this.
        gt: Numbers must be > this.
        min_length: Strings and lists must have at least this many items.
    """
    return FieldInfo(default, default_factory, alias, ge, gt, min_length)


# --- dumping and copying ---------------------------------------------------------------------------


_LEAVES = frozenset({str, int, float, bool, NoneType})


def _dump_value(value: Any, by_alias: bool, exclude_none: bool, json_mode: bool) -> Any:
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    # JSON leaves are taken as they are without a call: tool arguments and details are mostly leaves
    if t is dict:
        if json_mode:
            return {
                (k if type(k) is str else _json_key(k)): (
                    v if type(v) in _LEAVES else _dump_value(v, by_alias, exclude_none, True)
                )
                for k, v in value.items()
            }
        return {
            k: v if type(v) in _LEAVES else _dump_value(v, by_alias, exclude_none, False)
            for k, v in value.items()
        }
    if t is list:
        return [v if type(v) in _LEAVES else _dump_value(v, by_alias, exclude_none, json_mode) for v in value]
    if isinstance(value, Record):
        return value._dump(by_alias, exclude_none, json_mode)
    if isinstance(value, str | int | float):  # subclasses (str enums, IntEnum) before the generic cases
        if json_mode and isinstance(value, enum.Enum):
            return _dump_value(value.value, by_alias, exclude_none, True)
        return value
    if t is tuple or isinstance(value, tuple):
        items = [_dump_value(v, by_alias, exclude_none, json_mode) for v in value]
        return items if json_mode else tuple(items)
    if isinstance(value, Mapping):
        return _dump_value(dict(value), by_alias, exclude_none, json_mode)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            # any dataclass in a record's field: read each of its declared fields by name
            f.name: _dump_value(getattr(value, f.name), by_alias, exclude_none, json_mode)
            for f in dataclasses.fields(value)
        }
    if not json_mode:
        return value
    if isinstance(value, enum.Enum):
        return _dump_value(value.value, by_alias, exclude_none, True)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, set | frozenset):
        return [_dump_value(v, by_alias, exclude_none, True) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, datetime.date | datetime.time):  # a datetime is a date
        return value.isoformat()
    raise TypeError(f"cannot write a {t.__name__} as JSON")


def _json_key(key: Any) -> str:
    if isinstance(key, enum.Enum):
        key = key.value
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _deep(value: Any, memo: dict[int, Any] | None = None) -> Any:
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    if t is dict:
        return {k: _deep(v, memo) for k, v in value.items()}
    if t is list:
        return [_deep(v, memo) for v in value]
    if t is set:  # of names (``_defaulted``)
        return set(value)
    if isinstance(value, Record):
        return value._deepcopy(memo)
    return copy.deepcopy(value, memo)


# --- the base class --------------------------------------------------------------------------------


class _Spec:
    """A record class's fields, resolved on first use."""

    __slots__ = ("cls", "fields", "by_name", "keys", "plan", "plan_by_name", "must", "make", "tagged")

    def __init__(self, cls: type[Record], fields: list[FieldInfo]) -> None:
        self.cls = cls
        self.fields = tuple(fields)
        self.by_name = {f.name: f for f in fields}
        # input key -> (field name, exact type that needs no check, check)
        self.keys: dict[Any, tuple[str, type | None, Check | None]] = {}
        plan = []
        for f in fields:
            key = f.alias = key_of(f, cls)
            check, exact, scalar = _analyse(f.annotation, cls.strict)
            if f.ge is not None or f.gt is not None or f.min_length is not None:
                check, exact = constrained(check, f), None
            entry = (f.name, exact, check)
            if cls.populate_by_name or key == f.name:
                self.keys[f.name] = entry
            self.keys[key] = entry
            plan.append((f.name, key, scalar, f.default))
        # (name, output key, written as is, class default): keyed by JSON key, and by Python name
        self.plan = tuple(plan)
        self.plan_by_name = tuple((name, name, scalar, default) for name, _key, scalar, default in plan)
        # Fields with a plain default are not stored: the class attribute of that name is the default
        # (so ``__dict__`` holds what was given, which is what ``model_fields_set`` reports). Required
        # fields and fields with a default factory are the only ones to look for after the loop.
        self.must = tuple(
            (f.name, f.alias or f.name, f.default_factory) for f in fields if f.default is MISSING
        )
        self.make = _maker(cls, self, self.keys)
        self.tagged: dict[str, Callable[..., Any]] = {}

    def maker_for_tag(self, name: str) -> Callable[..., Any]:
        """A `make` that skips the check of field ``name``: the caller chose this class by its value.

        A tagged union (and `parse_entry`) picks the class from the value of its ``Literal`` tag, so
        checking that value again would only cost time.
        """
        make = self.tagged.get(name)
        if make is None:
            keys = {k: ((name, None, None) if entry[0] == name else entry) for k, entry in self.keys.items()}
            make = self.tagged[name] = _maker(self.cls, self, keys)
        return make


def _maker(
    cls: type[Record], spec: _Spec, entries: dict[Any, tuple[str, type | None, Check | None]]
) -> Callable[..., Any]:
    """The function that validates a dict into a new ``cls`` (raising `Invalid`), by the table ``entries``.

    The hot path of loading a session: everything it needs is bound here, so a record costs one loop
    over its keys with a type test per value (a check call only when the type is not the plain one).
    """
    must = spec.must
    new = object.__new__
    # The written maker (`record_unrolled`), once this one has made `_UNROLL_AFTER` records and then
    # sampled the key sets of `_KEY_SAMPLE` more dicts (how often each came).
    fast: list[Callable[..., Any]] = []
    seen: dict[tuple[Any, ...], int] = {}
    made = 0

    def make(data: Mapping[Any, Any], target: Any = None) -> Any:
        if fast:
            return fast[0](data, target)
        nonlocal made
        made += 1
        if made > _UNROLL_AFTER and target is None and type(data) is dict:
            keys = tuple(data)
            seen[keys] = seen.get(keys, 0) + 1
            if made >= _UNROLL_AFTER + _KEY_SAMPLE:
                fast.append(_unrolled(cls, spec, entries, loop, seen) or loop)
        return loop(data, target)

    def loop(data: Mapping[Any, Any], target: Any = None) -> Any:
        self = new(cls) if target is None else target
        values = self.__dict__
        extra: dict[Any, Any] | None = None
        for key, value in data.items():
            try:
                name, exact, check = entries[key]
            except (KeyError, TypeError):  # an unknown (or unhashable) key: kept as is
                if extra is None:
                    extra = {}
                extra[key] = value
                continue
            if check is not None and type(value) is not exact:
                try:
                    value = check(value)
                except Invalid as exc:
                    exc.loc.insert(0, key)
                    raise
            values[name] = value
        defaulted: set[str] | None = None
        for name, key, factory in must:
            if name not in values:
                if factory is None:
                    missing = Invalid("field required", "missing")
                    missing.loc.append(key)
                    raise missing
                values[name] = factory()
                if defaulted is None:
                    defaulted = set()
                defaulted.add(name)
        # stored only when there are any: most records have neither, and the class attributes say None
        if extra is not None:
            values["_extra"] = extra
        if defaulted:
            values["_defaulted"] = defaulted
        return self

    return make


# Records a maker makes by its loop before it writes its class's own function (`record_unrolled`):
# writing one costs ~0.2 ms, what a thousand records save, so a class that makes fewer (all of a
# small session's) never pays for it.
_UNROLL_AFTER = 1024
_KEY_SAMPLE = 64  # dicts whose key sets are counted before the function is written for the usual ones


def _unrolled(
    cls: type[Record],
    spec: _Spec,
    entries: dict[Any, tuple[str, type | None, Check | None]],
    loop: Callable[..., Any],
    seen: dict[tuple[Any, ...], int],
) -> Callable[..., Any] | None:
    """The written maker for the key sets sampled (the most frequent of each length) that it can
    handle: keys of distinct fields, every required field among them (None when there is none)."""
    from .record_unrolled import unrolled_maker

    required = {name for name, _key, factory in spec.must if factory is None}
    usable = []
    for keys in sorted(seen, key=seen.__getitem__, reverse=True):
        names = [entries[k][0] if k in entries else None for k in keys]
        if None not in names and len(set(names)) == len(names) and required.issubset(names):
            usable.append(keys)
    if not usable:
        return None
    factories = [(name, factory) for name, _key, factory in spec.must if factory is not None]
    inline = {}
    for key in {k for keys in usable for k in keys}:
        how = _inline(entries[key][2])
        if how is not None:
            inline[key] = how
    return unrolled_maker(cls, usable, entries, factories, loop, inline)


def _inline(check: Check | None) -> tuple[str, Any] | None:
    """What a written maker can do in place of calling ``check`` for its usual value (`Inline`)."""
    if check is None:
        return None
    parts = check_parts
    record_class = parts.records.get(check)
    if record_class is not None and issubclass(record_class, Record):
        return "record", record_class.maker()
    kind = "union"
    item = parts.lists.get(check)
    if item is not None:
        kind, check = "list_union", item
    resolved = parts.unions.get(check)
    tagged = parts.tagged.get(resolved[0]) if resolved else None
    return (kind, tagged) if tagged is not None else None


_ANALYSED: dict[tuple[Any, bool], tuple[Check | None, type | None, bool]] = {}


def _analyse(annotation: Any, strict: bool) -> tuple[Check | None, type | None, bool]:
    """(check, exact type, written as is) for a field type; kept per type, as classes share most."""
    try:
        return _ANALYSED[annotation, strict]
    except KeyError:
        pass
    except TypeError:  # an unhashable annotation: analysed each time
        return build_check(annotation, strict), _exact_type(annotation), _is_scalar(annotation)
    found = _ANALYSED[annotation, strict] = (
        build_check(annotation, strict),
        _exact_type(annotation),
        _is_scalar(annotation),
    )
    return found


def _copier(value: Any) -> Callable[[], Any]:
    return lambda: copy.copy(value)


_PLAIN = (str, int, float, bool)


def _exact_type(annotation: Any) -> type | None:
    """The type whose values pass the field's check unchanged (skipping the call); None if none does."""
    tp = strip_annotated(annotation)
    if tp in _PLAIN:
        return tp
    if get_origin(tp) in (Union, types.UnionType):
        args = [strip_annotated(a) for a in get_args(tp) if a is not NoneType]
        if len(args) == 1 and args[0] in (str, int, float, bool):
            return args[0]
        if len(args) == 1 and isinstance(args[0], type) and issubclass(args[0], Record):
            return args[0]
    if isinstance(tp, type) and issubclass(tp, Record):
        return tp
    return None


def _is_scalar(annotation: Any) -> bool:
    """Whether the field's values are written as they are (no nested records, lists or dicts)."""
    tp = strip_annotated(annotation)
    if tp in _PLAIN or tp is NoneType:
        return True
    if isinstance(tp, type):
        return False
    origin = get_origin(tp)
    if origin is Literal:
        return True
    if origin in (Union, types.UnionType):
        return all(_is_scalar(a) for a in get_args(tp))
    return False


class _ModelFields:
    """``Record.model_fields`` on the class: name -> `FieldInfo`, in declaration order."""

    def __get__(self, obj: Any, owner: type[Record]) -> dict[str, FieldInfo]:
        spec = owner._spec or owner._build()
        return dict(spec.by_name)


@dataclass_transform(kw_only_default=True, field_specifiers=(field, FieldInfo))
class Record:
    """Base class of validated JSON records. See the module docstring.

    Class settings (plain class attributes, inherited): ``camel_case`` (JSON keys are the camelCased
    field names), ``populate_by_name`` (the Python names are accepted too), ``strict`` (no lax coercions),
    ``dump_by_alias`` (``model_dump()`` writes JSON keys unless told otherwise).
    """

    # Unknown keys live in ``_extra`` and the names of fields filled from defaults in ``_defaulted``
    # (for ``model_fields_set``). Each is in the instance ``__dict__`` only when not empty (keys `_META`).
    _extra: ClassVar[dict[Any, Any] | None] = None
    _defaulted: ClassVar[set[str] | None] = None

    camel_case: ClassVar[bool] = False
    populate_by_name: ClassVar[bool] = True
    strict: ClassVar[bool] = False
    dump_by_alias: ClassVar[bool] = False

    _spec: ClassVar[_Spec | None] = None
    _declared: ClassVar[dict[str, FieldInfo]] = {}

    model_fields = _ModelFields()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._spec = None
        declared: dict[str, FieldInfo] = {}
        for name, value in list(cls.__dict__.items()):
            if isinstance(value, FieldInfo):
                declared[name] = value
                if value.default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, value.default)
        cls._declared = declared

    @classmethod
    def _build(cls) -> _Spec:
        """Resolve the annotations (once per class) and build the field table."""
        fields: dict[str, FieldInfo] = {}
        for base in reversed(cls.__mro__[1:]):
            if issubclass(base, Record) and base is not Record:
                spec = base._spec or base._build()
                fields.update((f.name, f._copy()) for f in spec.fields)
        annotations = cls.__dict__.get("__annotations__", {})
        if annotations:
            namespace = vars(sys.modules[cls.__module__])
            for name, annotation in annotations.items():
                if isinstance(annotation, str):
                    annotation = resolve_annotation(annotation, namespace)
                if not isinstance(annotation, type) and (
                    annotation is ClassVar or get_origin(annotation) is ClassVar
                ):
                    continue
                info = cls._declared.get(name)
                info = FieldInfo(cls.__dict__.get(name, MISSING)) if info is None else info._copy()
                if isinstance(info.default, list | dict | set | Record):  # mutable: each record gets a copy
                    info.default_factory, info.default = _copier(info.default), MISSING
                info.name = name
                info.annotation = annotation
                fields[name] = info
        spec = _Spec(cls, list(fields.values()))
        cls._spec = spec
        return spec

    # --- construction ----------------------------------------------------------------------------

    def __init__(self, /, **data: Any) -> None:
        cls = type(self)
        try:
            (cls._spec or cls._build()).make(data, self)
        except Invalid as exc:
            raise exc.public(cls.__name__) from None

    @classmethod
    def _maker(cls, tag: str | None = None) -> Callable[..., Any]:
        """The function validating a dict into a ``cls`` (raising `Invalid`); see `_Spec.maker_for_tag`."""
        spec = cls._spec or cls._build()
        return spec.make if tag is None else spec.maker_for_tag(tag)

    @classmethod
    def maker(cls: type[_R], *, tag_checked: str | None = None) -> Callable[[Mapping[Any, Any]], _R]:
        """The function `model_validate` calls for a dict, for a loop over many dicts of one class.

        It makes a new record from a mapping and raises `Invalid` (not `ValidationError`: a caller
        wanting the latter calls ``exc.public(cls.__name__)``, as `model_validate` does).
        """
        return cls._maker(tag_checked)

    @classmethod
    def model_validate(cls: type[_R], obj: Any, *, tag_checked: str | None = None) -> _R:
        """``obj`` itself when it is already a ``cls``; else a record validated from a dict.

        Args:
            obj: A dict (JSON keys or, where allowed, Python names), or a ``cls``.
            tag_checked: The name of a ``Literal`` field whose value the caller has already matched to
                this class (as `pi_tui.session.entries.parse_entry` does with ``type``): not checked again.

        Raises:
            ValidationError: ``obj`` is not a dict, or a value in it does not fit.
        """
        if type(obj) is not dict:
            if isinstance(obj, cls):
                return obj
            if not isinstance(obj, Mapping):
                raise ValidationError(
                    cls.__name__, (), f"expected an object, got {kind_name(obj)}", "model_type"
                )
        spec = cls._spec or cls._build()
        make = spec.make if tag_checked is None else spec.maker_for_tag(tag_checked)
        try:
            return make(obj)
        except Invalid as exc:
            raise exc.public(cls.__name__) from None

    # --- the pydantic-compatible surface ---------------------------------------------------------

    @property
    def model_extra(self) -> dict[str, Any] | None:
        """Keys the class does not declare, as they came (pydantic: None only when extras are off)."""
        extra = self._extra
        if extra is None:
            extra = self.__dict__["_extra"] = {}
        return extra

    @property
    def model_fields_set(self) -> set[str]:
        """Names of the fields given when the record was made (or set since), plus the extra keys."""
        given = {name for name in self.__dict__ if name not in _META}
        if self._defaulted:
            given.difference_update(self._defaulted)
        if self._extra:
            given.update(self._extra)
        return given

    def field_is_set(self, name: str) -> bool:
        """``name in self.model_fields_set`` for one declared field, without building the set."""
        if name not in self.__dict__:
            return False
        defaulted = self._defaulted
        return not defaulted or name not in defaulted

    def _fields(self) -> dict[str, Any]:
        """Every declared field's value, defaults included, in declaration order."""
        spec = type(self)._spec
        assert spec is not None  # an instance exists, so its class was built
        values = self.__dict__
        return {name: values.get(name, default) for name, _key, _scalar, default in spec.plan}

    def model_dump(
        self,
        *,
        mode: str = "python",
        by_alias: bool | None = None,
        exclude_none: bool = False,
    ) -> dict[str, Any]:
        """The record as a dict: nested records as dicts, extra keys last, under their own names.

        Args:
            mode: ``"json"`` also turns tuples, enums, paths and dataclasses into JSON values.
            by_alias: JSON keys (camelCase) instead of Python names; default: the class's ``dump_by_alias``.
            exclude_none: Leave out declared fields whose value is None (extra keys are always kept).
        """
        alias = self.dump_by_alias if by_alias is None else by_alias
        return self._dump(alias, exclude_none, mode == "json")

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON object pi writes: camelCase keys, None fields left out."""
        return self._dump(True, True, True)

    def _dump(self, by_alias: bool, exclude_none: bool, json_mode: bool) -> dict[str, Any]:
        spec = type(self)._spec
        assert spec is not None  # an instance exists, so its class was built
        get = self.__dict__.get
        out: dict[str, Any] = {}
        for name, key, scalar, default in spec.plan if by_alias else spec.plan_by_name:
            value = get(name, default)
            if value is None:
                if not exclude_none:
                    out[key] = None
            elif scalar or type(value) in _LEAVES:
                out[key] = value
            else:
                out[key] = _dump_value(value, by_alias, exclude_none, json_mode)
        if self._extra:
            for key, value in self._extra.items():
                out[key] = _dump_value(value, by_alias, exclude_none, json_mode)
        return out

    def model_copy(self: _R, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> _R:
        """A copy; ``update`` values (by field name, not validated, as in pydantic) replace fields."""
        cls = type(self)
        new = object.__new__(cls)
        values = new.__dict__
        if deep:
            values.update(_deep(self.__dict__))
        else:
            values.update(self.__dict__)
            if self._extra:
                values["_extra"] = dict(self._extra)
            if self._defaulted:
                values["_defaulted"] = set(self._defaulted)
        if update:
            spec = cls._spec
            assert spec is not None
            for key, value in update.items():
                if key in spec.by_name:
                    values[key] = value
                    defaulted = values.get("_defaulted")
                    if defaulted:
                        defaulted.discard(key)
                else:
                    values.setdefault("_extra", {})[key] = value
        return new

    def _deepcopy(self: _R, memo: dict[int, Any] | None) -> _R:
        new = object.__new__(type(self))
        new.__dict__.update({k: _deep(v, memo) for k, v in self.__dict__.items()})
        return new

    def __copy__(self: _R) -> _R:
        return self.model_copy()

    def __deepcopy__(self: _R, memo: dict[int, Any] | None = None) -> _R:
        return self._deepcopy(memo)

    # --- attributes, equality, display -----------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # only reached when normal lookup fails: an extra key read as an attribute, as in pydantic
        extra = self._extra
        if extra and name in extra:
            return extra[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        # Not validated (pydantic's default); a declared field is marked as set, anything else is extra.
        spec = type(self)._spec
        values = self.__dict__
        if spec is not None and name in spec.by_name:
            values[name] = value
            defaulted = values.get("_defaulted")
            if defaulted:
                defaulted.discard(name)
        elif name.startswith("_") or hasattr(type(self), name):
            object.__setattr__(self, name, value)
        else:
            values.setdefault("_extra", {})[name] = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (
            type(self) is type(other)
            and self._fields() == other._fields()
            and (self._extra or {}) == (other._extra or {})
        )

    __hash__ = None  # type: ignore[assignment]

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        """(name, value) pairs: the fields in declaration order, then the extra keys (as pydantic)."""
        yield from self._fields().items()
        if self._extra:
            yield from self._extra.items()

    def __repr__(self) -> str:
        parts = ", ".join(f"{name}={value!r}" for name, value in self)
        return f"{type(self).__name__}({parts})"


_META = frozenset({"_extra", "_defaulted"})


class Validator(Generic[_T]):
    """Validates values against any field type (pydantic's ``TypeAdapter``), built on first use.

    Args:
        annotation: A type a `Record` field could have, e.g. ``list[Message]``.
        title: Names the value in error messages.
    """

    def __init__(self, annotation: Any, title: str = "value", *, strict: bool = False) -> None:
        self._annotation = annotation
        self._title = title
        self._strict = strict
        self._check: Check | None | Missing = MISSING

    def validate(self, value: Any) -> _T:
        """``value`` checked (and converted: dicts become records).

        Raises:
            ValidationError: it does not fit.
        """
        check = self._check
        if isinstance(check, Missing):
            check = self._check = build_check(self._annotation, self._strict)
        if check is None:
            return value
        try:
            return check(value)
        except Invalid as exc:
            raise exc.public(self._title) from None
