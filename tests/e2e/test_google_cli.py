"""The Google providers from the command line, as a user runs them: the built-in ``google`` and
``google-vertex`` providers with only their base URL moved to the fake server in ``models.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, thinking, tool_call

from .helpers import run_cli


def _base_url(agent_dir: Path, provider: str, url: str) -> None:
    (agent_dir / "models.json").write_text(json.dumps({"providers": {provider: {"baseUrl": url}}}))


def test_gemini_key_and_a_tool_loop_in_print_mode(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeLLM(api_key="gemini-user-key")
    fake.script(
        [
            Reply([thinking("Read it first."), tool_call("read", {"path": "hello.txt"})]),
            Reply([text("It says hello world.")]),
        ]
    )
    (tmp_path / "hello.txt").write_text("hello world\n")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-user-key")
    with fake.serve() as server:
        _base_url(agent_dir, "google", server.gemini_base_url)
        run = run_cli(["--provider", "google", "-p", "What does hello.txt say?"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "It says hello world."
    assert fake.violations == []
    first, second = fake.requests
    assert first.model == second.model == "gemini-3.1-pro-preview"  # pi's default for google
    assert second.tool_results()[0].content == "hello world\n"


def test_vertex_with_application_default_credentials(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("Hi from Vertex.")])])
    with fake.serve() as server:
        credentials = tmp_path / "adc.json"
        login = {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}
        credentials.write_text(json.dumps({**login, "token_uri": server.token_url}))
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(credentials))
        monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-1")
        monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
        _base_url(agent_dir, "google-vertex", server.url)
        run = run_cli(["--provider", "google-vertex", "-p", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Hi from Vertex."
    assert [r.api for r in fake.requests] == ["google-token", "gemini"]
    assert fake.requests[1].path.startswith("/v1/publishers/google/models/")


def test_vertex_without_a_project_says_what_to_set(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials = tmp_path / "adc.json"
    credentials.write_text(json.dumps({"type": "authorized_user"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(credentials))
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    run = run_cli(["--provider", "google-vertex", "-p", "hi"], tmp_path)
    assert run.returncode != 0
    message = run.stderr.strip()
    assert message.startswith("No credentials for google-vertex: set GOOGLE_CLOUD_API_KEY")
    assert "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION" in message and "\n" not in message


def test_a_vertex_login_stored_the_pi_way_is_used(tmp_path: Path, agent_dir: Path) -> None:
    """pi's /login for google-vertex (application-default credentials) stores only ``env`` in auth.json."""
    fake = FakeLLM()
    fake.script([Reply([text("Hi from a stored Vertex login.")])])
    with fake.serve() as server:
        credentials = tmp_path / "adc.json"
        login = {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}
        credentials.write_text(json.dumps({**login, "token_uri": server.token_url}))
        env = {
            "GOOGLE_CLOUD_PROJECT": "stored-proj",
            "GOOGLE_CLOUD_LOCATION": "europe-west4",
            "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
        }
        (agent_dir / "auth.json").write_text(json.dumps({"google-vertex": {"type": "api_key", "env": env}}))
        (agent_dir / "auth.json").chmod(0o600)
        _base_url(agent_dir, "google-vertex", server.url)
        run = run_cli(["--provider", "google-vertex", "-p", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Hi from a stored Vertex login."
    assert [r.api for r in fake.requests] == ["google-token", "gemini"]
