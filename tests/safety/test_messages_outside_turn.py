"""Messages saved outside a turn (an extension's message while idle, ``!cmd``) pass the ``message`` hook, so
a masking extension masks them in the session file (issue #15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.ai.types import BashExecutionMessage
from pi_tui.testing import FakeLLM, Reply, text
from tests.e2e.helpers import write_models_json
from tests.extensions.helpers import Events, open_session
from tests.modes.rpc.rpc_client import RpcProcess

from .helpers import MODEL, session_lines

AWS = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
CREDENTIALS = f"[default]\naws_access_key_id = {AWS}\naws_secret_access_key = {AWS_SECRET}\n"


@pytest.mark.slow
def test_rpc_bash_with_the_redactor_streams_and_is_saved_masked(tmp_path: Path, agent_dir: Path) -> None:
    (tmp_path / "credentials").write_text(CREDENTIALS)
    fake = FakeLLM()
    fake.script([Reply([text("hello")]), Reply([text("noted")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, *MODEL, "-e", "secret_redactor")
        try:
            rpc.call({"type": "prompt", "message": "hi"})
            rpc.event("agent_settled")
            answer, before = rpc.response(rpc.send({"type": "bash", "command": "cat credentials"}))
            assert answer["success"] is True
            # run by the mode's own shell, not inside the extension: the output streamed while it ran
            assert any(r.get("type") == "bash_execution_update" for r in before), before
            rpc.call({"type": "prompt", "message": "what did it print?"})
            rpc.event("agent_settled")
            assert rpc.close() == 0
        finally:
            rpc.kill()
    saved = json.dumps(session_lines(agent_dir))
    sent = json.dumps([r.body for r in fake.requests])
    for where, data in [("the session file", saved), ("a request", sent)]:
        for secret in (AWS, AWS_SECRET):
            assert secret not in data, f"{secret} leaked into {where}"
    assert "aws_secret_access_key = [REDACTED:secret]" in saved


AWAITER = """
import asyncio

def register(pi):
    @pi.on("message")
    async def slow(event):
        await asyncio.sleep(0)
        return {"message": {**event.message.model_dump(by_alias=True), "output": "changed"}}
"""


async def test_a_message_handler_that_awaits_is_skipped_and_reported_and_the_message_is_kept(
    tmp_path: Path,
) -> None:
    awaiter = tmp_path / "awaiter.py"
    awaiter.write_text(AWAITER)
    async with open_session(["-e", str(awaiter)], tmp_path) as session:
        await session.start()
        events = Events(session)
        session.record_bash_execution(BashExecutionMessage(command="echo hi", output="hi\n", exit_code=0))
        await session.extensions.drain(5)
        assert session.agent.messages[-1].output == "hi\n"  # kept as it was
    (error,) = events.errors()
    assert error["event"] == "message" and error["extension"] == "awaiter"
    assert "awaited on a message saved outside a turn" in error["error"]
