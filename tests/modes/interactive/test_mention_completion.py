"""``@`` completion from extensions (``pi.register_mention_completions``), and MCP resources through it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript

from .helpers import make_app, type_text, until

DEMO = Path(__file__).parents[2] / "shipped_extensions" / "mcp_servers" / "demo.py"


async def test_an_extensions_mentions_come_before_files_and_a_failing_one_offers_nothing(
    tmp_path: Path, agent_dir: Path
) -> None:
    (tmp_path / "ticket_notes.md").write_text("x")
    good = tmp_path / "tickets.py"
    good.write_text(
        "def register(pi):\n"
        "    pi.register_mention_completions(\n"
        "        lambda p: [(t, 'open ticket') for t in ['ticket:12', 'ticket:7'] if t.startswith(p)])\n"
    )
    bad = tmp_path / "broken.py"
    bad.write_text("def register(pi):\n    pi.register_mention_completions(lambda p: 1 / 0)\n")
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", str(good), "-e", str(bad)])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, app.files.ready.is_set)
        await type_text(pilot, "see @ticket")
        assert app.menu.is_shown
        values = [(c.value, c.description) for c in app.menu.candidates]
        assert values[:2] == [("@ticket:12", "open ticket"), ("@ticket:7", "open ticket")]
        assert "@ticket_notes.md" in [v for v, _ in values]
        await pilot.press("enter")
        assert app.editor.text == "see @ticket:12 "


async def test_typing_at_server_colon_offers_that_mcp_servers_resources(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "mcp.json").write_text(
        json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": [str(DEMO)]}}})
    )
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", "mcp"])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "read @demo:")  # starts the lazy server

        def offered() -> list[str]:
            app.editor.refresh_completion()  # what the next keystroke would show
            return [c.value for c in app.menu.candidates] if app.menu.is_shown else []

        await until(pilot, lambda: "@demo:demo://greeting" in offered(), timeout=30)
        await pilot.press("enter")
        assert app.editor.text == "read @demo:demo://greeting "
