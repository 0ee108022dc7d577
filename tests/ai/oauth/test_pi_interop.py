"""Logins shared with real pi 0.87.1: the same auth.json, the same lock, one refresh between them.

pi lets its Kimi Code login be pointed at another host (``KIMI_CODE_OAUTH_HOST``), so real pi runs
its own flow and refresh against the fake authorization server here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.oauth import login
from pi_tui.ai.oauth.resolve import resolve_oauth
from pi_tui.testing.oauth_server import FakeAuthServer
from tests.pi087 import Pi087

from .helpers import ScriptedInteraction

pytestmark = pytest.mark.slow


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer(access_prefix="kimi-at-", device_script=["ok"]) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def _kimi(agent_dir: Path) -> dict[str, object]:
    entry: dict[str, object] = json.loads((agent_dir / "auth.json").read_text())["kimi-coding"]
    return entry


def _expire(agent_dir: Path) -> None:
    data = json.loads((agent_dir / "auth.json").read_text())
    data["kimi-coding"]["expires"] = int(time.time() * 1000) - 1000
    (agent_dir / "auth.json").write_text(json.dumps(data, indent=2))


def _pi_bearer(pi087: Pi087) -> subprocess.Popen[str]:
    return subprocess.Popen(
        pi087.argv("auth", "print-bearer-token", "--provider", "kimi-coding"),
        env=pi087.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


_RACER = """
import sys
from pi_tui.ai.auth import AuthStorage
from pi_tui.ai.oauth.resolve import expires_soon, resolve_oauth
storage = AuthStorage()
assert expires_soon(storage.oauth("kimi-coding"))
print("saw-expired", flush=True)
auth = resolve_oauth(storage, "kimi-coding")
print(auth.headers["Authorization"].removeprefix("Bearer "), flush=True)
"""


def _pi_tui_racer() -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _RACER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_login_made_by_pi_is_used_and_refreshed_by_pi_tui(
    pi087: Pi087, auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    # pi's own login command writes ./auth.json in pi's format
    done = subprocess.run(
        [str(pi087.node), str(pi087.pi_ai_dist / "cli.js"), "login", "kimi-coding"],
        cwd=agent_dir,
        env=pi087.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    by_pi = _kimi(agent_dir)
    assert by_pi["type"] == "oauth" and by_pi["access"] in auth_server.valid_access_tokens()

    storage = AuthStorage(agent_dir / "auth.json")
    auth = resolve_oauth(storage, "kimi-coding")
    assert auth is not None and auth.headers == {"Authorization": f"Bearer {by_pi['access']}"}

    _expire(agent_dir)
    auth = resolve_oauth(storage, "kimi-coding")
    refreshed = _kimi(agent_dir)
    assert auth is not None and auth.headers == {"Authorization": f"Bearer {refreshed['access']}"}
    assert refreshed["access"] != by_pi["access"] and refreshed["access"] in auth_server.valid_access_tokens()
    assert auth_server.refresh_count == 1


def test_pi_uses_a_login_made_by_pi_tui_and_they_refresh_once_between_them(
    pi087: Pi087, auth_server: FakeAuthServer, agent_dir: Path
) -> None:
    login("kimi-coding", ScriptedInteraction(), AuthStorage(agent_dir / "auth.json"))
    ours = _kimi(agent_dir)
    shown = subprocess.run(
        pi087.argv("auth", "print-bearer-token", "--provider", "kimi-coding", "--min-expiry", "1m"),
        env=pi087.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == ours["access"]  # pi read pi-tui's login as it is
    assert auth_server.refresh_count == 0

    # pi refreshes first and holds pi's lock while its refresh is parked; pi-tui must wait for it
    _expire(agent_dir)
    auth_server.hold_refreshes()
    pi = _pi_bearer(pi087)
    assert auth_server.refresh_arrived.wait(30)
    racer = _pi_tui_racer()
    assert racer.stdout is not None and racer.stdout.readline() == "saw-expired\n"
    auth_server.release_refreshes()
    pi_out, pi_err = pi.communicate(timeout=60)
    tui_out, tui_err = racer.communicate(timeout=60)
    assert pi.returncode == 0, pi_err
    assert racer.returncode == 0, tui_err
    assert pi_out.strip() == tui_out.strip() == _kimi(agent_dir)["access"]
    assert auth_server.refresh_count == 1


_PI_LOCK_PROBE = """
const lockfile = require(process.argv[1]);
try { lockfile.lockSync(process.argv[2], { realpath: false, stale: 30000 }); console.log("acquired"); }
catch (error) { console.log(error.code); }
"""


def test_pi_cannot_take_the_lock_while_pi_tui_holds_it(pi087: Pi087, agent_dir: Path) -> None:
    from pi_tui.ai.auth_lock import hold_lock

    path = agent_dir / "auth.json"
    path.write_text("{}")
    probe = [
        str(pi087.node),
        "-e",
        _PI_LOCK_PROBE,
        str(pi087.dir / "node_modules" / "proper-lockfile"),
        str(path),
    ]
    with hold_lock(path):
        held = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    assert held.stdout.strip() == "ELOCKED", held.stderr
    free = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    assert free.stdout.strip() == "acquired", free.stderr
