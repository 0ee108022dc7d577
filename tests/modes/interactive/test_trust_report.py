"""What ``/trust`` says about the running session, as pi 0.87 reports it: a project with nothing that
loads only once trusted counts as trusted; one with such files (pi's, or those a loaded extension
names, like the mcp extension's ``.mcp.json``) does not, and nothing of it is loaded for the report."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.dialogs import SelectDialog

from .helpers import make_app, submit, until


async def _current_session(app: PiApp) -> str:
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/trust")
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        message = app.screen.message  # type: ignore[attr-defined]
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SelectDialog))
    line = next(line for line in message.splitlines() if line.startswith("Current session: "))
    return line.removeprefix("Current session: ")


def _proj(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "AGENTS.md").write_text("context files need no trust\n")
    return project


async def test_a_project_with_pi_files_is_untrusted_and_stays_unloaded(tmp_path: Path, agent_dir: Path) -> None:
    project = _proj(tmp_path)
    (project / ".pi" / "prompts").mkdir(parents=True)
    (project / ".pi" / "prompts" / "hidden.md").write_text("a project prompt\n")
    app = make_app(project, agent_dir, FauxScript(faux_reply("ok")))
    assert await _current_session(app) == "untrusted"
    session = app.require_session()
    assert session.resources is not None
    assert not any(t.name == "hidden" for t in session.resources.templates)


async def test_no_approve_says_untrusted_with_nothing_to_trust(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(_proj(tmp_path), agent_dir, FauxScript(faux_reply("ok")), ["--no-approve"])
    assert await _current_session(app) == "untrusted"


async def test_a_saved_do_not_trust_with_nothing_to_trust_is_reported_trusted(
    tmp_path: Path, agent_dir: Path
) -> None:
    """As pi: with nothing in it needing trust, the saved decision does not matter to the report."""
    project = _proj(tmp_path)
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "trust.json").write_text(json.dumps({os.path.realpath(project): False}))
    app = make_app(project, agent_dir, FauxScript(faux_reply("ok")))
    assert await _current_session(app) == "trusted"


async def test_mcp_files_need_trust_only_while_the_mcp_extension_is_loaded(
    tmp_path: Path, agent_dir: Path
) -> None:
    project = _proj(tmp_path)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    with_mcp = make_app(project, agent_dir, FauxScript(faux_reply("ok")), ["-e", "mcp"])
    assert await _current_session(with_mcp) == "untrusted"
    without = make_app(project, agent_dir, FauxScript(faux_reply("ok")))
    assert await _current_session(without) == "trusted"  # nothing pi-tui loads reads it
