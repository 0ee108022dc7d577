"""Prompt templates: markdown files that expand ``/name args`` into a full prompt.

Templates are the ``*.md`` files directly inside ``<agent>/prompts/`` and ``<cwd>/.pi/prompts/``
(no recursion), plus configured files and directories. The name is the file name without
``.md``; the first template with a name wins, project before user.

Arguments are split bash-style and substituted in one pass, so text coming from an argument is
never substituted again:

- ``$1`` … ``$N``: positional (missing ones become empty);
- ``${@:N}`` / ``${@:N:L}``: the arguments from the N-th (1-based; 0 counts as 1), L of them;
- ``$ARGUMENTS`` and ``$@``: all arguments joined by spaces.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.frontmatter import FrontmatterError, parse_frontmatter
from pi_tui.resources.paths import CONFIG_DIR_NAME, resolve_path

__all__ = [
    "DESCRIPTION_PREVIEW_CHARS",
    "PromptTemplate",
    "TemplateLoadResult",
    "expand_template",
    "load_template_file",
    "load_templates",
    "load_templates_from_dir",
    "parse_command_args",
    "substitute_args",
]

DESCRIPTION_PREVIEW_CHARS = 60

_PLACEHOLDER = re.compile(r"\$\{@:(\d+)(?::(\d+))?\}|\$ARGUMENTS|\$@|\$(\d+)")


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded prompt template.

    Attributes:
        name: What follows the ``/`` (the file name without ``.md``).
        description: The frontmatter description, else a preview of the first line; the source
            label is appended (``"Review code (project)"``).
        content: The body, frontmatter removed.
        source: ``"(user)"``, ``"(project)"`` or ``"(path:<name>)"``.
        file_path: Where the template was read from.
    """

    name: str
    description: str
    content: str
    source: str
    file_path: Path


@dataclass
class TemplateLoadResult:
    """Templates plus the problems met while loading them."""

    templates: list[PromptTemplate] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)


def parse_command_args(text: str) -> list[str]:
    """Split an argument string like a shell does for quotes: ``'…'`` and ``"…"`` group words.

    Quotes may start mid-word (``a"b c"`` is one argument ``ab c``); spaces and tabs separate
    arguments; empty arguments are dropped. No escapes or variable expansion happen.
    """
    args: list[str] = []
    current: list[str] = []
    quote: str | None = None
    for char in text:
        if quote is not None:
            if char == quote:
                quote = None
            else:
                current.append(char)
        elif char in "\"'":
            quote = char
        elif char in " \t":
            if current:
                args.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        args.append("".join(current))
    return args


def substitute_args(content: str, args: Sequence[str]) -> str:
    """Replace the argument placeholders of a template body (see the module docstring)."""

    def replace(match: re.Match[str]) -> str:
        text = match.group(0)
        if match.group(3) is not None:
            index = int(match.group(3)) - 1
            return args[index] if 0 <= index < len(args) else ""
        if text.startswith("${@:"):
            start = max(int(match.group(1)), 1) - 1
            if match.group(2) is not None:
                return " ".join(args[start : start + int(match.group(2))])
            return " ".join(args[start:])
        return " ".join(args)

    return _PLACEHOLDER.sub(replace, content)


def _description_from_body(body: str) -> str:
    for line in body.split("\n"):
        stripped = line.strip()
        if stripped:
            if len(stripped) > DESCRIPTION_PREVIEW_CHARS:
                return stripped[:DESCRIPTION_PREVIEW_CHARS] + "..."
            return stripped
    return ""


def load_template_file(path: Path, source: str) -> tuple[PromptTemplate | None, list[ResourceDiagnostic]]:
    """Load one template; ``(None, diagnostics)`` when the file cannot be used."""
    path = Path(os.path.abspath(path))
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        message = f"could not read prompt template: {exc.strerror or exc}"
        return None, [ResourceDiagnostic("warning", message, path, "prompt")]
    try:
        parsed = parse_frontmatter(text)
    except FrontmatterError as exc:
        return None, [ResourceDiagnostic("warning", f"prompt template skipped: {exc}", path, "prompt")]
    raw_description = parsed.data.get("description")
    description = raw_description.strip() if isinstance(raw_description, str) else ""
    if not description:
        description = _description_from_body(parsed.body)
    description = f"{description} {source}" if description else source
    name = path.name[: -len(".md")]
    return PromptTemplate(name, description, parsed.body, source, path), []


def load_templates_from_dir(directory: Path, source: str) -> TemplateLoadResult:
    """Load the ``*.md`` files directly inside ``directory`` (sorted by name, not recursive)."""
    result = TemplateLoadResult()
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return result
    for entry in entries:
        if not entry.name.endswith(".md") or entry.name.startswith("."):
            continue
        try:
            if not entry.is_file():
                continue
        except OSError:
            continue
        template, diagnostics = load_template_file(Path(entry.path), source)
        result.diagnostics.extend(diagnostics)
        if template is not None:
            result.templates.append(template)
    return result


def _path_source(path: Path) -> str:
    label = path.name[: -len(".md")] if path.name.endswith(".md") else path.name
    return f"(path:{label})"


def _load_explicit(path: Path) -> TemplateLoadResult:
    if path.is_dir():
        return load_templates_from_dir(path, _path_source(path))
    if path.is_file() and path.name.endswith(".md"):
        template, diagnostics = load_template_file(path, _path_source(path))
        return TemplateLoadResult([template] if template else [], diagnostics)
    message = "prompt template path does not exist" if not path.exists() else "not a markdown file"
    return TemplateLoadResult(diagnostics=[ResourceDiagnostic("warning", message, path, "prompt")])


def load_templates(
    *,
    cwd: Path,
    agent_dir: Path,
    include_defaults: bool = True,
    include_project: bool = True,
    explicit_paths: Iterable[str | Path] = (),
) -> TemplateLoadResult:
    """Load templates: project dir, user dir, then explicit paths; the first name wins.

    Args:
        cwd: The working directory (``.pi/prompts`` below it; relative explicit paths).
        agent_dir: The agent directory (``<agent>/prompts``).
        include_defaults: Read the two default directories (``False`` for
            ``--no-prompt-templates``; explicit paths still load).
        include_project: Read ``<cwd>/.pi/prompts``; pass ``False`` for untrusted projects.
        explicit_paths: Files or directories from settings and ``--prompt-template``.
    """
    results: list[TemplateLoadResult] = []
    if include_defaults:
        if include_project:
            results.append(load_templates_from_dir(Path(cwd) / CONFIG_DIR_NAME / "prompts", "(project)"))
        results.append(load_templates_from_dir(Path(agent_dir) / "prompts", "(user)"))
    for raw in explicit_paths:
        results.append(_load_explicit(resolve_path(raw, Path(cwd))))

    merged = TemplateLoadResult()
    by_name: dict[str, PromptTemplate] = {}
    collisions: list[ResourceDiagnostic] = []
    for result in results:
        merged.diagnostics.extend(result.diagnostics)
        for template in result.templates:
            existing = by_name.get(template.name)
            if existing is None:
                by_name[template.name] = template
                merged.templates.append(template)
            elif os.path.realpath(existing.file_path) != os.path.realpath(template.file_path):
                collisions.append(
                    ResourceDiagnostic(
                        "collision",
                        f'name "/{template.name}" collision',
                        template.file_path,
                        "prompt",
                        winner_path=existing.file_path,
                    )
                )
    merged.diagnostics.extend(collisions)
    return merged


def expand_template(text: str, templates: Sequence[PromptTemplate]) -> str | None:
    """Expand ``/name args`` with the matching template.

    Returns:
        The expanded text, or ``None`` when ``text`` does not start with ``/`` followed by the name
        of a loaded template (the caller then uses the text unchanged).
    """
    if not text.startswith("/"):
        return None
    match = re.match(r"/(\S+)(?:\s(.*))?\Z", text, re.DOTALL)
    if match is None:
        return None
    name = match.group(1)
    template = next((candidate for candidate in templates if candidate.name == name), None)
    if template is None:
        return None
    return substitute_args(template.content, parse_command_args(match.group(2) or ""))
