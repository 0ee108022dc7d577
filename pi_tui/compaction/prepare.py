"""Deciding what a compaction summarises and what it keeps (pi's ``prepareCompaction``).

- The work range starts after the newest compaction on the path.
- **Cut point**: walk back from the newest entry adding message estimates until they reach
  ``keep_recent_tokens``; the cut is the first valid cut point at or after that entry. Valid cut points are
  messages with role user, assistant, bashExecution, custom, branchSummary or compactionSummary, plus
  ``branch_summary`` and ``custom_message`` entries. A tool result never is one, so a tool call is never
  separated from its result. Without any cut point everything in the range is kept.
- The cut moves back over non-message entries right before it (model or thinking changes and the like),
  stopping at a message or a compaction.
- A cut that is not at a user message **splits a turn**: the turn starts at the nearest earlier user
  message, bashExecution, ``branch_summary`` or ``custom_message``; its early part is summarised on its own.
  (Split or not is judged by the first kept *message*, and a kept context that starts with a turn of
  its own — a user message, a bash run, a branch summary or a custom message — splits nothing; pi looks
  at the cut entry itself, so a settings entry in front of a user message makes it treat the whole
  previous turn as a "prefix".)

One deliberate difference from pi: the messages a previous compaction kept (from its first kept entry up
to the compaction) are still in the context but outside the work range. pi drops them at the next
compaction without summarising them; here they are summarised with the rest, so nothing the model saw
is lost silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pi_tui.ai.tokens import count_message_tokens
from pi_tui.ai.types import Message
from pi_tui.resources.settings_schema import CompactionSettings
from pi_tui.session.entry_reader import EntryLike, message_role
from pi_tui.util.json_types import JsonObject

from .file_ops import FileOps, extract_file_ops, strip_file_lists
from .path import (
    compaction_mark,
    compaction_message,
    entry_id,
    entry_message,
    entry_type,
    latest_compaction_index,
)
from .tokens import Count, estimate_messages_tokens, measured_tokens

__all__ = [
    "CutPoint",
    "CompactionPreparation",
    "find_valid_cut_points",
    "find_turn_start",
    "find_cut_point",
    "prepare_compaction",
]

_CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})


@dataclass(frozen=True, slots=True)
class CutPoint:
    first_kept_index: int
    turn_start_index: int  # -1 unless the turn is split
    is_split_turn: bool


@dataclass(slots=True)
class CompactionPreparation:
    """Everything a summariser (built-in or an extension's) needs.

    Attributes:
        first_kept_entry_id: the entry the kept context starts at.
        messages_to_summarize: history messages replaced by the summary.
        turn_prefix_messages: the early part of a split turn (summarised on its own).
        is_split_turn: whether the cut falls inside a turn.
        tokens_before: the context size before the compaction (pi's: the newest fresh usage plus the
            estimate of the messages after it; without one, the estimate of the whole context).
        previous_summary: the newest compaction's summary (without its file lists), for an UPDATE.
        file_ops: files read/written/edited, cumulative over earlier pi-tui/pi summaries.
        settings: the compaction settings used.
    """

    first_kept_entry_id: str
    messages_to_summarize: list[Message]
    turn_prefix_messages: list[Message]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings
    first_kept_index: int = 0
    kept_messages: list[Message] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        """The camelCase shape extensions see (pi's ``CompactionPreparation``)."""
        from pi_tui.ai.types import dump_message

        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "messagesToSummarize": [dump_message(m) for m in self.messages_to_summarize],
            "turnPrefixMessages": [dump_message(m) for m in self.turn_prefix_messages],
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "previousSummary": self.previous_summary,
            "fileOps": self.file_ops.to_json(),
            "settings": {
                "enabled": self.settings.enabled,
                "reserveTokens": self.settings.reserve_tokens,
                "keepRecentTokens": self.settings.keep_recent_tokens,
            },
        }


def _message_role(entry: EntryLike) -> str | None:
    return message_role(entry)


def _is_cut_point(entry: EntryLike) -> bool:
    kind = entry_type(entry)
    if kind in ("branch_summary", "custom_message"):
        return True
    return kind == "message" and _message_role(entry) in _CUT_ROLES


def find_valid_cut_points(path: Sequence[EntryLike], start: int, end: int) -> list[int]:
    """Indices in ``path[start:end]`` where the kept context may begin."""
    return [i for i in range(start, end) if _is_cut_point(path[i])]


def _starts_turn(entry: EntryLike) -> bool:
    return entry_type(entry) in ("branch_summary", "custom_message") or _message_role(entry) in (
        "user",
        "bashExecution",
    )


def find_turn_start(path: Sequence[EntryLike], index: int, start: int) -> int:
    """The entry that starts the turn holding ``path[index]`` (searching back to ``start``), or -1."""
    for i in range(index, start - 1, -1):
        if _starts_turn(path[i]):
            return i
    return -1


def _estimate(entry: EntryLike, count: Count) -> int:
    message = entry_message(entry) if entry_type(entry) == "message" else None
    return count(message) if message is not None else 0


def find_cut_point(
    path: Sequence[EntryLike],
    start: int,
    end: int,
    keep_recent_tokens: int,
    count: Count = count_message_tokens,
) -> CutPoint:
    """Where to cut ``path[start:end]`` so that about ``keep_recent_tokens`` of recent messages stay
    (``count``: a message's estimate, `count_message_tokens` or a counter that remembers them)."""
    # Only the kept tail is read: walking back from the newest entry to where the recent messages
    # reach ``keep_recent_tokens``, then forward to the next cut point; the oldest cut point of the
    # range (the cut when the tail never reaches it, or has no cut point) is looked up only then.
    cut = -1
    total = 0
    for i in range(end - 1, start - 1, -1):
        if entry_type(path[i]) != "message":
            continue
        total += _estimate(path[i], count)
        if total >= keep_recent_tokens:
            cut = next((c for c in range(i, end) if _is_cut_point(path[c])), -1)
            break
    if cut < 0:
        cut = next((c for c in range(start, end) if _is_cut_point(path[c])), -1)
        if cut < 0:
            return CutPoint(start, -1, False)
    while cut > start:
        previous = path[cut - 1]
        if entry_type(previous) == "message" or compaction_mark(previous) is not None:
            break
        cut -= 1
    # Whether the turn is split depends on the first message kept, not on a settings entry the cut
    # moved back over (pi looks at the entry itself and then treats the whole previous turn as a prefix).
    first = next((i for i in range(cut, end) if entry_message(path[i]) is not None), cut)
    if _starts_turn(path[first]):
        return CutPoint(cut, -1, False)
    turn_start = find_turn_start(path, cut, start)
    return CutPoint(cut, turn_start, turn_start != -1)


def _messages(path: Sequence[EntryLike], start: int, end: int) -> list[Message]:
    out = []
    for entry in path[start:end]:
        message = entry_message(entry)
        if message is not None:
            out.append(message)
    return out


def _previously_kept(path: Sequence[EntryLike], compaction_index: int) -> list[Message]:
    """Messages the compaction at ``compaction_index`` kept from before itself."""
    mark = compaction_mark(path[compaction_index])
    if mark is None or mark.first_kept_entry_id is None:
        return []
    for i in range(compaction_index):
        if entry_id(path[i]) == mark.first_kept_entry_id:
            # Only entries after the compaction before it (if any) are still in the context.
            earlier = latest_compaction_index(path, compaction_index)
            return _messages(path, max(i, earlier + 1), compaction_index)
    return []


def prepare_compaction(
    path: Sequence[EntryLike], settings: CompactionSettings, count: Count = count_message_tokens
) -> CompactionPreparation | None:
    """Plan a compaction of the active path (root first).

    ``tokens_before`` is pi's size of the context: the newest fresh usage plus the estimate of the
    messages after it, or without one the estimate of the whole context. ``count`` gives a message's
    estimate: the session's remembering counter makes each message counted once however many passes
    (this one, the summary request's size) ask for it.

    Returns:
        The preparation, or None when the newest entry already is a compaction or nothing is old enough
        to summarise (the caller tells these apart with ``compaction_mark(path[-1])``).
    """
    if not path or compaction_mark(path[-1]) is not None:
        return None
    previous_index = latest_compaction_index(path)
    start, end = previous_index + 1, len(path)
    cut = find_cut_point(path, start, end, settings.keep_recent_tokens, count)
    if cut.first_kept_index >= end:
        return None
    first_kept_id = entry_id(path[cut.first_kept_index])
    if first_kept_id is None:
        return None

    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    previous = compaction_mark(path[previous_index]) if previous_index >= 0 else None
    carried = _previously_kept(path, previous_index) if previous_index >= 0 else []
    to_summarize = carried + _messages(path, start, history_end)
    turn_prefix = _messages(path, cut.turn_start_index, cut.first_kept_index) if cut.is_split_turn else []
    if not to_summarize and not turn_prefix:
        return None

    file_ops = FileOps()
    if previous is not None and not previous.from_hook:
        file_ops.add_details(previous.details)
    extract_file_ops(to_summarize, file_ops)
    extract_file_ops(turn_prefix, file_ops)

    tokens_before = measured_tokens(path, count)
    if tokens_before is None:
        current: list[Message] = []
        if previous is not None:
            current.append(compaction_message(previous, path[previous_index]))
        current += carried + _messages(path, start, end)
        tokens_before = estimate_messages_tokens(current, count)
    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=turn_prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=strip_file_lists(previous.summary) if previous is not None else None,
        file_ops=file_ops,
        settings=settings,
        first_kept_index=cut.first_kept_index,
        kept_messages=_messages(path, cut.first_kept_index, end),
    )
