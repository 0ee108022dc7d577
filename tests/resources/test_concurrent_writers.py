"""Two pi-tui processes writing the same file at once keep both's changes.

Each writer reads the file, changes its own part and replaces the file; without a lock held across the
read and the replace, one process's replace carries the content it read before the other's write, and
that write is lost. The processes are real, started together (both wait for one line on stdin), and
each writes many times, so their writes interleave.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_ROUNDS = 40

_AUTH_LOGIN = """
import sys
from pathlib import Path
from pi_tui.ai.auth import AuthStorage
path = Path(sys.argv[1]); sys.stdin.readline()
for i in range(int(sys.argv[2])):
    AuthStorage(path).set(f"login{i}", {"type": "api_key", "key": f"k{i}"})  # /login of one provider after another
"""

_AUTH_REFRESH = """
import sys
from pathlib import Path
from pi_tui.ai.auth import AuthStorage
path = Path(sys.argv[1]); sys.stdin.readline()
storage = AuthStorage(path)
for i in range(int(sys.argv[2])):  # an OAuth token refreshed again and again
    storage.modify("oauthprov", lambda current, i=i: {"type": "oauth", "access": f"t{i}", "refresh": "r", "expires": 1})
"""

_SETTINGS = """
import sys
from pathlib import Path
from pi_tui.resources.settings import SettingsManager
agent, project, key = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
sys.stdin.readline()
manager = SettingsManager(agent, project)
for i in range(int(sys.argv[4])):
    manager.set(key, f"v{i}")
problems = manager.drain_errors()
assert not problems, problems
"""

_MCP = """
import sys
from pathlib import Path
from pi_tui.bundled_extensions.mcp.config import save_enabled
path, name = Path(sys.argv[1]), sys.argv[2]
sys.stdin.readline()
for i in range(int(sys.argv[3])):
    save_enabled(path, name, i % 2 == 1)
"""


def _together(*commands: list[str]) -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", *command], stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for command in commands
    ]
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        _, err = child.communicate(timeout=50)
        assert child.returncode == 0, err


def test_a_login_in_one_process_and_a_token_refresh_in_another_both_stay(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    _together([_AUTH_LOGIN, str(path), str(_ROUNDS)], [_AUTH_REFRESH, str(path), str(_ROUNDS)])
    data = json.loads(path.read_text())
    assert {f"login{i}" for i in range(_ROUNDS)} <= set(data)
    assert data["oauthprov"]["access"] == f"t{_ROUNDS - 1}"
    assert not (agent_dir / "auth.json.lock").exists()


def test_two_processes_setting_different_settings_keep_both(agent_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    common = [str(agent_dir), str(project)]
    _together(
        [_SETTINGS, *common, "defaultProvider", str(_ROUNDS)],
        [_SETTINGS, *common, "defaultModel", str(_ROUNDS)],
    )
    data = json.loads((agent_dir / "settings.json").read_text())
    assert data["defaultProvider"] == data["defaultModel"] == f"v{_ROUNDS - 1}"


def test_two_processes_toggling_different_mcp_servers_keep_both(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        '{\n  "mcpServers": {\n    "one": {"command": "a"},\n    "two": {"command": "b"}\n  }\n}\n'
    )
    _together([_MCP, str(path), "one", str(_ROUNDS)], [_MCP, str(path), "two", str(_ROUNDS + 1)])
    servers = json.loads(path.read_text())["mcpServers"]
    assert servers["one"]["enabled"] is True  # its last write: round 39, odd
    assert servers["two"]["enabled"] is False  # its last write: round 40, even
