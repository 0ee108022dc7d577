"""The system prompt: base text, appended text, project context, skills, then date and directory.

The prompt is built from named parts so a context engine can show, measure and cache each one:

``base``
    The default text (tools, guidelines, docs) or a custom prompt (``SYSTEM.md``,
    ``--system-prompt``), which replaces only this part.
``append``
    ``APPEND_SYSTEM.md`` / ``--append-system-prompt``.
``project_context``
    The AGENTS.md/CLAUDE.md files under ``# Project Context``.
``skills``
    The ``<available_skills>`` listing, only while the ``read`` tool is active.
``environment``
    ``Current date: YYYY-MM-DD`` and the working directory. The date has day precision so the
    whole prompt stays byte-identical, and therefore cacheable, for a day.

Empty parts are left out; joining the parts' texts gives exactly :func:`build_system_prompt`.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pi_tui.resources.context_files import ContextFile
from pi_tui.resources.skills import Skill, format_skills_for_prompt

__all__ = [
    "BUILTIN_TOOL_DESCRIPTIONS",
    "DEFAULT_TOOL_NAMES",
    "PromptLayout",
    "PromptPart",
    "ToolPromptInfo",
    "build_guidelines",
    "build_system_prompt",
    "build_system_prompt_layout",
    "build_system_prompt_parts",
    "default_docs_paths",
]

BUILTIN_TOOL_DESCRIPTIONS: dict[str, str] = {
    "read": "Read file contents",
    "bash": "Execute bash commands (ls, grep, find, etc.)",
    "edit": "Make surgical edits to files (find exact text and replace)",
    "write": "Create or overwrite files",
    "grep": "Search file contents for patterns (respects .gitignore)",
    "find": "Find files by glob pattern (respects .gitignore)",
    "ls": "List directory contents",
}
DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")

_INTRO = (
    "You are an expert coding assistant operating inside pi-tui, a coding agent harness. "
    "You help users by reading files, executing commands, editing code, and writing new files."
)
_CUSTOM_TOOLS_NOTE = (
    "In addition to the tools above, you may have access to other custom tools depending on the project."
)


@dataclass(frozen=True)
class ToolPromptInfo:
    """What the system prompt says about one active tool.

    Attributes:
        name: The tool name.
        snippet: The one-line entry for "Available tools" (an extension tool's ``promptSnippet``,
            else its description). ``None`` uses the built-in line for built-in tools and leaves
            other tools out of the list (they still count for the guidelines).
        guidelines: Extra bullets for the Guidelines section while the tool is active.
    """

    name: str
    snippet: str | None = None
    guidelines: tuple[str, ...] = ()


class PromptPart(NamedTuple):
    """A named slice of the system prompt (a ``(name, text)`` pair); slices concatenate to the prompt."""

    name: str
    text: str


ToolSpec = ToolPromptInfo | str | tuple[str, str | None, Sequence[str]]


def _as_tool_info(spec: ToolSpec) -> ToolPromptInfo:
    if isinstance(spec, ToolPromptInfo):
        return spec
    if isinstance(spec, str):
        return ToolPromptInfo(spec)
    name, snippet, guidelines = spec
    return ToolPromptInfo(name, snippet, tuple(guidelines or ()))


def default_docs_paths() -> list[Path]:
    """This project's README.md and docs/ next to the installed package, when they exist."""
    import pi_tui

    root = Path(pi_tui.__file__).resolve().parent.parent
    return [path for path in (root / "README.md", root / "docs") if path.exists()]


def build_guidelines(tools: Sequence[ToolPromptInfo]) -> list[str]:
    """The Guidelines bullets for the active tools: built-in rules, tool bullets, then the fixed two.

    Tool bullets are trimmed; empty and duplicate bullets are dropped.
    """
    names = {tool.name for tool in tools}
    bullets: list[str] = []

    def add(text: str) -> None:
        if text and text not in bullets:
            bullets.append(text)

    explorers = names & {"grep", "find", "ls"}
    if "bash" in names and not explorers:
        add("Use bash for file operations like ls, rg, find")
    elif "bash" in names:
        add("Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)")
    if "read" in names and "edit" in names:
        add("Use read to examine files before editing. You must use this tool instead of cat or sed.")
    if "edit" in names:
        add("Use edit for precise changes (old text must match exactly)")
    if "write" in names:
        add("Use write only for new files or complete rewrites")
    if "edit" in names or "write" in names:
        add(
            "When summarizing your actions, output plain text directly - "
            "do NOT use cat or bash to display what you did"
        )
    for tool in tools:
        for guideline in tool.guidelines:
            add(guideline.strip())
    add("Be concise in your responses")
    add("Show file paths clearly when working with files")
    return bullets


def _tool_line(tool: ToolPromptInfo) -> str | None:
    text = tool.snippet if tool.snippet and tool.snippet.strip() else BUILTIN_TOOL_DESCRIPTIONS.get(tool.name)
    if not text:
        return None
    return f"- {tool.name}: {' '.join(text.split())}"


def _docs_block(docs_paths: Sequence[Path]) -> str:
    existing = [Path(path) for path in docs_paths]
    if not existing:
        return ""
    lines = [
        "pi-tui documentation (read only when the user asks about pi-tui itself, its extensions, "
        "skills, prompt templates, themes, settings or keybindings):"
    ]
    for path in existing:
        if path.is_dir():
            label = "Additional docs"
        elif path.name.lower() == "readme.md":
            label = "Main documentation"
        else:
            label = "Documentation"
        lines.append(f"- {label}: {path}")
    lines.append(
        "- When working on pi-tui topics, read the relevant docs and follow .md cross-references "
        "before implementing"
    )
    return "\n\n" + "\n".join(lines)


def _default_sections(tools: Sequence[ToolPromptInfo], docs_paths: Sequence[Path]) -> list[PromptPart]:
    """The default base text as pi's sections (``preamble``, ``tools``, ``rules``, ``docs``); joined by
    blank lines they are the ``base`` part."""
    tool_lines = [line for line in (_tool_line(tool) for tool in tools) if line]
    tools_text = "\n".join(tool_lines) if tool_lines else "(none)"
    guidelines = "\n".join(f"- {bullet}" for bullet in build_guidelines(tools))
    sections = [
        PromptPart("preamble", _INTRO),
        PromptPart("tools", f"Available tools:\n{tools_text}\n\n{_CUSTOM_TOOLS_NOTE}"),
        PromptPart("rules", f"Guidelines:\n{guidelines}"),
    ]
    docs = _docs_block(docs_paths)
    if docs:
        sections.append(PromptPart("docs", docs.removeprefix("\n\n")))
    return sections


def _context_text(context_files: Sequence[ContextFile | tuple[str | Path, str]]) -> str:
    if not context_files:
        return ""
    text = "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n"
    for item in context_files:
        path, content = (item.path, item.content) if isinstance(item, ContextFile) else item
        text += f"## {path}\n\n{content}\n\n"
    return text


class PromptLayout(NamedTuple):
    """One prompt two ways: the named parts a request is built from, and the sections it is stored as.

    ``sections`` are pi 0.86+'s named sections for the same prompt, as pi-tui writes them into the
    session (a ``role: "system"`` message): ``preamble`` (the intro, or the custom prompt), ``tools``,
    ``rules`` and ``docs`` (the default base text, split where its blank lines are), ``addendum``,
    ``project_context``, ``skills``, and pi-tui's own ``environment`` (the date and the working
    directory; pi's ``cwd`` holds the directory only). Each is its part's text without the blank line
    that joins it to the one before.
    """

    parts: list[PromptPart]
    sections: dict[str, str]


def build_system_prompt_layout(
    *,
    tools: Sequence[ToolSpec] | None = None,
    custom_prompt: str | None = None,
    append_system_prompt: str | Sequence[str] | None = None,
    context_files: Sequence[ContextFile | tuple[str | Path, str]] = (),
    skills: Sequence[Skill] = (),
    cwd: str | Path,
    date: _dt.date | None = None,
    docs_paths: Sequence[Path] | None = None,
) -> PromptLayout:
    """The prompt's parts and its pi sections; see :func:`build_system_prompt_parts` for the arguments."""
    tool_infos = [_as_tool_info(spec) for spec in (DEFAULT_TOOL_NAMES if tools is None else tools)]
    if custom_prompt:
        base_sections = [PromptPart("preamble", custom_prompt)]
    else:
        base_sections = _default_sections(
            tool_infos, default_docs_paths() if docs_paths is None else docs_paths
        )
    parts = [PromptPart("base", "\n\n".join(text for _, text in base_sections))]
    sections = dict(base_sections)

    if isinstance(append_system_prompt, str):
        append_text = append_system_prompt
    else:
        append_text = "\n\n".join(text for text in (append_system_prompt or ()) if text)
    if append_text:
        parts.append(PromptPart("append", f"\n\n{append_text}"))
        sections["addendum"] = append_text

    context_text = _context_text(context_files)
    if context_text:
        parts.append(PromptPart("project_context", context_text))
        sections["project_context"] = context_text.removeprefix("\n\n")

    if any(tool.name == "read" for tool in tool_infos):
        skills_text = format_skills_for_prompt(skills)
        if skills_text:
            parts.append(PromptPart("skills", skills_text))
            sections["skills"] = skills_text.removeprefix("\n\n")

    day = (date or _dt.date.today()).isoformat()
    cwd_text = str(cwd).replace("\\", "/")
    environment = f"Current date: {day}\nCurrent working directory: {cwd_text}"
    parts.append(PromptPart("environment", f"\n{environment}"))
    sections["environment"] = environment
    return PromptLayout(parts, sections)


def build_system_prompt_parts(
    *,
    tools: Sequence[ToolSpec] | None = None,
    custom_prompt: str | None = None,
    append_system_prompt: str | Sequence[str] | None = None,
    context_files: Sequence[ContextFile | tuple[str | Path, str]] = (),
    skills: Sequence[Skill] = (),
    cwd: str | Path,
    date: _dt.date | None = None,
    docs_paths: Sequence[Path] | None = None,
) -> list[PromptPart]:
    """Build the system prompt as named parts (see the module docstring).

    Args:
        tools: Active tools as :class:`ToolPromptInfo`, ``(name, snippet, guidelines)`` tuples or
            bare names. ``None`` means the default set (read, bash, edit, write).
        custom_prompt: Replaces the base text (tools, guidelines, docs) when non-empty.
        append_system_prompt: Text (or texts, joined by blank lines) added after the base.
        context_files: ``ContextFile`` objects or ``(path, content)`` pairs, in prompt order.
        skills: Loaded skills; listed only when ``read`` is among the tools.
        cwd: The working directory, shown with forward slashes.
        date: The day to show; defaults to today.
        docs_paths: Documentation paths for the docs pointer; ``None`` finds this project's.
    """
    return build_system_prompt_layout(
        tools=tools,
        custom_prompt=custom_prompt,
        append_system_prompt=append_system_prompt,
        context_files=context_files,
        skills=skills,
        cwd=cwd,
        date=date,
        docs_paths=docs_paths,
    ).parts


def build_system_prompt(
    *,
    tools: Sequence[ToolSpec] | None = None,
    custom_prompt: str | None = None,
    append_system_prompt: str | Sequence[str] | None = None,
    context_files: Sequence[ContextFile | tuple[str | Path, str]] = (),
    skills: Sequence[Skill] = (),
    cwd: str | Path,
    date: _dt.date | None = None,
    docs_paths: Sequence[Path] | None = None,
) -> str:
    """The full system prompt; see :func:`build_system_prompt_parts` for the arguments."""
    parts = build_system_prompt_parts(
        tools=tools,
        custom_prompt=custom_prompt,
        append_system_prompt=append_system_prompt,
        context_files=context_files,
        skills=skills,
        cwd=cwd,
        date=date,
        docs_paths=docs_paths,
    )
    return "".join(part.text for part in parts)
