"""The headers GitHub Copilot wants on every request, whatever the wire API (as pi 0.87.1 sends them).

``X-Initiator`` says whether the user (the last message is theirs) or the agent (a tool result) started
the request, ``Openai-Intent: conversation-edits`` is fixed, and ``Copilot-Vision-Request: true`` is
added when any user message or tool result carries an image.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..types import ImageContent, LlmMessage, ToolResultMessage, UserMessage

__all__ = ["copilot_dynamic_headers"]


def copilot_dynamic_headers(messages: Sequence[LlmMessage]) -> dict[str, str]:
    """The per-request Copilot headers for ``messages``."""
    last = messages[-1] if messages else None
    headers = {
        "X-Initiator": "agent" if last is not None and not isinstance(last, UserMessage) else "user",
        "Openai-Intent": "conversation-edits",
    }
    for message in messages:
        if isinstance(message, UserMessage | ToolResultMessage) and not isinstance(message.content, str):
            if any(isinstance(part, ImageContent) for part in message.content):
                headers["Copilot-Vision-Request"] = "true"
                break
    return headers
