from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.model_registry import ModelRegistry
from pi_tui.ai.model_resolver import (
    ModelResolutionError,
    find_initial_model,
    format_token_count,
    list_models_table,
    parse_model_pattern,
    resolve_cli_model,
    resolve_model_scope,
)
from pi_tui.ai.types import Model


def _m(provider: str, model_id: str, name: str = "", **extra: object) -> Model:
    return Model(id=model_id, name=name or model_id, api="openai-completions", provider=provider, **extra)


OPENROUTER = [
    _m("openrouter", "qwen/qwen3-coder"),
    _m("openrouter", "qwen/qwen3-coder:exacto"),
    _m("openrouter", "openai/gpt-4o:extended"),
]


@pytest.fixture
def registry(agent_dir: Path) -> ModelRegistry:
    return ModelRegistry()


# --- parse_model_pattern ---------------------------------------------------------------------------


def _anthropic(registry: ModelRegistry) -> list[Model]:
    return registry.models_of("anthropic")


def test_exact_id_matches(registry: ModelRegistry) -> None:
    assert parse_model_pattern("gpt-5", registry.all_models()).model.id == "gpt-5"


def test_partial_match_prefers_alias_over_dated_id(registry: ModelRegistry) -> None:
    assert parse_model_pattern("haiku", _anthropic(registry)).model.id == "claude-haiku-4-5"
    assert parse_model_pattern("sonnet-4-5", _anthropic(registry)).model.id == "claude-sonnet-4-5"


def test_partial_match_picks_the_newest_alias(registry: ModelRegistry) -> None:
    assert parse_model_pattern("sonnet", _anthropic(registry)).model.id == "claude-sonnet-5"
    assert parse_model_pattern("opus", _anthropic(registry)).model.id == "claude-opus-5-5"


def test_punctuation_sorts_below_letters_as_in_pi() -> None:
    models = [_m("p", "~vendor/claude-sonnet-latest"), _m("p", "claude-sonnet-4-6")]
    assert parse_model_pattern("sonnet", models).model.id == "claude-sonnet-4-6"


def test_versions_compare_numerically() -> None:
    models = [_m("p", "model-4-9"), _m("p", "model-4-10")]
    assert parse_model_pattern("model", models).model.id == "model-4-10"


def test_only_dated_ids_pick_the_latest_date() -> None:
    models = [_m("p", "x-20240101"), _m("p", "x-20250101")]
    assert parse_model_pattern("x", models).model.id == "x-20250101"


def test_partial_match_searches_the_display_name(registry: ModelRegistry) -> None:
    assert parse_model_pattern("Opus 4.7", _anthropic(registry)).model.id == "claude-opus-4-7"


def test_thinking_suffix_is_split_off(registry: ModelRegistry) -> None:
    match = parse_model_pattern("sonnet:high", _anthropic(registry))
    assert (match.model.id, match.thinking_level, match.warning) == ("claude-sonnet-5", "high", None)


def test_invalid_thinking_suffix_warns_and_keeps_the_model(registry: ModelRegistry) -> None:
    match = parse_model_pattern("sonnet:turbo", _anthropic(registry))
    assert match.model.id == "claude-sonnet-5"
    assert match.thinking_level is None
    assert 'Invalid thinking level "turbo"' in match.warning


def test_invalid_suffix_without_fallback_matches_nothing(registry: ModelRegistry) -> None:
    assert (
        parse_model_pattern("sonnet:turbo", registry.all_models(), allow_invalid_level_fallback=False).model
        is None
    )


def test_ids_containing_colons_match_exactly() -> None:
    match = parse_model_pattern("qwen/qwen3-coder:exacto", OPENROUTER)
    assert (match.model.id, match.thinking_level) == ("qwen/qwen3-coder:exacto", None)
    match = parse_model_pattern("qwen/qwen3-coder:exacto:high", OPENROUTER)
    assert (match.model.id, match.thinking_level) == ("qwen/qwen3-coder:exacto", "high")
    assert parse_model_pattern("openai/gpt-4o:extended", OPENROUTER).model.id == "openai/gpt-4o:extended"


def test_nothing_matches_returns_no_model(registry: ModelRegistry) -> None:
    assert parse_model_pattern("llama", _anthropic(registry)).model is None
    assert parse_model_pattern("no-such-model-anywhere", registry.all_models()).model is None


# --- resolve_cli_model -----------------------------------------------------------------------------


def test_provider_slash_id(registry: ModelRegistry) -> None:
    resolved = resolve_cli_model(registry, None, "anthropic/claude-sonnet-4-5")
    assert resolved.model.label == "anthropic/claude-sonnet-4-5"
    assert resolved.warnings == []


def test_provider_flag_is_case_insensitive_and_scopes_fuzzy_matching(registry: ModelRegistry) -> None:
    assert resolve_cli_model(registry, "OpenAI", "5.2").model.label == "openai/gpt-5.2-pro"
    assert (
        resolve_cli_model(registry, "anthropic", "anthropic/opus").model.label == "anthropic/claude-opus-5-5"
    )


def test_exact_id_wins_over_partial(registry: ModelRegistry) -> None:
    assert resolve_cli_model(registry, "openai", "gpt-5").model.id == "gpt-5"
    assert resolve_cli_model(registry, "openai", "GPT-5.2").model.id == "gpt-5.2"
    assert resolve_cli_model(registry, None, "claude-sonnet-4-5-20250929").model.provider == "anthropic"


def test_an_id_at_several_providers_needs_a_key_or_a_provider(
    registry: ModelRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ModelResolutionError, match='"gpt-5" is ambiguous across providers: .*openai/gpt-5'):
        resolve_cli_model(registry, None, "gpt-5")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert resolve_cli_model(registry, None, "gpt-5").model.label == "openai/gpt-5"


def test_thinking_suffix_and_flag(registry: ModelRegistry) -> None:
    assert resolve_cli_model(registry, "anthropic", "sonnet:low").thinking_level == "low"
    assert resolve_cli_model(registry, "anthropic", "sonnet:low", "high").thinking_level == "high"


def test_invalid_thinking_flag_only_warns(registry: ModelRegistry) -> None:
    resolved = resolve_cli_model(registry, None, "openai/gpt-5.4", "ultra")
    assert resolved.model.id == "gpt-5.4"
    assert resolved.thinking_level is None
    assert 'Invalid thinking level "ultra"' in resolved.warnings[0]


def test_invalid_thinking_suffix_only_warns(registry: ModelRegistry) -> None:
    resolved = resolve_cli_model(registry, None, "sonnet-4-6:hihg")
    assert resolved.model.id.endswith("claude-sonnet-4-6") or "sonnet-4-6" in resolved.model.id
    assert "hihg" in resolved.warnings[0]


def test_effective_thinking_level_is_clamped_to_the_model(registry: ModelRegistry) -> None:
    assert resolve_cli_model(registry, "openai", "gpt-4o:high").effective_thinking_level == "off"
    # Sonnet 4.6 maps only max above high: xhigh goes up to max, as pi clamps it
    assert (
        resolve_cli_model(registry, "anthropic", "claude-sonnet-4-6:xhigh").effective_thinking_level == "max"
    )
    assert resolve_cli_model(registry, "anthropic", "claude-opus-4-8:max").effective_thinking_level == "max"
    assert resolve_cli_model(registry, "anthropic", "claude-haiku-4-5:max").effective_thinking_level == "high"
    assert (
        resolve_cli_model(registry, "anthropic", "claude-opus-4-8:xhigh").effective_thinking_level == "xhigh"
    )
    assert resolve_cli_model(registry, "openai", "gpt-5.4").effective_thinking_level == "medium"


def test_unknown_id_under_explicit_provider_clones_the_default_model(registry: ModelRegistry) -> None:
    resolved = resolve_cli_model(registry, "openai", "gpt-7-preview")
    model = resolved.model
    default = registry.find("openai", "gpt-5.5")
    assert (model.id, model.name, model.provider) == ("gpt-7-preview", "gpt-7-preview", "openai")
    assert (model.api, model.base_url, model.context_window) == (
        default.api,
        default.base_url,
        default.context_window,
    )
    assert "custom model id" in resolved.warnings[0]
    assert registry.find("openai", "gpt-7-preview") is None


def test_unknown_id_with_provider_prefix_is_a_custom_id_with_its_level(registry: ModelRegistry) -> None:
    resolved = resolve_cli_model(registry, None, "anthropic/claude-opus-9:high")
    assert (resolved.model.label, resolved.thinking_level) == ("anthropic/claude-opus-9", "high")
    assert resolved.model.max_tokens == registry.find("anthropic", "claude-opus-4-8").max_tokens


def test_unknown_provider_is_an_error(registry: ModelRegistry) -> None:
    with pytest.raises(ModelResolutionError, match='Unknown provider "nope".*models.json'):
        resolve_cli_model(registry, "nope", "x")


def test_an_unknown_provider_names_the_close_ones(registry: ModelRegistry) -> None:
    with pytest.raises(ModelResolutionError) as caught:
        resolve_cli_model(registry, "openroute", None)
    message = str(caught.value)
    assert "Did you mean: openrouter" in message
    assert '"providers": {"openroute": {"baseUrl"' in message
    with pytest.raises(ModelResolutionError, match="Did you mean: .*xiaomi"):
        resolve_cli_model(registry, "xiaomi-token-plan", None)


def test_nothing_matching_lists_close_matches(registry: ModelRegistry) -> None:
    with pytest.raises(ModelResolutionError) as caught:
        resolve_cli_model(registry, None, "claude-sonet-4-6")
    message = str(caught.value)
    assert message.startswith('Model "claude-sonet-4-6" not found.')
    assert "anthropic/claude-sonnet-4-6" in message
    assert "--list-models" in message


def test_no_pattern_and_no_provider_resolves_to_nothing(registry: ModelRegistry) -> None:
    resolved = resolve_cli_model(registry, None, None, "low")
    assert (resolved.model, resolved.thinking_level) == (None, "low")


def test_provider_alone_gives_its_default_model(registry: ModelRegistry) -> None:
    assert resolve_cli_model(registry, "openai", None).model.id == "gpt-5.5"
    assert resolve_cli_model(registry, "anthropic", None).model.id == "claude-opus-4-8"
    assert resolve_cli_model(registry, "openrouter", None).model.id == "moonshotai/kimi-k2.6"
    assert resolve_cli_model(registry, "GROQ", None).model.label == "groq/openai/gpt-oss-120b"
    assert resolve_cli_model(registry, "faux", None).model.id == "faux-1"


def test_openrouter_style_ids_resolve_through_a_models_json_provider(agent_dir: Path) -> None:
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "openrouter": {
                        "baseUrl": "http://127.0.0.1:1/api/v1",
                        "api": "openai-completions",
                        "apiKey": "k",
                        "models": [{"id": "qwen/qwen3-coder:exacto"}, {"id": "openai/gpt-4o:extended"}],
                    }
                }
            }
        )
    )
    registry = ModelRegistry()
    resolved = resolve_cli_model(registry, None, "openrouter/qwen/qwen3-coder:exacto:high")
    assert (resolved.model.label, resolved.thinking_level) == ("openrouter/qwen/qwen3-coder:exacto", "high")
    assert resolve_cli_model(registry, None, "openai/gpt-4o:extended").model.provider == "openrouter"
    assert (
        resolve_cli_model(registry, "openrouter", "qwen/qwen3-coder:exacto").model.id
        == "qwen/qwen3-coder:exacto"
    )


# --- scope and initial model ------------------------------------------------------------------------


def _two_providers(registry: ModelRegistry) -> list[Model]:
    return registry.models_of("anthropic") + registry.models_of("openai")


def test_model_scope_supports_globs_levels_and_plain_patterns(registry: ModelRegistry) -> None:
    models = _two_providers(registry)
    scoped, warnings = resolve_model_scope(["anthropic/*sonnet*:high", "gpt-5.4", "*nothing*"], models)
    labels = [s.model.label for s in scoped]
    assert labels[-1] == "openai/gpt-5.4"
    assert set(labels[:-1]) == {m.label for m in models if "sonnet" in m.id}
    assert all(s.thinking_level == "high" for s in scoped[:-1])
    assert warnings == ['No models match pattern "*nothing*"']


def test_model_scope_drops_duplicates(registry: ModelRegistry) -> None:
    scoped, _ = resolve_model_scope(["gpt-5.4", "openai/gpt-5.4", "*gpt-5.4"], _two_providers(registry))
    assert [s.model.label for s in scoped] == ["openai/gpt-5.4"]


def test_initial_model_prefers_the_saved_default_when_it_has_a_key(
    registry: ModelRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert find_initial_model(registry, "anthropic", "claude-haiku-4-5").id == "claude-haiku-4-5"
    assert find_initial_model(registry, "openai", "gpt-5").id == "claude-opus-4-8"
    assert find_initial_model(registry, "anthropic", "gone").id == "claude-opus-4-8"
    assert find_initial_model(registry).id == "claude-opus-4-8"


# --- --list-models -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (512, "512"),
        (16_384, "16.4K"),
        (128_000, "128K"),
        (200_000, "200K"),
        (1_000_000, "1M"),
        (1_047_576, "1.0M"),
    ],
)
def test_token_counts_are_compact(count: int, text: str) -> None:
    assert format_token_count(count) == text


def test_list_models_table_has_the_pi_columns(registry: ModelRegistry) -> None:
    table = list_models_table(registry.models_of("openai"), "gpt-4o")
    lines = table.splitlines()
    assert lines[0].split() == ["provider", "model", "context", "max-out", "thinking", "images"]
    rows = [line.split() for line in lines[1:]]
    assert ["openai", "gpt-4o", "128K", "16.4K", "no", "yes"] in rows
    assert ["openai", "gpt-4o-mini", "128K", "16.4K", "no", "yes"] in rows
    assert rows == sorted(rows, key=lambda row: row[1])
    assert lines[1].index("gpt-4") == lines[0].index("model")


def test_list_models_search_is_fuzzy_and_sorted(registry: ModelRegistry) -> None:
    rows = [
        line.split()[:2] for line in list_models_table(_two_providers(registry), "ant haiku").splitlines()[1:]
    ]
    assert rows == [["anthropic", "claude-haiku-4-5"], ["anthropic", "claude-haiku-4-5-20251001"]]


def test_list_models_reports_empty_results() -> None:
    assert list_models_table([]).startswith("No models available.")
    assert list_models_table([_m("p", "a")], "zzz") == 'No models matching "zzz"'


def test_an_exact_model_reference_is_provider_slash_id_or_an_id_only_one_provider_has() -> None:
    from pi_tui.ai.model_resolver import find_exact_model_reference

    models = [_m("a", "shared"), _m("b", "shared"), _m("a", "only-a"), _m("b", "Mixed-Case")]
    assert find_exact_model_reference("B/SHARED", models) is models[1]
    assert find_exact_model_reference("only-a", models) is models[2]
    assert find_exact_model_reference("mixed-case", models) is models[3]
    assert find_exact_model_reference("shared", models) is None  # two providers have it: the picker asks
    assert find_exact_model_reference("only", models) is None  # a prefix is not a name
    assert find_exact_model_reference("  ", models) is None
