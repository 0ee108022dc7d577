from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.ai.providers.faux import FauxScript

from .helpers import make_app, until

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
