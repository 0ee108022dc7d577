"""Reading a `Record` class's postponed annotations (``"str | None"``, ``"list[TextContent]"``) cheaply.

With ``from __future__ import annotations`` every annotation is a string. ``eval`` would compile each
one (~30 µs apiece, a few ms per run), so the common forms are read by a small parser instead: names
(dotted too), ``A | B``, ``A[B, C]``, and string or integer literals inside ``Literal[...]``. Anything
else is compiled once per distinct text and evaluated, as ``typing.get_type_hints`` would.
"""

from __future__ import annotations

import builtins
import re
import types
from typing import Any

__all__ = ["resolve_annotation"]

_BUILTINS = vars(builtins)
_COMPILED: dict[str, types.CodeType] = {}
_TOKEN = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_.]*)|(\"[^\"\\]*\"|'[^'\\]*')|(-?\d+)|([\[\],|]))")
_MISSING = object()


class _Unsupported(Exception):
    """The text is outside the parser's subset: evaluate it instead."""


def resolve_annotation(annotation: str, namespace: dict[str, Any]) -> Any:
    """The object ``annotation`` names in ``namespace`` (a module's globals, then the builtins).

    Raises:
        NameError: a name in it is not defined there (as ``eval`` would).
    """
    if annotation.isidentifier():
        return _name(annotation, namespace)
    try:
        return _Parser(annotation, namespace).parse()
    except (_Unsupported, TypeError):  # outside the subset (or odd): let Python say what it means
        pass
    code = _COMPILED.get(annotation)
    if code is None:
        code = _COMPILED[annotation] = compile(annotation, "<annotation>", "eval")
    return eval(code, namespace)  # noqa: S307 - the class's own annotation, as typing.get_type_hints does


def _name(text: str, namespace: dict[str, Any]) -> Any:
    head, _, rest = text.partition(".")
    if head == "None":
        value: Any = None
    else:
        value = namespace.get(head, _MISSING)
        if value is _MISSING:
            value = _BUILTINS.get(head, _MISSING)
        if value is _MISSING:
            raise NameError(f"name {head!r} is not defined")
    for part in rest.split(".") if rest else ():
        value = getattr(value, part)  # a dotted annotation (``types.X``): resolved as Python would
    return value


class _Parser:
    def __init__(self, text: str, namespace: dict[str, Any]) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if match is None:
                raise _Unsupported
            name, string, number, punct = match.groups()
            if name is not None:
                self.tokens.append(("name", name))
            elif string is not None:
                self.tokens.append(("str", string[1:-1]))
            elif number is not None:
                self.tokens.append(("int", number))
            else:
                self.tokens.append(("punct", punct))
            pos = match.end()
        self.pos = 0
        self.namespace = namespace

    def parse(self) -> Any:
        value = self._union()
        if self.pos != len(self.tokens):
            raise _Unsupported
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def _union(self) -> Any:
        value = self._atom()
        while self._peek() == "|":
            self.pos += 1
            value = value | self._atom()
        return value

    def _atom(self) -> Any:
        if self.pos >= len(self.tokens):
            raise _Unsupported
        kind, text = self.tokens[self.pos]
        self.pos += 1
        if kind == "str":
            return text
        if kind == "int":
            return int(text)
        if kind != "name":
            raise _Unsupported
        value = _name(text, self.namespace)
        if self._peek() == "[":
            self.pos += 1
            args = [self._union()]
            while self._peek() == ",":
                self.pos += 1
                args.append(self._union())
            if self._peek() != "]":
                raise _Unsupported
            self.pos += 1
            value = value[args[0]] if len(args) == 1 else value[tuple(args)]
        return value
