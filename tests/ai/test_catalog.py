from __future__ import annotations

import subprocess
import sys

import pytest

from pi_tui.ai.catalog import (
    ANTHROPIC_BASE_URL,
    DEFAULT_MODEL_PER_PROVIDER,
    FAUX_PROVIDER,
    KEYLESS_PROVIDERS,
    OPENAI_BASE_URL,
    PROVIDER_ENV_VARS,
    PROVIDER_ORDER,
    builtin_models,
)
from pi_tui.ai.types import Model


def _by_label() -> dict[str, Model]:
    return {m.label: m for m in builtin_models()}


@pytest.mark.parametrize(
    "label",
    [
        "anthropic/claude-opus-4-6",
        "anthropic/claude-sonnet-4-6",
        "anthropic/claude-sonnet-4-5",
        "anthropic/claude-haiku-4-5",
        "anthropic/claude-opus-4-5",
        "openai/gpt-5.4",
        "openai/gpt-5.2",
        "openai/gpt-5.1",
        "openai/gpt-5",
        "openai/gpt-5-mini",
        "openai/gpt-4.1",
        "openai/gpt-4o",
        "openai/o3",
        "openai/o4-mini",
        "faux/faux-1",
    ],
)
def test_required_models_are_in_the_catalog(label: str) -> None:
    assert label in _by_label()


def test_ids_are_unique_per_provider() -> None:
    labels = [m.label for m in builtin_models()]
    assert len(labels) == len(set(labels))


def test_every_model_has_sane_limits_and_non_negative_prices() -> None:
    for model in builtin_models():
        assert 0 < model.max_tokens <= model.context_window, model.label
        cost = model.cost
        assert min(cost.input, cost.output, cost.cache_read, cost.cache_write) >= 0, model.label
        assert model.name, model.label


def test_anthropic_models_use_the_messages_api_and_cache_multipliers() -> None:
    anthropic = [m for m in builtin_models() if m.provider == "anthropic"]
    assert anthropic
    for model in anthropic:
        assert model.api == "anthropic-messages"
        assert model.base_url == ANTHROPIC_BASE_URL
        assert model.cost.cache_write == pytest.approx(model.cost.input * 1.25)
        assert model.cost.cache_read == pytest.approx(model.cost.input * 0.1)
        assert model.input == ["text", "image"]


def test_known_prices_and_limits() -> None:
    models = _by_label()
    opus = models["anthropic/claude-opus-4-6"]
    assert (opus.cost.input, opus.cost.output, opus.cost.cache_write) == (5.0, 25.0, 6.25)
    assert opus.max_tokens == 128_000
    sonnet = models["anthropic/claude-sonnet-4-5"]
    assert (sonnet.cost.input, sonnet.cost.cache_read, sonnet.cost.cache_write) == (3.0, 0.3, 3.75)
    gpt5 = models["openai/gpt-5"]
    assert (gpt5.cost.input, gpt5.cost.cache_read, gpt5.cost.output) == (1.25, 0.125, 10.0)
    assert models["openai/gpt-5.4"].cost.input == 2.5


def test_openai_models_use_the_responses_api_and_no_write_surcharge() -> None:
    openai = [m for m in builtin_models() if m.provider == "openai"]
    assert openai
    for model in openai:
        assert model.api == "openai-responses"
        assert model.base_url == OPENAI_BASE_URL
        assert model.cost.cache_write == 0.0
    non_reasoning = {m.id for m in openai if not m.reasoning}
    assert {"gpt-4.1", "gpt-4o"} <= non_reasoning
    assert "gpt-5.4" not in non_reasoning


def test_faux_model_needs_no_key_and_has_a_200k_window() -> None:
    faux = _by_label()["faux/faux-1"]
    assert faux.api == "faux"
    assert faux.context_window == 200_000
    assert FAUX_PROVIDER in KEYLESS_PROVIDERS


def test_defaults_point_at_catalog_models_and_follow_pi() -> None:
    models = _by_label()
    for provider in ("anthropic", "openai", "faux"):
        assert f"{provider}/{DEFAULT_MODEL_PER_PROVIDER[provider]}" in models
    assert DEFAULT_MODEL_PER_PROVIDER["anthropic"] == "claude-opus-4-6"
    assert DEFAULT_MODEL_PER_PROVIDER["openai"] == "gpt-5.4"
    assert PROVIDER_ORDER.index("anthropic") < PROVIDER_ORDER.index("openai")
    assert FAUX_PROVIDER not in PROVIDER_ORDER


def test_env_vars_prefer_the_oauth_token_for_anthropic() -> None:
    assert PROVIDER_ENV_VARS["anthropic"] == ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY")
    assert PROVIDER_ENV_VARS["openai"] == ("OPENAI_API_KEY",)


def test_builtin_models_returns_independent_copies() -> None:
    first = builtin_models()
    first[0].context_window = 1
    first[0].cost.input = 999.0
    second = builtin_models()
    assert second[0].context_window != 1
    assert second[0].cost.input != 999.0


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
