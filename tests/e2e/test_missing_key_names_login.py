"""A provider without a key refuses to start with one line that says every way to give it one: the
variable to set and, as pi 0.87.1's "Use /login to log into a provider via OAuth or API key" does, the
``/login <provider>`` that saves a key (or signs in) from the interactive app. Nothing is sent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.ai.catalog import env_vars

from .helpers import run_cli

pytestmark = pytest.mark.slow

CASES = [
    # (provider, model, a variable the line must name)
    ("openai", "gpt-5.5", "OPENAI_API_KEY"),
    ("google", "gemini-2.5-flash", "GEMINI_API_KEY"),
    ("azure-openai-responses", "gpt-5.4", "AZURE_OPENAI_API_KEY"),
    ("amazon-bedrock", "us.anthropic.claude-opus-4-6-v1", "AWS_BEARER_TOKEN_BEDROCK"),
    ("google-vertex", "gemini-2.5-flash", "GOOGLE_CLOUD_API_KEY"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.6", "CLOUDFLARE_API_KEY"),
    ("anthropic", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
]

_AMBIENT = (
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
)


@pytest.mark.parametrize(("provider", "model", "variable"), CASES, ids=[c[0] for c in CASES])
def test_a_missing_key_names_the_variable_and_login(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, provider: str, model: str, variable: str
) -> None:
    for name in (*env_vars(provider), *_AMBIENT):
        monkeypatch.delenv(name, raising=False)
    run = run_cli(["--provider", provider, "--model", model, "-p", "hi"], tmp_path)
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert variable in lines[0] and f"/login {provider}" in lines[0], lines[0]
    assert run.stdout == ""
