"""Say which values of a settings file pi-tui ignores because they have the wrong type.

The typed accessors of `pi_tui.resources.settings.SettingsManager` fall back to a default for a value
of the wrong type, so a hand-edited file never stops the app. Without a word, though, a typo such as
``"reserveTokens": "20k"`` would silently do nothing; `settings_problems` names each such key once, when
the file is read, with what was expected and what is used instead. pi 0.87.1 refuses to start on such
a value; pi-tui warns and goes on with the default.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .settings_schema import (
    DOUBLE_ESCAPE_ACTIONS,
    QUEUE_MODES,
    THINKING_LEVELS,
    TREE_FILTER_MODES,
    BranchSummarySettings,
    CompactionSettings,
    RetrySettings,
)

__all__ = ["settings_problems"]

Check = Callable[[Any], str | None]
"""What is wrong with a value (the expectation, in words), or None when it is fine."""


def _count(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return None if ok else "a whole number, 0 or more"


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) else "a string"


def _texts(value: Any) -> str | None:
    ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    return None if ok else "a list of strings"


def _one_of(choices: tuple[str, ...]) -> Check:
    def check(value: Any) -> str | None:
        return None if isinstance(value, str) and value in choices else "one of " + ", ".join(choices)

    return check


_TOP: dict[str, tuple[Check, str]] = {
    "defaultProvider": (_text, ""),
    "defaultModel": (_text, ""),
    "defaultThinkingLevel": (_one_of(THINKING_LEVELS), "medium"),
    "steeringMode": (_one_of(QUEUE_MODES), "one-at-a-time"),
    "followUpMode": (_one_of(QUEUE_MODES), "one-at-a-time"),
    "doubleEscapeAction": (_one_of(DOUBLE_ESCAPE_ACTIONS), "tree"),
    "treeFilterMode": (_one_of(TREE_FILTER_MODES), "default"),
    "hideThinkingBlock": (_flag, "false"),
    "showCacheMissNotices": (_flag, "false"),
    "cacheWarming": (_one_of(("off", "streaming", "idle")), "streaming"),
    "quietStartup": (_flag, "false"),
    "showHardwareCursor": (_flag, "false"),
    "enableSkillCommands": (_flag, "true"),
    "editorPaddingX": (_count, "0"),
    "autocompleteMaxVisible": (_count, "5"),
    "theme": (_text, "dark"),
    "shellPath": (_text, ""),
    "shellCommandPrefix": (_text, ""),
    "enabledModels": (_texts, "every model"),
    "extensions": (_texts, ""),
    "skills": (_texts, ""),
    "prompts": (_texts, ""),
    "themes": (_texts, ""),
}

_compaction, _branch, _retry = CompactionSettings(), BranchSummarySettings(), RetrySettings()
_GROUPS: dict[str, dict[str, tuple[Check, str]]] = {
    "compaction": {
        "enabled": (_flag, "true"),
        "reserveTokens": (_count, str(_compaction.reserve_tokens)),
        "keepRecentTokens": (_count, str(_compaction.keep_recent_tokens)),
    },
    "branchSummary": {
        "reserveTokens": (_count, str(_branch.reserve_tokens)),
        "skipPrompt": (_flag, "false"),
    },
    "retry": {
        "enabled": (_flag, "true"),
        "maxRetries": (_count, str(_retry.max_retries)),
        "baseDelayMs": (_count, str(_retry.base_delay_ms)),
        "maxDelayMs": (_count, str(_retry.max_delay_ms)),
        "maxAgentDelayMs": (_count, str(_retry.max_agent_delay_ms)),
    },
    "images": {"autoResize": (_flag, "true"), "blockImages": (_flag, "false")},
}


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def _instead(fallback: str) -> str:
    return f"using {fallback}" if fallback else "ignored"


def settings_problems(data: Mapping[str, Any]) -> list[str]:
    """One line per value of ``data`` (a settings file's object) that pi-tui ignores for its type:
    ``compaction.reserveTokens: expected a whole number, 0 or more, got "lots"; using 16384``."""
    problems: list[str] = []
    for key, (check, fallback) in _TOP.items():
        if key in data and data[key] is not None and (expected := check(data[key])) is not None:
            problems.append(f"{key}: expected {expected}, got {_shown(data[key])}; {_instead(fallback)}")
    for name, fields in _GROUPS.items():
        if name not in data:
            continue
        values = data[name]
        if not isinstance(values, Mapping):
            problems.append(f"{name}: expected an object, got {_shown(values)}; using the defaults")
            continue
        for key, (check, fallback) in fields.items():
            if key in values and (expected := check(values[key])) is not None:
                problems.append(
                    f"{name}.{key}: expected {expected}, got {_shown(values[key])}; {_instead(fallback)}"
                )
    return problems
