"""A deferred resume's first request retried: the history is fingerprinted once, not once per attempt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.big_sessions import big_session_lines
from pi_tui.args import parse_args
from pi_tui.context import request as fingerprints
from pi_tui.modes.print_mode import run_print_mode
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Fault, Reply, text

from ..e2e.helpers import write_models_json

MODEL = "fake-anthropic/claude-fake"


@pytest.mark.parametrize("model", [MODEL, "fake-gemini/gemini-fake"], ids=["anthropic", "gemini"])
async def test_retries_of_a_deferred_first_request_fingerprint_the_history_once(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(big_session_lines(3_000, tmp_path)) + "\n")
    seen: list[int] = []  # messages fingerprinted anew, one count per fingerprint pass
    original = fingerprints._message_canonical

    def counted(message: object) -> object:
        seen.append(1)
        return original(message)  # type: ignore[arg-type]

    fake = FakeLLM()
    fake.script([Fault("overloaded"), Fault("overloaded"), Reply([text("Done.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        config = json.loads((agent_dir / "models.json").read_text())
        config["providers"]["fake-gemini"] = {
            "baseUrl": server.gemini_base_url,
            "api": "google-generative-ai",
            "apiKey": "test-key",
            "models": [{"id": "gemini-fake", "contextWindow": 200_000, "maxTokens": 8192}],
        }
        (agent_dir / "models.json").write_text(json.dumps(config))
        (agent_dir / "settings.json").write_text('{"retry": {"baseDelayMs": 1}}')
        session = create_session(
            parse_args(["--session", str(path), "--model", model, "-p", "hi"]), tmp_path
        ).session
        assert session.session_manager.deferred_history is not None
        monkeypatch.setattr(fingerprints, "_message_canonical", counted)
        try:
            assert await run_print_mode(session, ["hi"]) == 0
            history = len(session.agent.messages)
            blocks = session.engine.ledger.last_blocks  # the last request's, computed if they wait
        finally:
            await session.close()
    assert len(fake.requests) == 3
    assert history > 2_900 and len(blocks) > history
    # the request holds all but the answer: one pass over it, not one per attempt
    assert history - 1 <= len(seen) < history + 50, len(seen)
