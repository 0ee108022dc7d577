"""Side by side with pi 0.87.1: ``--mode json`` around retried provider failures (the RPC stream shares
`pi_tui.modes.json_events.JsonEventStream`).

pi ends a run at each failure it will retry: ``agent_end`` with ``willRetry: true`` comes before
``auto_retry_start``, and the next attempt opens with its own ``agent_start``; a chain that gives up ends
its last run before ``auto_retry_end``. An answer that failed before anything streamed (an HTTP error)
starts as it ends (``message_start`` already has ``stopReason: "error"`` and the ``errorMessage``).
``agent_end.messages`` are the messages since that run's ``agent_start``, the system message included.

Not compared: pi's ``entry_appended`` (the ``context_edit`` entry that hides a failed attempt from the
model; pi-tui leaves failed answers out of the request without writing such an entry), the system
message's ``sections`` (a listed deliberate difference), the error texts (pi-tui adds what to check).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Fault, Reply, text

from ..e2e.side_by_side import run_in_home, run_pair
from ..pi087 import Pi087

pytestmark = pytest.mark.slow

FAST_RETRIES = {"retry": {"baseDelayMs": 5, "maxDelayMs": 0}}


def _providers(fake: FakeLLM) -> dict[str, Any]:
    assert fake.server is not None
    model = {"id": "claude-fake", "contextWindow": 200_000, "maxTokens": 8192}
    return {
        "fake-anthropic": {
            "baseUrl": fake.server.anthropic_base_url,
            "api": "anthropic-messages",
            "apiKey": "test-key",
            "models": [model],
        }
    }


def _runner(prompts: list[str]) -> Callable[[list[str], Path, FakeLLM], subprocess.CompletedProcess[str]]:
    def run(argv: list[str], root: Path, fake: FakeLLM) -> subprocess.CompletedProcess[str]:
        return run_in_home(
            argv,
            root,
            providers=_providers(fake),
            args=["--mode", "json", "--model", "fake-anthropic/claude-fake", *prompts],
            settings=FAST_RETRIES,
        )

    return run


def _outline(stdout: str) -> list[str]:
    """One word per record (deltas dropped), with what a client keys on: roles, stop reasons, willRetry."""
    out: list[str] = []
    for line in stdout.splitlines()[1:]:  # the session header is compared elsewhere
        record = json.loads(line)
        kind = record["type"]
        if kind in ("message_update", "entry_appended"):
            continue
        if kind in ("message_start", "message_end"):
            message = record["message"]
            kind += f":{message['role']}:{message.get('stopReason', '')}:{'errorMessage' in message}"
        elif kind == "agent_end":
            kind += f":{[m['role'] for m in record['messages']]}:{record['willRetry']}"
        elif kind == "auto_retry_end":
            kind += f":{record['success']}:{record['attempt']}"
        elif kind == "auto_retry_start":
            kind += f":{record['attempt']}"
        out.append(kind)
    return out


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(lambda: [Fault("rate_limit"), Reply([text("recovered")])], id="429-then-answer"),
        pytest.param(lambda: [Fault("overloaded")] * 4, id="529-gives-up"),
    ],
)
def test_retried_failures_frame_runs_as_pi_does(
    pi087: Pi087, tmp_path: Path, script: Callable[[], list[Reply | Fault]]
) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(pi087, tmp_path, FakeLLM, script, _runner(["hi"]))
    assert (pi_run.returncode, tui_run.returncode) == (0, 0), (pi_run.stderr, tui_run.stderr)
    assert len(pi_fake.requests) == len(tui_fake.requests)
    ours = _outline(tui_run.stdout)
    assert ours == _outline(pi_run.stdout)
    assert "agent_end:['system', 'user', 'assistant']:True" in ours


def test_overflow_compaction_frames_runs_as_pi_does(pi087: Pi087, tmp_path: Path) -> None:
    """Two long prompts (enough to compact), then a request refused as too long: pi ends that run
    (``willRetry: false``), compacts (``compaction_end`` with ``willRetry: true``) and sends the request
    again in a new run."""

    def script() -> list[Reply | Fault]:
        return [
            Reply([text("first answer")]),
            Reply([text("second answer")]),
            Fault("context_overflow", tokens=250_000),
            Reply([text("## Goal\nThe summary.")]),
            Reply([text("third answer")]),
        ]

    run = _runner(["a " * 60_000, "b " * 60_000, "c"])
    pi_fake, pi_run, tui_fake, tui_run = run_pair(pi087, tmp_path, FakeLLM, script, run)
    assert (pi_run.returncode, tui_run.returncode) == (0, 0), (pi_run.stderr, tui_run.stderr)
    assert len(pi_fake.requests) == len(tui_fake.requests) == 5
    ours = _outline(tui_run.stdout)
    assert ours == _outline(pi_run.stdout)
    refused = ours.index("message_end:assistant:error:True")
    assert ours[refused + 1 : refused + 5] == [
        "turn_end",
        "agent_end:['user', 'assistant']:False",
        "compaction_start",
        "compaction_end",
    ]
    assert ours[refused + 5] == "agent_start"
