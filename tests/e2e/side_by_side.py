"""Shared scaffolding of the side-by-side tests with pi 0.87.1: the read-two-files script both fakes
play, the temp home and project each program runs in, and the tool-schema scrub used before comparing
request bodies (tool descriptions are a listed deliberate difference).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from pi_tui.testing import Reply, text, thinking, tool_call

READ_BOTH_PROMPT = "What do hello.txt and bye.txt say?"
READ_BOTH_ANSWER = "They say hello world and bye."


def read_both_script(thinks: bool = True) -> list[Reply]:
    """Two turns: (optional reasoning,) text and two parallel reads, then the answer."""
    return [
        Reply(
            [
                *([thinking("I should read both files.")] if thinks else []),
                text("Let me read them."),
                tool_call("read", {"path": "hello.txt"}),
                tool_call("read", {"path": "bye.txt"}),
            ]
        ),
        Reply([text(READ_BOTH_ANSWER)]),
    ]


def without_descriptions(value: Any) -> Any:
    """``value`` with every ``description`` key dropped, at any depth."""
    if isinstance(value, dict):
        return {k: without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [without_descriptions(v) for v in value]
    return value


def run_read_both(
    argv: list[str],
    root: Path,
    *,
    providers: dict[str, Any],
    args: list[str],
    env: dict[str, str] | None = None,
    drop_env_prefix: str | None = None,
    auth: dict[str, Any] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` + ``args`` in a fresh home under ``root`` whose project holds hello.txt and bye.txt.

    Args:
        argv: the program (real pi or ``python -m pi_tui``).
        root: a directory of its own for this run.
        providers: the ``providers`` table written to the agent's models.json.
        args: command-line arguments after the program.
        env: variables set on top of the cleaned environment.
        drop_env_prefix: variables starting with this are removed from the inherited environment.
        auth: when given, written to the agent's auth.json (mode 0600).

    Returns:
        The finished process, output captured as text.
    """
    home = root / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    project = root / "project"
    project.mkdir()
    (project / "hello.txt").write_text("hello world\n")
    (project / "bye.txt").write_text("bye\n")
    (agent / "models.json").write_text(json.dumps({"providers": providers}))
    if auth is not None:
        auth_file = agent / "auth.json"
        auth_file.write_text(json.dumps(auth))
        auth_file.chmod(0o600)
    run_env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTEST_CURRENT_TEST"
        and not k.lower().endswith("_proxy")
        and not (drop_env_prefix and k.startswith(drop_env_prefix))
    }
    run_env |= {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [*argv, *args], cwd=project, env=run_env, capture_output=True, text=True, timeout=50
    )
