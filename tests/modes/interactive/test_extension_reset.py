from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.ai.providers.faux import FauxScript
from pi_tui.modes.interactive.blocks import NoticeBlock

from .helpers import make_app, submit_and_wait, until

MARKING_EXTENSION = """
def mark(args, ctx):
    ctx.ui.set_status("mark", "MARKED")
    ctx.ui.set_widget("marks", ["MARK-WIDGET"])

def register(pi):
    pi.register_command("mark", {"handler": mark, "description": "marks"})
"""


def _notices(app: Any) -> list[str]:
    return [b.text for b in app.chat.query(NoticeBlock)]


def _shown(app: Any) -> bool:
    statuses = app.footer.state.statuses if app.footer.state is not None else {}
    widgets = [str(w.render()) for w in app.above.children]
    return "mark" in statuses or any("MARK-WIDGET" in w for w in widgets)


async def test_an_extensions_status_and_widgets_go_on_reload_and_on_a_new_session(
    tmp_path: Path, agent_dir: Path
) -> None:
    ext = tmp_path / "marking.py"
    ext.write_text(MARKING_EXTENSION)
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(ext)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        for clearing in ("/reload", "/new"):
            await submit_and_wait(pilot, app, "/mark")
            await until(pilot, lambda: _shown(app))
            await submit_and_wait(pilot, app, clearing)
            await until(pilot, lambda: not _shown(app))


async def test_reload_reports_load_errors_and_skipped_project_extensions_before_it_is_done(
    tmp_path: Path, agent_dir: Path
) -> None:
    good = tmp_path / "good.py"
    good.write_text("def register(pi):\n    pass\n")
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(good)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        good.write_text("def register(pi):\n    raise ValueError('BROKEN-ON-PURPOSE')\n")
        project_extensions = tmp_path / ".pi" / "extensions"
        project_extensions.mkdir(parents=True)
        (project_extensions / "local.py").write_text("def register(pi):\n    pass\n")
        before = len(_notices(app))
        await submit_and_wait(pilot, app, "/reload")
        await until(pilot, lambda: any(t.startswith("Reloaded") for t in _notices(app)))
        told = _notices(app)[before:]
    failure = next(i for i, t in enumerate(told) if "BROKEN-ON-PURPOSE" in t)
    skipped = next(i for i, t in enumerate(told) if "were not loaded (local.py)" in t and "not trusted" in t)
    done = next(i for i, t in enumerate(told) if t.startswith("Reloaded"))
    assert failure < skipped < done, told
    assert "1 extension(s) failed to load (good)" in told[done]
