from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.ai import catalog
from pi_tui.ai.catalog import (
    CATALOG_FILE,
    FAUX_PROVIDER,
    KEYLESS_PROVIDERS,
    Catalog,
    builtin_models,
    builtin_providers,
    default_model_id,
    env_vars,
    has_env_credentials,
    provider_info,
    provider_models,
    provider_order,
)
from pi_tui.ai.types import Model


def _by_label() -> dict[str, Model]:
    return {m.label: m for m in builtin_models()}


def test_every_provider_of_pi_is_built_in_plus_faux() -> None:
    providers = builtin_providers()
    assert len(providers) == 42 and providers[-1] == FAUX_PROVIDER
    for name in (
        "google",
        "openrouter",
        "groq",
        "xai",
        "mistral",
        "amazon-bedrock",
        "github-copilot",
        "openai-codex",
    ):
        assert name in providers


def test_ids_are_unique_per_provider() -> None:
    labels = [m.label for m in builtin_models()]
    assert len(labels) == len(set(labels))


def test_every_model_has_sane_limits_and_known_or_marked_unknown_prices() -> None:
    unknown = []
    for model in builtin_models():
        assert 0 < model.max_tokens and 0 < model.context_window, model.label
        cost = model.cost
        if min(cost.input, cost.output) < 0:
            unknown.append(model.label)  # pi's marker for "priced by the router at run time"
        else:
            assert min(cost.input, cost.output, cost.cache_read, cost.cache_write) >= 0, model.label
        assert model.name and model.api, model.label
    assert unknown and all(label.startswith("openrouter/openrouter/auto") for label in unknown)


def test_known_facts_of_pi_0_87_1() -> None:
    models = _by_label()
    opus = models["anthropic/claude-opus-4-8"]
    assert opus.api == "anthropic-messages" and opus.base_url == "https://api.anthropic.com"
    groq = models["groq/openai/gpt-oss-120b"]
    assert groq.api == "openai-completions" and groq.base_url == "https://api.groq.com/openai/v1"
    assert groq.compat == {"supportsStrictMode": True}
    assert groq.thinking_level_map is not None and groq.thinking_level_map["off"] is None
    tiered = [m for m in models.values() if m.cost.tiers]
    assert tiered and all(t.input_tokens_above > 0 for m in tiered for t in m.cost.tiers or [])


def test_defaults_point_at_catalog_models_and_follow_pi() -> None:
    models = _by_label()
    for provider in builtin_providers():
        default = default_model_id(provider)
        if provider != "radius":  # radius's catalog comes from its gateway at run time in pi
            assert f"{provider}/{default}" in models, provider
    assert default_model_id("anthropic") == "claude-opus-4-8"
    assert default_model_id("openai") == "gpt-5.5"
    order = provider_order()
    assert order.index("anthropic") < order.index("openai")
    assert FAUX_PROVIDER not in order
    assert FAUX_PROVIDER in KEYLESS_PROVIDERS


def test_env_variables_follow_pis_resolution_order() -> None:
    assert env_vars("anthropic") == ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY")
    assert env_vars("google") == ("GEMINI_API_KEY",)
    assert env_vars("github-copilot") == ("COPILOT_GITHUB_TOKEN",)
    assert env_vars("openai-codex") == ()
    assert env_vars("no-such-provider") == ()
    info = provider_info("openrouter")
    assert info is not None and info.login is not None and info.api_key_name == "OpenRouter API key"


def test_env_credentials_follow_each_providers_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not has_env_credentials("groq")
    monkeypatch.setenv("GROQ_API_KEY", "   ")  # blank counts as unset, as in pi
    assert not has_env_credentials("groq")
    monkeypatch.setenv("GROQ_API_KEY", "k")
    assert has_env_credentials("groq")
    monkeypatch.setenv("CLOUDFLARE_API_KEY", "k")
    assert not has_env_credentials("cloudflare-workers-ai")
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct")
    assert has_env_credentials("cloudflare-workers-ai") and not has_env_credentials("cloudflare-ai-gateway")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "id")
    assert not has_env_credentials("amazon-bedrock")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    assert has_env_credentials("amazon-bedrock")
    assert not has_env_credentials("openai-codex")


def test_provider_models_returns_independent_copies() -> None:
    first = provider_models("anthropic")
    first[0].context_window = 1
    first[0].cost.input = 999.0
    second = provider_models("anthropic")
    assert second[0].context_window != 1
    assert second[0].cost.input != 999.0


def test_a_provider_is_read_without_parsing_the_others(tmp_path: Path) -> None:
    lines = CATALOG_FILE.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    index = [p["id"] for p in header["providers"]].index("openrouter")
    broken = b"!" * len(lines[index + 1])  # same size, not JSON
    lines[index + 1] = broken
    path = tmp_path / "catalog.jsonl"
    path.write_bytes(b"\n".join(lines))
    copy = Catalog(path)
    assert [m.id for m in copy.models("anthropic")] == [m.id for m in provider_models("anthropic")]
    with pytest.raises(json.JSONDecodeError):
        copy.models("openrouter")


def test_the_catalog_records_the_pi_version() -> None:
    assert catalog.catalog_pi_version() == "0.87.1"


def test_importing_the_model_modules_loads_no_sdk_and_no_tokenizer() -> None:
    code = (
        "import sys\n"
        "import pi_tui.ai.catalog, pi_tui.ai.model_registry, pi_tui.ai.model_resolver\n"
        "import pi_tui.ai.auth, pi_tui.ai.thinking, pi_tui.ai.tokens, pi_tui.ai.paths\n"
        "heavy = [m for m in ('anthropic', 'openai', 'tiktoken', 'tiktoken_ext', 'textual') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert result.stdout.strip() == ""
