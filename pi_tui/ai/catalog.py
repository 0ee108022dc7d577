"""The built-in model catalog: which models pi-tui knows without any configuration.

Prices are dollars per million tokens. Anthropic's cache write is priced at the 5-minute rate (1.25x
input) and cache reads at 0.1x input, as Anthropic bills them; OpenAI has no write surcharge and its
cached-input price is listed per model.

Sources: Anthropic's and OpenAI's model pages (limits, prices) and pi's generated catalog (which
models a coding agent lists). Models the installed ``anthropic`` SDK names but whose limits we could
not confirm (e.g. ``claude-opus-4-7`` and the 5.x ids) are left out; add them through
``models.json`` until they are confirmed here. Ids the SDK marks deprecated (Claude 3.x, 4.0) are left
out too.

Models are built on demand by `builtin_models()`, so importing this module is cheap and every caller
gets its own objects to modify.
"""

from __future__ import annotations

from typing import Literal

from .types import Model, ModelCost

__all__ = [
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "FAUX_PROVIDER",
    "FAUX_MODEL_ID",
    "KEYLESS_PROVIDERS",
    "DEFAULT_MODEL_PER_PROVIDER",
    "PROVIDER_ORDER",
    "PROVIDER_ENV_VARS",
    "builtin_models",
    "faux_model",
    "builtin_providers",
]

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
OPENAI_BASE_URL = "https://api.openai.com/v1"

FAUX_PROVIDER = "faux"
FAUX_MODEL_ID = "faux-1"

KEYLESS_PROVIDERS: frozenset[str] = frozenset({FAUX_PROVIDER})
"""Providers that work without any credential (the scripted demo/test provider)."""

DEFAULT_MODEL_PER_PROVIDER: dict[str, str] = {
    "amazon-bedrock": "us.anthropic.claude-opus-4-6-v1",
    "anthropic": "claude-opus-4-6",
    "openai": "gpt-5.4",
    "azure-openai-responses": "gpt-5.2",
    "openai-codex": "gpt-5.4",
    "google": "gemini-2.5-pro",
    "google-gemini-cli": "gemini-2.5-pro",
    "google-antigravity": "gemini-3.1-pro-high",
    "google-vertex": "gemini-3-pro-preview",
    "github-copilot": "gpt-4o",
    "openrouter": "openai/gpt-5.1-codex",
    "vercel-ai-gateway": "anthropic/claude-opus-4-6",
    "xai": "grok-4-fast-non-reasoning",
    "groq": "openai/gpt-oss-120b",
    "cerebras": "zai-glm-4.6",
    "zai": "glm-4.6",
    "mistral": "devstral-medium-latest",
    "minimax": "MiniMax-M2.1",
    "minimax-cn": "MiniMax-M2.1",
    "huggingface": "moonshotai/Kimi-K2.5",
    "opencode": "claude-opus-4-6",
    "opencode-go": "kimi-k2.5",
    "kimi-coding": "kimi-k2-thinking",
    FAUX_PROVIDER: FAUX_MODEL_ID,
}
"""pi's default model for each provider; used for the initial model and for custom-id clones."""

PROVIDER_ORDER: tuple[str, ...] = tuple(p for p in DEFAULT_MODEL_PER_PROVIDER if p != FAUX_PROVIDER)
"""The order in which pi tries providers when it picks the initial model. ``faux`` is never picked
implicitly: a user without keys should be told so, not silently handed a scripted model."""

PROVIDER_ENV_VARS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "azure-openai-responses": ("AZURE_OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "google-vertex": ("GOOGLE_CLOUD_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "minimax-cn": ("MINIMAX_CN_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "opencode": ("OPENCODE_API_KEY",),
    "opencode-go": ("OPENCODE_API_KEY",),
    "kimi-coding": ("KIMI_API_KEY",),
    "github-copilot": ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
    "amazon-bedrock": ("AWS_BEARER_TOKEN_BEDROCK",),
}
"""Environment variables holding each provider's key, highest priority first (pi's table)."""

_TEXT_IMAGE: tuple[Literal["text", "image"], ...] = ("text", "image")
_TEXT: tuple[Literal["text", "image"], ...] = ("text",)

# (id, display name, input $/MTok, output $/MTok, context window, max output tokens)
_ANTHROPIC: tuple[tuple[str, str, float, float, int, int], ...] = (
    ("claude-opus-4-6", "Claude Opus 4.6", 5.0, 25.0, 200_000, 128_000),
    ("claude-sonnet-4-6", "Claude Sonnet 4.6", 3.0, 15.0, 200_000, 64_000),
    ("claude-opus-4-5", "Claude Opus 4.5 (latest)", 5.0, 25.0, 200_000, 64_000),
    ("claude-opus-4-5-20251101", "Claude Opus 4.5", 5.0, 25.0, 200_000, 64_000),
    ("claude-sonnet-4-5", "Claude Sonnet 4.5 (latest)", 3.0, 15.0, 200_000, 64_000),
    ("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", 3.0, 15.0, 200_000, 64_000),
    ("claude-haiku-4-5", "Claude Haiku 4.5 (latest)", 1.0, 5.0, 200_000, 64_000),
    ("claude-haiku-4-5-20251001", "Claude Haiku 4.5", 1.0, 5.0, 200_000, 64_000),
    ("claude-opus-4-1", "Claude Opus 4.1 (latest)", 15.0, 75.0, 200_000, 32_000),
    ("claude-opus-4-1-20250805", "Claude Opus 4.1", 15.0, 75.0, 200_000, 32_000),
)

# (id, display name, reasoning, input kinds, input, cached input, output, context window, max output)
_OPENAI: tuple[
    tuple[str, str, bool, tuple[Literal["text", "image"], ...], float, float, float, int, int], ...
] = (
    # GPT-5.4's window is 1.05M, but prompts over 272K tokens are billed at 2x input / 1.5x output.
    ("gpt-5.4", "GPT-5.4", True, _TEXT_IMAGE, 2.5, 0.25, 15.0, 1_050_000, 128_000),
    ("gpt-5.2", "GPT-5.2", True, _TEXT_IMAGE, 1.75, 0.175, 14.0, 400_000, 128_000),
    ("gpt-5.2-codex", "GPT-5.2 Codex", True, _TEXT_IMAGE, 1.75, 0.175, 14.0, 400_000, 128_000),
    ("gpt-5.1", "GPT-5.1", True, _TEXT_IMAGE, 1.25, 0.125, 10.0, 400_000, 128_000),
    ("gpt-5.1-codex", "GPT-5.1 Codex", True, _TEXT_IMAGE, 1.25, 0.125, 10.0, 400_000, 128_000),
    ("gpt-5.1-codex-mini", "GPT-5.1 Codex mini", True, _TEXT_IMAGE, 0.25, 0.025, 2.0, 400_000, 128_000),
    ("gpt-5", "GPT-5", True, _TEXT_IMAGE, 1.25, 0.125, 10.0, 400_000, 128_000),
    ("gpt-5-mini", "GPT-5 mini", True, _TEXT_IMAGE, 0.25, 0.025, 2.0, 400_000, 128_000),
    ("gpt-5-nano", "GPT-5 nano", True, _TEXT_IMAGE, 0.05, 0.005, 0.4, 400_000, 128_000),
    ("gpt-4.1", "GPT-4.1", False, _TEXT_IMAGE, 2.0, 0.5, 8.0, 1_047_576, 32_768),
    ("gpt-4.1-mini", "GPT-4.1 mini", False, _TEXT_IMAGE, 0.4, 0.1, 1.6, 1_047_576, 32_768),
    ("gpt-4o", "GPT-4o", False, _TEXT_IMAGE, 2.5, 1.25, 10.0, 128_000, 16_384),
    ("gpt-4o-mini", "GPT-4o mini", False, _TEXT_IMAGE, 0.15, 0.075, 0.6, 128_000, 16_384),
    ("o3", "o3", True, _TEXT_IMAGE, 2.0, 0.5, 8.0, 200_000, 100_000),
    ("o4-mini", "o4-mini", True, _TEXT_IMAGE, 1.1, 0.275, 4.4, 200_000, 100_000),
    ("o3-mini", "o3-mini", True, _TEXT, 1.1, 0.55, 4.4, 200_000, 100_000),
)


def _anthropic_models() -> list[Model]:
    return [
        Model(
            id=model_id,
            name=name,
            api="anthropic-messages",
            provider="anthropic",
            base_url=ANTHROPIC_BASE_URL,
            reasoning=True,
            input=list(_TEXT_IMAGE),
            # Round to cents-of-a-cent so 1.25 x 3.0 prints as 3.75, not 3.7500000000000004.
            cost=ModelCost(
                input=price_in,
                output=price_out,
                cache_read=round(price_in * 0.1, 6),
                cache_write=round(price_in * 1.25, 6),
            ),
            context_window=context,
            max_tokens=max_out,
        )
        for model_id, name, price_in, price_out, context, max_out in _ANTHROPIC
    ]


def _openai_models() -> list[Model]:
    return [
        Model(
            id=model_id,
            name=name,
            api="openai-responses",
            provider="openai",
            base_url=OPENAI_BASE_URL,
            reasoning=reasoning,
            input=list(kinds),
            cost=ModelCost(input=price_in, output=price_out, cache_read=cached, cache_write=0.0),
            context_window=context,
            max_tokens=max_out,
        )
        for model_id, name, reasoning, kinds, price_in, cached, price_out, context, max_out in _OPENAI
    ]


def faux_model() -> Model:
    """The faux provider's one model (free, offline); `pi_tui.ai.providers.faux` uses this entry too."""
    return Model(
        id=FAUX_MODEL_ID,
        name="Faux 1 (scripted, offline)",
        api="faux",
        provider=FAUX_PROVIDER,
        base_url="",
        reasoning=True,
        input=list(_TEXT_IMAGE),
        cost=ModelCost(),
        context_window=200_000,
        max_tokens=32_000,
    )


def _faux_models() -> list[Model]:
    return [faux_model()]


def builtin_models() -> list[Model]:
    """Fresh copies of every built-in model, grouped by provider (anthropic, openai, faux)."""
    return [*_anthropic_models(), *_openai_models(), *_faux_models()]


def builtin_providers() -> tuple[str, ...]:
    """Providers that have built-in models."""
    return ("anthropic", "openai", FAUX_PROVIDER)
