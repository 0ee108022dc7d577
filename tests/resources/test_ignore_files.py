from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.resources.ignore_files import IgnoreMatcher

BASE = Path("/repo")


def matcher(*lines: str) -> IgnoreMatcher:
    result = IgnoreMatcher()
    for line in lines:
        result.add_rule(BASE, line)
    return result


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
    assert matcher(*rules).is_ignored(BASE / path, is_dir=is_dir) is ignored


def test_rules_apply_only_below_their_directory() -> None:
    rules = IgnoreMatcher()
    rules.add_rule(BASE / "sub", "secret")
    assert rules.is_ignored(BASE / "sub" / "secret", is_dir=True)
    assert not rules.is_ignored(BASE / "other" / "secret", is_dir=True)
