"""What settings exist, their defaults, and the rewrites that upgrade old settings files.

The manager in :mod:`pi_tui.resources.settings` stores raw JSON; this module turns raw values into
typed ones. A value of the wrong type falls back to the default rather than failing: a hand-edited
``settings.json`` must never stop the app from starting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

T = TypeVar("T")

QueueMode = Literal["one-at-a-time", "all"]
DoubleEscapeAction = Literal["tree", "fork", "none"]
TreeFilterMode = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]

QUEUE_MODES: tuple[str, ...] = ("one-at-a-time", "all")
DOUBLE_ESCAPE_ACTIONS: tuple[str, ...] = ("tree", "fork", "none")
TREE_FILTER_MODES: tuple[str, ...] = ("default", "no-tools", "user-only", "labeled-only", "all")
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
THINKING_BUDGET_LEVELS: tuple[str, ...] = ("minimal", "low", "medium", "high")

DEFAULT_THINKING_LEVEL = "medium"
"""What a session uses when ``defaultThinkingLevel`` is unset."""

# Keys whose values are objects: a project file overrides them key by key, one level deep.
NESTED_KEYS: frozenset[str] = frozenset(
    {"compaction", "branchSummary", "retry", "terminal", "images", "markdown", "thinkingBudgets"}
)


@dataclass(frozen=True)
class CompactionSettings:
    """``compaction.*``: when and how much of the context to summarise."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


@dataclass(frozen=True)
class BranchSummarySettings:
    """``branchSummary.*``: summaries written when leaving a branch in ``/tree``."""

    reserve_tokens: int = 16384
    skip_prompt: bool = False


@dataclass(frozen=True)
class RetrySettings:
    """``retry.*``: automatic retry of transient provider errors with exponential backoff.

    ``max_delay_ms`` is ``retry.provider.maxRetryDelayMs`` (formerly ``retry.maxDelayMs``): the longest
    wait a provider may ask for and get. ``max_agent_delay_ms`` (``retry.maxAgentDelayMs``) caps the backoff.
    """

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000
    max_agent_delay_ms: int = 60000
    provider_max_retries: int = 0
    """``retry.provider.maxRetries``: a refused request sent again at once by the provider layer, before
    the agent's own retries (pi's default 0)."""
    provider_timeout_ms: int | None = None
    """``retry.provider.timeoutMs``: the provider request timeout, instead of ``httpIdleTimeoutMs``."""


@dataclass(frozen=True)
class TerminalSettings:
    """``terminal.*``."""

    show_images: bool = True
    clear_on_shrink: bool = False
    show_terminal_progress: bool = False
    hyperlinks: bool | None = None
    """``terminal.hyperlinks`` (else ``PI_HYPERLINKS``): True/False forces OSC 8 links on/off; None detects."""
    true_color: bool | None = None
    """``terminal.trueColor`` (else ``PI_TRUE_COLOR``): True/False forces 24-bit/256 colours; None detects."""


@dataclass(frozen=True)
class ImageSettings:
    """``images.*``."""

    auto_resize: bool = True
    block_images: bool = False


MERMAID_MODES = ("off", "final", "streaming")
"""``markdown.mermaid``: when pi draws Mermaid code blocks as diagrams (never, finished answers, also while
streaming)."""

FULLSCREEN_SCROLLBAR_MODES = ("auto", "always", "hidden")
"""``fullscreenScrollbar``: the chat's scroll bar shows while scrolling, always, or never."""


@dataclass(frozen=True)
class MarkdownSettings:
    """``markdown.*``."""

    code_block_indent: str = "  "
    mermaid: str = "streaming"
    """``markdown.mermaid``: ``off``, ``final`` or ``streaming`` (see `MERMAID_MODES`)."""


def capability_override(setting: object, variable: str) -> bool | None:
    """A terminal capability override as pi 0.87.1 reads it: a boolean setting wins, else the variable's
    ``1``/``0``; None (``"auto"``, unset, anything else) keeps detection."""
    if isinstance(setting, bool):
        return setting
    return {"1": True, "0": False}.get(os.environ.get(variable, ""))


def typed(value: Any, kind: type[T], default: T) -> T:
    """Return ``value`` if it has the expected JSON type, else ``default``.

    ``bool`` is not accepted where an ``int`` is expected (JSON ``true`` is not a number), and an
    ``int`` is not accepted where a ``bool`` is.
    """
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    return value if ok else default


def natural(value: Any, default: int) -> int:
    """``value`` when it is a whole number of 0 or more (a count of tokens, retries, milliseconds), else
    ``default``."""
    number = typed(value, int, -1)
    return number if number >= 0 else default


def choice(value: Any, choices: tuple[str, ...], default: str) -> str:
    """Return ``value`` when it is one of ``choices``, else ``default``."""
    return value if isinstance(value, str) and value in choices else default


def clamp(value: Any, low: int, high: int, default: int) -> int:
    """An int setting clamped to ``[low, high]``; non-numbers give ``default``."""
    number = typed(value, int, default)
    return max(low, min(high, number))


def string_list(value: Any) -> list[str]:
    """The strings of a JSON array; anything else gives an empty list."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]


def group(value: Any) -> dict[str, Any]:
    """A nested settings object, or an empty one when the value is not an object."""
    return value if isinstance(value, dict) else {}


def migrate_settings(raw: dict[str, Any]) -> dict[str, Any]:
    """Rewrite keys of older settings files into their current form.

    - ``queueMode`` becomes ``steeringMode`` (unless that is already set);
    - a boolean ``websockets`` becomes ``transport`` (``"websocket"`` or ``"sse"``);
    - the ``skills`` object ``{enableSkillCommands, customDirectories}`` becomes
      ``enableSkillCommands`` plus the ``skills`` path list.

    Returns:
        A new dict; the input is not modified. Unknown keys are kept as they are.
    """
    settings = dict(raw)
    if "queueMode" in settings:
        queue_mode = settings.pop("queueMode")
        settings.setdefault("steeringMode", queue_mode)
    if "transport" not in settings and isinstance(settings.get("websockets"), bool):
        settings["transport"] = "websocket" if settings.pop("websockets") else "sse"
    old_skills = settings.get("skills")
    if isinstance(old_skills, dict):
        enable = old_skills.get("enableSkillCommands")
        if isinstance(enable, bool) and "enableSkillCommands" not in settings:
            settings["enableSkillCommands"] = enable
        directories = old_skills.get("customDirectories")
        if isinstance(directories, list) and directories:
            settings["skills"] = list(directories)
        else:
            del settings["skills"]
    return settings


def merge_scopes(global_settings: dict[str, Any], project_settings: dict[str, Any]) -> dict[str, Any]:
    """Merge project settings over global ones.

    Objects merge recursively, as pi 0.87 merges them (a project
    ``compaction.modelOverrides["p/m"].reserveTokens`` keeps the global ``keepRecentTokens`` of that
    model); arrays and scalars are replaced.
    """
    merged = dict(global_settings)
    for key, value in project_settings.items():
        base = merged.get(key)
        if isinstance(base, dict) and isinstance(value, dict):
            merged[key] = merge_scopes(base, value)
        else:
            merged[key] = value
    return merged
