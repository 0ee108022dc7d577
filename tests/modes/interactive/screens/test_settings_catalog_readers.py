"""Every setting `/settings` shows must change something: its reader follows the file, and code uses it.

Two checks per catalog entry, so a setting that is written but never read fails here:

1. Its declared reader (a `SettingsManager` property) returns something else once the setting is written
   with a value other than its default: the reader really reads that key.
2. Code outside the settings modules (the file IO, the schema, the catalog and the screen, which only
   show and write) uses the reader's name as an attribute, or, for a setting read straight from the
   file, passes its key to the call that reads it: ``resource_entries("themes")`` for a resource list,
   ``.get("context")`` and ``.get("detachHistory")`` in one module for a group's field. A setting whose
   accessor nothing calls fails here: that was the state of the seven settings that did nothing (and of
   ``themes``, which no theme lookup read).

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

# The scan parses the whole package (~1-2 s of CPU) once per process: one worker of a run takes these tests
# (spread over three, each parsed it and the first test on each took ~10 s on a loaded machine).
pytestmark = pytest.mark.xdist_group("settings-readers-parse")

PACKAGE = Path(pi_tui.__file__).parent
# Only show, parse and write settings: a use here does not count as reading one.
SETTINGS_MODULES = {
    PACKAGE / "resources" / "settings.py",
    PACKAGE / "resources" / "settings_store.py",
    PACKAGE / "resources" / "settings_schema.py",
    PACKAGE / "modes" / "interactive" / "screens" / "settings_catalog.py",
    PACKAGE / "modes" / "interactive" / "screens" / "settings_screen.py",
}


READING_CALLS = {"get", "resource_entries", "_settings_filter"}
"""Calls that read a raw setting by its key: a dict's ``get``, ``SettingsManager.resource_entries`` and
the resource loader's wrapper around it."""


@cache
def _names_used() -> tuple[frozenset[str], tuple[frozenset[tuple[str, str]], ...]]:
    """Attribute names in pi_tui's code outside the settings modules, and per module the string keys
    passed to a reading call, as (call, key)."""
    attributes: set[str] = set()
    reads: list[frozenset[tuple[str, str]]] = []
    for path in PACKAGE.rglob("*.py"):
        if path in SETTINGS_MODULES:
            continue
        module_reads: set[tuple[str, str]] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                attributes.add(node.attr)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                first = node.args[0]
                if node.func.attr in READING_CALLS and isinstance(first, ast.Constant):
                    module_reads.add((node.func.attr, str(first.value)))
        reads.append(frozenset(module_reads))
    return frozenset(attributes), tuple(reads)


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
    attributes, reads = _names_used()
    if setting.reader is not None:
        name = setting.reader.split(".")[-1]
        assert name in attributes, f"{setting.key} is shown in /settings but nothing uses .{name}"
        return
    group, _, field = setting.key.partition(".")
    if field:
        wanted = {("get", group), ("get", field)}
        assert any(wanted <= module for module in reads), f"{setting.key} is shown but no code reads it"
    else:
        entries = {("resource_entries", group), ("_settings_filter", group)}
        assert any(entries & module for module in reads), (
            f"{setting.key} is shown but nothing reads its entries"
        )


def test_the_scan_sees_a_setting_nothing_reads() -> None:
    attributes, reads = _names_used()
    assert "hide_thinking_block" in attributes  # a name the app does use …
    assert "show_no_such_setting" not in attributes  # … and one it does not
    assert any(("resource_entries", "extensions") in module for module in reads)
    assert not any(("resource_entries", "noSuchList") in module for module in reads)
