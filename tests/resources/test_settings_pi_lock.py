"""pi guards settings.json with proper-lockfile's ``settings.json.lock`` directory while it rewrites the
file; pi-tui waits for that lock too, so a write from pi and one from pi-tui never lose each other's keys."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_tui.resources.settings import SettingsManager


def test_a_settings_write_waits_for_pis_lock_and_takes_it_itself(agent_dir: Path, tmp_path: Path) -> None:
    settings_file = agent_dir / "settings.json"
    settings_file.write_text(json.dumps({"theme": "light"}), encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    manager = SettingsManager(agent_dir, project)
    lock = agent_dir / "settings.json.lock"
    lock.mkdir()  # pi holds it (a fresh lock: pi is alive and rewriting the file)
    try:
        manager.set("theme", "dark")
        assert json.loads(settings_file.read_text(encoding="utf-8")) == {"theme": "light"}
        problems = manager.drain_errors()
        assert any("settings.json.lock" in str(p) for p in problems), problems
    finally:
        os.rmdir(lock)
    manager.set("theme", "dark")
    assert json.loads(settings_file.read_text(encoding="utf-8")) == {"theme": "dark"}
    assert not lock.exists()
