"""pi's app keybindings and ``keybindings.json`` (current pi's namespaced ids; old names migrate).

Only the app-level actions are bound here (the editor keeps its own: Enter, Shift+Enter, history, …).
A user value replaces the default; ``[]`` unbinds.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

__all__ = [
    "APP_ACTIONS",
    "DEFAULT_KEYS",
    "EDITOR_DEFAULTS",
    "editor_key_actions",
    "hotkeys_table",
    "load_keymap",
    "to_textual_key",
]

log = logging.getLogger(__name__)

APP_ACTIONS: dict[str, tuple[str, str]] = {
    "app.interrupt": ("interrupt", "Abort the answer; queued messages return to the editor"),
    "app.model.select": ("select_model", "Select a model"),
    "app.model.cycleForward": ("cycle_model(1)", "Next model"),
    "app.model.cycleBackward": ("cycle_model(-1)", "Previous model"),
    "app.thinking.cycle": ("cycle_thinking", "Cycle the thinking level"),
    "app.thinking.toggle": ("toggle_thinking", "Hide or show thinking blocks"),
    "app.tools.expand": ("expand_tools", "Expand or collapse tool output"),
    "app.sidebar.toggle": ("toggle_sidebar", "Show or hide the panels sidebar"),
    "app.message.copy": ("copy_last", "Copy the last answer"),
    "app.session.new": ("command('/new')", "New session"),
    "app.session.tree": ("command('/tree')", "Session tree"),
    "app.session.fork": ("command('/fork')", "Fork"),
    "app.session.resume": ("command('/resume')", "Resume a session"),
    "app.suspend": ("suspend_process", "Suspend (fg to return)"),
    "app.editor.external": ("external_editor", "Edit the prompt in $VISUAL / $EDITOR"),
    "app.clipboard.pasteImage": ("paste_image", "Paste an image from the clipboard (as a file path)"),
}
"""pi action id → (Textual action, description)."""

DEFAULT_KEYS: dict[str, list[str]] = {
    "app.interrupt": ["escape"],
    "app.model.select": ["ctrl+l"],
    "app.model.cycleForward": ["ctrl+p"],
    "app.model.cycleBackward": ["shift+ctrl+p"],
    "app.thinking.cycle": ["shift+tab"],
    "app.thinking.toggle": ["ctrl+t"],
    "app.tools.expand": ["ctrl+o"],
    "app.sidebar.toggle": ["f2"],
    "app.message.copy": ["ctrl+x"],
    "app.session.new": [],
    "app.session.tree": [],
    "app.session.fork": [],
    "app.session.resume": [],
    "app.suspend": ["ctrl+z"],
    "app.editor.external": ["ctrl+g"],
    "app.clipboard.pasteImage": ["ctrl+v"],
}

EDITOR_KEYS: list[tuple[str, str]] = [
    ("enter", "Send (while the agent works: steer)"),
    ("alt+enter", "Queue a follow-up"),
    ("shift+enter, ctrl+j", "New line"),
    ("up / down", "Prompt history (first / last line)"),
    ("alt+up", "Bring queued messages back to the editor"),
    ("ctrl+c", "Clear the editor; twice quits"),
    ("ctrl+d", "Quit (empty editor)"),
    ("/", "Commands"),
    ("@", "Attach a file path"),
    ("!cmd / !!cmd", "Run a shell command (!! keeps it out of the context)"),
]

_OLD_NAMES = {
    "interrupt": "app.interrupt",
    "selectModel": "app.model.select",
    "cycleModelForward": "app.model.cycleForward",
    "cycleModelBackward": "app.model.cycleBackward",
    "cycleThinkingLevel": "app.thinking.cycle",
    "toggleThinking": "app.thinking.toggle",
    "expandTools": "app.tools.expand",
    "suspend": "app.suspend",
    "externalEditor": "app.editor.external",
    "newSession": "app.session.new",
    "tree": "app.session.tree",
    "fork": "app.session.fork",
    "resume": "app.session.resume",
}


EDITOR_DEFAULTS: dict[str, tuple[str, list[str]]] = {
    "tui.input.submit": ("submit", ["enter"]),
    "tui.input.newLine": ("newLine", ["shift+enter", "ctrl+j", "ctrl+enter"]),
    "app.message.followUp": ("followUp", ["alt+enter", "escape+enter"]),
    "app.clear": ("clear", ["ctrl+c"]),
    "app.exit": ("exit", ["ctrl+d"]),
    "app.message.dequeue": ("dequeue", ["alt+up"]),
}
"""pi id → (editor action, default keys): the keys the prompt editor handles itself."""

_OLD_EDITOR_NAMES = {
    "submit": "tui.input.submit",
    "newLine": "tui.input.newLine",
    "followUp": "app.message.followUp",
    "clear": "app.clear",
    "exit": "app.exit",
    "dequeue": "app.message.dequeue",
}


def editor_key_actions(agent_dir: Path | None) -> tuple[dict[str, str], list[str]]:
    """Textual key → editor action, from the defaults and ``keybindings.json`` (a user value replaces
    the default keys of that action; ``[]`` unbinds it)."""
    keys = {pi_id: list(default) for pi_id, (_, default) in EDITOR_DEFAULTS.items()}
    warnings: list[str] = []
    path = agent_dir / "keybindings.json" if agent_dir else None
    if path is not None and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}  # load_keymap reports the broken file once
        for name, value in data.items() if isinstance(data, dict) else ():
            pi_id = _OLD_EDITOR_NAMES.get(name, name)
            if pi_id not in EDITOR_DEFAULTS:
                continue
            given = [value] if isinstance(value, str) else value if isinstance(value, list) else None
            if given is None or not all(isinstance(k, str) for k in given):
                warnings.append(f"{path}: {name} must be a key or a list of keys")
                continue
            keys[pi_id] = [to_textual_key(k) for k in given if to_textual_key(k)]
    actions: dict[str, str] = {}
    for pi_id, bound in keys.items():
        for key in bound:
            actions.setdefault(key, EDITOR_DEFAULTS[pi_id][0])
    return actions, warnings


def to_textual_key(key: str) -> str:
    """pi's ``shift+ctrl+p`` / ``pageUp`` → Textual's ``ctrl+shift+p`` / ``pageup``."""
    parts = [p.strip().lower() for p in key.split("+") if p.strip()]
    if not parts:
        return ""
    *mods, name = parts
    order = [m for m in ("ctrl", "alt", "shift", "super") if m in mods]
    return "+".join([*order, name])


def load_keymap(agent_dir: Path | None) -> tuple[dict[str, list[str]], list[str]]:
    """The effective app keymap (action id → keys) and warnings about the user's file."""
    keymap = {k: list(v) for k, v in DEFAULT_KEYS.items()}
    warnings: list[str] = []
    path = agent_dir / "keybindings.json" if agent_dir else None
    if path is None or not path.is_file():
        return keymap, warnings
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return keymap, [f"Ignoring {path}: {exc}"]
    if not isinstance(data, dict):
        return keymap, [f"Ignoring {path}: expected an object of action → key(s)"]
    for name, value in data.items():
        action = _OLD_NAMES.get(name, name)
        if action not in APP_ACTIONS:
            continue  # editor and list keys are the widgets' business
        keys = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if keys is None or not all(isinstance(k, str) for k in keys):
            warnings.append(f"{path}: {name} must be a key or a list of keys")
            continue
        keymap[action] = [to_textual_key(k) for k in keys if to_textual_key(k)]
    return keymap, warnings


def hotkeys_table(keymap: dict[str, list[str]]) -> str:
    """``/hotkeys``: every effective binding, app keys then editor keys."""
    lines = ["Keyboard shortcuts", ""]
    for action, (_, description) in APP_ACTIONS.items():
        keys = ", ".join(keymap.get(action, [])) or "(unbound)"
        lines.append(f"{keys:<22} {description}")
    lines.append("")
    for keys, description in EDITOR_KEYS:
        lines.append(f"{keys:<22} {description}")
    return "\n".join(lines)
