from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import (
    AuthFileError,
    AuthStorage,
    clear_config_value_cache,
    env_api_key,
    resolve_config_value,
    resolve_headers,
)


@pytest.fixture(autouse=True)
def fresh_command_cache() -> Iterator[None]:
    clear_config_value_cache()
    yield
    clear_config_value_cache()


def _counting_command(tmp_path: Path, output: str, exit_code: int = 0) -> tuple[str, Path]:
    counter = tmp_path / "runs"
    return f"!echo x >> '{counter}'; printf '{output}'; exit {exit_code}", counter


def _runs(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def test_literal_value_is_returned_as_is() -> None:
    assert resolve_config_value("sk-literal-123") == "sk-literal-123"


def test_env_var_name_resolves_to_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET_KEY", "from-env")
    assert resolve_config_value("MY_SECRET_KEY") == "from-env"


def test_env_var_lookup_is_not_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET_KEY", "first")
    assert resolve_config_value("MY_SECRET_KEY") == "first"
    monkeypatch.setenv("MY_SECRET_KEY", "second")
    assert resolve_config_value("MY_SECRET_KEY") == "second"
    monkeypatch.delenv("MY_SECRET_KEY")
    assert resolve_config_value("MY_SECRET_KEY") == "MY_SECRET_KEY"


def test_command_output_is_trimmed() -> None:
    assert resolve_config_value("!printf '  sk-from-cmd \\n\\n'") == "sk-from-cmd"


def test_command_multiline_output_keeps_inner_lines() -> None:
    assert resolve_config_value("!printf 'line1\\nline2\\n'") == "line1\nline2"


def test_command_with_a_pipe_runs_through_the_shell() -> None:
    assert resolve_config_value("!echo abc | tr a-c x-z") == "xyz"


def test_failing_or_empty_command_yields_none() -> None:
    assert resolve_config_value("!exit 3") is None
    assert resolve_config_value("!true") is None
    assert resolve_config_value("") is None
    assert resolve_config_value(None) is None


def test_command_result_is_cached_for_the_process(tmp_path: Path) -> None:
    command, counter = _counting_command(tmp_path, "key-1")
    assert resolve_config_value(command) == "key-1"
    assert resolve_config_value(command) == "key-1"
    assert _runs(counter) == 1


def test_command_failure_is_cached_too(tmp_path: Path) -> None:
    command, counter = _counting_command(tmp_path, "", exit_code=1)
    assert resolve_config_value(command) is None
    assert resolve_config_value(command) is None
    assert _runs(counter) == 1


def test_double_bang_command_runs_every_time(tmp_path: Path) -> None:
    command, counter = _counting_command(tmp_path, "fresh")
    assert resolve_config_value("!" + command) == "fresh"
    assert resolve_config_value("!" + command) == "fresh"
    assert _runs(counter) == 2


def test_command_cache_is_shared_across_storage_instances(agent_dir: Path, tmp_path: Path) -> None:
    command, counter = _counting_command(tmp_path, "shared")
    path = agent_dir / "auth.json"
    path.write_text(json.dumps({"anthropic": {"type": "api_key", "key": command}}))
    assert AuthStorage(path).api_key("anthropic") == "shared"
    assert AuthStorage(path).api_key("anthropic") == "shared"
    assert _runs(counter) == 1


def test_headers_resolve_and_drop_empty_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_ID", "t-42")
    resolved = resolve_headers({"X-Team": "TEAM_ID", "X-Static": "v", "X-Gone": "!exit 1"})
    assert resolved == {"X-Team": "t-42", "X-Static": "v"}
    assert resolve_headers({"X-Gone": "!exit 1"}) is None


def test_env_api_key_prefers_the_first_listed_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "api")
    assert env_api_key("anthropic") == "api"
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "oauth")
    assert env_api_key("anthropic") == "oauth"
    assert env_api_key("no-such-provider") is None


def test_set_api_key_creates_private_file_in_private_dir(isolated_home: Path) -> None:
    path = isolated_home / "fresh" / "agent" / "auth.json"
    storage = AuthStorage(path)
    storage.set_api_key("openai", "sk-test")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"openai": {"type": "api_key", "key": "sk-test"}}
    assert storage.api_key("openai") == "sk-test"


def test_writes_keep_entries_added_by_another_process(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    storage = AuthStorage(path)
    path.write_text(json.dumps({"anthropic": {"type": "api_key", "key": "external"}}))
    storage.set_api_key("openai", "mine")
    on_disk = json.loads(path.read_text())
    assert on_disk["anthropic"]["key"] == "external"
    assert on_disk["openai"]["key"] == "mine"
    storage.remove("openai")
    assert json.loads(path.read_text()) == {"anthropic": {"type": "api_key", "key": "external"}}
    assert storage.api_key("anthropic") == "external"


def test_malformed_file_is_never_overwritten(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    path.write_text('{"anthropic": {"type": "api_key", "key": "x"')
    storage = AuthStorage(path)
    with pytest.raises(AuthFileError, match="auth.json:1: invalid JSON"):
        storage.set_api_key("openai", "sk")
    assert path.read_text() == '{"anthropic": {"type": "api_key", "key": "x"'
    with pytest.raises(AuthFileError):
        storage.remove("anthropic")


def test_reload_error_is_reported_once_and_keeps_previous_entries(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    path.write_text(json.dumps({"openai": {"type": "api_key", "key": "good"}}))
    storage = AuthStorage(path)
    path.write_text("[1, 2")
    storage.reload()
    errors = storage.drain_errors()
    assert len(errors) == 1 and errors[0].startswith("auth.json error: ")
    assert storage.drain_errors() == []
    assert storage.api_key("openai") == "good"


def test_non_object_file_is_an_error(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    path.write_text("[]")
    storage = AuthStorage(path)
    assert storage.providers() == []
    assert "expected a JSON object" in storage.drain_errors()[0]


def test_oauth_entry_yields_its_access_token(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    path.write_text(
        json.dumps({"openai-codex": {"type": "oauth", "access": "tok", "refresh": "r", "expires": 1}})
    )
    storage = AuthStorage(path)
    assert storage.api_key("openai-codex") == "tok"
    assert storage.has("openai-codex") and not storage.has("anthropic")


def test_stored_key_may_name_an_env_var(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORK_ANTHROPIC_KEY", "sk-work")
    storage = AuthStorage(agent_dir / "auth.json")
    storage.set_api_key("anthropic", "WORK_ANTHROPIC_KEY")
    assert storage.api_key("anthropic") == "sk-work"


def test_missing_file_means_no_entries_and_no_errors(agent_dir: Path) -> None:
    storage = AuthStorage(agent_dir / "auth.json")
    assert storage.providers() == []
    assert storage.drain_errors() == []
    assert not (agent_dir / "auth.json").exists()
