"""Reading mcp.json: pi-mcp-adapter's and Claude Code's files load unchanged, broken ones say where."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pi_tui.extensions.discovery import bundled_extension


def _config_module() -> ModuleType:
    folder = bundled_extension("mcp")
    assert folder is not None
    spec = importlib.util.spec_from_file_location("mcp_config_under_test", folder / "config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


config = _config_module()

ADAPTER_README = """{
  "mcpServers": {
    "chrome-devtools": {
      "command": "npx",
      "args": ["-y", "chrome-devtools-mcp@1.6.0"]
    }
  }
}"""

CLAUDE_CODE = {
    "mcpServers": {
        "api": {
            "type": "http",
            "url": "${API_BASE_URL:-https://api.example.com}/mcp",
            "headers": {"Authorization": "Bearer ${API_KEY}"},
        },  # fmt: skip
        "old": {"type": "sse", "url": "https://legacy.example.com/sse"},
        "local": {"type": "stdio", "command": "server", "args": ["--root", "$env:HOME_DIR"], "env": {"N": 3}},
    }
}


def test_pi_mcp_adapters_readme_example_loads_unchanged() -> None:
    servers = config.parse_file(Path("mcp.json"), ADAPTER_README)
    server = servers["chrome-devtools"]
    assert (server.command, server.args, server.transport) == (
        "npx",
        ("-y", "chrome-devtools-mcp@1.6.0"),
        "stdio",
    )
    assert (server.enabled, server.lifecycle, server.timeout, server.direct) == (True, "lazy", 60.0, False)


def test_claude_codes_mcp_json_with_variables_and_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("API_KEY", "k123")
    monkeypatch.setenv("HOME_DIR", "/h")
    monkeypatch.delenv("API_BASE_URL", raising=False)
    servers = config.parse_file(Path(".mcp.json"), json.dumps(CLAUDE_CODE))
    assert servers["api"].url == "https://api.example.com/mcp"
    assert servers["api"].headers == {"Authorization": "Bearer k123"}
    assert servers["api"].transport == "http"
    assert servers["old"].transport == "sse"
    assert servers["local"].args == ("--root", "/h")
    assert servers["local"].env == {"N": "3"}


def test_per_server_fields() -> None:
    text = json.dumps({"mcpServers": {
        "a": {"command": "x", "enabled": False, "lifecycle": "keep-alive", "timeout": 5, "directTools": True},
        "b": {"command": "y", "disabled": True, "requestTimeoutMs": 1500},
    }})  # fmt: skip
    servers = config.parse_file(Path("m.json"), text)
    a, b = servers["a"], servers["b"]
    assert (a.enabled, a.keep_alive, a.timeout, a.direct) == (False, True, 5.0, True)
    assert (b.enabled, b.keep_alive, b.timeout) == (False, False, 1.5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}', "m.json:3: not valid JSON"),
        ('{\n  "mcpServers": {\n    "a": {"args": ["x"]}\n  }\n}', 'm.json:3: server "a": needs "command"'),
        (
            '{\n  "mcpServers": {\n\n    "a": {"command": "x", "lifecycle": "often"}\n  }\n}',
            'm.json:4: server "a": "lifecycle" must be one of',
        ),
        ('{"mcpServers": {"a": {"command": "x", "timeout": -1}}}', '"timeout" must be a positive number'),
        ('{"mcpServers": {"a": {"url": "ftp://x"}}}', '"url" must be an http:// or https:// address'),
        ('{"mcpServers": []}', '"mcpServers" must be an object'),
        ('{"mcpServers": {"a": {"command": "x", "env": ["A=1"]}}}', '"env" must be an object of strings'),
    ],
)
def test_a_malformed_file_names_the_file_the_line_and_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(config.ConfigError) as caught:
        config.parse_file(Path("m.json"), text)
    assert message in str(caught.value)


def test_project_files_are_read_only_when_trusted(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "mcp.json").write_text('{"mcpServers": {"g": {"command": "global"}, "x": {"command": "1"}}}')
    (tmp_path / ".mcp.json").write_text(
        '{"mcpServers": {"p": {"command": "project"}, "x": {"command": "2"}}}'
    )
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "mcp.json").write_text('{"mcpServers": {"x": {"command": "3"}}}')
    untrusted = config.load_config(tmp_path, trusted=False)
    assert sorted(untrusted.servers) == ["g", "x"] and untrusted.servers["x"].command == "1"
    trusted = config.load_config(tmp_path, trusted=True)
    assert sorted(trusted.servers) == ["g", "p", "x"] and trusted.servers["x"].command == "3"


def test_a_broken_file_is_reported_and_the_others_still_load(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "mcp.json").write_text('{"mcpServers": {"g": {"command": "global"}}}')
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {')
    loaded = config.load_config(tmp_path, trusted=True)
    assert list(loaded.servers) == ["g"]
    assert loaded.errors == [f"{tmp_path / '.mcp.json'}:1: not valid JSON: Expecting property name enclosed in "
                             "double quotes (column 17)"]  # fmt: skip


def test_saving_the_enabled_flag_changes_only_that_flag_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    text = (
        '{\n  "mcpServers": {\n    "git": { "command": "uvx", "args": ["mcp-server-git"], "env": {"A": "}"} },\n'
        '    "web": {\n      "url": "https://x.example/mcp",  "disabled": true,\n      "headers": {}\n    }\n'
        '  },\n  "other":   [1,2]\n}'
    )
    path.write_text(text)
    config.save_enabled(path, "git", False)
    config.save_enabled(path, "web", True)
    assert path.read_text() == text.replace('{ "command"', '{ "enabled": false, "command"').replace(
        '"disabled": true', '"enabled": true'
    )
    config.save_enabled(path, "git", True)
    assert '"git": { "enabled": true, "command": "uvx", "args": ["mcp-server-git"]' in path.read_text()


def test_when_an_in_place_edit_would_be_wrong_the_file_is_written_from_its_content(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    # The same name twice: JSON keeps the last one, which an edit of the first would not change.
    path.write_text('{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}')
    config.save_enabled(path, "a", False)
    assert json.loads(path.read_text()) == {"mcpServers": {"a": {"command": "y", "enabled": False}}}


def test_auth_spellings_of_pi_mcp_adapter_claude_code_and_codex(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACKER_TOKEN", "tok-env")
    servers = config.parse_file(Path("mcp.json"), json.dumps({"mcpServers": {
        "plain": {"url": "https://a.example/mcp"},
        "bearer": {"url": "https://b.example/mcp", "auth": "bearer", "bearerToken": "tok-1"},
        "env": {"url": "https://c.example/mcp", "auth": "bearer", "bearerTokenEnv": "TRACKER_TOKEN"},
        "codex": {"url": "https://c.example/mcp", "bearer_token_env_var": "TRACKER_TOKEN"},
        "header": {"url": "https://d.example/mcp", "headers": {"Authorization": "Bearer x"}},
        "off": {"url": "https://e.example/mcp", "auth": "none"},
        "client": {"url": "https://f.example/mcp", "oauth": {"clientId": "pi", "clientSecret": "s",
                                                             "redirectUri": "http://localhost:8765/cb"}},
        "claude": {"type": "http", "url": "https://g.example/mcp", "oauth": {"callbackPort": 9911}},
    }}))  # fmt: skip
    assert servers["plain"].oauth == config.OAuthSettings()  # OAuth when the server asks for it
    assert servers["bearer"].headers == {"Authorization": "Bearer tok-1"} and servers["bearer"].oauth is None
    assert servers["env"].headers == {"Authorization": "Bearer tok-env"}
    assert servers["codex"].headers == {"Authorization": "Bearer tok-env"}
    assert servers["header"].oauth is None and servers["off"].oauth is None
    assert servers["client"].oauth == config.OAuthSettings(
        client_id="pi", client_secret="s", port=8765, path="/cb"
    )
    assert servers["claude"].oauth == config.OAuthSettings(port=9911)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"auth": "bearer"}, '"auth": "bearer" needs "bearerToken" or "bearerTokenEnv"'),
        (
            {"bearerTokenEnv": "NOT_SET_ANYWHERE"},
            "the environment variable NOT_SET_ANYWHERE (bearerTokenEnv) is not set",
        ),
        ({"auth": "magic"}, '"auth" must be "oauth", "bearer" or "none"'),
        (
            {"oauth": {"redirectUri": "https://example.com/cb"}},
            '"oauth.redirectUri" must be a loopback http://',
        ),
        ({"oauth": {"callbackPort": "x"}}, '"oauth.callbackPort" must be a port number'),
        ({"oauth": {"scopes": ["read", 2]}}, '"oauth.scopes" must be a list of strings'),
    ],
)
def test_bad_auth_settings_say_what_is_wrong(entry: dict[str, object], message: str) -> None:
    text = json.dumps({"mcpServers": {"s": {"url": "https://a.example/mcp", **entry}}})
    with pytest.raises(config.ConfigError, match='mcp.json:1: server "s": ') as caught:
        config.parse_file(Path("mcp.json"), text)
    assert message in str(caught.value)


def test_a_file_nested_too_deeply_names_the_line_where_it_goes_too_deep(tmp_path: Path) -> None:
    deep = '{\n  "mcpServers": {\n    "a": {"command": "x", "args": ' + "[" * 5000 + "]" * 5000 + "}\n  }\n}"
    with pytest.raises(config.ConfigError) as caught:
        config.parse_file(Path("m.json"), deep)
    assert str(caught.value).startswith("m.json:3: not valid JSON: JSON nested deeper than")
    path = tmp_path / "mcp.json"
    path.write_text(deep)
    with pytest.raises(config.ConfigError, match=r"mcp.json:3: not valid JSON"):
        config.save_enabled(path, "a", False)
    assert path.read_text() == deep


def test_saving_the_enabled_flag_reads_the_file_once_through_the_depth_checked_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_tui.extensions.api import decode_json

    path = tmp_path / "mcp.json"
    text = '{"mcpServers": {"a": {"command": "x"}, "b": {"url": "https://b.example/mcp"}}}'
    path.write_text(text)
    decoded: list[str] = []

    def counting(doc: str) -> object:
        decoded.append(doc)
        return decode_json(doc)

    real_loads, parsed = json.loads, []

    def every_parse(doc: str, *args: object, **kwargs: object) -> object:
        parsed.append(doc)
        return real_loads(doc, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(config, "decode_json", counting)
    monkeypatch.setattr(json, "loads", every_parse)
    config.save_enabled(path, "b", False)
    monkeypatch.undo()
    assert decoded.count(text) == 1 and parsed.count(text) == 1
    assert '"b": {"enabled": false,' in path.read_text()


def test_oauth_scopes_as_a_list_or_one_string() -> None:
    servers = config.parse_file(Path("mcp.json"), json.dumps({"mcpServers": {
        "a": {"url": "https://a.example/mcp", "oauth": {"scopes": ["read", "write  admin"]}},
        "b": {"url": "https://b.example/mcp", "oauth": {"scopes": "read write"}},
        "c": {"url": "https://c.example/mcp"},
    }}))  # fmt: skip
    assert [servers[n].oauth.scope for n in "abc"] == ["read write admin", "read write", ""]
