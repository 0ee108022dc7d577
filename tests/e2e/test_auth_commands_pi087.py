"""``pi-tui auth check|print-api-key|print-bearer-token`` side by side with pi 0.87.1's ``pi auth …``: the
same auth.json and environment give the same stdout, stderr (but the program name) and exit code, for
logins, stored keys, keys from the environment, unknown providers and bad arguments. A login about to
expire is refreshed (and saved) before its token is printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.testing.oauth_server import FakeAuthServer

from ..pi087 import Pi087

pytestmark = pytest.mark.slow

_LATER = int(time.time() * 1000) + 5 * 3_600_000
AUTH = {
    "radius": {"type": "oauth", "access": "rad-access", "refresh": "rad-refresh", "expires": _LATER},
    "groq": {"type": "api_key", "key": "gsk-stored"},
}
COMMANDS = [
    "auth check --provider radius",
    "auth check --provider radius --json --credentials",
    "auth print-api-key --provider radius",
    "auth print-bearer-token --provider radius",
    "auth check --provider openai --json",
    "auth print-api-key --provider openai",
    "auth check --model openrouter/moonshotai/kimi-k2.6 --json",
    "auth check",
    "auth print-api-key",
    "auth print-api-key --provider openrouter",
    "auth print-bearer-token --provider openrouter",
    "auth check --provider nosuch --json",
    "auth print-api-key --provider nosuch",
    "auth check --provider groq --credentials",
    "auth frob",
    "auth check --bogus --provider x",
    "auth print-api-key --provider groq --json",
    "auth print-bearer-token --provider radius --min-expiry 10x",
    "auth check --model groq/openai/gpt-oss-120b",
    "auth check --provider amazon-bedrock --json",
]
_COLOURS = ("\x1b[31m", "\x1b[39m", "\x1b[2m", "\x1b[22m")


def _run(argv: list[str], home: Path, extra: dict[str, str] | None = None) -> tuple[int, str, str]:
    agent = home / ".pi" / "agent"
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k and not k.startswith("AWS_")}
    env.pop("PYTEST_CURRENT_TEST", None)
    env |= {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1"}
    env |= {"OPENROUTER_API_KEY": "sk-or-env", **(extra or {})}
    run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=50)
    err = run.stderr.strip()
    for code in _COLOURS:
        err = err.replace(code, "")
    return run.returncode, run.stdout.strip(), err.replace("pi-tui", "pi")


def _home(root: Path, auth: dict[str, object]) -> Path:
    agent = root / ".pi" / "agent"
    agent.mkdir(parents=True)
    (agent / "auth.json").write_text(json.dumps(auth))
    (agent / "auth.json").chmod(0o600)
    return root


@pytest.mark.parametrize("command", COMMANDS)
def test_auth_commands_answer_as_pi_does(tmp_path: Path, pi087: Pi087, command: str) -> None:
    theirs = _run(pi087.argv(*command.split()), _home(tmp_path / "pi", AUTH))
    ours = _run([sys.executable, "-m", "pi_tui", *command.split()], _home(tmp_path / "tui", AUTH))
    assert ours == theirs


def test_print_bearer_token_refreshes_a_login_about_to_expire(tmp_path: Path) -> None:
    with FakeAuthServer(access_prefix="xai-at-") as server:
        access, refresh = server.issue_tokens()
        soon = int(time.time() * 1000) + 10 * 60_000  # ten minutes: under the default thirty
        home = _home(
            tmp_path, {"xai": {"type": "oauth", "access": access, "refresh": refresh, "expires": soon}}
        )
        code, out, err = _run(
            [sys.executable, "-m", "pi_tui", "auth", "print-bearer-token", "--provider", "xai"],
            home,
            server.env(),
        )
        assert code == 0, err
        assert out != access and out in server.valid_access_tokens()
        stored = json.loads((home / ".pi" / "agent" / "auth.json").read_text())["xai"]
        assert stored["access"] == out and stored["expires"] > soon
        # with a minimum the token already meets, nothing is refreshed
        code, again, _ = _run(
            [
                sys.executable,
                "-m",
                "pi_tui",
                "auth",
                "print-bearer-token",
                "--provider",
                "xai",
                "--min-expiry",
                "5m",
            ],
            home,
            server.env(),
        )
        assert code == 0 and again == out
