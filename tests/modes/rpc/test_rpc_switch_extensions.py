"""A switch to a session recorded in another directory loads that project's own extensions, as pi 0.87.1
(which replaces the whole runtime, extensions included, for the session's directory): the extensions of
the directory left get ``session_shutdown`` (reason ``resume``) and go; the other project's
``.pi/extensions`` load (only when that project is trusted) and get ``session_start`` (reason ``resume``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from .rpc_client import RpcProcess
from .test_rpc_switch_session_cwd import _session_made_in

pytestmark = pytest.mark.slow

EXTENSION = """
from pathlib import Path

from pi_tui.extensions.api import ExtensionAPI

NAME = "{name}"
LOG = Path({log!r})


def register(pi: ExtensionAPI) -> None:
    def run(args, ctx):
        return None

    pi.register_command(NAME, handler=run, description="from " + NAME)

    @pi.on("session_start")
    def started(event, ctx):
        with LOG.open("a") as f:
            f.write(f"{{NAME}} start {{event.reason}} {{ctx.cwd}}\\n")

    @pi.on("session_shutdown")
    def ended(event, ctx):
        with LOG.open("a") as f:
            f.write(f"{{NAME}} shutdown {{event.reason}}\\n")
"""


def _extension(project: Path, name: str, log: Path) -> None:
    folder = project / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / f"{name}.py").write_text(EXTENSION.format(name=name, log=str(log)))


def _commands(rpc: RpcProcess) -> list[str]:
    listed = rpc.call({"type": "get_commands"}, timeout=30)["data"]["commands"]
    return sorted(c["name"] for c in listed if c["source"] == "extension")


@pytest.mark.parametrize("trusted", [True, False])
def test_switch_session_loads_the_other_projects_extensions(
    tmp_path: Path, agent_dir: Path, fake: FakeLLM, trusted: bool
) -> None:
    project, elsewhere, log = tmp_path / "project", tmp_path / "elsewhere", tmp_path / "events.log"
    project.mkdir()
    elsewhere.mkdir()
    fake.script([Reply([text("one")])])
    session_file = _session_made_in(project, agent_dir)  # before its extension exists: nothing logged
    _extension(project, "theirs", log)
    _extension(elsewhere, "ours", log)
    trusted_dirs = [str(elsewhere.resolve())] + ([str(project.resolve())] if trusted else [])
    (agent_dir / "settings.json").write_text(json.dumps({"trustedProjects": trusted_dirs}))
    rpc = RpcProcess(elsewhere, "--model", "fake-openai/gpt-fake")
    try:
        assert _commands(rpc) == ["ours"]
        response = rpc.call({"type": "switch_session", "sessionPath": str(session_file)}, timeout=30)
        assert response["success"] is True and response["data"] == {"cancelled": False}
        assert _commands(rpc) == (["theirs"] if trusted else [])
        assert rpc.close() == 0
    finally:
        rpc.kill()
    lines = log.read_text().splitlines()
    assert lines[:2] == [f"ours start startup {elsewhere.resolve()}", "ours shutdown resume"]
    if trusted:
        assert lines[2:] == [f"theirs start resume {project.resolve()}", "theirs shutdown quit"]
    else:
        assert lines[2:] == []
