from __future__ import annotations

from pathlib import Path

from pi_tui.session import SessionManager

from .helpers import assistant, user


def test_build_context_gives_each_caller_its_own_lists_and_follows_appends_and_branches(
    tmp_path: Path,
) -> None:
    manager = SessionManager.create(tmp_path, session_dir=tmp_path)
    first = manager.append_message(user("one"))
    manager.append_message(assistant("two"))

    mine = manager.build_context()
    mine.messages.clear()
    mine.path.pop()
    mine.system.sections["x"] = "changed by a caller"
    again = manager.build_context()
    assert len(again.messages) == 2 and len(again.path) == 2 and again.system.sections == {}

    manager.append_message(user("three"))
    assert [m.role for m in manager.build_context().messages] == ["user", "assistant", "user"]
    manager.branch(first.id)
    assert [m.role for m in manager.build_context().messages] == ["user"]
    assert manager.build_context(None).messages == []
    manager.close()
