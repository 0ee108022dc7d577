"""A parser for the YAML subset used in markdown frontmatter (see :mod:`pi_tui.resources.frontmatter`).

Supported: block mappings and lists nested by indentation; plain scalars typed like the YAML 1.2
core schema, including multi-line plain scalars and trailing comments; single- and double-quoted
scalars (with escapes, possibly multi-line); ``|`` and ``>`` block scalars with chomping and an
explicit indent; flow collections. Anchors, aliases, tags and multiple documents are rejected.

Why ours and not a library: pi reads frontmatter with a YAML 1.2 parser (the
``yaml`` npm package, core schema), and what a skill's ``description: no`` or a template's
``date: 2024-01-01`` becomes is visible to users. PyYAML is YAML 1.1 (``no``/``on``/``yes`` become
booleans, dates become ``datetime``); ruamel.yaml's safe loader is 1.2 but still turns dates into
``datetime.date``, ``1_000`` into 1000 and ``0b101`` into 5, and fails on unknown tags, so it would
need a custom resolver written against its internals, plus ~16 ms of import on every start-up that
meets a skill (this module: ~4 ms). ``tests/resources/test_yaml_core_schema.py`` holds the YAML 1.2
spec's chapter-2 examples and the core schema's resolution cases with pi's own parser's results; this
parser matches every one. The one known difference: pi accepts anchors, aliases and tags, which we
refuse with a clear error (no frontmatter we know of uses them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from pi_tui.util.json_types import JsonArray, JsonObject, JsonValue

__all__ = ["YamlSubsetError", "parse_yaml_mapping"]


class YamlSubsetError(ValueError):
    """The text is not valid YAML in the supported subset."""


def normalize_newlines(text: str) -> str:
    """Turn CRLF and lone CR line endings into LF and drop a leading byte-order mark."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_yaml_mapping(text: str) -> JsonObject:
    """Parse a YAML document that must be a mapping (an empty document gives ``{}``).

    Raises:
        YamlSubsetError: Invalid syntax, or the document is a list or a scalar.
    """
    return _Parser(text).parse_document()


_KEY_SEPARATOR = re.compile(r":(?=[ \t]|$)")
_BLOCK_HEADER = re.compile(r"([|>])(?:([+-])([1-9])?|([1-9])([+-])?)?[ \t]*(?:#.*)?")
_INT = re.compile(r"[-+]?[0-9]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_OCT = re.compile(r"0o[0-7]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_SIMPLE_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
}
_HEX_ESCAPE_LENGTHS = {"x": 2, "u": 4, "U": 8}


def _resolve_plain(value: str) -> JsonValue:
    """Type a plain scalar the way the YAML 1.2 core schema does."""
    if value in ("true", "True", "TRUE"):
        return True
    if value in ("false", "False", "FALSE"):
        return False
    if value in ("null", "Null", "NULL", "~", ""):
        return None
    if _INT.fullmatch(value):
        return int(value)
    if _HEX.fullmatch(value):
        return int(value[2:], 16)
    if _OCT.fullmatch(value):
        return int(value[2:], 8)
    if _FLOAT.fullmatch(value):
        return float(value)
    lowered = value.lower()
    if lowered in (".inf", "+.inf"):
        return float("inf")
    if lowered == "-.inf":
        return float("-inf")
    if lowered == ".nan":
        return float("nan")
    return value


def _strip_comment(text: str) -> str:
    """Drop a trailing ``# comment`` from a plain scalar line (``#`` must follow whitespace)."""
    match = re.search(r"[ \t]#", text)
    if match:
        text = text[: match.start()]
    return text.rstrip()


def _is_list_item(content: str) -> bool:
    return content == "-" or content.startswith(("- ", "-\t"))


def _find_closing_quote(text: str, quote: str) -> int:
    """Index of the quote that closes a scalar whose opening quote is already consumed, or -1."""
    index = 0
    while index < len(text):
        char = text[index]
        if quote == '"' and char == "\\":
            index += 2
            continue
        if char == quote:
            if quote == "'" and index + 1 < len(text) and text[index + 1] == "'":
                index += 2
                continue
            return index
        index += 1
    return -1


def _fold_lines(lines: list[str]) -> str:
    """Fold the lines of a quoted or plain multi-line scalar: breaks become spaces, blank lines LF."""
    out = ""
    blank = 0
    started = False
    for line in lines:
        if line == "":
            blank += 1
            continue
        if not started:
            out = line
            started = True
        else:
            out += "\n" * blank if blank else " "
            out += line
        blank = 0
    if blank and started:
        out += "\n" * blank
    return out


class _Parser:
    """Recursive-descent parser over the lines of one YAML document."""

    def __init__(self, text: str) -> None:
        self.lines = normalize_newlines(text).split("\n")
        self.pos = 0

    # -- helpers ---------------------------------------------------------------------------

    def error(self, message: str, line_index: int | None = None) -> YamlSubsetError:
        index = self.pos if line_index is None else line_index
        return YamlSubsetError(f"invalid YAML in frontmatter (line {index + 1}): {message}")

    def indent_of(self, index: int) -> int:
        line = self.lines[index]
        indent = len(line) - len(line.lstrip(" "))
        if indent < len(line) and line[indent] == "\t":
            raise self.error("tabs are not allowed for indentation", index)
        return indent

    def next_content(self) -> int | None:
        """Skip blank and comment lines; return the index of the next content line, if any."""
        while self.pos < len(self.lines):
            stripped = self.lines[self.pos].strip()
            if stripped and not stripped.startswith("#"):
                return self.pos
            self.pos += 1
        return None

    def split_key(self, content: str, line_index: int) -> tuple[str, str] | None:
        """Split ``key: rest``; ``None`` when the content is not a mapping entry."""
        if content[0] in "\"'":
            quote = content[0]
            close = _find_closing_quote(content[1:], quote)
            if close < 0:
                return None
            after = content[close + 2 :]
            match = re.match(r"[ \t]*:(?=[ \t]|$)", after)
            if not match:
                return None
            raw = content[1 : close + 1]
            key = self.decode_double(raw, line_index) if quote == '"' else raw.replace("''", "'")
            return key, after[match.end() :].strip()
        if content[0] in "[{?":
            return None
        match = _KEY_SEPARATOR.search(content)
        if not match:
            return None
        key = content[: match.start()].rstrip()
        if not key or " #" in key:
            return None
        return key, content[match.start() + 1 :].strip()

    # -- structure -------------------------------------------------------------------------

    def parse_document(self) -> JsonObject:
        index = self.next_content()
        if index is None:
            return {}
        indent = self.indent_of(index)
        content = self.lines[index][indent:]
        if content.startswith("---") or content.startswith("..."):
            raise self.error("multiple documents are not supported", index)
        if _is_list_item(content):
            raise self.error("frontmatter must be a mapping of keys to values, not a list", index)
        if self.split_key(content, index) is None:
            raise self.error(f"expected 'key: value', found {content!r}", index)
        result = self.parse_mapping(indent)
        leftover = self.next_content()
        if leftover is not None:
            raise self.error("unexpected indentation", leftover)
        return result

    def parse_block(self, indent: int) -> JsonValue:
        """Parse the node whose first line (the next content line) sits at ``indent``."""
        index = self.next_content()
        assert index is not None  # callers check first
        content = self.lines[index][indent:]
        if _is_list_item(content):
            return self.parse_list(indent)
        if self.split_key(content, index) is not None:
            return self.parse_mapping(indent)
        # A scalar on its own line under a key: ``key:\n  some text``.
        self.pos = index + 1
        return self.parse_inline(content, indent - 1, index)

    def lines_at(self, indent: int) -> Iterator[tuple[int, str]]:
        """The block's lines at ``indent``, one at a time, as (index, text after the indent): up to the
        first less indented line (the block's end); a more indented one is an error. The caller moves
        ``pos`` past each line it takes before asking for the next."""
        while (index := self.next_content()) is not None:
            line_indent = self.indent_of(index)
            if line_indent < indent:
                return
            if line_indent > indent:
                raise self.error("unexpected indentation", index)
            yield index, self.lines[index][indent:]

    def parse_mapping(self, indent: int) -> JsonObject:
        result: JsonObject = {}
        for index, content in self.lines_at(indent):
            if _is_list_item(content):
                raise self.error("a list item cannot follow a mapping entry at the same level", index)
            entry = self.split_key(content, index)
            if entry is None:
                raise self.error(f"expected 'key: value', found {content!r}", index)
            key, rest = entry
            if key in result:
                raise self.error(f"duplicate key {key!r}", index)
            self.pos = index + 1
            if rest == "" or rest.startswith("#"):
                result[key] = self.parse_nested(indent, allow_same_indent_list=True)
            else:
                result[key] = self.parse_inline(rest, indent, index)
        return result

    def parse_list(self, indent: int) -> JsonArray:
        items: JsonArray = []
        for index, content in self.lines_at(indent):
            if not _is_list_item(content):
                break
            after = content[1:]
            stripped = after.lstrip(" \t")
            if stripped == "" or stripped.startswith("#"):
                self.pos = index + 1
                items.append(self.parse_nested(indent, allow_same_indent_list=False))
                continue
            offset = indent + 1 + (len(after) - len(stripped))
            if _is_list_item(stripped) or self.split_key(stripped, index) is not None:
                # ``- key: v`` / ``- - x``: the item is a block that starts at the item's text.
                self.lines[index] = " " * offset + stripped
                self.pos = index
                items.append(self.parse_block(offset))
            else:
                self.pos = index + 1
                items.append(self.parse_inline(stripped, indent, index))
        return items

    def parse_nested(self, indent: int, *, allow_same_indent_list: bool) -> JsonValue:
        """The value of a key (or list item) with nothing after it on its own line."""
        index = self.next_content()
        if index is None:
            return None
        line_indent = self.indent_of(index)
        content = self.lines[index][line_indent:]
        if line_indent > indent:
            return self.parse_block(line_indent)
        if line_indent == indent and allow_same_indent_list and _is_list_item(content):
            return self.parse_list(line_indent)
        return None

    # -- scalars ---------------------------------------------------------------------------

    def parse_inline(self, rest: str, indent: int, line_index: int) -> JsonValue:
        """Parse a value that starts on the line of its key; ``indent`` is the key's indent."""
        first = rest[0]
        if first in "|>":
            return self.parse_block_scalar(rest, indent, line_index)
        if first in "\"'":
            return self.parse_quoted(rest, line_index)
        if first in "[{":
            return self.parse_flow(rest, line_index)
        if first in "&*":
            raise self.error("anchors and aliases are not supported", line_index)
        if first == "!":
            raise self.error("tags are not supported", line_index)
        if first in "@`":
            raise self.error(f"a plain value cannot start with {first!r}; quote it", line_index)
        return self.parse_plain(rest, indent, line_index)

    def parse_plain(self, rest: str, indent: int, line_index: int) -> JsonValue:
        text = _strip_comment(rest)
        if _KEY_SEPARATOR.search(text):
            raise self.error("a ': ' inside a plain value is not allowed; quote the value", line_index)
        parts = [text]
        while True:
            saved = self.pos
            while self.pos < len(self.lines) and self.lines[self.pos].strip() == "":
                self.pos += 1
            if self.pos >= len(self.lines):
                self.pos = saved
                break
            stripped = self.lines[self.pos].strip()
            if self.indent_of(self.pos) <= indent or stripped.startswith("#"):
                self.pos = saved
                break
            continuation = _strip_comment(stripped)
            if _KEY_SEPARATOR.search(continuation):
                raise self.error("a ': ' inside a plain value is not allowed; quote the value", self.pos)
            parts.extend([""] * (self.pos - saved))
            parts.append(continuation)
            self.pos += 1
        if len(parts) == 1:
            return _resolve_plain(text)
        return _fold_lines(parts)

    def parse_quoted(self, rest: str, line_index: int) -> str:
        quote = rest[0]
        segments = [rest[1:]]
        close = _find_closing_quote(segments[0], quote)
        while close < 0:
            if self.pos >= len(self.lines):
                raise self.error("unterminated quoted string", line_index)
            segments.append(self.lines[self.pos].strip())
            self.pos += 1
            close = _find_closing_quote(segments[-1], quote)
        tail = segments[-1][close + 1 :].strip()
        segments[-1] = segments[-1][:close]
        if tail and not tail.startswith("#"):
            raise self.error(f"unexpected text after the closing quote: {tail!r}", line_index)
        if len(segments) > 1:
            segments[0] = segments[0].rstrip()
            segments[-1] = segments[-1].lstrip()
        raw = _fold_lines(segments) if len(segments) > 1 else segments[0]
        if quote == "'":
            return raw.replace("''", "'")
        return self.decode_double(raw, line_index)

    def decode_double(self, raw: str, line_index: int) -> str:
        out: list[str] = []
        index = 0
        while index < len(raw):
            char = raw[index]
            if char != "\\":
                out.append(char)
                index += 1
                continue
            if index + 1 >= len(raw):
                raise self.error("a backslash ends the quoted string", line_index)
            code = raw[index + 1]
            if code in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[code])
                index += 2
                continue
            length = _HEX_ESCAPE_LENGTHS.get(code)
            digits = raw[index + 2 : index + 2 + length] if length else ""
            if not length or len(digits) != length or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise self.error(f"unknown escape sequence '\\{code}'", line_index)
            out.append(chr(int(digits, 16)))
            index += 2 + length
        return "".join(out)

    def parse_block_scalar(self, rest: str, indent: int, line_index: int) -> str:
        header = _BLOCK_HEADER.fullmatch(rest)
        if not header:
            raise self.error(f"invalid block scalar header {rest!r}", line_index)
        style = header.group(1)
        chomp = header.group(2) or header.group(5) or ""
        explicit = header.group(3) or header.group(4)
        block_indent = indent + int(explicit) if explicit else None
        collected: list[str] = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.strip() == "":
                collected.append(line)
                self.pos += 1
                continue
            line_indent = len(line) - len(line.lstrip(" "))
            if block_indent is None:
                if line_indent <= indent:
                    break
                block_indent = line_indent
            if line_indent < block_indent:
                break
            collected.append(line)
            self.pos += 1
        start = block_indent or 0
        texts = [line[start:] if line.strip() else "" for line in collected]
        trailing = 0
        while texts and texts[-1] == "":
            texts.pop()
            trailing += 1
        if style == "|":
            body = "\n".join(texts)
        else:
            body = self.fold_block(texts)
        if chomp == "-":
            return body
        if chomp == "+":
            return body + ("\n" if texts else "") + "\n" * trailing
        return body + "\n" if texts else ""

    @staticmethod
    def fold_block(lines: list[str]) -> str:
        """Folding for ``>`` scalars: more-indented lines keep their line breaks."""
        out = ""
        blank = 0
        previous_more = False
        started = False
        for line in lines:
            if line == "":
                blank += 1
                continue
            more = line[0] in " \t"
            if not started:
                out = "\n" * blank + line
                started = True
            elif more or previous_more:
                out += "\n" * (blank + 1) + line
            else:
                out += ("\n" * blank if blank else " ") + line
            blank = 0
            previous_more = more
        return out

    def parse_flow(self, rest: str, line_index: int) -> JsonValue:
        text = rest
        while not _flow_balanced(text):
            if self.pos >= len(self.lines):
                raise self.error("unterminated flow collection (missing ']' or '}')", line_index)
            text += " " + self.lines[self.pos].strip()
            self.pos += 1
        flow = _FlowParser(text, lambda message: self.error(message, line_index))
        value = flow.parse_value()
        tail = flow.text[flow.pos :].strip()
        if tail and not tail.startswith("#"):
            raise self.error(f"unexpected text after a flow collection: {tail!r}", line_index)
        return value


def _flow_balanced(text: str) -> bool:
    """Whether every ``[``/``{`` opened outside quotes has been closed."""
    depth = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char in "\"'":
            close = _find_closing_quote(text[index + 1 :], char)
            if close < 0:
                return False
            index += close + 2
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return True
        index += 1
    return depth <= 0


class _FlowParser:
    """Parser for ``[a, "b", {c: d}]`` style values gathered onto one line."""

    def __init__(self, text: str, error: Callable[[str], YamlSubsetError]) -> None:
        self.text = text
        self.pos = 0
        self.error = error

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def parse_value(self) -> JsonValue:
        self.skip_space()
        if self.pos >= len(self.text):
            raise self.error("unexpected end of a flow collection")
        char = self.text[self.pos]
        if char == "[":
            return self.parse_sequence()
        if char == "{":
            return self.parse_mapping()
        if char in "\"'":
            return self.parse_quoted()
        return self.parse_plain(in_mapping_key=False)

    def parse_sequence(self) -> JsonArray:
        self.pos += 1
        items: JsonArray = []
        while True:
            self.skip_space()
            if self.pos >= len(self.text):
                raise self.error("unterminated flow sequence")
            if self.text[self.pos] == "]":
                self.pos += 1
                return items
            items.append(self.parse_value())
            self.skip_space()
            if self.pos < len(self.text) and self.text[self.pos] == ",":
                self.pos += 1
            elif self.pos < len(self.text) and self.text[self.pos] == "]":
                continue
            else:
                raise self.error("expected ',' or ']' in a flow sequence")

    def parse_mapping(self) -> JsonObject:
        self.pos += 1
        result: JsonObject = {}
        while True:
            self.skip_space()
            if self.pos >= len(self.text):
                raise self.error("unterminated flow mapping")
            if self.text[self.pos] == "}":
                self.pos += 1
                return result
            char = self.text[self.pos]
            key = self.parse_quoted() if char in "\"'" else self.parse_plain(in_mapping_key=True)
            self.skip_space()
            value: JsonValue = None
            if self.pos < len(self.text) and self.text[self.pos] == ":":
                self.pos += 1
                self.skip_space()
                if self.pos < len(self.text) and self.text[self.pos] not in ",}":
                    value = self.parse_value()
            result[str(key)] = value
            self.skip_space()
            if self.pos < len(self.text) and self.text[self.pos] == ",":
                self.pos += 1
            elif self.pos < len(self.text) and self.text[self.pos] == "}":
                continue
            else:
                raise self.error("expected ',' or '}' in a flow mapping")

    def parse_quoted(self) -> str:
        quote = self.text[self.pos]
        close = _find_closing_quote(self.text[self.pos + 1 :], quote)
        if close < 0:
            raise self.error("unterminated quoted string")
        raw = self.text[self.pos + 1 : self.pos + 1 + close]
        self.pos += close + 2
        if quote == "'":
            return raw.replace("''", "'")
        parser = _Parser("")
        try:
            return parser.decode_double(raw, 0)
        except YamlSubsetError as exc:
            raise self.error(str(exc)) from exc

    def parse_plain(self, *, in_mapping_key: bool) -> JsonValue:
        start = self.pos
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in ",]}[{":
                break
            if char == ":" and (self.pos + 1 >= len(self.text) or self.text[self.pos + 1] in " \t,]}"):
                if in_mapping_key:
                    break
                raise self.error("a ': ' inside a flow sequence value is not allowed; quote the value")
            self.pos += 1
        raw = self.text[start : self.pos].strip()
        return raw if in_mapping_key else _resolve_plain(raw)
