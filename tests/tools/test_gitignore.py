from __future__ import annotations

import re
from pathlib import Path

import pytest

from pi_tui.tools.globs import glob_to_regex
from pi_tui.tools.walk import list_project_files, walk
from pi_tui.util.ignore import IgnoreFile


def _ignored(rules_text: str, rel: str, is_dir: bool = False) -> bool:
    ignore = IgnoreFile.from_text(rules_text)
    return ignore is not None and ignore.decide(rel, is_dir) is True


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "ignored"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/dir/b.log", False, True),
        ("*.log", "a.txt", False, False),
        ("/build", "build", True, True),
        ("/build", "src/build", True, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("build/", "src/build", True, True),
        ("doc/*.txt", "doc/a.txt", False, True),
        ("doc/*.txt", "doc/sub/a.txt", False, False),
        ("doc/*.txt", "other/doc/a.txt", False, False),
        ("**/foo", "foo", False, True),
        ("**/foo", "a/b/foo", False, True),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("abc/**", "abc/x/y", False, True),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("*.log\n!keep.log", "other.log", False, True),
        ("!keep.log\n*.log", "keep.log", False, True),
        ("# comment\n\n", "# comment", False, False),
        ("\\#hash", "#hash", False, True),
        ("\\!bang", "!bang", False, True),
        ("name   ", "name", False, True),
        ("name\\ ", "name ", False, True),
        ("[ab].txt", "a.txt", False, True),
        ("[ab].txt", "c.txt", False, False),
        ("[!ab].txt", "c.txt", False, True),
        ("[!ab].txt", "a.txt", False, False),
        ("fil?.txt", "file.txt", False, True),
        ("fil?.txt", "fil/.txt", False, False),
        ("*.txt\r", "a.txt", False, True),
    ],
)
def test_gitignore_rules(rules: str, path: str, is_dir: bool, ignored: bool) -> None:
    assert _ignored(rules, path, is_dir) is ignored


def test_glob_braces_are_alternatives_only_when_enabled() -> None:
    assert re.fullmatch(glob_to_regex("*.{ts,tsx}", braces=True), "a.tsx")
    assert not re.fullmatch(glob_to_regex("*.{ts,tsx}"), "a.tsx")


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def _walked(root: Path) -> list[str]:
    return [entry.rel + ("/" if entry.is_dir else "") for entry in walk(root)]


def test_walk_lists_hidden_files_in_path_order_and_skips_dot_git(tmp_path: Path) -> None:
    _tree(tmp_path, {"b.txt": "", "a/x.txt": "", ".hidden/h.txt": "", ".git/config": "", ".env": ""})
    assert _walked(tmp_path) == [".env", ".hidden/", ".hidden/h.txt", "a/", "a/x.txt", "b.txt"]


def test_walk_never_enters_ignored_directories(tmp_path: Path) -> None:
    _tree(tmp_path, {".gitignore": "node_modules/\n", "node_modules/pkg/index.js": "", "src/a.js": ""})
    assert _walked(tmp_path) == [".gitignore", "src/", "src/a.js"]


def test_nested_gitignore_can_re_include_what_a_parent_ignores(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            ".gitignore": "*.tmp\n",
            "top.tmp": "",
            "sub/.gitignore": "!important.tmp\n",
            "sub/important.tmp": "",
            "sub/other.tmp": "",
        },
    )
    assert _walked(tmp_path) == [".gitignore", "sub/", "sub/.gitignore", "sub/important.tmp"]


def test_nested_gitignore_patterns_are_relative_to_their_directory(tmp_path: Path) -> None:
    _tree(tmp_path, {"sub/.gitignore": "/only-here.txt\n", "sub/only-here.txt": "", "only-here.txt": ""})
    assert "sub/only-here.txt" not in _walked(tmp_path)
    assert "only-here.txt" in _walked(tmp_path)


def test_a_file_inside_an_ignored_directory_cannot_be_re_included(tmp_path: Path) -> None:
    _tree(tmp_path, {".gitignore": "logs/\n!logs/keep.txt\n", "logs/keep.txt": "", "logs/drop.txt": ""})
    assert _walked(tmp_path) == [".gitignore"]


def test_dot_ignore_files_are_obeyed_too(tmp_path: Path) -> None:
    _tree(tmp_path, {".ignore": "secret.txt\n", "secret.txt": "", "public.txt": ""})
    assert _walked(tmp_path) == [".ignore", "public.txt"]


def test_gitignore_above_the_search_root_applies_inside_a_repository(tmp_path: Path) -> None:
    _tree(tmp_path, {"repo/.gitignore": "*.gen\n", "repo/src/a.gen": "", "repo/src/a.py": ""})
    (tmp_path / "repo" / ".git").mkdir()
    assert _walked(tmp_path / "repo" / "src") == ["a.py"]


def test_anchored_rules_above_the_search_root_are_positioned_correctly(tmp_path: Path) -> None:
    _tree(tmp_path, {"repo/.gitignore": "/src/build/\n", "repo/src/build/x.o": "", "repo/src/keep.c": ""})
    (tmp_path / "repo" / ".git").mkdir()
    assert _walked(tmp_path / "repo" / "src") == ["keep.c"]


def test_gitignore_above_the_search_root_is_ignored_outside_a_repository(tmp_path: Path) -> None:
    _tree(tmp_path, {"outer/.gitignore": "*.gen\n", "outer/inner/a.gen": ""})
    assert _walked(tmp_path / "outer" / "inner") == ["a.gen"]


def test_git_info_exclude_is_obeyed(tmp_path: Path) -> None:
    _tree(tmp_path, {".git/info/exclude": "local.txt\n", "local.txt": "", "shared.txt": ""})
    assert _walked(tmp_path) == ["shared.txt"]


def test_walk_can_be_stopped(tmp_path: Path) -> None:
    _tree(tmp_path, {f"f{i}.txt": "" for i in range(10)})
    seen: list[str] = []
    for entry in walk(tmp_path, should_stop=lambda: len(seen) >= 3):
        seen.append(entry.rel)
    assert seen == ["f0.txt", "f1.txt", "f2.txt"]


def test_symlinked_directories_are_listed_but_not_entered(tmp_path: Path) -> None:
    _tree(tmp_path, {"real/a.txt": ""})
    (tmp_path / "link").symlink_to(tmp_path / "real")
    entries = {entry.rel: entry for entry in walk(tmp_path)}
    assert set(entries) == {"link", "real", "real/a.txt"}
    assert entries["link"].is_symlink and not entries["link"].is_dir


def test_project_files_for_at_completion_follow_the_tools_ignore_rules(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            ".gitignore": "build/\n*.log\n",
            ".ignore": "secret.txt\n",
            "build/out.js": "",
            "debug.log": "",
            "secret.txt": "",
            "src/app.py": "",
            "src/.env": "",
            ".git/HEAD": "",
        },
    )
    assert list_project_files(tmp_path) == [".gitignore", ".ignore", "src/.env", "src/app.py"]
    assert list_project_files(tmp_path, directories=True) == [
        ".gitignore",
        ".ignore",
        "src/",
        "src/.env",
        "src/app.py",
    ]
    assert list_project_files(tmp_path, limit=2) == [".gitignore", ".ignore"]
    assert list_project_files(tmp_path, limit=0) == []


def test_a_directory_rule_with_trailing_double_star_hides_the_directory_as_git_does(tmp_path: Path) -> None:
    # `git check-ignore abc/` reports "abc/**" as matching the directory itself.
    _tree(tmp_path, {".gitignore": "abc/**\n", "abc/d/x": "", "keep": ""})
    assert _walked(tmp_path) == [".gitignore", "keep"]
