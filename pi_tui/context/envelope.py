"""The ContextEnvelope: everything one provider request is made of.

- ``system_parts``: named parts whose concatenation is the system prompt (``system_compiled``)
- ``tools``: tool *definitions* (serialisable; implementations are rehydrated by name)
- ``cached``: durable conversation history, meant to be served from the prompt cache
- ``uncached``: a request-only tail, always sent after ``cached``
- ``options``: generation knobs (reasoning, temperature, maxTokens)
- ``meta``: model, session id, cancellation signal (never serialised)

Envelopes are values: patch functions return new envelopes and never mutate their input, so a hook can
be handed the current envelope without being able to corrupt it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import Message, Model, ToolDefinition, dump_message
from pi_tui.util.json_types import JsonObject

__all__ = ["SystemPart", "EnvelopeMeta", "ContextEnvelope"]


@dataclass(frozen=True, slots=True)
class SystemPart:
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class EnvelopeMeta:
    model: Model | None = None
    session_id: str | None = None
    signal: AbortSignal | None = None


@dataclass(frozen=True, slots=True)
class ContextEnvelope:
    system_parts: tuple[SystemPart, ...] = ()
    tools: tuple[ToolDefinition, ...] = ()
    cached: tuple[Message, ...] = ()
    uncached: tuple[Message, ...] = ()
    options: JsonObject = field(default_factory=dict)
    meta: EnvelopeMeta = field(default_factory=EnvelopeMeta)
    # Entry id each cached message came from (None for messages a patch created). Lets a
    # `compaction_apply` op find its first kept entry after replay.
    cached_origins: tuple[str | None, ...] = ()

    @property
    def system_compiled(self) -> str:
        return "".join(part.text for part in self.system_parts)

    @property
    def messages(self) -> tuple[Message, ...]:
        """What the provider receives, in order: cached then uncached."""
        return self.cached + self.uncached

    def part(self, name: str) -> SystemPart | None:
        return next((p for p in self.system_parts if p.name == name), None)

    def with_cached_appended(self, message: Message, origin: str | None = None) -> ContextEnvelope:
        origins = self.origins()
        return replace(self, cached=(*self.cached, message), cached_origins=(*origins, origin))

    def origins(self) -> tuple[str | None, ...]:
        """The session entry each cached message came from, aligned with ``cached`` (None where unknown)."""
        if len(self.cached_origins) == len(self.cached):
            return self.cached_origins
        return (None,) * len(self.cached)

    def to_json(self) -> JsonObject:
        """A JSON view for extensions, RPC and tests (meta reduced to ids)."""
        return {
            "system": {
                "parts": [{"name": p.name, "text": p.text} for p in self.system_parts],
                "compiled": self.system_compiled,
            },
            "tools": [t.to_json_dict() for t in self.tools],
            "messages": {
                "cached": [dump_message(m) for m in self.cached],
                "uncached": [dump_message(m) for m in self.uncached],
            },
            "options": dict(self.options),
            "meta": {
                "model": self.meta.model.label if self.meta.model else None,
                "sessionId": self.meta.session_id,
            },
        }
