from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pi_tui.ai.types import BashExecutionMessage, ToolCall
from pi_tui.session import SessionManager
from pi_tui.session.export_html import export_session_html

from .helpers import LARGE, assistant, tool_result, user

_VOID = {"meta", "img", "br", "hr", "link", "input"}


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"unexpected </{tag}> with open {self.stack[-3:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _check(page: str) -> _Checker:
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert checker.problems == []
    assert checker.stack == []
    return checker


def _session(tmp_path: Path) -> SessionManager:
    manager = SessionManager.create("/p", session_dir=tmp_path)
    q1 = manager.append_message(user('<script>alert("x")</script> & more'))
    manager.append_label(q1.id, "start <here>")
    manager.append_message(
        assistant("", calls=[ToolCall(id="c1", name="read", arguments={"path": "a<b>.py"})])
    )
    result = manager.append_message(tool_result("c1", "line one\n</details><b>not bold</b>"))
    manager.append_message(assistant("first answer"))
    manager.branch(result.id)
    manager.append_message(BashExecutionMessage(command="ls -la", output="total 0", exit_code=0))
    manager.append_message(assistant("second answer"))
    return manager


def test_export_is_valid_self_contained_html_with_escaped_content(tmp_path: Path) -> None:
    manager = _session(tmp_path)
    out = export_session_html(manager, tmp_path / "out.html")
    page = out.read_text(encoding="utf-8")
    checker = _check(page)
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more" in page
    assert "&lt;/details&gt;&lt;b&gt;not bold&lt;/b&gt;" in page
    for tag, attrs in checker.tags:
        assert tag not in ("link", "script", "iframe")
        for key in ("src", "href"):
            value = attrs.get(key)
            assert value is None or not re.match(r"^(https?:)?//", value)
    text = "".join(checker.text)
    assert '<script>alert("x")</script> & more' in text  # readable once unescaped
    manager.close()


def test_export_shows_the_active_path_and_the_whole_tree(tmp_path: Path) -> None:
    manager = _session(tmp_path)
    page = export_session_html(manager, tmp_path / "out.html").read_text(encoding="utf-8")
    conversation, tree = page.split("Tree (all branches)")
    assert "second answer" in conversation and "ls -la" in conversation
    assert "first answer" not in conversation  # the other branch is only in the tree
    assert '<details class="msg "><summary>read result (2 lines)</summary>' in conversation  # folded
    assert "assistant: first answer" in tree and "assistant: second answer" in tree
    assert '<span class="label">[start &lt;here&gt;]</span>' in tree
    assert tree.count('class="on-path leaf"') == 1
    assert re.search(r'<li class="on-path leaf">assistant: second answer', tree)
    # the fork opens one sub-list per branch
    assert tree.count("<li><ul>") == 2
    manager.close()


def test_export_default_name_in_cwd_and_the_session_file_is_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not LARGE.exists():
        pytest.skip("pi fixtures not available")
    source = tmp_path / "src" / LARGE.name
    source.parent.mkdir()
    shutil.copy(LARGE, source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    monkeypatch.chdir(out_dir)
    out = export_session_html(source)
    assert out == out_dir / "pi-session-large-session.html"
    page = out.read_text(encoding="utf-8")
    _check(page)
    assert page.count('class="msg user"') == 88
    assert sorted(p.name for p in source.parent.iterdir()) == [LARGE.name]  # no backup, no lock
    assert source.read_bytes() == LARGE.read_bytes()
