"""Every setting ``/settings`` shows: its key, kind, choices, default, and where its value comes from.

No Textual here. Values are read from the `SettingsManager`'s merged view, the source from its two
files (``project`` wins over ``global``, else ``default``); writes go through its field-level setters
(``set`` for a top-level key, ``set_nested`` for ``group.field``), so edits made to the files by hand
meanwhile survive, as in pi.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pi_tui.resources.settings import SettingsManager

from pi_tui.resources.settings_schema import (
    DOUBLE_ESCAPE_ACTIONS,
    FULLSCREEN_SCROLLBAR_MODES,
    MERMAID_MODES,
    QUEUE_MODES,
    THINKING_LEVELS,
    TREE_FILTER_MODES,
)

__all__ = ["Setting", "CATALOG", "Source", "value_of", "shown_value", "source_of", "write", "parse_value"]

Kind = Literal["bool", "int", "choice", "text", "list", "theme", "readonly"]
Source = Literal["default", "global", "project"]


@dataclass(frozen=True, slots=True)
class Setting:
    """One editable setting. ``key`` is ``name`` or ``group.field``."""

    key: str
    label: str
    kind: Kind
    default: Any
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    help: str = ""
    reader: str | None = None
    """The `SettingsManager` property that reads it (``group.field`` for a group's record); None when
    the code reads the raw value by its key (``settings.get(group)[field]``, ``resource_entries(key)``).
    A test checks that the reader follows the file and that code outside the settings modules uses it:
    a setting shown here must change something."""
    global_only: bool = False
    """Read from the global settings only (it spends money: a project must not turn it on); always
    written there."""


CATALOG: tuple[Setting, ...] = (
    Setting("compaction.enabled", "Auto-compact", "bool", True, help="Summarise old context near the window",
            reader="compaction.enabled"),
    Setting("compaction.review", "Review compaction summaries", "choice", "manual-only",
            ("always", "manual-only", "never"), help="Show the summary before it is applied"),
    Setting("compaction.reserveTokens", "Compaction reserve tokens", "int", 16384, minimum=0,
            reader="compaction.reserve_tokens"),
    Setting("compaction.keepRecentTokens", "Compaction keeps recent tokens", "int", 20000, minimum=0,
            reader="compaction.keep_recent_tokens"),
    Setting("branchSummary.skipPrompt", "Skip the branch-summary question", "bool", False,
            reader="branch_summary.skip_prompt"),
    Setting("branchSummary.reserveTokens", "Branch summary reserve tokens", "int", 16384, minimum=0,
            reader="branch_summary.reserve_tokens"),
    Setting("images.autoResize", "Auto-resize images", "bool", True,
            help="Scale images larger than the model takes down before sending them", reader="images.auto_resize"),
    Setting("images.blockImages", "Block images", "bool", False, reader="images.block_images"),
    Setting("enableSkillCommands", "Skill commands", "bool", True, reader="enable_skill_commands"),
    Setting("showHardwareCursor", "Show hardware cursor", "bool", False,
            help="Show the terminal's cursor at the editor's (for IME and screen readers)",
            reader="show_hardware_cursor"),
    Setting("editorPaddingX", "Editor padding", "int", 0, minimum=0, maximum=3,
            help="Extra columns left and right of the text in the editor", reader="editor_padding_x"),
    Setting("outputPad", "Output padding", "int", 1, minimum=0, maximum=1,
            help="Columns left and right of your messages, answers and thinking", reader="output_pad"),
    Setting("autocompleteMaxVisible", "Autocomplete max items", "int", 5, minimum=3, maximum=20,
            reader="autocomplete_max_visible"),
    Setting("steeringMode", "Steering mode", "choice", "one-at-a-time", QUEUE_MODES, reader="steering_mode"),
    Setting("followUpMode", "Follow-up mode", "choice", "one-at-a-time", QUEUE_MODES, reader="follow_up_mode"),
    Setting("hideThinkingBlock", "Hide thinking", "bool", False, help="Also toggled by Ctrl+T",
            reader="hide_thinking_block"),
    Setting("markdown.mermaid", "Mermaid diagrams", "choice", "streaming", MERMAID_MODES,
            help="Draw Mermaid code blocks in answers as Unicode diagrams: off, once complete, or while streaming",
            reader="markdown.mermaid"),
    Setting("showCacheMissNotices", "Cache miss notices", "bool", False,
            help="Say when an answer paid again for context the provider had cached",
            reader="show_cache_miss_notices"),
    Setting("cacheWarming", "Cache warming", "choice", "streaming", ("off", "streaming", "idle"),
            help="Refresh the provider's prompt cache: while the agent works, also between prompts, or never",
            reader="cache_warming", global_only=True),
    Setting("quietStartup", "Quiet startup", "bool", False, help="No start-up header (--verbose shows it)",
            reader="quiet_startup"),
    Setting("doubleEscapeAction", "Double-escape action", "choice", "tree", DOUBLE_ESCAPE_ACTIONS,
            help="What Escape twice on an empty editor opens", reader="double_escape_action"),
    Setting("treeFilterMode", "Tree filter mode", "choice", "default", TREE_FILTER_MODES, reader="tree_filter_mode"),
    Setting("fullscreenExitOutput", "Fullscreen exit output", "choice", "transcript", ("transcript", "resume-hint"),
            help="What quitting leaves in the terminal: the conversation, or the resume line alone",
            reader="fullscreen_exit_output"),
    Setting("fullscreenScrollbar", "Fullscreen scrollbar", "choice", "auto", FULLSCREEN_SCROLLBAR_MODES,
            help="The chat's scroll bar: while scrolling (auto), always, or never", reader="fullscreen_scrollbar"),
    Setting("fullscreenCopyOnSelect", "Fullscreen copy on select", "bool", True,
            help="Copy text selected with the mouse; off: Ctrl+X copies the selection",
            reader="fullscreen_copy_on_select"),
    Setting("terminal.showTerminalProgress", "Terminal progress", "bool", False,
            help="Show OSC 9;4 progress in the terminal tab while the agent works",
            reader="terminal.show_terminal_progress"),
    Setting("defaultThinkingLevel", "Default thinking level", "choice", "medium", THINKING_LEVELS,
            reader="default_thinking_level"),
    Setting("retry.enabled", "Retry failed requests", "bool", True, reader="retry.enabled"),
    Setting("retry.maxRetries", "Retry attempts", "int", 3, minimum=0, reader="retry.max_retries"),
    Setting("retry.baseDelayMs", "Retry base delay (ms)", "int", 2000, minimum=0, reader="retry.base_delay_ms"),
    Setting("context.reinjectSystemPrompt", "Repeat the system prompt after panels", "bool", False),
    Setting("context.detachHistory", "Freeze old history into panels", "bool", False),
    Setting("theme", "Theme", "theme", "dark", help="Previewed while you move through the list", reader="theme"),
    Setting("shellPath", "Shell", "text", None, help="The shell bash runs in (empty: the default)",
            reader="shell_path"),
    Setting("shellCommandPrefix", "Shell command prefix", "text", None, reader="shell_command_prefix"),
    Setting("sandbox.mode", "Sandbox", "choice", "workspace-write", ("off", "workspace-write", "read-only"),
            help="OS sandbox for commands (bash tool, !cmd); --sandbox overrides it", reader="sandbox.mode"),
    Setting("sandbox.allowWrite", "Sandbox: writable paths", "list", None,
            help="Comma-separated; writable besides the project and TMPDIR", reader="sandbox.allow_write"),
    Setting("sandbox.denyRead", "Sandbox: hidden paths", "list", None,
            help="Comma-separated; unreadable besides the built-in credential list", reader="sandbox.deny_read"),
    Setting("sandbox.allowNetwork", "Sandbox: allowed hosts", "list", None,
            help="Comma-separated hosts (pypi.org, *.npmjs.org); none: no network", reader="sandbox.allow_network"),
    Setting("enabledModels", "Scoped models (Ctrl+P cycle)", "list", None, help="Comma-separated patterns",
            reader="enabled_models"),
    Setting("extensions", "Extension paths", "list", None),
    Setting("skills", "Skill paths", "list", None),
    Setting("prompts", "Prompt template paths", "list", None),
    Setting("themes", "Theme paths", "list", None),
    Setting("packages", "Packages", "readonly", None, help="Edit with pi-tui install/remove", reader="packages"),
)  # fmt: skip


def _split(key: str) -> tuple[str, str | None]:
    group, _, field = key.partition(".")
    return group, (field or None)


def _lookup(data: dict[str, Any], key: str) -> tuple[bool, Any]:
    group, field = _split(key)
    if field is None:
        return (group in data, data.get(group))
    nested = data.get(group)
    if isinstance(nested, dict) and field in nested:
        return True, nested[field]
    return False, None


def source_of(settings: SettingsManager | None, setting: Setting) -> Source:
    """Where the current value comes from (a project value wins over a global one)."""
    if settings is None:
        return "default"
    if settings.project_trusted and not setting.global_only and _lookup(settings.scope_dict("project"), setting.key)[0]:
        return "project"
    if _lookup(settings.scope_dict("global"), setting.key)[0]:
        return "global"
    return "default"


def shown_value(settings: SettingsManager | None, setting: Setting) -> str:
    """The value as one line of the list."""
    value = value_of(settings, setting)
    if setting.kind == "bool":
        return "on" if value else "off"
    if value is None or value == []:
        return "(none)"
    if isinstance(value, list):
        return ", ".join(item if isinstance(item, str) else str(item.get("source", item)) for item in value)
    return str(value)


def value_of(settings: SettingsManager | None, setting: Setting) -> Any:
    """The effective value (the default when unset)."""
    if settings is None:
        return setting.default
    found, value = _lookup(settings.scope_dict("global") if setting.global_only else settings.as_dict(), setting.key)
    return value if found and value is not None else setting.default


def parse_value(setting: Setting, text: str) -> Any:
    """A typed value from what the user typed.

    Raises:
        ValueError: not a number, out of range, or not one of the choices.
    """
    text = text.strip()
    if setting.kind == "bool":
        if text.lower() in ("true", "on", "yes", "1"):
            return True
        if text.lower() in ("false", "off", "no", "0"):
            return False
        raise ValueError(f"{setting.label}: answer true or false")
    if setting.kind == "int":
        try:
            number = int(text)
        except ValueError:
            raise ValueError(f"{setting.label}: {text!r} is not a whole number") from None
        if setting.minimum is not None and number < setting.minimum:
            raise ValueError(f"{setting.label}: at least {setting.minimum}")
        if setting.maximum is not None and number > setting.maximum:
            raise ValueError(f"{setting.label}: at most {setting.maximum}")
        return number
    if setting.kind == "choice" and text not in setting.choices:
        raise ValueError(f"{setting.label}: one of {', '.join(setting.choices)}")
    if setting.kind == "list":
        items = [item.strip() for item in text.split(",") if item.strip()]
        return items or None
    if setting.kind == "readonly":
        raise ValueError(f"{setting.label} cannot be edited here")
    return text or None


def write(
    settings: SettingsManager, setting: Setting, value: Any, scope: Literal["global", "project"] = "global"
) -> None:
    """Save one field (``None`` removes it, so the default applies again); a global-only setting goes to
    the global settings whatever ``scope`` says."""
    if setting.global_only:
        scope = "global"
    group, field = _split(setting.key)
    if field is None:
        settings.set(group, value, scope=scope)
    else:
        settings.set_nested(group, field, value, scope=scope)
