"""Resources: settings, context files, skills, prompt templates and the system prompt builder.

The names below are imported lazily, so ``import pi_tui.resources`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.util.lazy import lazy_exports

if TYPE_CHECKING:
    from pi_tui.resources.context_files import ContextFile, load_context_files
    from pi_tui.resources.diagnostics import ResourceDiagnostic
    from pi_tui.resources.frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter
    from pi_tui.resources.loader import ResourceLoader
    from pi_tui.resources.settings import ProjectNotTrustedError, SettingsManager
    from pi_tui.resources.skills import Skill, expand_skill_command, format_skills_for_prompt, load_skills
    from pi_tui.resources.system_prompt import (
        PromptPart,
        ToolPromptInfo,
        build_system_prompt,
        build_system_prompt_parts,
    )
    from pi_tui.resources.templates import PromptTemplate, expand_template, load_templates

_EXPORTS: dict[str, str] = {
    "ContextFile": "context_files",
    "load_context_files": "context_files",
    "ResourceDiagnostic": "diagnostics",
    "FrontmatterError": "frontmatter",
    "parse_frontmatter": "frontmatter",
    "strip_frontmatter": "frontmatter",
    "ResourceLoader": "loader",
    "ProjectNotTrustedError": "settings",
    "SettingsManager": "settings",
    "Skill": "skills",
    "expand_skill_command": "skills",
    "format_skills_for_prompt": "skills",
    "load_skills": "skills",
    "PromptPart": "system_prompt",
    "ToolPromptInfo": "system_prompt",
    "build_system_prompt": "system_prompt",
    "build_system_prompt_parts": "system_prompt",
    "PromptTemplate": "templates",
    "expand_template": "templates",
    "load_templates": "templates",
}

__all__ = [
    "ContextFile",
    "FrontmatterError",
    "ProjectNotTrustedError",
    "PromptPart",
    "PromptTemplate",
    "ResourceDiagnostic",
    "ResourceLoader",
    "SettingsManager",
    "Skill",
    "ToolPromptInfo",
    "build_system_prompt",
    "build_system_prompt_parts",
    "expand_skill_command",
    "expand_template",
    "format_skills_for_prompt",
    "load_context_files",
    "load_skills",
    "load_templates",
    "parse_frontmatter",
    "strip_frontmatter",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
