from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.util.ignore import IgnoreFile, IgnoreStack, find_git_root


def matcher(*lines: str) -> IgnoreStack:
    ignore = IgnoreFile.from_text("\n".join(lines))
    return IgnoreStack((ignore,) if ignore else ())


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "ignored"),
    [
        (["build"], "a/b/build", True, True),
        (["build/"], "a/build", False, False),
        (["build/"], "a/build", True, True),
        (["/top"], "top", True, True),
        (["/top"], "a/top", True, False),
        (["docs/*.md"], "docs/x.md", False, True),
        (["docs/*.md"], "a/docs/x.md", False, False),
        (["**/cache"], "a/b/cache", True, True),
        (["logs/**"], "logs/a/b.txt", False, True),
        (["a/**/z"], "a/z", True, True),
        (["a/**/z"], "a/b/c/z", True, True),
        (["*.tmp", "!keep.tmp"], "keep.tmp", False, False),
        (["*.tmp", "!keep.tmp"], "drop.tmp", False, True),
        (["file?.txt"], "file1.txt", False, True),
        (["[ab].txt"], "c.txt", False, False),
        (["\\#literal"], "#literal", False, True),
        (["# comment", ""], "comment", False, False),
    ],
)
def test_gitignore_rules(rules: list[str], path: str, is_dir: bool, ignored: bool) -> None:
    assert matcher(*rules).is_ignored(path, is_dir) is ignored


def test_rules_apply_only_below_their_directory() -> None:
    ignore = IgnoreFile.from_text("secret", inside="sub")
    assert ignore is not None
    rules = IgnoreStack((ignore,))
    assert rules.is_ignored("sub/secret", True)
    assert not rules.is_ignored("other/secret", True)


def test_the_deepest_file_with_an_opinion_decides(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    (tmp_path / "sub" / ".ignore").write_text("!keep.tmp\n")
    stack = IgnoreStack.for_root(tmp_path)
    inner = stack.entering(tmp_path / "sub", "sub")
    assert stack.is_ignored("sub/keep.tmp", False)  # the root's stack has not seen sub/.ignore
    assert not inner.is_ignored("sub/keep.tmp", False)
    assert inner.is_ignored("sub/drop.tmp", False)
    assert inner.is_ignored("top.tmp", False)


def test_only_the_names_asked_for_are_read(tmp_path: Path) -> None:
    (tmp_path / ".fdignore").write_text("x\n")
    assert not IgnoreStack.for_root(tmp_path).is_ignored("x", False)
    assert IgnoreStack.for_root(tmp_path, names=(".fdignore",)).is_ignored("x", False)


def test_comment_only_files_are_no_ignore_file(tmp_path: Path) -> None:
    assert IgnoreFile.from_text("# nothing\n\n") is None
    assert IgnoreFile.load(tmp_path / "missing") is None


def test_git_root_is_found_from_below_and_a_worktree_file_counts(tmp_path: Path) -> None:
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    (tmp_path / "repo" / ".git").write_text("gitdir: elsewhere\n")
    assert find_git_root(tmp_path / "repo" / "a" / "b") == tmp_path / "repo"
    assert find_git_root(tmp_path / "repo" / "a") == tmp_path / "repo"


def test_a_negated_directory_is_re_included_but_its_files_are_not(tmp_path: Path) -> None:
    """git's rule, checked with `git status --ignored`: `*` + `!keep/` lists keep/ but ignores keep/a."""
    (tmp_path / "keep").mkdir()
    (tmp_path / ".gitignore").write_text("*\n!keep/\n!.gitignore\n")
    stack = IgnoreStack.for_root(tmp_path)
    assert not stack.is_ignored("keep", True)
    assert stack.is_ignored("keep/a", False)
    assert stack.is_ignored("other", True)
    assert not stack.is_ignored(".gitignore", False)


def test_importing_the_tools_and_resources_loads_no_pathspec(tmp_path: Path) -> None:
    """Start-up budget: pathspec is imported when an ignore file is first read, not before."""
    code = "import sys, pi_tui.tools, pi_tui.resources.skills; print('pathspec' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_lines_git_cannot_parse_are_skipped_and_the_rest_still_apply() -> None:
    ignore = IgnoreFile.from_text("!\n\\\\\nx[z-a]\n*.log\n")
    assert ignore is not None
    assert IgnoreStack((ignore,)).is_ignored("a.log", False)
    assert not IgnoreStack((ignore,)).is_ignored("a.txt", False)
