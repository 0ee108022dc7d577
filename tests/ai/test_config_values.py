"""Configured key/header values as pi 0.87 resolves them: templates, commands at request time."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import (
    ConfigValueError,
    clear_config_value_cache,
    expand_config_value,
    resolve_config_value,
)
from pi_tui.ai.model_registry import ModelRegistry


@pytest.fixture(autouse=True)
def fresh_command_cache() -> Iterator[None]:
    clear_config_value_cache()
    yield
    clear_config_value_cache()


def test_templates_interpolate_variables_and_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCT", "a1")
    monkeypatch.setenv("TOKEN", "t2")
    assert expand_config_value("Bearer ${TOKEN}/$ACCT") == "Bearer t2/a1"
    assert expand_config_value("$$5 and $!x and $-") == "$5 and !x and $-"
    assert resolve_config_value("$!not-a-command") == "!not-a-command"
    assert resolve_config_value("plain-literal-key") == "plain-literal-key"
    assert expand_config_value("${not-a-name} ${open") == "${not-a-name} ${open"  # literal, as in pi
    monkeypatch.setenv("EMPTY_ONE", "")
    with pytest.raises(ConfigValueError, match="EMPTY_ONE is not set"):
        expand_config_value("$EMPTY_ONE")


def test_an_unset_variable_is_a_one_line_problem_naming_the_field(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("NOPE_KEY", raising=False)
    with pytest.raises(ConfigValueError, match="^environment variable NOPE_KEY is not set$"):
        expand_config_value("${NOPE_KEY}")
    with caplog.at_level(logging.WARNING):
        assert resolve_config_value("$NOPE_KEY", where="models.json: providers.x.apiKey") is None
    assert "models.json: providers.x.apiKey: environment variable NOPE_KEY is not set" in caplog.text


def test_models_json_reports_unset_variables_with_file_and_line(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOPE_KEY", raising=False)
    path = agent_dir / "models.json"
    path.write_text(
        '{\n  "providers": {\n    "openai": {\n      "apiKey": "${NOPE_KEY}",\n'
        '      "headers": {"X-Team": "$$literal"}\n    }\n  }\n}\n'
    )
    registry = ModelRegistry()
    assert registry.warnings == [
        f"models.json warning: {path}:4: providers.openai.apiKey: environment variable NOPE_KEY is not set"
    ]
    assert registry.get_api_key_for_provider("openai") is None


def test_models_json_commands_run_at_every_request(agent_dir: Path, tmp_path: Path) -> None:
    counter = tmp_path / "n"
    counter.write_text("1")
    command = f"!cat {counter}"
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"openai": {"apiKey": command}}}))
    registry = ModelRegistry()
    assert registry.get_api_key_for_provider("openai") == "1"
    counter.write_text("2")  # a rotated token is picked up on the next request
    assert registry.get_api_key_for_provider("openai") == "2"


def test_a_failing_command_names_the_field(agent_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = agent_dir / "models.json"
    path.write_text(json.dumps({"providers": {"openai": {"apiKey": "!exit 3"}}}))
    registry = ModelRegistry()
    with caplog.at_level(logging.WARNING):
        assert registry.get_api_key_for_provider("openai") is None
    assert f"{path}: providers.openai.apiKey: command 'exit 3' gave no value" in caplog.text


def test_auth_json_commands_are_still_asked_once(tmp_path: Path) -> None:
    counter = tmp_path / "n"
    counter.write_text("1")
    assert resolve_config_value(f"!cat {counter}") == "1"
    counter.write_text("2")
    assert resolve_config_value(f"!cat {counter}") == "1"


def test_auth_json_with_a_bom_and_a_template_key(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TEAM_KEY", "sk-team")
    (agent_dir / "auth.json").write_text(
        "\ufeff" + json.dumps({"openai": {"type": "api_key", "key": "${MY_TEAM_KEY}"}}), encoding="utf-8"
    )
    registry = ModelRegistry()
    assert registry.errors == []
    assert registry.get_api_key_for_provider("openai") == "sk-team"


def test_an_auth_json_template_reads_the_entrys_own_variables_first(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As pi 0.87.1: ``$NAME`` in a stored key names the entry's ``env`` before the process environment."""
    monkeypatch.setenv("TEAM", "from-process")
    monkeypatch.setenv("SUFFIX", "-env")
    entry = {"type": "api_key", "key": "${TEAM}$SUFFIX", "env": {"TEAM": "from-entry"}}
    (agent_dir / "auth.json").write_text(json.dumps({"openai": entry}))
    assert ModelRegistry().get_api_key_for_provider("openai") == "from-entry-env"


def test_auth_json_unset_variable_names_the_file_and_provider(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("NOPE_KEY", raising=False)
    path = agent_dir / "auth.json"
    path.write_text(json.dumps({"openai": {"type": "api_key", "key": "$NOPE_KEY"}}))
    with caplog.at_level(logging.WARNING):
        assert ModelRegistry().get_api_key_for_provider("openai") is None
    assert f"{path}: openai.key: environment variable NOPE_KEY is not set" in caplog.text


async def _two_requests_headers(
    agent_dir: Path, provider: dict[str, object], model_id: str
) -> list[dict[str, str]]:
    """Load ``provider`` from models.json, send two requests to the fake, return the headers it received."""
    from pi_tui.ai.providers.anthropic import stream_anthropic
    from pi_tui.ai.stream import Done, LlmRequest, StreamOptions
    from pi_tui.ai.types import UserMessage
    from pi_tui.testing import FakeLLM, Reply, text

    fake = FakeLLM()
    fake.script([Reply([text("one")]), Reply([text("two")])])
    with fake.serve() as server:
        config = {k: v for k, v in provider.items() if k != "rotate"}  # "rotate": a file to change after each
        config.update(baseUrl=server.anthropic_base_url, api="anthropic-messages")
        config["models"] = [{"id": model_id}]
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"corp": config}}))
        registry = ModelRegistry()
        model = registry.find("corp", model_id)
        assert model is not None, registry.errors
        for _ in range(2):
            request = LlmRequest("sys", [UserMessage(content="hi")], [])
            events = [e async for e in stream_anthropic(model, request, StreamOptions(api_key="k"))]
            assert isinstance(events[-1], Done)
            if provider.get("rotate"):
                Path(str(provider["rotate"])).write_text("token-2")
    return [r.headers for r in fake.requests]


async def test_header_commands_run_at_each_request_not_at_load(agent_dir: Path, tmp_path: Path) -> None:
    """pi 0.63+: a "!command" header value runs when a request is made, every time (not cached)."""
    token, runs = tmp_path / "token", tmp_path / "runs"
    token.write_text("token-1")
    command = f"!echo run >> {runs}; cat {token}"
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "corp": {
                        "baseUrl": "http://127.0.0.1:9",
                        "api": "anthropic-messages",
                        "apiKey": "none",
                        "headers": {"x-corp-token": command},
                        "models": [{"id": "m"}],
                    }
                }
            }
        )
    )
    registry = ModelRegistry()
    model = registry.find("corp", "m")
    assert model is not None and model.headers is not None
    assert model.headers["x-corp-token"] == command  # listings show the command, not a secret
    assert not runs.exists()  # loading models.json ran nothing

    headers = await _two_requests_headers(
        agent_dir, {"apiKey": "none", "headers": {"x-corp-token": command}, "rotate": str(token)}, "m"
    )
    assert [h.get("x-corp-token") for h in headers] == ["token-1", "token-2"]
    assert runs.read_text().count("run") == 2


async def test_an_auth_header_from_a_key_command_is_a_fresh_bearer_token_per_request(
    agent_dir: Path, tmp_path: Path
) -> None:
    token = tmp_path / "token"
    token.write_text("token-1")
    provider = {"apiKey": f"!cat {token}", "authHeader": True, "rotate": str(token)}
    headers = await _two_requests_headers(agent_dir, provider, "m")
    # The fake redacts credentials, so check the header was sent; its value is checked below.
    assert [h.get("authorization") for h in headers] == ["<redacted>", "<redacted>"]
    from pi_tui.ai.auth import resolve_request_headers

    token.write_text("token-3")
    registry = ModelRegistry()
    model = registry.find("corp", "m")
    assert model is not None and model.headers is not None
    assert resolve_request_headers(model.headers)["Authorization"] == "Bearer token-3"


def test_a_header_command_that_gives_nothing_drops_the_header_and_names_it(
    agent_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from pi_tui.ai.auth import resolve_request_headers

    path = agent_dir / "models.json"
    path.write_text(
        json.dumps(
            {
                "providers": {
                    "corp": {
                        "baseUrl": "http://127.0.0.1:9",
                        "api": "anthropic-messages",
                        "apiKey": "none",
                        "headers": {"x-a": "!exit 4", "x-b": "plain"},
                        "models": [{"id": "m"}],
                    }
                }
            }
        )
    )
    model = ModelRegistry().find("corp", "m")
    assert model is not None and model.headers is not None
    with caplog.at_level(logging.WARNING):
        assert resolve_request_headers(model.headers) == {"x-b": "plain"}
    assert "providers.corp.headers.x-a: command 'exit 4' gave no value" in caplog.text
