from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from .helpers import run_cli, write_models_json

pytestmark = pytest.mark.slow

SHAPER = """
import os, time

def register(pi):
    pi.register_panel("Notes", lambda: "Remember: tests first.", placement="prefix")
    pi.register_panel("Status", lambda: "all green", placement="tail")

    @pi.on("context")
    def shape(event, ctx):
        if event.reason == "turn_end" and event.state.envelope.part("policy") is None:
            return {"transformerName": "policy", "patch": [{
                "op": "system_part_set", "scope": "cached", "partName": "policy",
                "text": "\\n\\n# Policy\\n\\nNever output secrets.", "invalidateCacheReason": "add policy section"}]}
        if event.reason == "ephemeral":
            return {"patch": [{"op": "messages_uncached_append", "scope": "uncached",
                               "messages": [{"role": "user", "content": "[request-only]"}]}]}

    runs = {"n": 0}

    @pi.on("agent_end")
    def hang(event, ctx):
        runs["n"] += 1
        if os.environ.get("SHAPER_HANG") and runs["n"] == 2:
            time.sleep(60)  # the process is killed here, after its second answer reached the file
"""


_STAMP = re.compile(r"Panel automatically generated at [0-9T:\-]+Z")


def _panel_times(body: dict) -> list[str]:
    return _STAMP.findall(json.dumps(body))


def _normalised(body: dict) -> str:
    return _STAMP.sub("Panel automatically generated at <time>", json.dumps(body, sort_keys=True))


def _session_file(agent_dir: Path) -> Path | None:
    files = list((agent_dir / "sessions").rglob("*.jsonl")) if (agent_dir / "sessions").exists() else []
    return files[0] if files else None


def _answers(path: Path | None) -> int:
    if path is None or not path.exists():
        return 0
    return sum('"role":"assistant"' in line.replace(" ", "") for line in path.read_text().splitlines())


def test_killed_process_resumes_with_the_live_request_bytes(tmp_path: Path, agent_dir: Path) -> None:
    ext = tmp_path / "shaper.py"
    ext.write_text(SHAPER)
    model = ["--model", "fake-anthropic/claude-fake", "-e", str(ext)]

    # The live process: both prompts in one run.
    live_cwd = tmp_path / "work"
    live_cwd.mkdir()
    live = FakeLLM()
    live.script([Reply([text("first")]), Reply([text("second")]), Reply([text("third")])])
    with live.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*model, "-p", "one", "two", "three"], live_cwd)
    assert run.returncode == 0, run.stderr
    live_body = live.requests[-1].body
    for f in (agent_dir / "sessions").rglob("*"):
        if f.is_file():
            f.unlink()

    # The same conversation, but the first process is killed (SIGKILL) after its first answer.
    fake = FakeLLM()
    fake.script([Reply([text("first")]), Reply([text("second")]), Reply([text("third")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        env = {**os.environ, "SHAPER_HANG": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "pi_tui", *model, "-p", "one", "two"],
            cwd=live_cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while _answers(_session_file(agent_dir)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the process should still be hanging in its agent_end handler"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        resumed = run_cli([*model, "-c", "-p", "three"], live_cwd)
    assert resumed.returncode == 0, resumed.stderr
    assert "third" in resumed.stdout

    resumed_body = fake.requests[-1].body
    # Two independent runs differ only in when their panels were first rendered; the resumed process
    # must reuse the killed process's panel times (restored from the file), and send otherwise the very
    # bytes of the live run.
    assert _panel_times(resumed_body) == _panel_times(fake.requests[-2].body) != []
    assert _normalised(resumed_body) == _normalised(live_body)
    assert live.violations == [] and fake.violations == []
    # the provider cache (the same fake) serves everything the killed process's last request had written
    first, second = fake.requests[-2], fake.requests[-1]
    assert second.cache.cache_read >= first.cache.cache_read + first.cache.cache_write
    # the persistent transform is in the file once and was replayed, the request-only text never persisted
    lines = [json.loads(x) for x in _session_file(agent_dir).read_text().splitlines()]
    assert sum(1 for e in lines if e["type"] == "context_transform") == 1
    assert "Never output secrets." in json.dumps(resumed_body["system"])
    assert "[request-only]" in json.dumps(resumed_body["messages"]) and "[request-only]" not in json.dumps(
        lines
    )
