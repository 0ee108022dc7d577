"""Homes, sessions and fake-server scripts for the TUI benchmarks (`bench.tui`)."""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    "TuiEnv",
    "make_tui_env",
    "copy_large_session",
    "write_history_session",
    "LARGE_SESSION",
    "MODEL_ID",
]

LARGE_SESSION = Path("/work/shared/fixtures/pi-sessions/large-session.jsonl")
if not LARGE_SESSION.exists():  # a clone beside ../shared
    LARGE_SESSION = (
        Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "pi-sessions" / "large-session.jsonl"
    )
LARGE_LAST_WORDS = "mismatches"
"""A word of the large session's last assistant message: when it is on screen, so are its last messages."""

REPO_NAME = "benchrepo"
"""The working directory's name: both programs show it in the footer, so it marks a drawn frame."""

PROVIDER = "bench"
MODEL_ID = "bench-model"
_COST = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}


@dataclass
class TuiEnv:
    """A temp home with a ``models.json`` pointing at the fake server, and an empty repo to run in."""

    root: Path
    home: Path
    agent_dir: Path
    repo: Path

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def make_tui_env(server: Any) -> TuiEnv:
    root = Path(tempfile.mkdtemp(prefix="pi-tui-tui-bench-"))
    env = TuiEnv(root, root / "home", root / "home" / ".pi" / "agent", root / REPO_NAME)
    env.agent_dir.mkdir(parents=True)
    env.repo.mkdir()
    config = {
        "providers": {
            PROVIDER: {
                "baseUrl": server.anthropic_base_url,
                "api": "anthropic-messages",
                "apiKey": "bench-key",
                "models": [{"id": MODEL_ID, "contextWindow": 200_000, "maxTokens": 8192, "cost": _COST}],
            }
        }
    }
    (env.agent_dir / "models.json").write_text(json.dumps(config))
    # pi: no changelog or tips on start; both programs get the same settings file.
    (env.agent_dir / "settings.json").write_text(
        json.dumps({"defaultProvider": PROVIDER, "defaultModel": MODEL_ID, "quietStartup": True})
    )
    return env


def copy_large_session(env: TuiEnv) -> Path:
    """The 1,019-line fixture, copied, with its header's cwd set to the repo (pi refuses a missing cwd)."""
    lines = LARGE_SESSION.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["cwd"] = str(env.repo)
    lines[0] = json.dumps(header) + "\n"
    target = env.root / "large-session.jsonl"
    target.write_text("".join(lines))
    return target


_ANSWER = (
    "Here is what I found in `{path}`:\n\n"
    "- the loader reads the file once and caches it\n"
    "- errors are reported with the line number\n\n"
    "```python\ndef load(path):\n    return parse(path.read_text())\n```\n\n"
    "The fix is to keep the cache keyed by the resolved path, as the rest of the module does."
)


def write_history_session(env: TuiEnv, messages: int = 1000) -> Path:
    """A pi v3 session of ``messages`` messages (user/assistant pairs with markdown and a code block)."""
    start = datetime(2025, 6, 1, tzinfo=UTC)
    session_id = str(uuid.UUID(int=42, version=4))
    iso = start.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    out = [{"type": "session", "version": 3, "id": session_id, "timestamp": iso, "cwd": str(env.repo)}]
    parent: str | None = None
    usage = {
        "input": 100,
        "output": 80,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 180,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    for i in range(messages):
        stamp = start + timedelta(seconds=30 * i)
        iso = stamp.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        ms = int(stamp.timestamp() * 1000)
        entry_id = f"{i + 1:08x}"
        if i % 2 == 0:
            message: dict[str, Any] = {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"Question {i // 2}: why does src/mod_{i}.py fail to load?"}
                ],
                "timestamp": ms,
            }
        else:
            message = {
                "role": "assistant",
                "content": [{"type": "text", "text": _ANSWER.format(path=f"src/mod_{i - 1}.py")}],
                "api": "anthropic-messages",
                "provider": PROVIDER,
                "model": MODEL_ID,
                "usage": usage,
                "stopReason": "stop",
                "timestamp": ms,
            }
        out.append(
            {"type": "message", "id": entry_id, "parentId": parent, "timestamp": iso, "message": message}
        )
        parent = entry_id
    path = env.root / "history-1000.jsonl"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in out))
    return path
