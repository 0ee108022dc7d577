"""``--api-key`` names no provider, so as in pi 0.87.1 it needs a model named on the command line.

pi refuses ``--api-key`` when neither ``--model`` (with or without ``--provider``) nor a ``--models`` scope
picks the model at start-up: one error line, exit 1, nothing sent. It never lends the key to whatever
model the settings or a continued session would have chosen.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from .helpers import run_cli, write_models_json

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("extra", [[], ["-c"]])
def test_api_key_without_a_model_is_refused(tmp_path: Path, agent_dir: Path, extra: list[str]) -> None:
    (agent_dir / "settings.json").write_text('{"defaultProvider": "fake-openai", "defaultModel": "gpt-fake"}')
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*extra, "--api-key", "sk-run", "-p", "hi"], tmp_path)
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "--api-key" in lines[0] and "--model" in lines[0], run.stderr
    assert fake.requests == []


def test_api_key_with_a_model_is_used_for_that_model(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM(api_key="sk-run")  # any other key gets a 401
    fake.script([Reply([text("keyed")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--model", "fake-openai/gpt-fake", "--api-key", "sk-run", "-p", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "keyed\n"


def test_api_key_for_a_login_only_provider_is_refused_with_what_it_needs(
    tmp_path: Path, agent_dir: Path
) -> None:
    """openai-codex takes only a ChatGPT login: as in pi, ``--api-key`` does not stand in for it, and the
    one line says what does (not a "log in again" about a token it never had)."""
    run = run_cli(
        ["--provider", "openai-codex", "--model", "gpt-5.5", "--api-key", "sk-x", "-p", "hi"], tmp_path
    )
    assert run.returncode == 1
    assert "--api-key" in run.stderr and "/login openai-codex" in run.stderr, run.stderr
    assert "accountId" not in run.stderr
