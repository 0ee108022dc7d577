from __future__ import annotations

import json
from pathlib import Path

from pi_tui.packages import package_resources

from .helpers import make_package


def _names(paths: list[Path], root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in paths]


def test_without_a_manifest_the_conventional_folders_are_used(tmp_path: Path) -> None:
    root = make_package(
        tmp_path / "pkg",
        {
            "extensions/alpha.py": "",
            "extensions/beta/__init__.py": "",
            "extensions/_helper.py": "",
            "skills/review/SKILL.md": "---\nname: review\ndescription: Review\n---\n",
            "prompts/fix.md": "Fix it",
            "themes/night.json": "{}",
            "themes/notes.txt": "",
            "src/other.py": "",
        },
    )
    found = package_resources(root)
    assert found.manifest is None
    assert _names(found.extensions, root) == ["extensions/alpha.py", "extensions/beta"]
    assert _names(found.skills, root) == ["skills"]
    assert _names(found.prompts, root) == ["prompts"]
    assert _names(found.themes, root) == ["themes/night.json"]


def test_a_manifest_names_what_is_provided_and_unnamed_kinds_fall_back_to_their_folders(
    tmp_path: Path,
) -> None:
    root = make_package(
        tmp_path / "pkg",
        {
            "pi-package.json": json.dumps({"extensions": ["src/guard.py", "src/more/*.py"], "prompts": []}),
            "src/guard.py": "",
            "src/more/a.py": "",
            "src/more/b.py": "",
            "extensions/ignored.py": "",
            "prompts/fix.md": "",
            "skills/x/SKILL.md": "",
        },
    )
    found = package_resources(root)
    assert found.manifest == root / "pi-package.json"
    assert _names(found.extensions, root) == ["src/guard.py", "src/more/a.py", "src/more/b.py"]
    assert found.prompts == []
    assert _names(found.skills, root) == ["skills"]


def test_pyproject_tool_table_is_a_manifest_and_pi_package_json_wins_over_it(tmp_path: Path) -> None:
    root = make_package(
        tmp_path / "pkg",
        {
            "pyproject.toml": '[project]\nname = "x"\n[tool.pi-tui]\nextensions = ["ext/one.py"]\n',
            "ext/one.py": "",
            "ext/two.py": "",
        },
    )
    assert _names(package_resources(root).extensions, root) == ["ext/one.py"]
    (root / "pi-package.json").write_text(json.dumps({"extensions": ["ext/two.py"]}))
    assert _names(package_resources(root).extensions, root) == ["ext/two.py"]


def test_missing_or_escaping_manifest_paths_are_skipped_and_reported(tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("")
    root = make_package(
        tmp_path / "pkg",
        {"pi-package.json": json.dumps({"extensions": ["gone.py", "../outside.py", "ok.py"]}), "ok.py": ""},
    )
    found = package_resources(root)
    assert _names(found.extensions, root) == ["ok.py"]
    assert len(found.problems) == 2
    assert any("gone.py" in p for p in found.problems) and any(
        "leaves the package" in p for p in found.problems
    )


def test_an_invalid_manifest_is_reported_and_the_conventional_folders_still_load(tmp_path: Path) -> None:
    root = make_package(tmp_path / "pkg", {"pi-package.json": "{not json", "extensions/a.py": ""})
    found = package_resources(root)
    assert _names(found.extensions, root) == ["extensions/a.py"]
    assert found.problems and "not valid JSON" in found.problems[0]


def test_filters_narrow_each_kind_and_an_empty_list_means_none(tmp_path: Path) -> None:
    root = make_package(
        tmp_path / "pkg",
        {
            "extensions/a.py": "",
            "extensions/b.py": "",
            "extensions/legacy.py": "",
            "skills/one/SKILL.md": "",
            "skills/two/SKILL.md": "",
            "prompts/review.md": "",
            "prompts/other.md": "",
            "themes/dark.json": "{}",
        },
    )
    found = package_resources(
        root,
        {
            "source": "./pkg",
            "extensions": ["extensions/*.py", "!extensions/legacy.py"],
            "skills": ["skills/two"],
            "prompts": ["-prompts/other.md"],
            "themes": [],
        },
    )
    assert _names(found.extensions, root) == ["extensions/a.py", "extensions/b.py"]
    assert _names(found.skills, root) == ["skills/two"]
    assert _names(found.prompts, root) == ["prompts/review.md"]
    assert found.themes == []
