from __future__ import annotations

import json
from pathlib import Path

from pi_tui.ai.types import BashExecutionMessage
from pi_tui.args import parse_args
from pi_tui.modes.rpc.context_view import context_view
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text

OUTPUT = "\n".join(f"line {i} of a long listing" for i in range(2000))


async def _views(session: object) -> tuple[int, int, str]:
    """The next request's message tokens as the two /context views count them, and the markdown."""
    rpc = await context_view(session)
    tui = await session.context_report()
    return (
        rpc["tokens"]["cached"] + rpc["tokens"]["uncached"],
        tui.cached_tokens + tui.uncached_tokens,
        rpc["markdown"],
    )


async def test_context_leaves_out_shell_output_kept_out_of_context_as_the_request_does(
    fake: FakeLLM, tmp_path: Path
) -> None:
    fake.responder = lambda _request: Reply([text("ok")])
    session = create_session(parse_args(["--model", "fake-anthropic/claude-fake"]), tmp_path).session
    await session.prompt("first question")
    before_rpc, before_tui, _ = await _views(session)

    # `!!cmd`: the user's command runs and is shown, but its output is not for the model
    session.record_bash_execution(
        BashExecutionMessage(command="seq 2000", output=OUTPUT, exit_code=0, exclude_from_context=True)
    )
    after_rpc, after_tui, markdown = await _views(session)
    assert (after_rpc, after_tui) == (before_rpc, before_tui)
    assert "kept out of context" in markdown
    rows = (await context_view(session))["messages"]["cached"]
    assert [(row["role"], row["tokens"], row["sent"]) for row in rows][-1] == ("bashExecution", 0, False)

    await session.prompt("second question")
    await session.close()
    sent = fake.requests[-1].body["messages"]
    assert "line 1999 of a long listing" not in json.dumps(sent)
    # the request holds what the views listed as sent, plus the new prompt
    assert len(sent) == sum(row["sent"] for row in rows) + 1
    assert fake.violations == []

    # a plain `!cmd` is part of the request, and the views count it
    session = create_session(parse_args(["--model", "fake-anthropic/claude-fake", "-c"]), tmp_path).session
    kept_rpc, kept_tui, _ = await _views(session)
    session.record_bash_execution(BashExecutionMessage(command="seq 2000", output=OUTPUT, exit_code=0))
    shown_rpc, shown_tui, _ = await _views(session)
    assert shown_rpc - kept_rpc > len(OUTPUT) // 8 and shown_tui - kept_tui > len(OUTPUT) // 8
    await session.close()
