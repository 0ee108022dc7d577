"""Settings: what each key of the merged settings means, as typed accessors and common writes.

The files, their merging, locked writes and project trust live in
:class:`pi_tui.resources.settings_store.SettingsStore`; :class:`SettingsManager` adds the meaning of
each key on top (defaults, clamping, environment overrides).
"""

from __future__ import annotations

import copy
import os
from typing import TYPE_CHECKING, Any

from pi_tui.resources.settings_schema import (
    DOUBLE_ESCAPE_ACTIONS,
    FULLSCREEN_SCROLLBAR_MODES,
    MERMAID_MODES,
    QUEUE_MODES,
    THINKING_BUDGET_LEVELS,
    THINKING_LEVELS,
    TREE_FILTER_MODES,
    BranchSummarySettings,
    CompactionSettings,
    ImageSettings,
    MarkdownSettings,
    RetrySettings,
    TerminalSettings,
    capability_override,
    choice,
    clamp,
    group,
    natural,
    string_list,
    typed,
)
from pi_tui.resources.settings_store import (
    ProjectNotTrustedError,
    ResourceEntry,
    ResourceKind,
    SettingsScope,
    SettingsStore,
)

if TYPE_CHECKING:
    from pi_tui.sandbox.policy import SandboxSettings

__all__ = [
    "ProjectNotTrustedError",
    "ResourceEntry",
    "ResourceKind",
    "SettingsManager",
    "SettingsScope",
]


def _positive_ms(value: object) -> int | None:
    """A positive number of milliseconds, or None (unset, not a number, 0 or less)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return int(value)


class SettingsManager(SettingsStore):
    """Global and project settings with typed accessors (see :class:`SettingsStore` for storage).

    Args:
        agent_dir: The agent directory (``settings.json`` lives there).
        cwd: The project directory (``.pi/settings.json`` lives below it).
        project_trusted: When ``False`` the project file is neither read nor written.
        scopes: Global and project settings to hold instead of reading the files.
    """

    # -- typed accessors -------------------------------------------------------------------

    def _group(self, key: str) -> dict[str, Any]:
        return group(self._merged.get(key))

    @property
    def default_provider(self) -> str | None:
        """``defaultProvider``; saved only when the user asks (pi 0.84.3: model choices are per session)."""
        return typed(self._merged.get("defaultProvider"), str, None)

    @property
    def default_model(self) -> str | None:
        """``defaultModel``; saved only when the user asks (pi 0.84.3: model choices are per session)."""
        return typed(self._merged.get("defaultModel"), str, None)

    @property
    def default_thinking_level(self) -> str | None:
        """``defaultThinkingLevel`` (unset means sessions use ``medium``)."""
        value = self._merged.get("defaultThinkingLevel")
        return value if isinstance(value, str) and value in THINKING_LEVELS else None

    def thinking_level_for(self, provider: str, model_id: str) -> str | None:
        """The level to start ``provider/model_id`` with: its ``modelThinkingLevels`` entry (pi 0.84.3),
        else ``defaultThinkingLevel``; None when neither is set (or valid)."""
        per_model = self._group("modelThinkingLevels").get(f"{provider}/{model_id}")
        if isinstance(per_model, str) and per_model in THINKING_LEVELS:
            return per_model
        return self.default_thinking_level

    @property
    def thinking_budgets(self) -> dict[str, int]:
        """``thinkingBudgets``: custom token budgets per level; only valid entries."""
        budgets = self._group("thinkingBudgets")
        return {
            level: budgets[level]
            for level in THINKING_BUDGET_LEVELS
            if typed(budgets.get(level), int, None) is not None
        }

    @property
    def hide_thinking_block(self) -> bool:
        """``hideThinkingBlock``: thinking blocks start hidden (Ctrl+T toggles and saves it)."""
        return typed(self._merged.get("hideThinkingBlock"), bool, False)

    @property
    def show_cache_miss_notices(self) -> bool:
        """``showCacheMissNotices``: say when an answer paid again for context the provider had cached."""
        return typed(self._merged.get("showCacheMissNotices"), bool, False)

    @property
    def cache_warming(self) -> str:
        """``cacheWarming``: ``"off"``, ``"streaming"`` (the default: while a run lasts) or ``"idle"`` (also
        between runs). Read from the global settings only, as pi: warming spends money, so a project's
        settings cannot turn it on."""
        value = self._scopes["global"].get("cacheWarming")
        return value if value in ("off", "streaming", "idle") else "streaming"

    @property
    def theme(self) -> str | None:
        """``theme``; ``None`` means pick light or dark from the terminal background."""
        return typed(self._merged.get("theme"), str, None)

    @property
    def anthropic_extra_usage_warning(self) -> bool:
        """``warnings.anthropicExtraUsage`` (pi 0.87.1): ``false`` silences the warning that a Claude
        subscription login is billed as extra usage."""
        warnings = self._merged.get("warnings")
        return not (isinstance(warnings, dict) and warnings.get("anthropicExtraUsage") is False)

    @property
    def quiet_startup(self) -> bool:
        return typed(self._merged.get("quietStartup"), bool, False)

    @property
    def collapse_changelog(self) -> bool:
        return typed(self._merged.get("collapseChangelog"), bool, False)

    @property
    def last_changelog_version(self) -> str | None:
        return typed(self._merged.get("lastChangelogVersion"), str, None)

    @property
    def double_escape_action(self) -> str:
        """``doubleEscapeAction``: ``tree`` (default), ``fork`` or ``none``."""
        return choice(self._merged.get("doubleEscapeAction"), DOUBLE_ESCAPE_ACTIONS, "tree")

    @property
    def fullscreen_exit_output(self) -> str:
        """``fullscreenExitOutput``: what quitting leaves in the terminal, ``transcript`` (default: the
        conversation, then the resume line) or ``resume-hint`` (the resume line alone), as pi's."""
        return choice(self._merged.get("fullscreenExitOutput"), ("transcript", "resume-hint"), "transcript")

    @property
    def fullscreen_scrollbar(self) -> str:
        """``fullscreenScrollbar``: ``auto`` (default: shown while the chat scrolls), ``always`` or ``hidden``."""
        return choice(self._merged.get("fullscreenScrollbar"), FULLSCREEN_SCROLLBAR_MODES, "auto")

    @property
    def fullscreen_copy_on_select(self) -> bool:
        """``fullscreenCopyOnSelect``: text selected with the mouse is copied when the button is let go
        (default); off, Ctrl+X (``app.message.copy``) copies the selection instead of the last answer."""
        return typed(self._merged.get("fullscreenCopyOnSelect"), bool, True)

    @property
    def output_pad(self) -> int:
        """``outputPad``: columns left and right of user messages, answers and thinking; 0, else 1 (pi's rule)."""
        return 0 if self._merged.get("outputPad") == 0 else 1

    @property
    def tree_filter_mode(self) -> str:
        return choice(self._merged.get("treeFilterMode"), TREE_FILTER_MODES, "default")

    @property
    def editor_padding_x(self) -> int:
        """``editorPaddingX``, clamped to 0–3."""
        return clamp(self._merged.get("editorPaddingX"), 0, 3, 0)

    @property
    def autocomplete_max_visible(self) -> int:
        """``autocompleteMaxVisible``, clamped to 3–20."""
        return clamp(self._merged.get("autocompleteMaxVisible"), 3, 20, 5)

    @property
    def show_hardware_cursor(self) -> bool:
        """``showHardwareCursor``, also switched on by ``PI_HARDWARE_CURSOR=1``."""
        if os.environ.get("PI_HARDWARE_CURSOR") == "1":
            return True
        return typed(self._merged.get("showHardwareCursor"), bool, False)

    @property
    def steering_mode(self) -> str:
        """``steeringMode``: ``one-at-a-time`` (default) or ``all``."""
        return choice(self._merged.get("steeringMode"), QUEUE_MODES, "one-at-a-time")

    @property
    def follow_up_mode(self) -> str:
        """``followUpMode``: ``one-at-a-time`` (default) or ``all``."""
        return choice(self._merged.get("followUpMode"), QUEUE_MODES, "one-at-a-time")

    @property
    def transport(self) -> str:
        return typed(self._merged.get("transport"), str, "sse")

    @property
    def shell_path(self) -> str | None:
        return typed(self._merged.get("shellPath"), str, None)

    @property
    def shell_command_prefix(self) -> str | None:
        """``shellCommandPrefix``: text prepended to every bash command."""
        return typed(self._merged.get("shellCommandPrefix"), str, None)

    @property
    def npm_command(self) -> list[str] | None:
        value = self._merged.get("npmCommand")
        return string_list(value) if isinstance(value, list) else None

    @property
    def enabled_models(self) -> list[str] | None:
        """``enabledModels``: patterns limiting model cycling, like ``--models``."""
        value = self._merged.get("enabledModels")
        return string_list(value) if isinstance(value, list) else None

    @property
    def enable_skill_commands(self) -> bool:
        """``enableSkillCommands``: whether ``/skill:name`` commands are offered."""
        return typed(self._merged.get("enableSkillCommands"), bool, True)

    @property
    def packages(self) -> list[str | dict[str, Any]]:
        """``packages``: sources as strings or ``{source, extensions?, skills?, …}`` objects."""
        value = self._merged.get("packages")
        if not isinstance(value, list):
            return []
        return [
            copy.deepcopy(item)
            for item in value
            if isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("source"), str))
        ]

    @property
    def extensions(self) -> list[str]:
        return string_list(self._merged.get("extensions"))

    @property
    def skills(self) -> list[str]:
        return string_list(self._merged.get("skills"))

    @property
    def prompts(self) -> list[str]:
        return string_list(self._merged.get("prompts"))

    @property
    def themes(self) -> list[str]:
        return string_list(self._merged.get("themes"))

    @property
    def compaction(self) -> CompactionSettings:
        values = self._group("compaction")
        defaults = CompactionSettings()
        return CompactionSettings(
            enabled=typed(values.get("enabled"), bool, defaults.enabled),
            reserve_tokens=natural(values.get("reserveTokens"), defaults.reserve_tokens),
            keep_recent_tokens=natural(values.get("keepRecentTokens"), defaults.keep_recent_tokens),
        )

    def compaction_for(self, provider: str, model_id: str) -> CompactionSettings:
        """``compaction.*`` for one model: each token setting from ``compaction.modelOverrides`` under
        ``"provider/modelId"`` when it has a usable value there, else the ordinary setting, else the default."""
        ordinary = self.compaction
        overrides = self._group("compaction").get("modelOverrides")
        entry = overrides.get(f"{provider}/{model_id}") if isinstance(overrides, dict) else None
        if not isinstance(entry, dict):
            return ordinary
        return CompactionSettings(
            enabled=ordinary.enabled,
            reserve_tokens=natural(entry.get("reserveTokens"), ordinary.reserve_tokens),
            keep_recent_tokens=natural(entry.get("keepRecentTokens"), ordinary.keep_recent_tokens),
        )

    @property
    def sandbox(self) -> SandboxSettings:
        """``sandbox``: a mode (``off``/``workspace-write``/``read-only``) or ``{mode, allowWrite, denyRead,
        allowNetwork}`` (see `pi_tui.sandbox.policy`)."""
        from pi_tui.sandbox.policy import read_sandbox_settings

        return read_sandbox_settings(self._merged.get("sandbox"))

    @property
    def branch_summary(self) -> BranchSummarySettings:
        values = self._group("branchSummary")
        defaults = BranchSummarySettings()
        return BranchSummarySettings(
            reserve_tokens=natural(values.get("reserveTokens"), defaults.reserve_tokens),
            skip_prompt=typed(values.get("skipPrompt"), bool, defaults.skip_prompt),
        )

    @property
    def retry(self) -> RetrySettings:
        values = self._group("retry")
        defaults = RetrySettings()
        provider = values.get("provider")
        # pi 0.87.1 moved the cap on a provider's requested wait to retry.provider.maxRetryDelayMs; the
        # older retry.maxDelayMs still counts when the new key is absent, as pi's migration does.
        legacy_cap = natural(values.get("maxDelayMs"), defaults.max_delay_ms)
        provider_values = provider if isinstance(provider, dict) else {}
        cap = provider_values.get("maxRetryDelayMs")
        return RetrySettings(
            enabled=typed(values.get("enabled"), bool, defaults.enabled),
            max_retries=natural(values.get("maxRetries"), defaults.max_retries),
            base_delay_ms=natural(values.get("baseDelayMs"), defaults.base_delay_ms),
            max_delay_ms=natural(cap, legacy_cap),
            max_agent_delay_ms=natural(values.get("maxAgentDelayMs"), defaults.max_agent_delay_ms),
            provider_max_retries=natural(provider_values.get("maxRetries"), defaults.provider_max_retries),
            provider_timeout_ms=_positive_ms(provider_values.get("timeoutMs")),
        )

    @property
    def terminal(self) -> TerminalSettings:
        """``terminal.*``; ``PI_CLEAR_ON_SHRINK=1`` also turns on ``clearOnShrink``, and ``PI_HYPERLINKS`` /
        ``PI_TRUE_COLOR`` (``1``/``0``) decide what ``hyperlinks`` / ``trueColor`` leave unset."""
        values = self._group("terminal")
        defaults = TerminalSettings()
        clear = typed(values.get("clearOnShrink"), bool, defaults.clear_on_shrink)
        return TerminalSettings(
            show_images=typed(values.get("showImages"), bool, defaults.show_images),
            clear_on_shrink=clear or os.environ.get("PI_CLEAR_ON_SHRINK") == "1",
            show_terminal_progress=typed(
                values.get("showTerminalProgress"), bool, defaults.show_terminal_progress
            ),
            hyperlinks=capability_override(values.get("hyperlinks"), "PI_HYPERLINKS"),
            true_color=capability_override(values.get("trueColor"), "PI_TRUE_COLOR"),
        )

    @property
    def images(self) -> ImageSettings:
        values = self._group("images")
        defaults = ImageSettings()
        return ImageSettings(
            auto_resize=typed(values.get("autoResize"), bool, defaults.auto_resize),
            block_images=typed(values.get("blockImages"), bool, defaults.block_images),
        )

    @property
    def markdown(self) -> MarkdownSettings:
        values = self._group("markdown")
        defaults = MarkdownSettings()
        return MarkdownSettings(
            code_block_indent=typed(values.get("codeBlockIndent"), str, defaults.code_block_indent),
            mermaid=choice(values.get("mermaid"), MERMAID_MODES, defaults.mermaid),
        )

    # -- common writes ---------------------------------------------------------------------

    def set_default_model(self, provider: str, model_id: str) -> None:
        """Save the model picked by the user (``defaultProvider`` and ``defaultModel`` together)."""
        self.update({"defaultProvider": provider, "defaultModel": model_id})

    def set_default_thinking_level(self, level: str) -> None:
        if level not in THINKING_LEVELS:
            raise ValueError(
                f"Unknown thinking level {level!r}; expected one of {', '.join(THINKING_LEVELS)}"
            )
        self.set("defaultThinkingLevel", level)

    def set_steering_mode(self, mode: str) -> None:
        self.set("steeringMode", _checked_queue_mode(mode))

    def set_follow_up_mode(self, mode: str) -> None:
        self.set("followUpMode", _checked_queue_mode(mode))

    def set_theme(self, theme: str) -> None:
        self.set("theme", theme)

    def set_compaction_enabled(self, enabled: bool) -> None:
        self.set_nested("compaction", "enabled", enabled)


def _checked_queue_mode(mode: str) -> str:
    if mode not in QUEUE_MODES:
        raise ValueError(f"Unknown queue mode {mode!r}; expected 'one-at-a-time' or 'all'")
    return mode
