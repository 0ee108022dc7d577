from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.runtime.helpers import open_session

__all__ = ["MODEL_COST", "Run", "open_session", "rehome_session", "run_cli", "write_models_json"]

MODEL_COST = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def write_models_json(agent_dir: Path, server: Any, *, context_window: int = 200_000) -> None:
    """Two providers that point at the fake server: one per wire API under test."""
    model = {"contextWindow": context_window, "maxTokens": 8192, "cost": MODEL_COST}
    config = {
        "providers": {
            "fake-anthropic": {
                "baseUrl": server.anthropic_base_url,
                "api": "anthropic-messages",
                "apiKey": "test-key",
                "models": [{"id": "claude-fake", **model}],
            },
            "fake-openai": {
                "baseUrl": server.openai_base_url,
                "api": "openai-completions",
                "apiKey": "test-key",
                "models": [{"id": "gpt-fake", **model}],
            },
            "fake-responses": {
                "baseUrl": server.openai_base_url,
                "api": "openai-responses",
                "apiKey": "test-key",
                "models": [{"id": "gpt-fake-r", **model}],
            },
        }
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(config, indent=2))


def rehome_session(path: Path, cwd: Path) -> None:
    """Make the session file at ``path`` record ``cwd`` as its working directory (its header's ``cwd``).

    ``--session`` runs a session in the directory its file records and refuses to start when that is
    gone, as pi does; fixtures recorded elsewhere (another machine, a deleted temp folder) are rehomed to
    the test's project so they open there. Only the header line changes."""
    header, rest = path.read_text(encoding="utf-8").split("\n", 1)
    fields = json.loads(header)
    fields["cwd"] = str(cwd)
    path.write_text(json.dumps(fields, separators=(",", ":"), ensure_ascii=False) + "\n" + rest, encoding="utf-8")


def run_cli(args: list[str], cwd: Path, *, stdin: str | None = None, timeout: float = 60) -> Run:
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pi_tui", *args],
        cwd=cwd,
        env=env,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
