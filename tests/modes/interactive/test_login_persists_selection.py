"""A login that selects the provider's default model saves it as the default, as pi 0.87.1 does
(``setModel(…, {persist: true})``): the next start opens on the model the login picked, not on the
keyless one the settings named before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text
from tests.e2e.helpers import run_cli

from .helpers import until
from .test_no_model import anthropic_at, log_in_with_an_anthropic_key, no_key_app, notices


async def test_the_model_a_login_selects_is_the_default_at_the_next_start(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    (agent_dir / "settings.json").write_text(
        json.dumps({"defaultProvider": "google", "defaultModel": "gemini-2.5-flash", "theme": "dark"})
    )
    fake = FakeLLM()
    fake.script([Reply([text("AFTERRESTART")])])
    with fake.serve() as server:
        (agent_dir / "models.json").write_text(json.dumps(anthropic_at(server, key=False)))
        app = no_key_app(tmp_path, agent_dir)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, app.ready.is_set)
            await log_in_with_an_anthropic_key(pilot, app)
            await until(pilot, lambda: any("Saved API key for Anthropic." in n for n in notices(app)))
            chosen = app.session.model
            assert chosen.provider == "anthropic"
        settings = json.loads((agent_dir / "settings.json").read_text())
        assert (settings["defaultProvider"], settings["defaultModel"]) == ("anthropic", chosen.id)
        assert settings["theme"] == "dark"  # the rest of the file is kept
        # the next start (print mode here) opens on it and answers with the saved key
        run = run_cli(["-p", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "AFTERRESTART"
    assert fake.requests[0].body["model"] == chosen.id
