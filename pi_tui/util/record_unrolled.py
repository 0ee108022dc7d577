"""Record makers written out per class and key set: `Record` validation without a loop over a table.

`pi_tui.util.record` validates a dict into a record with one loop over the dict's keys, looking each up
in the class's field table. A class that makes many records (a big session's messages, their content
blocks, usage and cost) gets from `unrolled_maker` a function written for the key sets its dicts come
in (a session's records use a few): it picks the key set by the dict's length, reads each key, tests
each value's type and stores it, with the keys, types and checks bound as constants (about a third less
time a record than the loop). Anything it does not handle exactly (another key set, a value whose check
fails) goes to the loop, which makes the same record or raises the same error as before, so the result
never depends on which path made it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .record_checks import Check

__all__ = ["Field", "unrolled_maker"]

Field = tuple[str, type | None, Check | None]
"""A key's field, as the record's table gives it: (name, exact type that needs no check, check)."""


Inline = tuple[str, Any]
"""A check's usual case done in the written maker: ``("record", maker)`` (a dict becomes a record),
``("union", (key, makers))`` (a dict goes to the maker its tag names), ``("list_union", (key, makers))``
(a list of such dicts); any other value goes to the check."""


def _refuse() -> Any:
    raise LookupError("not the usual case: the check decides")


def unrolled_maker(
    cls: type,
    key_sets: Iterable[tuple[Any, ...]],
    table: dict[Any, Field],
    factories: Sequence[tuple[str, Callable[[], Any]]],
    loop: Callable[..., Any],
    inline: dict[Any, Inline] | None = None,
) -> Callable[..., Any]:
    """A maker for ``cls`` equal to ``loop`` (its table-driven maker) on every input.

    Args:
        cls: the record class.
        key_sets: the key sets (in a dict's order) to write out; each must name distinct fields of
            ``table`` and every required one (at most one set per length is used).
        table: the class's key → field table (the one ``loop`` reads).
        factories: (name, factory) of the fields with a default factory, in declaration order: those a
            dict lacks are made, and listed in ``_defaulted`` as the loop lists them.
        loop: the table-driven maker, called for every input the written function does not handle.
        inline: by key, the usual case of its check to do in place (`Inline`); the record makers are
            the ones the check calls, so the value is the one the check makes.
    """
    inline = inline or {}
    namespace: dict[str, Any] = {"loop": loop, "new": object.__new__, "cls": cls, "refuse": _refuse}
    lines = [
        "def make(data, target=None):",
        "    if target is not None or type(data) is not dict:",
        "        return loop(data, target)",
        "    size = len(data)",
    ]
    by_size: dict[int, tuple[Any, ...]] = {}
    for keys in key_sets:
        by_size.setdefault(len(keys), keys)
    for number, (size, keys) in enumerate(sorted(by_size.items())):
        lines += [f"    {'if' if number == 0 else 'elif'} size == {size}:", "        try:"]
        values = []
        for index, key in enumerate(keys):
            namespace[f"k{size}_{index}"] = key
            lines.append(f"            v{index} = data[k{size}_{index}]")
            values.append(f"v{index}")
        lines += ["        except KeyError:", "            return loop(data)", "        try:"]
        checked = False
        for index, key in enumerate(keys):
            _name, exact, check = table[key]
            if check is None:
                continue
            checked = True
            value, suffix = f"v{index}", f"{size}_{index}"
            namespace[f"c{suffix}"] = check
            branch = "if"
            if exact is not None:
                namespace[f"x{suffix}"] = exact
                lines.append(f"            if type({value}) is x{suffix}:")
                lines.append("                pass")
                branch = "elif"
            how = inline.get(key)
            if how is not None and how[0] == "record":
                namespace[f"m{suffix}"] = how[1]
                lines.append(f"            {branch} type({value}) is dict:")
                lines.append(f"                {value} = m{suffix}({value})")
                branch = "elif"
            elif how is not None and how[0] in ("union", "list_union"):
                tag, makers = how[1]
                namespace[f"t{suffix}"], namespace[f"g{suffix}"] = makers, tag
                if how[0] == "union":
                    lines.append(f"            {branch} type({value}) is dict:")
                    lines.append(f"                {value} = t{suffix}[{value}[g{suffix}]]({value})")
                else:
                    lines.append(f"            {branch} type({value}) is list:")
                    lines.append(
                        f"                {value} = [t{suffix}[e[g{suffix}]](e) if type(e) is dict else refuse()"
                        f" for e in {value}]"
                    )
                branch = "elif"
            lines.append(f"            {'else' if branch == 'elif' else 'if True'}:")
            lines.append(f"                {value} = c{suffix}({value})")
        if not checked:
            lines.append("            pass")
        lines += [
            "        except Exception:  # the loop raises the error it always raised",
            "            return loop(data)",
            "        self = new(cls)",
            "        values = self.__dict__",
        ]
        names = {table[key][0] for key in keys}
        for index, key in enumerate(keys):
            namespace[f"n{size}_{index}"] = table[key][0]
            lines.append(f"        values[n{size}_{index}] = v{index}")
        missing = [(name, factory) for name, factory in factories if name not in names]
        for index, (name, factory) in enumerate(missing):
            namespace[f"f{size}_{index}"] = factory
            namespace[f"m{size}_{index}"] = name
            lines.append(f"        values[m{size}_{index}] = f{size}_{index}()")
        if missing:
            namespace[f"d{size}"] = frozenset(name for name, _ in missing)
            lines.append(f'        values["_defaulted"] = set(d{size})')
        lines.append("        return self")
    lines.append("    return loop(data)")
    exec(compile("\n".join(lines), f"<record maker {cls.__qualname__}>", "exec"), namespace)  # noqa: S102
    made: Callable[..., Any] = namespace["make"]
    return made
