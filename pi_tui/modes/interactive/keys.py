"""pi's app keybindings and ``keybindings.json`` (current pi's namespaced ids; old names migrate).

The app-level actions are Textual bindings with pi's ids (:func:`app_bindings`), given their keys through
Textual's keymap (:func:`textual_keymap`, passed to ``App.set_keymap``); the prompt editor's (Enter, kill
ring, undo, word motions, …) are looked up by the editor itself (:func:`editor_key_actions`).
A user value replaces the default; ``[]`` unbinds.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol, runtime_checkable

from textual.binding import Binding

from pi_tui.util import json_safe

__all__ = [
    "APP_ACTIONS",
    "DEFAULT_KEYS",
    "LIST_KEYS",
    "list_binding",
    "list_key_actions",
    "UNBOUND_KEY",
    "EDITOR_DEFAULTS",
    "canonical_key",
    "editor_action_keys",
    "editor_key_actions",
    "key_display",
    "editor_key_rows",
    "hotkey_rows",
    "key_hint",
    "keymap_of",
    "KeymapHost",
    "screen_keys",
    "SCREEN_SCOPES",
    "load_keymap",
    "app_bindings",
    "textual_keymap",
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
    "app.tools.expand": ("expand_tools", "Expand or collapse tool output and summaries"),
    "app.sidebar.toggle": ("toggle_sidebar", "Show or hide the panels sidebar"),
    "app.message.copy": ("copy_last", "Copy the last answer"),
    "app.session.new": ("command('/new')", "New session"),
    "app.session.tree": ("command('/tree')", "Session tree"),
    "app.session.fork": ("command('/fork')", "Fork"),
    "app.session.resume": ("command('/resume')", "Resume a session"),
    "app.suspend": ("suspend_process", "Suspend (fg to return)"),
    "app.editor.external": ("external_editor", "Edit the prompt in $VISUAL / $EDITOR"),
    "app.clipboard.pasteImage": ("paste_image", "Paste an image from the clipboard (as a file path)"),
    "tui.altScreen.pageUp": ("scroll_chat('page_up')", "Scroll the chat up a page"),
    "tui.altScreen.pageDown": ("scroll_chat('page_down')", "Scroll the chat down a page"),
    "tui.altScreen.halfPageUp": ("scroll_chat('half_up')", "Scroll the chat up half a page"),
    "tui.altScreen.halfPageDown": ("scroll_chat('half_down')", "Scroll the chat down half a page"),
    "tui.altScreen.lineUp": ("scroll_chat('line_up')", "Scroll the chat up a line"),
    "tui.altScreen.lineDown": ("scroll_chat('line_down')", "Scroll the chat down a line"),
    "tui.altScreen.previousPrompt": ("scroll_chat('prompt_up')", "Scroll the chat to your previous prompt"),
    "tui.altScreen.nextPrompt": ("scroll_chat('prompt_down')", "Scroll the chat to your next prompt"),
    "tui.altScreen.top": ("scroll_chat('top')", "Scroll to the top of the chat"),
    "tui.altScreen.bottom": ("scroll_chat('bottom')", "Scroll to the end of the chat (and follow it)"),
    "tui.altScreen.search": ("toggle_search", "Search the transcript (again: close the search)"),
    "tui.altScreen.searchNext": ("search_step(1)", "While searching: the next match"),
    "tui.altScreen.searchPrevious": ("search_step(-1)", "While searching: the previous match"),
    "tui.altScreen.searchClose": ("close_search", "Close the transcript search"),
}
"""pi action id → (Textual action, description). The chat's scroll keys use pi 0.87's full-screen ids
(``tui.altScreen.*``), so a pi ``keybindings.json`` rebinds them too."""

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
    # pi's full-screen keys, except Home/End (top/bottom in pi), which stay the editor's line start/end.
    "tui.altScreen.pageUp": ["pageup", "shift+pageup"],
    "tui.altScreen.pageDown": ["pagedown", "shift+pagedown"],
    "tui.altScreen.halfPageUp": [],
    "tui.altScreen.halfPageDown": [],
    "tui.altScreen.lineUp": ["shift+up"],
    "tui.altScreen.lineDown": ["shift+down"],
    "tui.altScreen.previousPrompt": ["ctrl+up", "ctrl+shift+up"],
    "tui.altScreen.nextPrompt": ["ctrl+down", "ctrl+shift+down"],
    "tui.altScreen.top": ["alt+home", "ctrl+shift+home"],
    "tui.altScreen.bottom": ["alt+end", "ctrl+shift+end"],
    "tui.altScreen.search": ["ctrl+shift+f"],
    "tui.altScreen.searchNext": ["enter", "ctrl+g"],
    "tui.altScreen.searchPrevious": ["shift+enter", "ctrl+shift+g"],
    "tui.altScreen.searchClose": ["escape"],
}


LIST_KEYS: dict[str, tuple[str, list[str]]] = {
    "tui.select.up": ("Lists: move up", ["up"]),
    "tui.select.down": ("Lists: move down", ["down"]),
    "tui.select.pageUp": ("Lists: a page up", ["pageup"]),
    "tui.select.pageDown": ("Lists: a page down", ["pagedown"]),
    "tui.select.confirm": ("Lists: choose the highlighted row", ["enter"]),
    "tui.select.cancel": ("Lists: cancel", ["escape", "ctrl+c"]),
    "app.models.save": ("/model: save the highlighted model as the default", ["ctrl+s"]),
    "app.thinking.save": ("/thinking: save the level as the default too", ["ctrl+s"]),
    "app.models.enableAll": ("/scoped-models: add every model shown", ["ctrl+a"]),
    "app.models.clearAll": ("/scoped-models: empty the scope (or remove the models shown)", ["ctrl+x"]),
    "app.models.toggleProvider": (
        "/scoped-models: add or remove the highlighted model's provider",
        ["ctrl+p"],
    ),
    "app.models.reorderUp": ("/scoped-models: move the highlighted model up the cycle order", ["alt+up"]),
    "app.models.reorderDown": (
        "/scoped-models: move the highlighted model down the cycle order",
        ["alt+down"],
    ),
    "app.tree.foldOrUp": (
        "/tree: fold the branch, or go to the previous branch point",
        ["ctrl+left", "alt+left"],
    ),
    "app.tree.unfoldOrDown": (
        "/tree: unfold the branch, or go to the next branch point",
        ["ctrl+right", "alt+right"],
    ),
    "app.tree.editLabel": ("/tree: label the entry (empty clears the label)", ["shift+l"]),
    "app.tree.toggleLabelTimestamp": ("/tree: show or hide when labels were set", ["shift+t"]),
    "app.tree.filter.default": ("/tree: the default filter", ["ctrl+d"]),
    "app.tree.filter.noTools": ("/tree: hide tool results (again: the default filter)", ["ctrl+t"]),
    "app.tree.filter.userOnly": ("/tree: your messages only (again: the default filter)", ["ctrl+u"]),
    "app.tree.filter.labeledOnly": ("/tree: labelled entries only (again: the default filter)", ["ctrl+l"]),
    "app.tree.filter.all": ("/tree: every entry (again: the default filter)", ["ctrl+a"]),
    "app.tree.filter.cycleForward": ("/tree: the next filter", ["ctrl+o"]),
    "app.tree.filter.cycleBackward": ("/tree: the previous filter", ["ctrl+shift+o"]),
    "app.session.toggleSort": ("/resume: the next order (threaded, recent, relevance)", ["ctrl+s"]),
    "app.session.toggleNamedFilter": ("/resume: named sessions only, or all", ["ctrl+n"]),
    "app.session.togglePath": ("/resume: show or hide the session files' paths", ["ctrl+p"]),
    "app.session.rename": ("/resume: rename the highlighted session", ["ctrl+r"]),
    "app.session.delete": ("/resume: delete the highlighted session (into the trash folder)", ["ctrl+d"]),
    "app.session.deleteNoninvasive": (
        "/resume: with an empty search, delete the highlighted session",
        ["ctrl+backspace"],
    ),
}
"""pi id → (description, default keys) of the keys lists and pickers bind: Textual bindings with these
ids in the dialogs and screens, given their keys through the app's keymap like the app keys (the same
``keybindings.json``; ``[]`` unbinds). The selection keys also move in the editor's completion menu."""

SCREEN_SCOPES: dict[str, frozenset[str]] = {
    "/tree": frozenset(pi_id for pi_id in LIST_KEYS if pi_id.startswith("app.tree.")),
    "/resume": frozenset(pi_id for pi_id in LIST_KEYS if pi_id.startswith("app.session.")),
}
"""The screen-only keys, by the screen that binds them. A key the user gives one of them is taken from
the other keys of that screen that have it by default (the user's choice wins there); no extension
shortcut is refused for them (they act on their screen only, as pi's picker keys)."""

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
    "selectUp": "tui.select.up",
    "selectDown": "tui.select.down",
    "selectPageUp": "tui.select.pageUp",
    "selectPageDown": "tui.select.pageDown",
    "selectConfirm": "tui.select.confirm",
    "selectCancel": "tui.select.cancel",
    "pasteImage": "app.clipboard.pasteImage",
    "treeFoldOrUp": "app.tree.foldOrUp",
    "treeUnfoldOrDown": "app.tree.unfoldOrDown",
    "treeEditLabel": "app.tree.editLabel",
    "treeToggleLabelTimestamp": "app.tree.toggleLabelTimestamp",
    "toggleSessionPath": "app.session.togglePath",
    "toggleSessionSort": "app.session.toggleSort",
    "toggleSessionNamedFilter": "app.session.toggleNamedFilter",
    "renameSession": "app.session.rename",
    "deleteSession": "app.session.delete",
    "deleteSessionNoninvasive": "app.session.deleteNoninvasive",
}


EDITOR_DEFAULTS: dict[str, tuple[str, list[str]]] = {
    "tui.input.submit": ("submit", ["enter"]),
    "tui.input.newLine": ("newLine", ["shift+enter", "ctrl+j", "ctrl+enter"]),
    "tui.input.tab": ("tab", ["tab"]),
    "app.message.followUp": ("followUp", ["alt+enter"]),
    "tui.input.copy": ("copy", ["ctrl+c"]),
    "app.clear": ("clear", ["ctrl+c"]),
    "app.exit": ("exit", ["ctrl+d"]),
    "app.message.dequeue": ("dequeue", ["alt+up"]),
    "tui.editor.cursorUp": ("cursorUp", ["up"]),
    "tui.editor.cursorDown": ("cursorDown", ["down"]),
    "tui.editor.historyPrevious": ("historyPrevious", []),
    "tui.editor.historyNext": ("historyNext", []),
    "tui.editor.pageUp": ("pageUp", ["pageUp", "ctrl+pageUp"]),
    "tui.editor.pageDown": ("pageDown", ["pageDown", "ctrl+pageDown"]),
    "tui.editor.cursorLeft": ("cursorLeft", ["left", "ctrl+b"]),
    "tui.editor.cursorRight": ("cursorRight", ["right", "ctrl+f"]),
    "tui.editor.cursorWordLeft": ("cursorWordLeft", ["alt+left", "ctrl+left", "alt+b"]),
    "tui.editor.cursorWordRight": ("cursorWordRight", ["alt+right", "ctrl+right", "alt+f"]),
    "tui.editor.cursorLineStart": ("cursorLineStart", ["home", "ctrl+home", "ctrl+a"]),
    "tui.editor.cursorLineEnd": ("cursorLineEnd", ["end", "ctrl+end", "ctrl+e"]),
    "tui.editor.jumpForward": ("jumpForward", ["ctrl+]"]),
    "tui.editor.jumpBackward": ("jumpBackward", ["ctrl+alt+]"]),
    "tui.editor.deleteCharBackward": ("deleteCharBackward", ["backspace"]),
    "tui.editor.deleteCharForward": ("deleteCharForward", ["delete", "ctrl+d"]),
    "tui.editor.deleteWordBackward": ("deleteWordBackward", ["ctrl+w", "alt+backspace"]),
    "tui.editor.deleteWordForward": ("deleteWordForward", ["alt+d", "alt+delete"]),
    "tui.editor.deleteToLineStart": ("deleteToLineStart", ["ctrl+u"]),
    "tui.editor.deleteToLineEnd": ("deleteToLineEnd", ["ctrl+k"]),
    "tui.editor.yank": ("yank", ["ctrl+y"]),
    "tui.editor.yankPop": ("yankPop", ["alt+y"]),
    "tui.editor.undo": ("undo", ["ctrl+-"]),
}
"""pi id → (editor action, default keys): the keys the prompt editor handles itself (pi's names; the
Textual spelling comes from :func:`to_textual_key`)."""

EXTENSION_PROOF_EDITOR_ACTIONS = frozenset({"submit", "followUp", "clear", "exit", "deleteToLineEnd"})
"""Editor actions whose keys no extension shortcut may take (pi reserves the same ones): sending,
clearing and quitting (Ctrl+C twice, Ctrl+D on an empty editor) must always work."""


EDITOR_DESCRIPTIONS: dict[str, str] = {
    "tui.input.submit": "Send (while the agent works: steer)",
    "app.message.followUp": "Queue a follow-up",
    "tui.input.newLine": "New line",
    "tui.input.tab": "Complete (a path, a command)",
    "app.message.dequeue": "Bring queued messages back to the editor",
    "tui.input.copy": "Copy the text selected on screen",
    "app.clear": "Clear the editor; twice quits",
    "app.exit": "Quit (empty editor)",
    "tui.editor.cursorUp": "Cursor up; on the first line: the previous prompt",
    "tui.editor.cursorDown": "Cursor down; on the last line: the next prompt",
    "tui.editor.historyPrevious": "The previous prompt, wherever the cursor is",
    "tui.editor.historyNext": "The next prompt, wherever the cursor is",
    "tui.editor.pageUp": "Cursor a page up",
    "tui.editor.pageDown": "Cursor a page down",
    "tui.editor.cursorLeft": "Cursor left",
    "tui.editor.cursorRight": "Cursor right",
    "tui.editor.cursorWordLeft": "Word left",
    "tui.editor.cursorWordRight": "Word right",
    "tui.editor.cursorLineStart": "Line start",
    "tui.editor.cursorLineEnd": "Line end",
    "tui.editor.jumpForward": "Jump to the character typed next (forward)",
    "tui.editor.jumpBackward": "Jump to the character typed next (backward)",
    "tui.editor.deleteCharBackward": "Delete the character before the cursor",
    "tui.editor.deleteCharForward": "Delete the character under the cursor",
    "tui.editor.deleteWordBackward": "Kill the word before the cursor",
    "tui.editor.deleteWordForward": "Kill the word after the cursor",
    "tui.editor.deleteToLineStart": "Kill to the line start",
    "tui.editor.deleteToLineEnd": "Kill to the line end",
    "tui.editor.yank": "Yank (paste the last killed text)",
    "tui.editor.yankPop": "After a yank: replace it with the kill before",
    "tui.editor.undo": "Undo",
}
"""What each editor action does, for ``/hotkeys`` (in this order)."""

_FIXED_EDITOR_KEYS: list[tuple[str, str]] = [
    ("/", "Commands"),
    ("@", "Attach a file path"),
    ("!cmd / !!cmd", "Run a shell command (!! keeps it out of the context)"),
]

_OLD_EDITOR_NAMES = {
    "submit": "tui.input.submit",
    "newLine": "tui.input.newLine",
    "followUp": "app.message.followUp",
    "clear": "app.clear",
    "exit": "app.exit",
    "dequeue": "app.message.dequeue",
    **{
        name: f"tui.editor.{name}"
        for name in (
            "cursorLeft cursorRight cursorWordLeft cursorWordRight cursorLineStart cursorLineEnd jumpForward "
            "jumpBackward deleteCharBackward deleteCharForward deleteWordBackward deleteWordForward "
            "deleteToLineStart deleteToLineEnd yank yankPop undo"
        ).split()
    },
}


def editor_key_actions(agent_dir: Path | None) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """Textual key → the editor actions it runs (tried in order until one applies), from the defaults
    and ``keybindings.json``.

    A user value replaces the default keys of that action (``[]`` unbinds it), and a key the user bound
    is taken away from every default that had it (pi's "overrides shadow conflicting defaults").
    """
    keys = {pi_id: [to_textual_key(k) for k in default] for pi_id, (_, default) in EDITOR_DEFAULTS.items()}
    warnings: list[str] = []
    user: set[str] = set()
    path = agent_dir / "keybindings.json" if agent_dir else None
    if path is not None and path.is_file():
        try:
            data = json_safe.loads(path.read_text(encoding="utf-8"))
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
            user.add(pi_id)
    user_keys = {key for pi_id in user for key in keys[pi_id]}
    actions: dict[str, list[str]] = {}
    for pi_id, bound in keys.items():
        for key in bound:
            if pi_id not in user and key in user_keys:
                continue
            for alias in _ALIASES.get(key, (key,)):
                chosen = actions.setdefault(canonical_key(alias), [])
                if EDITOR_DEFAULTS[pi_id][0] not in chosen:
                    chosen.append(EDITOR_DEFAULTS[pi_id][0])
    return {key: tuple(names) for key, names in actions.items()}, warnings


_ALIASES = {"ctrl+minus": ("ctrl+minus", "ctrl+underscore")}
"""Keys a classic terminal sends as another: Ctrl+- arrives as Ctrl+_ (0x1f) without the kitty protocol."""

_CHARACTER_NAMES = {
    "]": "right_square_bracket",
    "[": "left_square_bracket",
    "-": "minus",
    "_": "underscore",
    "/": "slash",
    "\\": "backslash",
    "+": "plus",
    ".": "full_stop",
    ",": "comma",
    ";": "semicolon",
    "=": "equals_sign",
    "'": "apostrophe",
    "`": "grave_accent",
}
"""pi writes ``ctrl+]``; Textual names that key ``ctrl+right_square_bracket``."""


def editor_key_rows(key_actions: dict[str, tuple[str, ...]] | None = None) -> list[tuple[str, str]]:
    """``/hotkeys`` rows for the editor: the effective keys of each action (defaults when None), then
    the keys that cannot be rebound."""
    if key_actions is None:
        key_actions = editor_key_actions(None)[0]
    rows = []
    for pi_id, description in EDITOR_DESCRIPTIONS.items():
        rows.append((", ".join(editor_action_keys(key_actions, pi_id)) or "(unbound)", description))
    return rows + _FIXED_EDITOR_KEYS


def editor_action_keys(key_actions: dict[str, tuple[str, ...]], pi_id: str) -> list[str]:
    """The keys that run the editor action ``pi_id`` (``app.message.dequeue`` …) in ``key_actions``,
    written as pi writes keys (``alt+up``), its default keys first in their order."""
    action, default = EDITOR_DEFAULTS[pi_id]
    order = [canonical_key(to_textual_key(k)) for k in default]
    bound = [key for key, names in key_actions.items() if action in names and key != "ctrl+underscore"]
    bound.sort(key=lambda k: order.index(k) if k in order else len(order))
    return [_display_key(k) for k in bound]


def key_display(keys: list[str], *, capitalize: bool = False) -> str:
    """Keys as pi's hints write them: ``alt+up/ctrl+q``, or ``Alt+Up/Ctrl+Q`` capitalised (pi's key
    display, used where a sentence names the key); empty when nothing is bound."""
    if not capitalize:
        return "/".join(keys)
    return "/".join("+".join(part[:1].upper() + part[1:] for part in key.split("+")) for key in keys)


def _display_key(key: str) -> str:
    *mods, name = key.split("+")
    short = {v: k for k, v in _CHARACTER_NAMES.items()}.get(name, name)
    order = [m for m in ("ctrl", "alt", "shift", "super") if m in mods] + [
        m for m in mods if m not in ("ctrl", "alt", "shift", "super")
    ]
    return "+".join([*order, short])


def to_textual_key(key: str) -> str:
    """pi's ``shift+ctrl+p`` / ``pageUp`` → Textual's ``ctrl+shift+p`` / ``pageup``."""
    parts = [p.strip().lower() for p in key.split("+") if p.strip()]
    if not parts:
        return ""
    *mods, name = parts
    name = _CHARACTER_NAMES.get(name, name)
    order = [m for m in ("ctrl", "alt", "shift", "super") if m in mods]
    return "+".join([*order, name])


def load_keymap(agent_dir: Path | None) -> tuple[dict[str, list[str]], list[str]]:
    """The effective app keymap (action id → keys) and warnings about the user's file."""
    keymap = {k: list(v) for k, v in DEFAULT_KEYS.items()}
    keymap.update({pi_id: list(default) for pi_id, (_, default) in LIST_KEYS.items()})
    warnings: list[str] = []
    path = agent_dir / "keybindings.json" if agent_dir else None
    if path is None or not path.is_file():
        return keymap, warnings
    try:
        data = json_safe.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return keymap, [f"Ignoring {path}: {exc}"]
    if not isinstance(data, dict):
        return keymap, [f"Ignoring {path}: expected an object of action → key(s)"]
    user: set[str] = set()
    for name, value in data.items():
        action = _OLD_NAMES.get(name, name)
        if action not in APP_ACTIONS and action not in LIST_KEYS:
            continue  # the editor's keys are its own business (`editor_key_actions`)
        if action != name and action in data:
            continue  # pi: the new name wins over the old one
        keys = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if keys is None or not all(isinstance(k, str) for k in keys):
            warnings.append(f"{path}: {name} must be a key or a list of keys")
            continue
        keymap[action] = [to_textual_key(k) for k in keys if to_textual_key(k)]
        user.add(action)
    for scope in SCREEN_SCOPES.values():
        taken = {key for pi_id in scope & user for key in keymap[pi_id]}
        for pi_id in scope - user:
            keymap[pi_id] = [key for key in keymap[pi_id] if key not in taken]
    return keymap, warnings


UNBOUND_KEY = "pi.unbound"
"""The key every app binding is declared with: no terminal key has this name (Textual names a ``.`` typed
``full_stop``), so a binding the keymap gives no key is never pressed. Textual's keymap cannot unbind (it
skips an id mapped to an empty string and keeps the binding's own key), so the bindings have no key of
their own and the keymap gives each its effective keys, an unbound action none."""


def app_bindings() -> list[Binding]:
    """pi's app actions as priority bindings (they win over the editor's own keys, as in pi), each with
    its pi id and no real key: :func:`textual_keymap` gives them their keys."""
    return [
        Binding(UNBOUND_KEY, action, description, show=False, priority=True, id=pi_id)
        for pi_id, (action, description) in APP_ACTIONS.items()
    ]


def textual_keymap(keymap: dict[str, list[str]]) -> dict[str, str]:
    """The effective keymap (pi id → keys, from :func:`load_keymap`) as Textual's ``App.set_keymap``
    takes it (binding id → comma-separated keys). An unbound key is given `UNBOUND_KEY`: a list key's
    binding is declared on its default keys, which the keymap cannot take away otherwise, and so is a
    screen's binding of an app action (``/tree``'s copy is ``app.message.copy``)."""
    mapped = {pi_id: ",".join(keymap.get(pi_id, [])) or UNBOUND_KEY for pi_id in APP_ACTIONS}
    for pi_id in LIST_KEYS:
        mapped[pi_id] = ",".join(_with_typed_capitals(keymap.get(pi_id, []))) or UNBOUND_KEY
    return mapped


def _with_typed_capitals(keys: list[str]) -> list[str]:
    """``keys`` and, for each ``shift+<letter>``, the capital letter: a classic terminal sends Shift+L as
    a typed ``L``, the kitty protocol may name it ``shift+l``."""
    out = list(keys)
    for key in keys:
        mod, _, name = key.partition("+")
        if mod == "shift" and len(name) == 1 and name.isalpha() and name.upper() not in out:
            out.append(name.upper())
    return out


def list_binding(pi_id: str, action: str, *, show: bool = False, priority: bool = True) -> Binding:
    """A dialog's or screen's binding of list key ``pi_id`` (`LIST_KEYS`), on its default keys; the
    app's keymap gives it the user's keys."""
    description, default = LIST_KEYS[pi_id]
    keys = ",".join(_with_typed_capitals(default))
    return Binding(keys, action, description, show=show, priority=priority, id=pi_id)


@runtime_checkable
class KeymapHost(Protocol):
    """An app with pi's effective keymap (`PiApp`): the screens' help lines name the user's keys."""

    keymap: dict[str, list[str]]


def keymap_of(app: object) -> dict[str, list[str]] | None:
    """``app``'s effective keymap; None for a host app without pi's keys (the defaults apply)."""
    return app.keymap if isinstance(app, KeymapHost) else None


def screen_keys(keymap: dict[str, list[str]] | None, pi_id: str) -> list[str]:
    """The effective keys of ``pi_id`` (a list key, or an app action a screen binds too, as ``/tree``
    binds ``app.message.copy``) in ``keymap`` (its defaults when the keymap has no entry: a host app
    without pi's keys), as pi writes keys (``ctrl+shift+o``)."""
    keys = keymap.get(pi_id) if keymap is not None else None
    if keys is None:
        keys = LIST_KEYS[pi_id][1] if pi_id in LIST_KEYS else DEFAULT_KEYS[pi_id]
    return [_display_key(key) for key in keys]


_ARROWS = {"left": "←", "right": "→", "up": "↑", "down": "↓"}


def key_hint(keymap: dict[str, list[str]] | None, *pi_ids: str) -> str:
    """A help line's keys for ``pi_ids`` as pi's hints write them: the first key of each (unbound ones
    left out), one modifier prefix shared (``ctrl+←/→``, ``ctrl+d/t/u``), arrows as arrows. Empty when
    none is bound."""
    firsts = [keys[0] for keys in (screen_keys(keymap, pi_id) for pi_id in pi_ids) if keys]
    if not firsts:
        return ""
    split = [key.rpartition("+") for key in firsts]
    prefix = split[0][0]
    if len(firsts) > 1 and prefix and all(head == prefix for head, _, _ in split):
        text = prefix + "+" + "/".join(_ARROWS.get(name, name) for _, _, name in split)
    else:
        text = "/".join((head + "+" if head else "") + _ARROWS.get(name, name) for head, _, name in split)
    return text


def list_key_actions(keymap: dict[str, list[str]]) -> dict[str, str]:
    """Textual key → the selection action it runs in the editor's completion menu (``up``, ``down``,
    ``confirm``, ``cancel``), from the effective keymap."""
    actions: dict[str, str] = {}
    for pi_id in ("tui.select.up", "tui.select.down", "tui.select.confirm", "tui.select.cancel"):
        for key in keymap.get(pi_id, LIST_KEYS[pi_id][1]):
            actions.setdefault(canonical_key(key), pi_id.rsplit(".", 1)[1])
    return actions


def hotkey_rows(
    keymap: dict[str, list[str]], editor_actions: dict[str, tuple[str, ...]] | None = None
) -> list[tuple[str, str]]:
    """``/hotkeys`` rows for the main screen: every app action's effective keys, then the editor's
    (defaults when ``editor_actions`` is None)."""
    app_rows = [
        (", ".join(keymap.get(action, [])) or "(unbound)", description)
        for action, (_, description) in APP_ACTIONS.items()
    ]
    return app_rows + editor_key_rows(editor_actions)


def canonical_key(key: str) -> str:
    """A Textual key with its modifiers in one order (alt, ctrl, meta, shift, super): the kitty protocol
    sorts them, the classic one writes ``ctrl+shift``; the editor looks keys up in this form."""
    *mods, name = key.split("+")
    return "+".join([*sorted(mods), name]) if len(mods) > 1 else key
