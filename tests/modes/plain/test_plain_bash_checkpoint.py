"""``!cmd`` in the line mode records a checkpoint of exactly what the command changed (as the TUI does)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from pi_tui.modes.plain.bash import run_user_bash
from pi_tui.modes.plain.render import EventPrinter
from pi_tui.testing import FakeLLM, Reply, text
from tests.checkpoints.conftest import open_session


class _Terminal:
    color = False

    def write(self, text: str) -> None:
        pass

    async def read_line(self, prompt: str, default: str = "") -> str | None:
        return None

    async def ask(self, prompt: str, timeout: float | None = None) -> str | None:
        return None

    @contextlib.contextmanager
    def watch_abort(self, on_abort: Callable[[], None]) -> Iterator[None]:
        yield

    @contextlib.contextmanager
    def keys_held(self) -> Iterator[None]:
        yield


async def test_bang_command_checkpoint_holds_only_the_commands_changes(fake: FakeLLM, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake.script([Reply([text("hello")])])
    async with open_session(project) as session:
        await session.prompt("hi")
        await session.wait_for_idle()
        (project / "mine.txt").write_text("edited by the user before the command\n")
        out: list[str] = []
        await run_user_bash("!echo n > new.txt", session, _Terminal(), EventPrinter(out.append, color=False))
        record = session.session_manager.get_entries()[-1]
    assert getattr(record, "custom_type", None) == "pi-tui.checkpoint", record
    assert [f["path"] for f in record.data["files"]] == ["new.txt"]
