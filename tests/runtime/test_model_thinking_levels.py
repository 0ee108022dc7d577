"""pi 0.84.3's ``modelThinkingLevels``: a per-model start level that beats ``defaultThinkingLevel``."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.resources.settings import SettingsManager

from .helpers import open_session, write_settings

LOCAL = {
    "providers": {
        "local": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "none",
            "models": [{"id": "r1", "reasoning": True}, {"id": "r2", "reasoning": True}],
        }
    }
}


def test_settings_prefer_the_models_own_level(agent_dir: Path, tmp_path: Path) -> None:
    write_settings(
        agent_dir,
        {"defaultThinkingLevel": "low", "modelThinkingLevels": {"local/r1": "high", "local/r2": "bogus"}},
    )
    settings = SettingsManager(agent_dir, tmp_path)
    assert settings.thinking_level_for("local", "r1") == "high"
    assert settings.thinking_level_for("local", "r2") == "low"  # invalid entries fall back
    assert settings.thinking_level_for("local", "r3") == "low"


async def test_a_new_session_starts_at_the_models_level(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "models.json").write_text(json.dumps(LOCAL))
    write_settings(agent_dir, {"defaultThinkingLevel": "low", "modelThinkingLevels": {"local/r1": "high"}})
    async with open_session(["--model", "local/r1"], tmp_path) as session:
        assert session.thinking == "high"
    async with open_session(["--model", "local/r2"], tmp_path) as session:
        assert session.thinking == "low"
