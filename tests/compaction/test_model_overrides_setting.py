"""``compaction.modelOverrides``: per-model token settings, each resolved on its own (override, then the
ordinary setting, then the default), keyed by ``provider/modelId``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.extensions.helpers import open_session


async def test_the_current_models_override_wins_per_field(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(
        json.dumps(
            {
                "compaction": {
                    "reserveTokens": 9000,
                    "modelOverrides": {
                        "faux/faux-1": {"keepRecentTokens": 4321},
                        "other/model": {"keepRecentTokens": 1, "reserveTokens": 1},
                    },
                }
            }
        )
    )
    async with open_session([], tmp_path) as session:
        assert (session.model.provider, session.model.id) == ("faux", "faux-1")
        settings = session.compaction.settings()
        assert settings.keep_recent_tokens == 4321  # the override
        assert settings.reserve_tokens == 9000  # the ordinary setting: the override does not name it


async def test_no_override_for_the_model_keeps_the_ordinary_settings(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(
        json.dumps({"compaction": {"modelOverrides": {"other/model": {"keepRecentTokens": 1}}}})
    )
    async with open_session([], tmp_path) as session:
        settings = session.compaction.settings()
        assert (settings.reserve_tokens, settings.keep_recent_tokens) == (16384, 20000)
