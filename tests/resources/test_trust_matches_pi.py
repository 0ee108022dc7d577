"""pi 0.87.1 as the oracle for which projects have something that needs trust: its own
``hasTrustRequiringProjectResources`` runs on the same folders as ours (without the files extensions
name, which pi does not know)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from pi_tui.resources.trust_store import has_trust_requiring_resources

from ..pi087 import Pi087

# name -> files (relative to the folder the layout is built in); the project is its "proj/app"
_LAYOUTS: dict[str, list[str]] = {
    "empty": [],
    "context files and sessions": ["proj/app/AGENTS.md", "proj/app/CLAUDE.md", "proj/app/.pi/sessions/x.jsonl"],
    "mcp files": ["proj/app/.mcp.json", "proj/app/.pi/mcp.json"],
    "settings": ["proj/app/.pi/settings.json"],
    "extension": ["proj/app/.pi/extensions/e.py"],
    "skill": ["proj/app/.pi/skills/s/SKILL.md"],
    "prompt": ["proj/app/.pi/prompts/p.md"],
    "theme": ["proj/app/.pi/themes/t.json"],
    "system": ["proj/app/.pi/SYSTEM.md"],
    "append system": ["proj/app/.pi/APPEND_SYSTEM.md"],
    "own agents skills": ["proj/app/.agents/skills/s/SKILL.md"],
    "parent agents skills": ["proj/.agents/skills/s/SKILL.md"],
    "parent pi prompts": ["proj/.pi/prompts/p.md"],
}


def test_which_projects_need_trust_matches_pi(pi087: Pi087, tmp_path: Path) -> None:
    home = Path.home()  # the test's own temporary home (conftest)
    (home / ".agents" / "skills" / "mine").mkdir(parents=True, exist_ok=True)
    projects: dict[str, str] = {}
    for name, files in _LAYOUTS.items():
        root = tmp_path / name.replace(" ", "-")
        (root / "proj" / "app").mkdir(parents=True)
        for rel in files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("{}\n")
        projects[name] = str(root / "proj" / "app")
    projects["home itself"] = str(home)
    under_home = home / "code" / "app"
    under_home.mkdir(parents=True)
    projects["under home"] = str(under_home)
    manager = pi087.dir / "node_modules/@earendil-works/pi-coding-agent/dist/core/trust-manager.js"
    script = (
        f"const {{ hasTrustRequiringProjectResources }} = await import({json.dumps(manager.as_uri())});"
        "let input = ''; for await (const chunk of process.stdin) input += chunk;"
        "const dirs = JSON.parse(input);"
        "console.log(JSON.stringify(Object.fromEntries("
        "Object.entries(dirs).map(([k, d]) => [k, hasTrustRequiringProjectResources(d)]))));"
    )
    run = subprocess.run(
        [str(pi087.node), "--input-type=module", "-e", script],
        input=json.dumps(projects),
        capture_output=True,
        text=True,
        timeout=30,
        env=pi087.env({"HOME": os.fspath(home)}),
    )
    assert run.returncode == 0, run.stderr
    theirs = json.loads(run.stdout)
    ours = {name: has_trust_requiring_resources(path) for name, path in projects.items()}
    assert ours == theirs
    assert not theirs["empty"] and theirs["parent agents skills"]  # the oracle says something
