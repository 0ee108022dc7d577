"""``--mode json`` records in pi 0.87.1's shapes and order.

Shapes come from the RPC mapper (`pi_tui.modes.rpc.events.EventMapper`): delta-only ``message_update``
with the latest ``usage``, ``stopReason: "pending"`` on the streaming assistant's ``message_start``,
``agent_end.willRetry``, ``compaction_start`` / ``compaction_end`` with a ``reason``.

Order, as pi 0.87.1 prints it for the same run (``tests/fixtures/pi087/json-mode.events.jsonl``):

- a turn's input messages (the prompt, queued steering or follow-ups) come *after* its ``turn_start``;
  pi-tui's loop announces them just before, so they are held back until the turn starts;
- pi announces each system message it persists (``message_start`` / ``message_end`` with
  ``role: "system"``: the whole prompt and tools at a session's first request, a patch when they
  change) among the turn's input messages, before the prompt; pi-tui announces the ones it writes
  (`AgentSession.system_messages_written`) in the same place, and a patch written for a later request
  of the run just before that request's answer;
- ``agent_settled`` follows each prompt once nothing else (retry, compaction, queued message) will run;
- ``turn_start`` / ``turn_end`` carry no ``turnIndex`` or ``timestamp``;
- the assistant's ``message_start`` goes out with the stream's first event, so it carries the provider's
  ``responseId`` and the usage its opening event reported (Anthropic's prompt and cache counts; zeros
  for APIs that report usage only at the end); an answer that failed before streaming anything (an HTTP error) starts as it ends,
  with its ``stopReason: "error"`` and ``errorMessage``;
- pi ends a run at each retried failure: ``agent_end`` (``willRetry: true``) comes before
  ``auto_retry_start`` and the attempt opens with ``agent_start``; pi-tui retries inside one run, so the
  stream frames each attempt as pi does. ``agent_end.messages`` are the messages announced since the
  (attempt's) ``agent_start``, the system message included; a chain that gives up ends the run before
  its ``auto_retry_end``. Likewise a request refused as too long ends its run (``willRetry: false``)
  before ``compaction_start`` (reason ``overflow``), and the request sent again after the compaction
  opens a run of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_tui.agent.events import (
    AgentEnd,
    AgentEvent,
    AutoCompactionEnd,
    AutoCompactionStart,
    AutoRetryEnd,
    AutoRetryStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    RuntimeEvent,
    TurnStart,
)
from pi_tui.ai.types import AssistantMessage, dump_message
from pi_tui.modes.rpc.events import EventMapper

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["JsonEventStream"]

Emit = Callable[[dict[str, Any]], None]


class JsonEventStream:
    """Turns a session's events into pi 0.87.1's JSON-mode records, in pi's order.

    Args:
        session: the `AgentSession` being run (read for its prompt and session path).
        emit: receives each record.
    """

    def __init__(self, session: AgentSession, emit: Emit) -> None:
        self._session = session
        self._emit = emit
        self._mapper = EventMapper()
        self._held: list[dict[str, Any]] = []
        self._between_turns = False
        self._announced_system = len(session.system_messages_written)
        self._ran = False
        self._start: dict[str, Any] | None = None  # the assistant's message_start, until its stream begins
        # The JSON of the messages announced since the (attempt's) agent_start: agent_end lists them.
        self._run_messages: list[dict[str, object]] = []
        self._run_open = False  # an agent_start was sent and its agent_end was not
        self._reopen = False  # the run goes on after pi would have ended it: agent_start at the next turn
        self._gave_up: dict[str, Any] | None = None  # auto_retry_end of a failed chain, after agent_end

    def on_event(self, event: AgentEvent | RuntimeEvent) -> None:
        kind = event.type
        if self._start is not None:
            self._release_start(event)
        if kind == "agent_start":
            self._ran = True
            self._between_turns = True
            self._run_messages = []
            self._run_open = True
        if isinstance(event, AutoRetryStart):
            self._end_run(will_retry=True)
            self._reopen = True
        elif isinstance(event, AutoCompactionStart) and event.reason == "overflow":
            self._end_run(will_retry=False)  # pi compacts after the refused run has ended
        elif isinstance(event, AutoCompactionEnd) and event.will_retry:
            self._reopen = True
        elif isinstance(event, AutoRetryEnd) and not event.success and self._run_open:
            self._gave_up = self._mapper.to_record(event)  # the last attempt's run ends first
            return
        elif isinstance(event, AgentEnd):
            self._end_run(will_retry=False)  # unless a cancelled retry's run has ended already
            self._reopen = False
            self._between_turns = False
            if self._gave_up is not None:
                self._out(self._gave_up)
                self._gave_up = None
            return
        if (
            self._between_turns
            and isinstance(event, MessageStart | MessageEnd)
            and not isinstance(event.message, AssistantMessage)
        ):
            record = self._mapper.to_record(event)
            if record is not None:
                self._held.append(record)
            return
        record = self._mapper.to_record(event)
        if record is not None and kind in ("turn_start", "turn_end"):  # pi prints no index or time
            record.pop("turnIndex", None)
            record.pop("timestamp", None)
        if isinstance(event, TurnStart):
            self._between_turns = False
            if self._reopen and not self._run_open:
                self._reopen = False
                self._run_open = True
                self._out({"type": "agent_start"})
            if record is not None:
                self._out(record)
            self._announce_system()
            self._flush()
            return
        self._flush()
        if (
            record is not None
            and isinstance(event, MessageStart)
            and record["message"]["role"] == "assistant"
        ):
            self._announce_system()  # a patch written for this request comes before its answer
            self._start = record
            return
        if record is not None:
            self._out(record)
        if kind == "turn_end":
            self._between_turns = True

    def _end_run(self, *, will_retry: bool) -> None:
        """Send ``agent_end`` for the open run (its messages so far), as pi ends a run."""
        self._flush()
        if self._run_open:
            self._out({"type": "agent_end", "messages": self._run_messages, "willRetry": will_retry})
            self._run_open = False
        self._run_messages = []

    def _release_start(self, event: AgentEvent | RuntimeEvent) -> None:
        """Send the held assistant ``message_start`` before ``event``, completed as pi's start event
        completes it: the stream's ``responseId`` and the usage known so far, or the whole failed answer
        when nothing streamed."""
        start, self._start = self._start, None
        if start is None:
            return
        message = start["message"]
        if isinstance(event, MessageUpdate):
            if event.message.response_id is not None:
                message["responseId"] = event.message.response_id
            # what the provider's opening event said of the usage (Anthropic's message_start: the prompt's
            # input and cache counts), as pi's record shows it
            message["usage"] = event.message.usage.to_json_dict()
        elif isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            if event.message.stop_reason in ("error", "aborted"):
                start = {"type": "message_start", "message": dump_message(event.message)}
        self._out(start)

    def settled(self) -> None:
        """Call when a prompt has fully finished: emits ``agent_settled`` after a run."""
        self._flush()
        if self._ran:
            self._emit({"type": "agent_settled"})
        self._ran = False

    def _announce_system(self) -> None:
        """Announce the system messages the session wrote since the last announcement."""
        written = self._session.system_messages_written
        for message in written[self._announced_system :]:
            self._out({"type": "message_start", "message": message})
            self._out({"type": "message_end", "message": message})
        self._announced_system = len(written)

    def _flush(self) -> None:
        held, self._held = self._held, []
        for record in held:
            self._out(record)

    def _out(self, record: dict[str, Any]) -> None:
        if record.get("type") == "message_end":
            self._run_messages.append(record["message"])
        self._emit(record)
