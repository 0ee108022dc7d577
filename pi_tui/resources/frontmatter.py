"""Markdown frontmatter: a ``---`` fenced block of YAML at the top of a file.

Skills and prompt templates carry a few metadata keys in frontmatter. :mod:`pi_tui.resources.yaml_subset`
parses the YAML such files use, typed as YAML 1.2 like pi (its docstring says why no library does it):

- block mappings (``key: value``, nested by indentation) and block lists (``- item``);
- plain scalars with YAML 1.2 core typing (``true``/``false``, ``null``/``~``, ints, floats),
  multi-line plain scalars, trailing ``# comments``;
- ``"double"`` (with escapes) and ``'single'`` (``''`` escape) quoted scalars, also multi-line;
- ``|`` literal and ``>`` folded block scalars with ``-``/``+`` chomping and an explicit indent;
- flow collections ``[a, b]`` and ``{k: v}``.

Anchors, aliases and tags are rejected rather than guessed at. Anything that is not valid in that
subset raises :class:`FrontmatterError`, so callers can skip a broken file with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pi_tui.resources.yaml_subset import YamlSubsetError, normalize_newlines, parse_yaml_mapping
from pi_tui.util.json_types import JsonObject

__all__ = [
    "FrontmatterError",
    "ParsedFrontmatter",
    "normalize_newlines",
    "parse_frontmatter",
    "parse_frontmatter_yaml",
    "split_frontmatter",
    "strip_frontmatter",
]


class FrontmatterError(YamlSubsetError):
    """The frontmatter block is not valid YAML (in the subset this module reads)."""


@dataclass(frozen=True)
class ParsedFrontmatter:
    """The result of :func:`parse_frontmatter`.

    Attributes:
        data: The frontmatter mapping; empty when there is none.
        body: The text after the frontmatter, trimmed; the whole text when there is none.
        has_frontmatter: Whether a complete ``---`` block was found.
    """

    data: JsonObject = field(default_factory=dict)
    body: str = ""
    has_frontmatter: bool = False


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """Split text into its raw frontmatter block and its body, without parsing the YAML.

    Returns:
        ``(yaml_text, body)``. ``yaml_text`` is ``None`` when the text does not open with a
        ``---`` line or the block is never closed; the body is then the whole (newline-normalised)
        text, untouched. Otherwise the body is what follows the closing ``---`` line, trimmed.
    """
    normalized = normalize_newlines(text)
    lines = normalized.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None, normalized
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            yaml_text = "\n".join(lines[1:index])
            body = "\n".join(lines[index + 1 :]).strip()
            return yaml_text, body
    return None, normalized


def parse_frontmatter(text: str) -> ParsedFrontmatter:
    """Parse the frontmatter of a markdown document.

    Raises:
        FrontmatterError: The block exists but is not valid YAML, or is not a mapping.
    """
    yaml_text, body = split_frontmatter(text)
    if yaml_text is None:
        return ParsedFrontmatter(data={}, body=body, has_frontmatter=False)
    return ParsedFrontmatter(data=parse_frontmatter_yaml(yaml_text), body=body, has_frontmatter=True)


def strip_frontmatter(text: str) -> str:
    """Return the body of a document without its frontmatter; never raises on bad YAML."""
    return split_frontmatter(text)[1]


def parse_frontmatter_yaml(text: str) -> JsonObject:
    """Parse the YAML of a frontmatter block (without the ``---`` fences).

    Raises:
        FrontmatterError: Invalid syntax, or the block is a list or a scalar.
    """
    try:
        return parse_yaml_mapping(text)
    except YamlSubsetError as exc:
        raise FrontmatterError(str(exc)) from exc
