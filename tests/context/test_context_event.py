from __future__ import annotations

import pytest

from pi_tui.ai.types import UserMessage
from pi_tui.context.envelope import ContextEnvelope
from pi_tui.context.hooks import ContextEvent


def test_a_handler_written_like_pi_reads_the_event_by_key_and_nothing_else() -> None:
    envelope = ContextEnvelope(cached=(UserMessage(content="hi"),))
    event = ContextEvent("ephemeral", envelope)
    assert event["type"] == "context" and event["reason"] == "ephemeral"
    assert event["state"].envelope is envelope
    assert event["messages"] == list(envelope.cached) and event["messages"] is event.messages
    with pytest.raises(KeyError):
        event["_messages"]
