from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pi_tui.resources.settings import ProjectNotTrustedError, SettingsManager
from pi_tui.resources.settings_schema import (
    BranchSummarySettings,
    CompactionSettings,
    ImageSettings,
    RetrySettings,
    migrate_settings,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_defaults_without_any_file(agent_dir: Path, project: Path) -> None:
    settings = SettingsManager(agent_dir, project)
    assert settings.compaction == CompactionSettings(True, 16384, 20000)
    assert settings.retry == RetrySettings(True, 3, 2000, 60000)
    assert settings.branch_summary == BranchSummarySettings(16384, False)
    assert settings.images == ImageSettings(auto_resize=True, block_images=False)
    assert settings.terminal.show_images is True and settings.terminal.clear_on_shrink is False
    assert settings.markdown.code_block_indent == "  "
    assert settings.steering_mode == "one-at-a-time"
    assert settings.follow_up_mode == "one-at-a-time"
    assert settings.default_provider is None and settings.default_model is None
    assert settings.default_thinking_level is None
    assert settings.theme is None
    assert settings.quiet_startup is False
    assert settings.hide_thinking_block is False
    assert settings.shell_path is None and settings.shell_command_prefix is None
    assert settings.enable_skill_commands is True
    assert settings.double_escape_action == "tree"
    assert settings.tree_filter_mode == "default"
    assert settings.editor_padding_x == 0
    assert settings.autocomplete_max_visible == 5
    assert settings.transport == "sse"
    assert settings.packages == []
    assert (settings.extensions, settings.skills, settings.prompts, settings.themes) == ([], [], [], [])
    assert settings.errors == []


def test_project_overrides_global_and_objects_merge_one_level(agent_dir: Path, project: Path) -> None:
    write_json(
        agent_dir / "settings.json",
        {"theme": "dark", "compaction": {"enabled": False, "reserveTokens": 1000}, "skills": ["a"]},
    )
    write_json(
        project / ".pi" / "settings.json",
        {"theme": "light", "compaction": {"keepRecentTokens": 5}, "skills": ["b"]},
    )
    settings = SettingsManager(agent_dir, project)
    assert settings.theme == "light"
    assert settings.compaction == CompactionSettings(False, 1000, 5)
    assert settings.skills == ["b"]


def test_nested_objects_merge_recursively_as_pi_0_87_merges_them(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"retry": {"provider": {"a": 1, "b": 2}, "list": [1, 2]}})
    write_json(project / ".pi" / "settings.json", {"retry": {"provider": {"a": 9}, "list": [3]}})
    settings = SettingsManager(agent_dir, project)
    assert settings.get("retry") == {"provider": {"a": 9, "b": 2}, "list": [3]}  # arrays are replaced


def test_values_of_the_wrong_type_fall_back_to_defaults(agent_dir: Path, project: Path) -> None:
    write_json(
        agent_dir / "settings.json",
        {
            "compaction": {"enabled": "no", "reserveTokens": True},
            "steeringMode": "sometimes",
            "editorPaddingX": 9,
            "autocompleteMaxVisible": 1,
            "quietStartup": 1,
        },
    )
    settings = SettingsManager(agent_dir, project)
    assert settings.compaction == CompactionSettings()
    assert settings.steering_mode == "one-at-a-time"
    assert settings.editor_padding_x == 3
    assert settings.autocomplete_max_visible == 3
    assert settings.quiet_startup is False
    # each ignored value is named once, with the file, what was expected and what is used instead
    path = agent_dir / "settings.json"
    assert settings.drain_errors() == [
        f'Settings {path}: steeringMode: expected one of one-at-a-time, all, got "sometimes"; using one-at-a-time',
        f"Settings {path}: quietStartup: expected true or false, got 1; using false",
        f'Settings {path}: compaction.enabled: expected true or false, got "no"; using true',
        f"Settings {path}: compaction.reserveTokens: expected a whole number, 0 or more, got true; using 16384",
    ]
    assert settings.compaction.enabled is True and settings.drain_errors() == []


def test_a_negative_count_or_a_group_that_is_not_an_object_is_named_and_ignored(
    agent_dir: Path, project: Path
) -> None:
    write_json(agent_dir / "settings.json", {"compaction": {"keepRecentTokens": -3}, "retry": 5})
    settings = SettingsManager(agent_dir, project)
    assert settings.compaction.keep_recent_tokens == CompactionSettings().keep_recent_tokens
    assert settings.retry == RetrySettings()
    errors = settings.drain_errors()
    assert len(errors) == 2
    assert errors[0].endswith(
        "compaction.keepRecentTokens: expected a whole number, 0 or more, got -3; using 20000"
    )
    assert errors[1].endswith("retry: expected an object, got 5; using the defaults")


def test_environment_switches_hardware_cursor_and_clear_on_shrink(
    agent_dir: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = SettingsManager(agent_dir, project)
    assert settings.show_hardware_cursor is False
    monkeypatch.setenv("PI_HARDWARE_CURSOR", "1")
    monkeypatch.setenv("PI_CLEAR_ON_SHRINK", "1")
    assert settings.show_hardware_cursor is True
    assert settings.terminal.clear_on_shrink is True


def test_writes_go_to_global_settings_by_default(agent_dir: Path, project: Path) -> None:
    settings = SettingsManager(agent_dir, project)
    settings.set("theme", "dark")
    assert read_json(agent_dir / "settings.json") == {"theme": "dark"}
    assert not (project / ".pi").exists()
    assert settings.theme == "dark"


def test_project_dir_is_created_only_on_a_project_write(agent_dir: Path, project: Path) -> None:
    settings = SettingsManager(agent_dir, project)
    settings.reload()
    assert not (project / ".pi").exists()
    settings.set("skills", ["./local"], scope="project")
    assert read_json(project / ".pi" / "settings.json") == {"skills": ["./local"]}


def test_external_edits_to_other_keys_survive_a_write(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"theme": "dark"})
    settings = SettingsManager(agent_dir, project)
    write_json(agent_dir / "settings.json", {"theme": "dark", "defaultModel": "edited-elsewhere"})
    settings.set("quietStartup", True)
    assert read_json(agent_dir / "settings.json") == {
        "theme": "dark",
        "defaultModel": "edited-elsewhere",
        "quietStartup": True,
    }


def test_in_memory_value_wins_for_the_key_being_written(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"theme": "dark"})
    settings = SettingsManager(agent_dir, project)
    write_json(agent_dir / "settings.json", {"theme": "external"})
    settings.set("theme", "mine")
    assert read_json(agent_dir / "settings.json") == {"theme": "mine"}


def test_nested_writes_only_touch_the_changed_field(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"compaction": {"reserveTokens": 100}})
    settings = SettingsManager(agent_dir, project)
    write_json(agent_dir / "settings.json", {"compaction": {"reserveTokens": 100, "keepRecentTokens": 7}})
    settings.set_compaction_enabled(False)
    assert read_json(agent_dir / "settings.json") == {
        "compaction": {"reserveTokens": 100, "keepRecentTokens": 7, "enabled": False}
    }


def test_two_managers_writing_different_keys_keep_both(agent_dir: Path, project: Path) -> None:
    first = SettingsManager(agent_dir, project)
    second = SettingsManager(agent_dir, project)
    first.set("theme", "dark")
    second.set_default_model("anthropic", "claude-x")
    assert read_json(agent_dir / "settings.json") == {
        "theme": "dark",
        "defaultProvider": "anthropic",
        "defaultModel": "claude-x",
    }


def test_setting_none_removes_the_key(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"theme": "dark", "quietStartup": True})
    settings = SettingsManager(agent_dir, project)
    settings.unset("theme")
    settings.set_nested("compaction", "enabled", None)
    assert read_json(agent_dir / "settings.json") == {"quietStartup": True, "compaction": {}}
    assert settings.theme is None


def test_unknown_keys_are_preserved_on_write(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"futureFeature": {"x": [1, 2]}, "theme": "dark"})
    settings = SettingsManager(agent_dir, project)
    settings.set_steering_mode("all")
    data = read_json(agent_dir / "settings.json")
    assert data["futureFeature"] == {"x": [1, 2]}
    assert settings.get("futureFeature") == {"x": [1, 2]}
    assert settings.steering_mode == "all"


def test_unparsable_file_is_never_overwritten_and_reported(agent_dir: Path, project: Path) -> None:
    (agent_dir / "settings.json").write_text("{ not json", encoding="utf-8")
    settings = SettingsManager(agent_dir, project)
    assert len(settings.errors) == 1
    assert "settings.json" in settings.errors[0]
    settings.set("theme", "dark")
    assert (agent_dir / "settings.json").read_text(encoding="utf-8") == "{ not json"
    assert settings.theme == "dark"
    assert len(settings.errors) == 2


def test_file_broken_after_load_is_not_overwritten(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"theme": "dark"})
    settings = SettingsManager(agent_dir, project)
    (agent_dir / "settings.json").write_text("[1, 2]", encoding="utf-8")
    settings.set("quietStartup", True)
    assert (agent_dir / "settings.json").read_text(encoding="utf-8") == "[1, 2]"
    assert any("JSON object" in error for error in settings.errors)


def test_reload_keeps_previous_settings_when_the_file_turns_invalid(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"theme": "dark"})
    settings = SettingsManager(agent_dir, project)
    (agent_dir / "settings.json").write_text("{oops", encoding="utf-8")
    settings.reload()
    assert settings.theme == "dark"
    assert settings.drain_errors()
    assert settings.errors == []


def test_reload_picks_up_external_changes(agent_dir: Path, project: Path) -> None:
    settings = SettingsManager(agent_dir, project)
    write_json(agent_dir / "settings.json", {"theme": "light"})
    settings.reload()
    assert settings.theme == "light"


def test_bom_and_blank_files_are_accepted(agent_dir: Path, project: Path) -> None:
    (agent_dir / "settings.json").write_text('\ufeff{"theme": "dark"}', encoding="utf-8")
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text("  \n", encoding="utf-8")
    settings = SettingsManager(agent_dir, project)
    assert settings.theme == "dark"
    assert settings.errors == []


def test_old_keys_are_migrated_on_load() -> None:
    migrated = migrate_settings(
        {
            "queueMode": "all",
            "websockets": True,
            "skills": {"enableSkillCommands": False, "customDirectories": ["~/s"]},
        }
    )
    assert migrated == {
        "steeringMode": "all",
        "transport": "websocket",
        "enableSkillCommands": False,
        "skills": ["~/s"],
    }


def test_migration_keeps_current_keys_and_drops_empty_skill_objects() -> None:
    migrated = migrate_settings(
        {"queueMode": "all", "steeringMode": "one-at-a-time", "websockets": False, "skills": {}}
    )
    assert migrated == {"steeringMode": "one-at-a-time", "transport": "sse"}


def test_migrated_settings_are_read_through_accessors_and_written_back(
    agent_dir: Path, project: Path
) -> None:
    write_json(agent_dir / "settings.json", {"queueMode": "all"})
    settings = SettingsManager(agent_dir, project)
    assert settings.steering_mode == "all"
    settings.set("theme", "dark")
    assert read_json(agent_dir / "settings.json") == {"steeringMode": "all", "theme": "dark"}


def test_non_json_values_are_refused(agent_dir: Path, project: Path) -> None:
    settings = SettingsManager(agent_dir, project)
    with pytest.raises(TypeError, match="JSON"):
        settings.set("theme", object())
    assert not (agent_dir / "settings.json").exists()


def test_invalid_modes_and_levels_are_refused(agent_dir: Path, project: Path) -> None:
    settings = SettingsManager(agent_dir, project)
    with pytest.raises(ValueError, match="queue mode"):
        settings.set_follow_up_mode("sometimes")
    with pytest.raises(ValueError, match="thinking level"):
        settings.set_default_thinking_level("extreme")
    settings.set_default_thinking_level("high")
    assert settings.default_thinking_level == "high"


def test_packages_accept_strings_and_filter_objects(agent_dir: Path, project: Path) -> None:
    write_json(
        agent_dir / "settings.json",
        {"packages": ["npm:a", {"source": "git:b", "skills": ["x"]}, {"nosource": 1}, 3]},
    )
    settings = SettingsManager(agent_dir, project)
    assert settings.packages == ["npm:a", {"source": "git:b", "skills": ["x"]}]


def test_shell_command_prefix_is_read(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"shellCommandPrefix": "shopt -s expand_aliases"})
    assert SettingsManager(agent_dir, project).shell_command_prefix == "shopt -s expand_aliases"


def test_untrusted_project_settings_are_ignored_and_not_written(agent_dir: Path, project: Path) -> None:
    write_json(project / ".pi" / "settings.json", {"theme": "project-theme"})
    settings = SettingsManager(agent_dir, project, project_trusted=False)
    assert settings.theme is None
    with pytest.raises(ProjectNotTrustedError):
        settings.set("theme", "x", scope="project")
    settings.set_project_trusted(True)
    assert settings.theme == "project-theme"


def test_trusting_a_project_is_stored_in_global_settings(agent_dir: Path, project: Path) -> None:
    settings = SettingsManager(agent_dir, project, project_trusted=False)
    assert not settings.is_project_trusted()
    settings.trust_project()
    assert settings.is_project_trusted()
    assert settings.project_trusted
    assert read_json(agent_dir / "settings.json")["trustedProjects"] == [os.path.realpath(project)]
    assert SettingsManager(agent_dir, project).is_project_trusted(project)


def test_trust_covers_subdirectories_but_not_siblings(agent_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "code"
    (root / "app" / "src").mkdir(parents=True)
    (tmp_path / "code-other").mkdir()
    settings = SettingsManager(agent_dir, root)
    settings.trust_project(root)
    assert settings.is_project_trusted(root / "app" / "src")
    assert not settings.is_project_trusted(tmp_path / "code-other")
    settings.untrust_project(root)
    assert not settings.is_project_trusted(root / "app")


def test_a_project_cannot_mark_itself_trusted(agent_dir: Path, project: Path) -> None:
    write_json(project / ".pi" / "settings.json", {"trustedProjects": [str(project)]})
    settings = SettingsManager(agent_dir, project)
    assert not settings.is_project_trusted()


def test_resource_entries_are_additive_project_first_with_their_base_dirs(
    agent_dir: Path, project: Path
) -> None:
    write_json(agent_dir / "settings.json", {"skills": ["g1"], "prompts": ["gp"]})
    write_json(project / ".pi" / "settings.json", {"skills": ["p1", "!p2"]})
    entries = SettingsManager(agent_dir, project).resource_entries("skills")
    assert [(e.value, e.base_dir, e.scope) for e in entries] == [
        ("p1", project / ".pi", "project"),
        ("!p2", project / ".pi", "project"),
        ("g1", agent_dir, "global"),
    ]


def test_in_memory_manager_never_touches_disk(agent_dir: Path, project: Path) -> None:
    settings = SettingsManager.in_memory({"queueMode": "all"}, {"theme": "light"}, cwd=project)
    settings.set("quietStartup", True)
    assert settings.steering_mode == "all"
    assert settings.theme == "light"
    assert settings.quiet_startup is True
    assert not (agent_dir / "settings.json").exists()


def test_an_in_memory_manager_answers_trust_questions_like_any_other(tmp_path: Path) -> None:
    manager = SettingsManager.in_memory({"defaultProjectTrust": "always"}, cwd=tmp_path)
    assert manager.is_project_trusted()
    manager.override_project_trust(False)
    assert not manager.is_project_trusted()
    assert not (tmp_path / ".pi").exists()
