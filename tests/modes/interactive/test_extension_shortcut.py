from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive.blocks import NoticeBlock

from .helpers import make_app, type_text, until

SHORTCUT_EXTENSION = """
def pressed(ctx):
    ctx.ui.set_status("shortcut", "PRESSED with " + type(ctx).__name__)

def register(pi):
    pi.register_shortcut("ctrl+shift+k", {"handler": pressed, "description": "mark it"})
"""


def _statuses(app: Any) -> dict[str, str]:
    return dict(app.footer.state.statuses) if app.footer.state is not None else {}


async def test_an_extension_shortcut_gets_its_extensions_context(tmp_path: Path, agent_dir: Path) -> None:
    ext = tmp_path / "keys.py"
    ext.write_text(SHORTCUT_EXTENSION)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("ctrl+shift+k")
        await until(pilot, lambda: "shortcut" in _statuses(app))
        assert "PRESSED with ExtensionContext" in _statuses(app)["shortcut"]


COUNTING_EXTENSION = """
PRESSES = []

def pressed(ctx):
    PRESSES.append(1)
    ctx.ui.set_status("shortcut", f"pressed {len(PRESSES)}")

def register(pi):
    pi.register_shortcut("ctrl+e", {"handler": pressed, "description": "count"})
    pi.register_shortcut("ctrl+d", {"handler": pressed, "description": "not this one"})
"""


async def test_an_extension_shortcut_wins_over_the_editors_key_on_the_main_screen_only(
    tmp_path: Path, agent_dir: Path
) -> None:
    ext = tmp_path / "count.py"
    ext.write_text(COUNTING_EXTENSION)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        notices = [b.text for b in app.chat.query(NoticeBlock)]
        assert "Extension shortcut ctrl+d ignored: it is a built-in key" in notices
        await type_text(pilot, "abc")
        await pilot.press("left", "left", "ctrl+e", "x")  # ctrl+e is the editor's line end otherwise
        await until(pilot, lambda: _statuses(app).get("shortcut") == "pressed 1")
        assert app.editor.text == "axbc"
        await app.run_command("/hotkeys")
        await until(pilot, lambda: app.screen is not app.screen_stack[0])
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert _statuses(app).get("shortcut") == "pressed 1"


QUIT_KEY_EXTENSION = """
def pressed(ctx):
    ctx.ui.set_status("shortcut", "ctrl+q is mine")

def register(pi):
    pi.register_shortcut("ctrl+q", {"handler": pressed, "description": "free in pi too"})
"""


async def test_ctrl_q_is_no_built_in_key_so_an_extension_may_take_it(tmp_path: Path, agent_dir: Path) -> None:
    ext = tmp_path / "q.py"
    ext.write_text(QUIT_KEY_EXTENSION)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: _statuses(app).get("shortcut") == "ctrl+q is mine")
        assert app.is_running
        assert not [b.text for b in app.chat.query(NoticeBlock) if "ctrl+q" in b.text]
