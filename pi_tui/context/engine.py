"""The per-request context pipeline:

1. patch replay — the envelope is rebuilt from the session's active path; no hook code runs
2. ``context(before_request)`` — cached patches, persisted as ``context_transform`` entries
3. compaction preflight (a callback the runtime provides)
4. ``context(ephemeral)`` — request-local patches and pi-style ``messages`` transforms; panels are placed
5. the provider call (by the agent loop), then 6. the ``message`` hook (by the loop)
7. ``context(turn_end)`` — cached patches, persisted
8. compaction evaluation (by the runtime)

Because step 1 always rebuilds from the session file's entries, the live process and a process that
resumes the file build byte-identical requests: there is no state that replay could miss.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from pi_tui.ai.stream import AbortSignal, LlmRequest
from pi_tui.ai.types import Message, ToolDefinition
from pi_tui.session.edits import apply_context_edit, latest_context_edits
from pi_tui.session.entries import (
    BranchSummaryEntry,
    ContextEditEntry,
    CustomMessageEntry,
    MessageEntry,
    RawEntry,
    SessionEntry,
    SystemMessageEntry,
)
from pi_tui.session.entry_reader import (
    branch_summary_message,
    custom_message,
    iso_to_ms,
    read_compaction,
    read_transform,
)
from pi_tui.session.system import SystemState
from pi_tui.util.json_types import JsonObject
from pi_tui.util.large_buffers import LARGE_REQUEST_TOKENS, keep_large_buffers

from .envelope import ContextEnvelope, SystemPart
from .hooks import ContextHandler, HookOutcome, run_context_hooks
from .ledger import Attribution, CacheLedger, RequestRecord
from .patches import apply_ops, op_touches_cache
from .request import fingerprint, to_llm_request

__all__ = ["replay_entries", "ContextEngine", "PreparedRequest", "ReplayCache"]

log = logging.getLogger(__name__)

# A history longer than this many messages makes megabyte request bodies (see `keep_large_buffers`).
LARGE_REQUEST_MESSAGES = 200


def _resolve_first_kept(
    env: ContextEnvelope, op: JsonObject, positions: dict[str, int]
) -> JsonObject:
    """Point a compaction's ``firstKeptEntryId`` at a message of the cached region.

    pi moves a cut back over non-message entries (model or thinking changes), so the first kept entry may
    contribute no message; the kept context then starts at the first message after it on the path.
    """
    first = op.get("firstKeptEntryId")
    origins = env.origins()
    if first is None or first in origins or first not in positions:
        return op
    at = positions[first]
    for origin in origins:
        if origin is not None and positions.get(origin, -1) >= at:
            return {**op, "firstKeptEntryId": origin}
    return {**op, "firstKeptEntryId": None}  # nothing after the cut yet: only the summary remains


def _with_system_state(env: ContextEnvelope, state: SystemState, base: ContextEnvelope) -> ContextEnvelope:
    """The envelope with pi's persisted prompt and tools in place of the base ones.

    A session that carries pi's system messages is sent the prompt and tool declarations pi persisted,
    so a session started in pi keeps its prompt-cache prefix when pi-tui continues it. A run-level
    ``before_agent_start`` addition still follows the prompt as its own part, and a run-level prompt
    that replaces the whole prompt (the base's single ``system`` part) still wins, as pi's forced
    prompt does. With no persisted state (a compaction without a checkpoint) the base comes back, and
    so it does for pi-tui's own persisted prompt (`SystemState.own`): pi-tui writes a patch before each
    request whose prompt or tools changed, so at a request it equals the base, which stays the one
    source of the bytes sent.
    """
    if not state.seen or state.own:
        return replace(env, system_parts=base.system_parts, tools=base.tools)
    if any(p.name == "system" for p in base.system_parts):
        parts = list(base.system_parts)
    else:
        parts = [SystemPart(name, text) for name, text in state.parts()]
        parts += [p for p in base.system_parts if p.name == "before_agent_start"]
    tools: list[ToolDefinition] = []
    for declaration in state.tools.values():
        try:
            tools.append(ToolDefinition.model_validate(declaration))
        except ValueError as exc:
            log.warning("skipping persisted tool declaration %r: %s", declaration.get("name"), exc)
    return replace(env, system_parts=tuple(parts), tools=tuple(tools))


def replay_entries(base: ContextEnvelope, path: Sequence[SessionEntry]) -> ContextEnvelope:
    """Fold the entries of an active path (root first) into an envelope.

    Messages append to the cached region; ``context_transform`` patches apply where they sit in the path;
    pi's legacy ``compaction`` entries act as a ``compaction_apply`` op. ``ephemeral`` entries are
    records of request-only content and are never replayed.

    pi 0.86+ entries: system messages are folded in order into the prompt and tool list (a compaction's
    ``systemMessage`` checkpoint restarts the fold); ``context_edit`` entries change or omit their target
    (the latest on the path wins); ``usage`` entries and entries kept raw (an unknown role or shape)
    add nothing.
    """
    fold = _Fold(base, latest_context_edits(path))
    fold.feed(path)
    return fold.envelope()


class _Fold:
    """The state of `replay_entries` after some prefix of a path, which more entries can extend.

    Messages are collected and joined to the envelope in one step before anything that reads the
    envelope (a patch, a compaction, a system message) and at the end, so a replay is O(path), not
    O(path²) envelope copies.
    """

    def __init__(self, base: ContextEnvelope, edits: JsonObject) -> None:
        self.base = base
        self.edits = edits
        self.entries: list[SessionEntry] = []  # the path folded so far (for `ReplayCache`)
        self.positions: dict[str, int] = {}
        self.system = SystemState()
        self._env = base
        self._messages: list[Message] = []
        self._origins: list[str | None] = []

    def envelope(self) -> ContextEnvelope:
        if self._messages:
            env = self._env
            self._env = replace(
                env,
                cached=(*env.cached, *self._messages),
                cached_origins=(*env.origins(), *self._origins),
            )
            self._messages, self._origins = [], []
        return self._env

    def _append(self, message: Message, origin: str | None) -> None:
        self._messages.append(message)
        self._origins.append(origin)

    def feed(self, entries: Sequence[SessionEntry]) -> None:
        done, positions, edits = self.entries, self.positions, self.edits
        messages, origins = self._messages, self._origins
        for entry in entries:
            if type(entry) is MessageEntry and entry.id not in edits:
                # most of a path: `_entry` for a plain message entry, without its lookups
                positions[entry.id] = len(done)
                if self._messages is not messages:  # `envelope` started new lists
                    messages, origins = self._messages, self._origins
                messages.append(entry.message)
                origins.append(entry.id)
            else:
                self._entry(len(done), entry)
            done.append(entry)

    def _entry(self, index: int, entry: SessionEntry) -> None:
        base, edits, system = self.base, self.edits, self.system
        entry_id = entry.id
        if entry_id is not None:
            self.positions[entry_id] = index
        if isinstance(entry, RawEntry):
            return  # an unknown type, or a known type in a shape we do not model: never in context
        message: Message
        if isinstance(entry, SystemMessageEntry):
            system.apply(entry.system.model_dump(by_alias=True, exclude_none=True, mode="json"))
            self._env = _with_system_state(self.envelope(), system, base)
        elif isinstance(entry, MessageEntry | CustomMessageEntry | BranchSummaryEntry):
            if isinstance(entry, MessageEntry):
                message = entry.message
            elif isinstance(entry, CustomMessageEntry):
                message = custom_message(entry)
            else:
                summary = branch_summary_message(entry)  # None for an empty summary
                if summary is None:
                    return
                message = summary
            if entry_id in edits and not isinstance(entry, BranchSummaryEntry):
                edited = apply_context_edit(message, edits[entry_id])
                if edited is None:
                    return
                message = edited
            self._append(message, entry_id)
        elif (compaction := read_compaction(entry)) is not None:
            env = self.envelope()
            # pi drops every system message before its latest compaction in favour of the checkpoint
            # (a compaction without one, from before pi 0.86, leaves no persisted prompt).
            had_persisted_prompt = system.seen
            system.reset()
            if compaction.system_message is not None:
                system.apply(compaction.system_message)
            if system.seen or had_persisted_prompt:
                env = _with_system_state(env, system, base)
            op = {
                "op": "compaction_apply",
                "scope": "cached",
                "summary": compaction.summary,
                "firstKeptEntryId": compaction.first_kept_entry_id,
                "tokensBefore": compaction.tokens_before,
            }
            op = _resolve_first_kept(env, op, self.positions)
            self._env = apply_ops(env, [op], timestamp=iso_to_ms(entry.timestamp))
        elif (transform := read_transform(entry)) is not None:
            env = self.envelope()
            try:
                patched = env
                for op in transform.ops:
                    if op.get("op") == "compaction_apply":
                        op = _resolve_first_kept(patched, op, self.positions)
                    patched = apply_ops(patched, [op], timestamp=iso_to_ms(entry.timestamp))
                self._env = patched
            except Exception as exc:  # a bad persisted patch must not make a session unloadable
                log.warning("skipping context_transform %s: %s", entry_id, exc)


class ReplayCache:
    """Incremental replay: the fold of the last path, extended by the entries appended since.

    A request usually replays the previous request's path plus a few new entries (the answer, the tool
    results). When the base envelope is equal and the new path starts with the very same entry objects,
    only the new entries are folded; anything else (another branch, a changed base, a ``context_edit``
    among the new entries, which can change an earlier message) folds the whole path again. The result
    equals `replay_entries` on the same input: that is the determinism contract the tests check.
    """

    def __init__(self) -> None:
        self._fold: _Fold | None = None

    def system_state(self) -> SystemState:
        """The persisted prompt and tools at the end of the last replayed path (a copy)."""
        return self._fold.system.copy() if self._fold is not None else SystemState()

    def replay(self, base: ContextEnvelope, path: Sequence[SessionEntry]) -> ContextEnvelope:
        fold = self._fold
        if fold is not None and self._extends(fold, base, path):
            try:
                fold.feed(path[len(fold.entries) :])
                return fold.envelope()
            except Exception:  # never leave a half-extended fold behind; fold again below
                self._fold = None
        fold = _Fold(base, latest_context_edits(path))
        self._fold = None
        fold.feed(path)
        env = fold.envelope()
        self._fold = fold
        return env

    @staticmethod
    def _extends(fold: _Fold, base: ContextEnvelope, path: Sequence[SessionEntry]) -> bool:
        done = fold.entries
        # One identity pass in C over the path folded before (the only O(path) step of a request's
        # replay); the Python work is for the new entries.
        if len(path) < len(done) or not all(map(operator.is_, done, path)):
            return False
        if any(isinstance(e, ContextEditEntry) for e in path[len(done) :]):
            return False
        return fold.base is base or fold.base == base


@dataclass(slots=True)
class PreparedRequest:
    request: LlmRequest
    envelope: ContextEnvelope
    record: RequestRecord
    options: JsonObject = field(default_factory=dict)


PersistFn = Callable[[JsonObject], Awaitable[None] | None]


class ContextEngine:
    """Builds every provider request from the session through the hook pipeline.

    Args:
        base_envelope: returns the envelope before replay (system parts, tool definitions, options, meta).
        active_path: returns the session's active path, root first.
        handlers: returns the `context` handlers in load order.
        persist_transform: appends a ``context_transform`` record to the session.
        available_tools: names of tools whose implementation is loaded.
        place_panels: final placement of panels (prefix/tail) on the request-local envelope.
        preflight: the compaction preflight; may return a replacement envelope.
        ctx_for: the extension context handed to a handler.
        log_ephemeral: persist request-only content as ``ephemeral`` entries (for observability).
    """

    def __init__(
        self,
        *,
        base_envelope: Callable[[], ContextEnvelope],
        active_path: Callable[[], Sequence[SessionEntry]],
        handlers: Callable[[], Sequence[ContextHandler]],
        persist_transform: PersistFn,
        available_tools: Callable[[], Sequence[str]],
        place_panels: Callable[[ContextEnvelope], ContextEnvelope] | None = None,
        preflight: Callable[[ContextEnvelope, AbortSignal], Awaitable[ContextEnvelope | None]] | None = None,
        ctx_for: Callable[[str], object] = lambda _s: None,
        persist_ephemeral: PersistFn | None = None,
        ledger: CacheLedger | None = None,
    ) -> None:
        self._base = base_envelope
        self._path = active_path
        self._handlers = handlers
        self._persist = persist_transform
        self._available = available_tools
        self._place_panels = place_panels
        self._preflight = preflight
        self._ctx_for = ctx_for
        self._persist_ephemeral = persist_ephemeral
        self.ledger = ledger or CacheLedger()
        self.last: PreparedRequest | None = None
        self._replay = ReplayCache()

    def replay(self) -> ContextEnvelope:
        return self._replay.replay(self._base(), self._path())

    def replay_system(self) -> SystemState:
        """The persisted prompt and tools on the active path (replayed as a request replays it: the
        latest compaction's checkpoint, then the system messages after it)."""
        self.replay()
        return self._replay.system_state()

    def replay_path(self, path: Sequence[SessionEntry]) -> ContextEnvelope:
        """The envelope a request made at the end of ``path`` started from (replay is deterministic, so a
        resumed session can rebuild the request that produced an earlier answer)."""
        return replay_entries(self._base(), path)

    async def _persist_record(self, record: JsonObject, _env: ContextEnvelope) -> None:
        result = self._persist(record)
        if result is not None:
            await result

    async def prepare(self, signal: AbortSignal, model_label: str = "") -> PreparedRequest:
        """Steps 1–4 and the provider mapping. Raises `ContextHookError` when a hook fails."""
        env = self.replay()
        handlers = list(self._handlers())
        attributions: list[Attribution] = []
        if handlers:
            before = await run_context_hooks(
                "before_request", env, handlers, self._ctx_for, on_persist=self._persist_record
            )
            attributions += _attributions(before)
            env = before.envelope
        if self._preflight is not None:
            replaced = await self._preflight(env, signal)
            if replaced is not None:
                env = replaced
        request_env = env
        if handlers:
            eph = await run_context_hooks("ephemeral", env, handlers, self._ctx_for)
            attributions += _attributions(eph)
            request_env = eph.envelope
            if self._persist_ephemeral is not None and request_env.uncached:
                result = self._persist_ephemeral({"messages": list(request_env.uncached)})
                if result is not None:
                    await result
        if self._place_panels is not None:
            request_env = self._place_panels(request_env)
        request_env = replace(request_env, meta=replace(request_env.meta, signal=signal))
        request = to_llm_request(request_env, self._available())
        record = self.ledger.note_request(model_label, lambda: fingerprint(request), attributions)
        if self.ledger.fingerprinted:
            large = record.prompt_tokens_estimate > LARGE_REQUEST_TOKENS
        else:  # the first request's fingerprint waits; its message count says enough
            large = len(request.messages) > LARGE_REQUEST_MESSAGES
        if large:
            keep_large_buffers()  # bodies of a megabyte from now on: stop paying page faults for each
        self.last = PreparedRequest(request, request_env, record, dict(request_env.options))
        return self.last

    def has_handlers(self) -> bool:
        """Whether any ``context`` handler is loaded (without one, `turn_end` only replays)."""
        return bool(list(self._handlers()))

    async def turn_end(self) -> ContextEnvelope:
        """Step 7: run ``context(turn_end)``; its patches are persisted."""
        env = self.replay()
        handlers = list(self._handlers())
        if not handlers:
            return env
        outcome = await run_context_hooks(
            "turn_end", env, handlers, self._ctx_for, on_persist=self._persist_record
        )
        return outcome.envelope


def _attributions(outcome: HookOutcome) -> list[Attribution]:
    out: list[Attribution] = []
    for record in outcome.persisted:
        for op in record["patch"]:
            if op_touches_cache(op):
                out.append(
                    Attribution(record["transformerName"], str(op.get("invalidateCacheReason", "")), op["op"])
                )
    return out
