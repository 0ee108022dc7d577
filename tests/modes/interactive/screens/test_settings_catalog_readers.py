"""Every setting `/settings` shows must change something: its reader follows the file, and code uses it.

Two checks per catalog entry, so a setting that is written but never read fails here:

1. Its declared reader (a `SettingsManager` property) returns something else once the setting is written
   with a value other than its default: the reader really reads that key.
2. Code outside the settings modules (the file IO, the schema, the catalog and the screen, which only
   show and write) uses the reader's name as an attribute, or, for a setting read straight from the file's
   dictionary, names its key in a string. A setting whose accessor nothing calls fails here: that was
   the state of the seven settings that did nothing.

A scan, not a run of every feature: the readers live in different layers (the agent loop, the tree
screen, the editor), and each has its own behaviour test next to it.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import pi_tui
from pi_tui.modes.interactive.screens.settings_catalog import CATALOG, Setting, write
from pi_tui.resources.settings import SettingsManager

PACKAGE = Path(pi_tui.__file__).parent
# Only show, parse and write settings: a use here does not count as reading one.
SETTINGS_MODULES = {
    PACKAGE / "resources" / "settings.py",
    PACKAGE / "resources" / "settings_schema.py",
    PACKAGE / "modes" / "interactive" / "screens" / "settings_catalog.py",
    PACKAGE / "modes" / "interactive" / "screens" / "settings_screen.py",
}


@cache
def _names_used() -> tuple[frozenset[str], frozenset[str]]:
    """Attribute names and string constants in pi_tui's code outside the settings modules."""
    attributes: set[str] = set()
    strings: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if path in SETTINGS_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                attributes.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
    return frozenset(attributes), frozenset(strings)


def _read(settings: SettingsManager, reader: str) -> Any:
    value: Any = settings
    for name in reader.split("."):
        value = getattr(value, name)
    return value


def _other_value(setting: Setting) -> Any:
    if setting.kind == "bool":
        return not setting.default
    if setting.kind == "int":
        candidate = setting.default + 1
        return candidate if setting.maximum is None or candidate <= setting.maximum else setting.default - 1
    if setting.kind == "choice":
        return next(choice for choice in setting.choices if choice != setting.default)
    if setting.kind == "theme":
        return "light" if setting.default != "light" else "dark"
    if setting.kind in ("list", "readonly"):
        return ["some-entry"]
    return "some-text"


@pytest.mark.parametrize("setting", [s for s in CATALOG if s.reader is not None], ids=lambda s: s.key)
def test_the_declared_reader_follows_the_setting(setting: Setting, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PI_HARDWARE_CURSOR", raising=False)
    assert setting.reader is not None
    settings = SettingsManager.in_memory()
    before = _read(settings, setting.reader)
    write(settings, setting, _other_value(setting))
    assert _read(settings, setting.reader) != before, f"{setting.reader} does not read {setting.key}"


@pytest.mark.parametrize("setting", CATALOG, ids=lambda s: s.key)
def test_code_outside_the_settings_modules_reads_the_setting(setting: Setting) -> None:
    attributes, strings = _names_used()
    if setting.reader is not None:
        name = setting.reader.split(".")[-1]
        assert name in attributes, f"{setting.key} is shown in /settings but nothing uses .{name}"
    else:
        field = setting.key.split(".")[-1]
        assert field in strings, f"{setting.key} is shown in /settings but no code reads {field!r}"


def test_the_scan_sees_a_setting_nothing_reads() -> None:
    attributes, strings = _names_used()
    assert "hide_thinking_block" in attributes  # a name the app does use …
    assert (
        "show_no_such_setting" not in attributes and "noSuchSetting" not in strings
    )  # … and one it does not
