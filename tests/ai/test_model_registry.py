from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.auth import AuthStorage, clear_config_value_cache, resolve_request_headers
from pi_tui.ai.model_registry import ModelRegistry, missing_key_message


@pytest.fixture(autouse=True)
def fresh_command_cache() -> Iterator[None]:
    clear_config_value_cache()
    yield
    clear_config_value_cache()


def _write_models(agent_dir: Path, providers: dict[str, Any]) -> Path:
    path = agent_dir / "models.json"
    path.write_text(json.dumps({"providers": providers}, indent=2))
    return path


def _labels(models: list[Any]) -> set[str]:
    return {m.label for m in models}


def test_without_models_json_all_builtins_load_cleanly(agent_dir: Path) -> None:
    registry = ModelRegistry()
    assert registry.find("anthropic", "claude-opus-4-6") is not None
    assert registry.find("openai", "gpt-5.4") is not None
    assert registry.errors == [] and registry.warnings == []
    assert registry.model_source(registry.find("openai", "gpt-5.4")) == "built-in"


def test_without_keys_only_the_keyless_faux_model_is_available(agent_dir: Path) -> None:
    registry = ModelRegistry()
    assert _labels(registry.available_models()) == {"faux/faux-1"}
    assert registry.default_model() is None


def test_env_key_makes_a_provider_available_and_picks_its_default(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    registry = ModelRegistry()
    available = registry.available_models()
    assert all(m.provider in ("openai", "faux") for m in available)
    assert "openai/gpt-5.4" in _labels(available)
    assert registry.default_model().label == "openai/gpt-5.5"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    assert registry.default_model().label == "anthropic/claude-opus-4-8"
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or")
    assert "openrouter/moonshotai/kimi-k2.6" in _labels(registry.available_models())


def test_key_resolution_order_is_runtime_then_auth_json_then_models_json_then_env(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    registry = ModelRegistry()
    model = registry.find("anthropic", "claude-sonnet-4-6")
    assert registry.get_api_key(model) == "from-env"
    _write_models(agent_dir, {"anthropic": {"apiKey": "from-models-json"}})
    registry.refresh()
    assert registry.get_api_key(model) == "from-models-json"  # pi 0.87: models.json before the environment
    registry.auth.set_api_key("anthropic", "from-auth-json")
    assert registry.get_api_key(model) == "from-auth-json"
    registry.set_runtime_api_key("anthropic", "from-cli")
    assert registry.get_api_key(model) == "from-cli"
    registry.remove_runtime_api_key("anthropic")
    assert registry.get_api_key(model) == "from-auth-json"


def test_models_json_api_key_may_be_a_command_or_env_name(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORP_OPENAI", "sk-corp")
    _write_models(
        agent_dir, {"openai": {"apiKey": "CORP_OPENAI"}, "anthropic": {"apiKey": "!printf ' sk-cmd '"}}
    )
    registry = ModelRegistry()
    assert registry.get_api_key_for_provider("openai") == "sk-corp"
    assert registry.get_api_key_for_provider("anthropic") == "sk-cmd"


def test_faux_needs_no_key(agent_dir: Path) -> None:
    registry = ModelRegistry()
    faux = registry.find("faux", "faux-1")
    assert registry.has_auth("faux")
    assert not registry.requires_api_key(faux)
    assert registry.get_api_key(faux) is None
    assert registry.requires_api_key(registry.find("openai", "gpt-5"))


def test_base_url_only_entry_keeps_every_builtin_model(agent_dir: Path) -> None:
    builtin_ids = {m.id for m in ModelRegistry().all_models() if m.provider == "anthropic"}
    _write_models(agent_dir, {"anthropic": {"baseUrl": "http://127.0.0.1:9999"}})
    registry = ModelRegistry()
    anthropic = [m for m in registry.all_models() if m.provider == "anthropic"]
    assert {m.id for m in anthropic} == builtin_ids
    assert {m.base_url for m in anthropic} == {"http://127.0.0.1:9999"}
    assert registry.find("openai", "gpt-5").base_url == "https://api.openai.com/v1"
    assert registry.model_source(anthropic[0]) == "built-in, changed by models.json"


def test_provider_headers_merge_into_builtins_with_resolved_values(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_TOKEN", "g-123")
    _write_models(agent_dir, {"openai": {"headers": {"X-Gateway": "GATEWAY_TOKEN", "X-Fixed": "1"}}})
    model = ModelRegistry().find("openai", "gpt-5.4")
    assert model.headers == {"X-Gateway": "g-123", "X-Fixed": "1"}


def test_custom_models_are_upserted_by_id_into_a_builtin_provider(agent_dir: Path) -> None:
    _write_models(
        agent_dir,
        {
            "anthropic": {
                "models": [
                    {"id": "claude-sonnet-4-6", "contextWindow": 1_000_000, "reasoning": True},
                    {
                        "id": "claude-opus-4-7",
                        "name": "Opus 4.7",
                        "contextWindow": 1_000_000,
                        "maxTokens": 128_000,
                    },
                ]
            }
        },
    )
    registry = ModelRegistry()
    replaced = registry.find("anthropic", "claude-sonnet-4-6")
    assert replaced.context_window == 1_000_000
    assert replaced.max_tokens == 16_384  # a models.json entry is a full definition with pi's defaults
    added = registry.find("anthropic", "claude-opus-4-7")
    assert added.api == "anthropic-messages" and added.base_url == "https://api.anthropic.com"
    assert added.name == "Opus 4.7"
    assert registry.find("anthropic", "claude-haiku-4-5") is not None
    assert registry.model_source(added) == "models.json"
    ids = [m.id for m in registry.all_models() if m.provider == "anthropic"]
    assert ids.count("claude-sonnet-4-6") == 1


def test_new_provider_models_get_pi_defaults(agent_dir: Path) -> None:
    _write_models(
        agent_dir,
        {
            "ollama": {
                "baseUrl": "http://127.0.0.1:11434/v1",
                "api": "openai-completions",
                "apiKey": "none",
                "compat": {"supportsDeveloperRole": False, "maxTokensField": "max_tokens"},
                "models": [
                    {"id": "qwen3-coder:30b"},
                    {
                        "id": "llama",
                        "api": "openai-responses",
                        "compat": {"maxTokensField": "max_completion_tokens"},
                    },
                ],
            }
        },
    )
    registry = ModelRegistry()
    qwen = registry.find("ollama", "qwen3-coder:30b")
    assert qwen.name == "qwen3-coder:30b"
    assert (qwen.api, qwen.base_url) == ("openai-completions", "http://127.0.0.1:11434/v1")
    assert (qwen.context_window, qwen.max_tokens, qwen.reasoning, qwen.input) == (
        128_000,
        16_384,
        False,
        ["text"],
    )
    assert qwen.cost.input == qwen.cost.output == 0.0
    llama = registry.find("ollama", "llama")
    assert llama.api == "openai-responses"
    assert llama.compat == {"supportsDeveloperRole": False, "maxTokensField": "max_completion_tokens"}
    assert "ollama/llama" in _labels(registry.available_models())
    assert registry.get_api_key(llama) == "none"


def test_auth_header_adds_a_bearer_authorization(agent_dir: Path) -> None:
    _write_models(
        agent_dir,
        {
            "proxy": {
                "baseUrl": "http://127.0.0.1:8080",
                "api": "anthropic-messages",
                "apiKey": "!printf secret",
                "authHeader": True,
                "headers": {"X-A": "a"},
                "models": [{"id": "m1", "headers": {"X-B": "b"}}],
            }
        },
    )
    model = ModelRegistry().find("proxy", "m1")
    # The key is a command: it runs for each request (pi 0.63+), so the model keeps the command text.
    assert model.headers == {"X-A": "a", "X-B": "b", "Authorization": "Bearer !printf secret"}
    assert resolve_request_headers(model.headers) == {
        "X-A": "a",
        "X-B": "b",
        "Authorization": "Bearer secret",
    }


def test_model_overrides_merge_partially_and_removal_restores(agent_dir: Path) -> None:
    original = ModelRegistry().find("openai", "gpt-5.4")
    path = _write_models(
        agent_dir,
        {
            "openai": {
                "modelOverrides": {
                    "gpt-5.4": {"cost": {"input": 1.0}, "contextWindow": 272_000, "headers": {"X-T": "1"}},
                    "gpt-does-not-exist": {"maxTokens": 5},
                }
            }
        },
    )
    registry = ModelRegistry()
    changed = registry.find("openai", "gpt-5.4")
    assert changed.cost.input == 1.0
    assert changed.cost.output == original.cost.output
    assert changed.cost.cache_read == original.cost.cache_read
    assert changed.context_window == 272_000
    assert changed.max_tokens == original.max_tokens
    assert changed.headers == {"X-T": "1"}
    assert registry.errors == []
    assert any("gpt-does-not-exist" in w for w in registry.warnings)
    path.unlink()
    registry.refresh()
    assert registry.find("openai", "gpt-5.4") == original


def test_refresh_rereads_models_json(agent_dir: Path) -> None:
    registry = ModelRegistry()
    assert registry.find("anthropic", "claude-opus-9") is None
    _write_models(agent_dir, {"anthropic": {"models": [{"id": "claude-opus-9"}]}})
    registry.refresh()
    assert registry.find("anthropic", "claude-opus-9") is not None


def test_bad_json_keeps_builtins_and_reports_file_and_line(agent_dir: Path) -> None:
    path = agent_dir / "models.json"
    path.write_text('{\n  "providers": {\n    "anthropic": {\n      "baseUrl": "http://x",,\n    }\n  }\n}\n')
    registry = ModelRegistry()
    assert registry.find("anthropic", "claude-opus-4-6").base_url == "https://api.anthropic.com"
    (error,) = registry.errors
    assert error.startswith(f"models.json error: {path}:4: invalid JSON")


def test_wrong_type_is_reported_at_the_offending_line(agent_dir: Path) -> None:
    path = agent_dir / "models.json"
    path.write_text(
        "{\n"
        '  "providers": {\n'
        '    "local": {\n'
        '      "baseUrl": "http://127.0.0.1:1234/v1",\n'
        '      "api": "openai-completions",\n'
        '      "apiKey": "none",\n'
        '      "models": [\n'
        '        {"id": "a"},\n'
        '        {"id": "b",\n'
        '         "contextWindow": "128k"}\n'
        "      ]\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    registry = ModelRegistry()
    (error,) = registry.errors
    assert re.fullmatch(
        rf"models\.json error: {re.escape(str(path))}:10: providers\.local\.models\[1\]\.contextWindow: .*integer.*",
        error,
    )
    assert registry.find("local", "a") is None
    assert registry.find("openai", "gpt-5") is not None


def test_wrong_top_level_shape_is_an_error_not_a_crash(agent_dir: Path) -> None:
    (agent_dir / "models.json").write_text('["not", "an", "object"]')
    assert ModelRegistry().errors[0].endswith('1: expected an object like {"providers": {...}}')
    (agent_dir / "models.json").write_text('{"providers": {"openai": {"models": "gpt-5"}}}')
    assert "providers.openai.models" in ModelRegistry().errors[0]


def test_unknown_provider_without_models_is_an_error(agent_dir: Path) -> None:
    _write_models(agent_dir, {"antropic": {"apiKey": "x"}})
    (error,) = ModelRegistry().errors
    assert 'provider "antropic" is not built in' in error


def test_new_provider_models_need_base_url_and_api(agent_dir: Path) -> None:
    _write_models(agent_dir, {"local": {"api": "openai-completions", "models": [{"id": "m"}]}})
    assert '"baseUrl" is required' in ModelRegistry().errors[0]
    _write_models(agent_dir, {"local": {"baseUrl": "http://h", "apiKey": "k", "models": [{"id": "m"}]}})
    assert 'no "api"' in ModelRegistry().errors[0]


def test_a_provider_without_api_key_loads_and_waits_for_a_key_as_in_pi(agent_dir: Path) -> None:
    _write_models(
        agent_dir,
        {
            "local": {"baseUrl": "http://h/v1", "api": "openai-completions", "models": [{"id": "m"}]},
            "keyed": {
                "baseUrl": "http://h/v1",
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "n"}],
            },
        },
    )
    registry = ModelRegistry()
    assert registry.errors == []  # the rest of the file still counts
    assert registry.find("local", "m") is not None
    assert [m.id for m in registry.available_models() if m.provider in ("local", "keyed")] == ["n"]
    registry.set_runtime_api_key("local", "from-the-command-line")
    assert "m" in [m.id for m in registry.available_models()]


def test_unknown_keys_are_warnings(agent_dir: Path) -> None:
    _write_models(agent_dir, {"anthropic": {"modelOverrides": {"claude-opus-4-6": {"contextWindw": 5}}}})
    registry = ModelRegistry()
    assert registry.errors == []
    assert any("contextWindw: unknown key ignored" in w for w in registry.warnings)


def test_malformed_auth_json_is_reported_without_crashing(agent_dir: Path) -> None:
    (agent_dir / "auth.json").write_text("{oops")
    registry = ModelRegistry()
    assert any(e.startswith("auth.json error:") for e in registry.errors)
    assert registry.default_model() is None


def test_auth_json_key_makes_provider_available(agent_dir: Path) -> None:
    AuthStorage(agent_dir / "auth.json").set_api_key("anthropic", "sk-stored")
    registry = ModelRegistry()
    assert registry.default_model().label == "anthropic/claude-opus-4-8"
    assert registry.get_api_key_for_provider("anthropic") == "sk-stored"


def test_registry_uses_an_explicit_agent_dir(tmp_path: Path) -> None:
    _write_models(tmp_path, {"openai": {"baseUrl": "http://127.0.0.1:1"}})
    registry = ModelRegistry(tmp_path)
    assert registry.find("openai", "gpt-5").base_url == "http://127.0.0.1:1"
    assert registry.models_json_path == tmp_path / "models.json"


def test_registered_provider_replaces_models_and_unregister_restores(agent_dir: Path) -> None:
    registry = ModelRegistry()
    registry.register_provider(
        "anthropic",
        {"baseUrl": "http://127.0.0.1:7", "api": "anthropic-messages", "models": [{"id": "only-one"}]},
    )
    assert [m.id for m in registry.all_models() if m.provider == "anthropic"] == ["only-one"]
    assert registry.model_source(registry.find("anthropic", "only-one")) == "extension"
    registry.refresh()
    assert registry.find("anthropic", "only-one") is not None
    registry.unregister_provider("anthropic")
    assert registry.find("anthropic", "only-one") is None
    assert registry.find("anthropic", "claude-opus-4-6").base_url == "https://api.anthropic.com"
    with pytest.raises(ValueError, match="contextWindow"):
        registry.register_provider("x", {"api": "faux", "models": [{"id": "m", "contextWindow": -1}]})


def test_missing_key_message_names_env_var_and_both_files(agent_dir: Path) -> None:
    message = missing_key_message("anthropic")
    assert message == (
        "No API key for anthropic: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_OAUTH_TOKEN), sign in "
        "with /login anthropic, add it to ~/.pi/agent/auth.json, or configure apiKey in ~/.pi/agent/models.json"
    )
    assert missing_key_message("openai").startswith(
        "No API key for openai: set OPENAI_API_KEY, save one with /login openai, add it to"
    )
    assert missing_key_message("ollama", Path("/etc/pi")) == (
        "No API key for ollama: add it to /etc/pi/auth.json or configure apiKey in /etc/pi/models.json "
        '(any placeholder, such as "none", for a server without auth)'
    )


def test_missing_bedrock_credentials_name_the_aws_ways(agent_dir: Path) -> None:
    message = missing_key_message("amazon-bedrock")
    assert message.startswith("No AWS credentials for amazon-bedrock: set AWS_BEARER_TOKEN_BEDROCK")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "~/.pi/agent/auth.json"):
        assert name in message


def test_cloudflare_base_urls_take_the_account_from_the_environment(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUDFLARE_API_KEY", "cf-key")
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct42")
    registry = ModelRegistry()
    model = registry.default_model_for("cloudflare-workers-ai")
    assert model is not None
    assert model.base_url == "https://api.cloudflare.com/client/v4/accounts/acct42/ai/v1"
    assert registry.get_api_key(model) == "cf-key"
    assert "cloudflare-workers-ai" in {m.provider for m in registry.available_models()}


def test_every_catalog_provider_is_listed_and_models_json_providers_follow(agent_dir: Path) -> None:
    _write_models(
        agent_dir,
        {
            "local": {
                "baseUrl": "http://127.0.0.1:1/v1",
                "api": "openai-completions",
                "apiKey": "none",
                "models": [{"id": "m"}],
            }
        },
    )
    providers = ModelRegistry().providers()
    assert len(providers) == 43
    assert providers[:3] == ["amazon-bedrock", "ant-ling", "anthropic"]
    assert providers[-2:] == ["faux", "local"]


def test_a_login_only_provider_says_to_log_in(agent_dir: Path) -> None:
    message = missing_key_message("openai-codex")
    assert message.startswith(
        "No login for openai-codex: it takes no API key; sign in with /login openai-codex"
    )


def test_a_models_json_model_takes_its_api_and_url_from_the_catalog_as_pi_picks_them(agent_dir: Path) -> None:
    _write_models(
        agent_dir,
        {
            "openrouter": {
                "models": [{"id": "vendor/new-model"}, {"id": "anthropic/claude-sonnet-4.6", "name": "Mine"}],
                "compat": {"openRouterRouting": {"order": ["b"]}},
                "modelOverrides": {
                    "moonshotai/kimi-k2.6": {"compat": {"openRouterRouting": {"only": ["a"]}}}
                },
            }
        },
    )
    registry = ModelRegistry()
    assert registry.errors == []
    new = registry.find("openrouter", "vendor/new-model")
    # no model of that id: the first Chat Completions model gives api and base URL (not the Messages one)
    assert (new.api, new.base_url) == ("openai-completions", "https://openrouter.ai/api/v1")
    replaced = registry.find("openrouter", "anthropic/claude-sonnet-4.6")
    assert (replaced.name, replaced.api, replaced.base_url) == (
        "Mine",
        "anthropic-messages",
        "https://openrouter.ai/api",
    )
    kimi = registry.find("openrouter", "moonshotai/kimi-k2.6")
    # routing objects merge one level: the provider's order and the model's only
    assert kimi.compat["openRouterRouting"] == {"order": ["b"], "only": ["a"]}
