"""The conversation as pi's ``get_messages`` lists it: the messages the next request carries, with the
system messages recorded on the active path in their places.

pi keeps its persisted prompt (``role: "system"`` messages, `pi_tui.session.system`) among the agent's
messages, so its ``get_messages`` lists them and ``get_state.messageCount`` counts them. pi-tui keeps
them out of the conversation (`AgentSession.messages`); this puts them back for the RPC answer: each
before the first message recorded after it on the path. After a compaction pi wrote, its checkpoint
comes first and only the system messages after the compaction follow, as pi rebuilds its context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.ai.types import dump_message
from pi_tui.session.entries import CompactionEntry, MessageEntry, SystemMessageEntry
from pi_tui.session.system import system_message_dict

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["transcript_messages"]


def transcript_messages(session: AgentSession) -> list[dict[str, object]]:
    """`AgentSession.messages` in pi's JSON shapes, the path's system messages placed among them."""
    path = session.session_manager.get_kept_branch()
    at: dict[int, int] = {}  # a message object's place on the path
    systems: list[tuple[int, dict[str, object]]] = []
    for index, entry in enumerate(path):
        if isinstance(entry, MessageEntry):
            at[id(entry.message)] = index
        elif isinstance(entry, SystemMessageEntry):
            system = system_message_dict(entry)
            if system is not None:
                systems.append((index, system))
        elif isinstance(entry, CompactionEntry):
            # (placed before every message: the kept ones come before the compaction on the path)
            systems = [(-1, entry.system_message)] if entry.system_message is not None else []
    out: list[dict[str, object]] = []
    pending = iter(systems)
    upcoming = next(pending, None)
    place = -1
    for message in session.messages:
        place = at.get(id(message), place)  # a summary or an edited message: where the last one was
        while upcoming is not None and upcoming[0] <= place:
            out.append(upcoming[1])
            upcoming = next(pending, None)
        out.append(dump_message(message))
    while upcoming is not None:
        out.append(upcoming[1])
        upcoming = next(pending, None)
    return out
