"""RPC ``compact`` reports the same ``estimatedTokensAfter`` as pi 0.87.1 for the same session file.

pi estimates the compacted context as chars/4 of each of its messages, one of them being the system
message it persists (the prompt's sections and the tool declarations as JSON); a client comparing the two
programs' numbers must see the same figure. Both run on copies of a session pi recorded, against one fake
server that answers every summary request with the same text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text
from tests.e2e.helpers import write_models_json
from tests.pi087 import Pi087

from .rpc_client import RpcProcess

pytestmark = pytest.mark.slow

PLAIN = Path(__file__).resolve().parents[2] / "fixtures" / "pi087" / "plain.jsonl"
SUMMARY = "## Goal\nChange world to there.\n\n## Progress\n- hello.txt edited and shown"


def _compact(program: list[str] | None, session: Path, project: Path, env: dict[str, str]) -> dict[str, Any]:
    rpc = RpcProcess(
        project, "--model", "fake-anthropic/claude-fake", "--session", str(session), program=program, env=env
    )
    try:
        data: dict[str, Any] = rpc.call({"type": "compact"}, timeout=40)["data"]
        assert rpc.close() == 0
    finally:
        rpc.kill()
    return data


def test_compact_estimate_is_the_one_pi_reports(tmp_path: Path, agent_dir: Path, pi087: Pi087) -> None:
    fake = FakeLLM()
    fake.responder = lambda _request: Reply([text(SUMMARY)])
    # a small kept tail: the one long turn is cut inside, so both write a split-turn summary
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 50}}))
    project = tmp_path / "proj"
    project.mkdir()
    results: dict[str, dict[str, Any]] = {}
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        for name, program in (("pi", pi087.argv()), ("pi-tui", None)):
            copy = tmp_path / f"{name}.jsonl"
            header, *entries = PLAIN.read_text().splitlines(keepends=True)
            # pi refuses a session whose working directory is gone: the recording machine's is
            copy.write_text(json.dumps({**json.loads(header), "cwd": str(project)}) + "\n" + "".join(entries))
            results[name] = _compact(program, copy, project, pi087.env())
    pi, ours = results["pi"], results["pi-tui"]
    assert ours["summary"] == pi["summary"]
    assert (ours["firstKeptEntryId"], ours["tokensBefore"]) == (pi["firstKeptEntryId"], pi["tokensBefore"])
    assert ours["estimatedTokensAfter"] == pi["estimatedTokensAfter"]
    assert fake.violations == []
