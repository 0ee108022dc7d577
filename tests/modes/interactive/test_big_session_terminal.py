"""A big session in a real terminal: its last messages show at once, the editor takes keys while the
rest loads, and a prompt sent during the load is sent once the session is ready (not lost, not twice)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bench.big_sessions import BIG_WINDOW, big_session_lines
from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM, Reply, text

pytestmark = pytest.mark.slow

ENTRIES = 20_000


def test_a_prompt_typed_while_a_big_session_loads_is_sent_once_it_is_ready(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    lines = big_session_lines(ENTRIES, project)
    session = tmp_path / "big.jsonl"
    session.write_text("\n".join(lines) + "\n")
    last_words = " ".join(json.loads(lines[-1])["message"]["content"][0]["text"].split()[:3])
    fake = FakeLLM(context_window=BIG_WINDOW)
    fake.script([Reply([text("EARLYANSWER arrived.")])])
    agent_dir = isolated_home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    with fake.serve() as server:
        config = {
            "providers": {
                "bench": {
                    "baseUrl": server.anthropic_base_url,
                    "api": "anthropic-messages",
                    "apiKey": "test-key",
                    "models": [{"id": "bench-model", "contextWindow": BIG_WINDOW, "maxTokens": 8192}],
                }
            }
        }
        # The load reads models.json in the start-up thread: as a named pipe, it waits for the test to
        # write it, so Enter surely comes during the load (on a fast machine the load could end first).
        models = agent_dir / "models.json"
        os.mkfifo(models)
        env = {
            "HOME": str(isolated_home),
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "PI_OFFLINE": "1",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
        }
        argv = [sys.executable, "-m", "pi_tui", "--session", str(session)]
        with PtyScreen(argv, cwd=project, env=env, columns=120, lines=40) as term:
            term.wait_for(last_words, timeout=30)  # the preview of the file's tail: the load goes on
            assert "bench-model" not in term.text()  # the footer names the model once it is loaded
            term.send("early prompt")
            term.wait_for("early prompt", timeout=10)  # the editor echoes keys during the load
            term.send("\r")
            # Enter during the load: the message waits and says so, then goes once the session is ready.
            term.wait_for("Startup is still in progress", timeout=10)
            models.write_text(json.dumps(config))  # the load goes on
            term.wait_for("EARLYANSWER", timeout=60)
            final = term.text()
            term.send("\x03")
            term.send("\x03")
            assert term.wait_exit(timeout=20) == 0
    assert "bench-model" in final
    assert len(fake.requests) == 1
    sent = fake.requests[0].body["messages"][-1]
    assert sent["role"] == "user" and "early prompt" in json.dumps(sent["content"])
