from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.models_json import ModelsJsonError, load_models_json
from pi_tui.modes.interactive.keys import load_keymap
from pi_tui.modes.interactive.theme import ThemeError, load_theme
from pi_tui.modes.prompt_history import PromptHistory
from pi_tui.packages.manifest import read_manifest
from pi_tui.resources.settings_io import UnreadableSettings, read_settings_file
from pi_tui.resources.trust_store import ProjectTrustStore
from pi_tui.util.json_safe import MAX_DEPTH

# A configuration file whose second line nests far too deeply (a value of one of its keys).
DEEP = '{\n  "theme": ' + "[" * 100_000 + "]" * 100_000 + "\n}\n"
TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels"


def test_settings_json_too_deep_is_an_unreadable_settings_error(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(DEEP)
    with pytest.raises(UnreadableSettings, match=TOO_DEEP):
        read_settings_file(path)
    allowed = {"theme": "dark", "extra": json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))}
    path.write_text(json.dumps(allowed))
    assert read_settings_file(path)["theme"] == "dark"


def test_models_json_too_deep_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(DEEP.replace('"theme"', '"providers"'))
    with pytest.raises(ModelsJsonError) as caught:
        load_models_json(path, {})
    # line 2 is `  "providers": [[[…`: the object on line 1 is the first level
    column = len('  "providers": ') + MAX_DEPTH
    assert str(caught.value) == f"models.json error: {path}:2: invalid JSON: {TOO_DEEP} (column {column})"


def test_auth_json_too_deep_is_recorded_and_the_previous_keys_stay(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text('{"openai": {"type": "api_key", "key": "sk-1"}}')
    storage = AuthStorage(path)
    path.write_text(DEEP)
    storage.reload()
    assert storage.get("openai") == {"type": "api_key", "key": "sk-1"}
    assert storage.drain_errors() == [f"auth.json error: {path}:2: invalid JSON: {TOO_DEEP}"]


def test_trust_store_too_deep_counts_as_no_decision(tmp_path: Path) -> None:
    (tmp_path / "trust.json").write_text(DEEP)
    assert ProjectTrustStore(tmp_path).get(tmp_path) is None


def test_keybindings_json_too_deep_is_ignored_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(DEEP)
    keymap, warnings = load_keymap(tmp_path)
    assert keymap
    assert len(warnings) == 1 and TOO_DEEP in warnings[0]


def test_theme_too_deep_is_a_theme_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(DEEP)
    with pytest.raises(ThemeError, match=TOO_DEEP):
        load_theme(path)


def test_prompt_history_skips_a_deep_line_and_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text('"first"\n' + "[" * 100_000 + "]" * 100_000 + '\n"second"\n')
    assert PromptHistory(path).entries == ["first", "second"]


def test_package_manifest_too_deep_falls_back_to_the_conventional_folders(tmp_path: Path) -> None:
    (tmp_path / "pi-package.json").write_text(DEEP.replace('"theme"', '"extensions"'))
    entries, where, problems = read_manifest(tmp_path)
    assert entries is None and where == tmp_path / "pi-package.json"
    assert len(problems) == 1 and TOO_DEEP in problems[0]
