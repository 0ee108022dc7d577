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


def test_auth_json_unset_variable_names_the_file_and_provider(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("NOPE_KEY", raising=False)
    path = agent_dir / "auth.json"
    path.write_text(json.dumps({"openai": {"type": "api_key", "key": "$NOPE_KEY"}}))
    with caplog.at_level(logging.WARNING):
        assert ModelRegistry().get_api_key_for_provider("openai") is None
    assert f"{path}: openai.key: environment variable NOPE_KEY is not set" in caplog.text
