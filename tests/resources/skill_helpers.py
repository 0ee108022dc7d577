from __future__ import annotations

from pathlib import Path


def write_skill(
    root: Path,
    directory: str,
    *,
    name: str | None = None,
    description: str | None = "A test skill.",
    extra: str = "",
    body: str = "Skill body.",
    raw_frontmatter: str | None = None,
    file_name: str = "SKILL.md",
) -> Path:
    """Write ``root/directory/SKILL.md`` with the given frontmatter and return its path."""
    skill_dir = root / directory
    skill_dir.mkdir(parents=True, exist_ok=True)
    if raw_frontmatter is not None:
        front = raw_frontmatter
    else:
        lines = []
        if name is not None:
            lines.append(f"name: {name}")
        if description is not None:
            lines.append(f"description: {description}")
        if extra:
            lines.append(extra)
        front = "\n".join(lines)
    path = skill_dir / file_name
    path.write_text(f"---\n{front}\n---\n\n{body}\n", encoding="utf-8")
    return path
