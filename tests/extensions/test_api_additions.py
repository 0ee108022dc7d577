from __future__ import annotations

import json
from pathlib import Path

from ..e2e.helpers import run_cli

EXT = """
def register(pi):
    pi.register_panel("Scratch", lambda: "scratch text", placement="tail")

    @pi.on("input")
    def tag(event, ctx):
        removed = pi.unregister_panel("Scratch")
        return {"action": "transform", "text": f"{event.text} [limit={pi.get_setting('scratchLimit', 0)} removed={removed}]"}
"""


def test_unregister_panel_and_get_setting(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"scratchLimit": 7}))
    ext = tmp_path / "scratch.py"
    ext.write_text(EXT)
    run = run_cli(["--provider", "faux", "-e", str(ext), "-p", "hi", "/context"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "hi [limit=7 removed=True]" in run.stdout
    assert "Scratch" not in run.stdout.split("# Context", 1)[1]  # gone from the next request's panels
