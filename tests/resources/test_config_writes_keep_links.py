"""settings.json and auth.json kept in a dotfiles repository (a symbolic link) stay linked when written.

pi writes both in place, which follows the link; a rename over the link's name would silently replace
the link with a private copy, and later changes would no longer reach the user's dotfiles.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from pi_tui.ai.auth import AuthStorage
from pi_tui.resources.settings import SettingsManager


def test_a_linked_global_settings_file_is_written_through_the_link(agent_dir: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "pi-settings.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"theme": "light", "mine": 1}), encoding="utf-8")
    real.chmod(0o640)
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").symlink_to(real)
    project = tmp_path / "project"
    project.mkdir()
    SettingsManager(agent_dir, project).set("theme", "dark")
    assert (agent_dir / "settings.json").is_symlink()
    assert json.loads(real.read_text(encoding="utf-8")) == {"theme": "dark", "mine": 1}
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_a_linked_auth_file_is_written_through_the_link_and_stays_private(tmp_path: Path) -> None:
    real = tmp_path / "secrets" / "auth.json"
    real.parent.mkdir()
    real.write_text("{}", encoding="utf-8")
    real.chmod(0o600)
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "auth.json").symlink_to(real)
    AuthStorage(agent / "auth.json").set_api_key("openai", "sk-test")
    assert (agent / "auth.json").is_symlink()
    assert json.loads(real.read_text(encoding="utf-8")) == {"openai": {"type": "api_key", "key": "sk-test"}}
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(p.name for p in real.parent.iterdir()) == ["auth.json"]
