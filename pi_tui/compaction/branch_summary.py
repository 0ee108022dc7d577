"""Branch summaries: what happened on the branch the user leaves in ``/tree`` (pi §6.6).

1. Collect the entries from the old leaf back to the deepest common ancestor with the target.
2. Walk them newest first within a token budget (context window − ``branchSummary.reserveTokens``);
   tool results are skipped, and a compaction or branch summary is still let in while under 90% of it.
3. File operations come from every entry's tool calls and from earlier pi-made branch summaries.
4. The serialised branch goes to the summariser with the branch prompt (4,096 output tokens at most, or
   the model's limit when lower, as pi 0.85+). The serialised lines are longer than the messages' text
   that step 2 counted, so the conversation is fitted again to the window (less the answer, the prompt
   and a margin), dropping the oldest parts with a note; a provider that still finds it too long (its
   tokenizer counts more than chars/4) gets one more try with half of it.
5. The result starts with `BRANCH_SUMMARY_PREAMBLE` and ends with the file lists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pi_tui.agent.convert import convert_to_llm
from pi_tui.ai.errors import is_context_overflow
from pi_tui.ai.stream import AbortSignal, LlmRequest
from pi_tui.ai.tokens import count_message_tokens
from pi_tui.ai.types import Message, TextContent, ToolResultMessage, UserMessage
from pi_tui.session.entries import BranchSummaryEntry, SessionEntry
from pi_tui.session.entry_reader import EntryLike
from pi_tui.util.json_types import JsonObject, JsonValue

from .errors import CompactionCancelled, CompactionError
from .file_ops import FileOps, compute_file_lists, extract_file_ops, format_file_lists
from .path import compaction_mark, compaction_message, entry_message, entry_type
from .prompts import BRANCH_SUMMARY_PREAMBLE, SUMMARIZER_SYSTEM_PROMPT, branch_instructions, standalone_prompt
from .summarize import SummarizationFailed, SummaryBackend, complete_text, conversation_budget, fit_messages

if TYPE_CHECKING:
    from pi_tui.session.entries import SessionEntry
    from pi_tui.session.manager import SessionManager

__all__ = [
    "BRANCH_MAX_TOKENS",
    "DEFAULT_CONTEXT_WINDOW",
    "NO_CONTENT",
    "TreePreparation",
    "BranchPreparation",
    "BranchSummaryResult",
    "collect_entries_for_branch_summary",
    "prepare_branch_entries",
    "generate_branch_summary",
    "branch_max_tokens",
]

BRANCH_MAX_TOKENS = 4096
DEFAULT_CONTEXT_WINDOW = 128_000
NO_CONTENT = "No content to summarize"


@dataclass(slots=True)
class TreePreparation:
    """What ``session_before_tree`` handlers see (pi's ``TreePreparation``)."""

    target_id: str | None
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[SessionEntry]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None

    def to_json(self) -> JsonObject:
        from pi_tui.session.entries import RawEntry

        def dump(entry: EntryLike) -> JsonValue:
            if isinstance(entry, RawEntry):
                return entry.data
            if isinstance(entry, Mapping):  # already JSON
                return entry
            return entry.to_json_dict()

        return {
            "targetId": self.target_id,
            "oldLeafId": self.old_leaf_id,
            "commonAncestorId": self.common_ancestor_id,
            "entriesToSummarize": [dump(e) for e in self.entries_to_summarize],
            "userWantsSummary": self.user_wants_summary,
            "customInstructions": self.custom_instructions,
            "replaceInstructions": self.replace_instructions,
            "label": self.label,
        }


@dataclass(slots=True)
class BranchPreparation:
    messages: list[Message]
    file_ops: FileOps
    total_tokens: int


@dataclass(slots=True)
class BranchSummaryResult:
    summary: str | None = None
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)
    aborted: bool = False
    error: str | None = None
    from_hook: bool = False  # an extension supplied the summary

    @property
    def details(self) -> dict[str, list[str]]:
        return {"readFiles": self.read_files, "modifiedFiles": self.modified_files}


def _deepest_common_ancestor(session: SessionManager, first: str, second: str) -> str | None:
    """The deepest entry on both paths (each id counts as on its own path), walking up from both ends
    a step at a time: the cost is the length of the branches below it, not the depth of the tree (a
    branch of 200 entries on a 20k-entry path is 400 steps, not two 20k-entry paths)."""
    seen_first: set[str] = set()
    seen_second: set[str] = set()
    a: str | None = first
    b: str | None = second
    while a is not None or b is not None:
        if a is not None:
            if a in seen_second:
                return a
            seen_first.add(a)
            entry = session.get_entry(a)
            a = entry.parent_id if entry is not None and entry.parent_id not in seen_first else None
        if b is not None:
            if b in seen_first:
                return b
            seen_second.add(b)
            entry = session.get_entry(b)
            b = entry.parent_id if entry is not None and entry.parent_id not in seen_second else None
    return None


def collect_entries_for_branch_summary(
    session: SessionManager, old_leaf_id: str | None, target_id: str | None
) -> tuple[list[SessionEntry], str | None]:
    """Entries from ``old_leaf_id`` back to the deepest common ancestor with ``target_id`` (oldest first).

    Returns:
        ``(entries, common_ancestor_id)``; no entries when there is no old position.
    """
    if old_leaf_id is None:
        return [], None
    ancestor = _deepest_common_ancestor(session, old_leaf_id, target_id) if target_id is not None else None
    entries: list[SessionEntry] = []
    current: str | None = old_leaf_id
    seen: set[str] = set()
    while current is not None and current != ancestor and current not in seen:
        seen.add(current)
        entry = session.get_entry(current)
        if entry is None:
            break
        entries.append(entry)
        current = entry.parent_id
    entries.reverse()
    return entries, ancestor


def _branch_message(entry: EntryLike) -> Message | None:
    mark = compaction_mark(entry)
    if mark is not None:
        return compaction_message(mark, entry)
    message = entry_message(entry)
    if isinstance(message, ToolResultMessage):
        return None  # the call in the assistant message says what was done
    return message


def _is_summary(entry: EntryLike) -> bool:
    return entry_type(entry) == "branch_summary" or compaction_mark(entry) is not None


def prepare_branch_entries(
    entries: Sequence[EntryLike], token_budget: int = 0, count: Callable[[Message], int] = count_message_tokens
) -> BranchPreparation:
    """Messages to summarise (newest kept first within ``token_budget``; 0 = no limit) and file ops.
    ``count`` gives a message's estimate (the session's counter remembers the ones it made before)."""
    file_ops = FileOps()
    for entry in entries:
        if isinstance(entry, BranchSummaryEntry) and not entry.from_hook:
            file_ops.add_details(entry.details)
    newest_first: list[Message] = []  # reversed at the end (inserting at the front is quadratic)
    total = 0
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        extract_file_ops([message], file_ops)
        tokens = count(message)
        if token_budget > 0 and total + tokens > token_budget:
            if _is_summary(entry) and total < token_budget * 0.9:
                newest_first.append(message)
                total += tokens
            break
        newest_first.append(message)
        total += tokens
    newest_first.reverse()
    return BranchPreparation(newest_first, file_ops, total)


def branch_max_tokens(model_max_tokens: int) -> int:
    """The answer's limit: `BRANCH_MAX_TOKENS`, or the model's own when that is lower (pi 0.85+)."""
    return min(BRANCH_MAX_TOKENS, model_max_tokens) if model_max_tokens > 0 else BRANCH_MAX_TOKENS


async def generate_branch_summary(
    entries: Sequence[EntryLike],
    backend: SummaryBackend,
    *,
    signal: AbortSignal | None = None,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    reserve_tokens: int = 16384,
) -> BranchSummaryResult:
    """Summarise the abandoned branch ``entries`` (oldest first). Failures are returned, not raised."""
    window = backend.model.context_window or DEFAULT_CONTEXT_WINDOW
    prep = prepare_branch_entries(entries, window - reserve_tokens, backend.count)
    if not prep.messages:
        return BranchSummaryResult(summary=NO_CONTENT)
    instructions = branch_instructions(custom_instructions, replace=replace_instructions)
    template = standalone_prompt("{conversation}", instructions)
    max_tokens = branch_max_tokens(backend.model.max_tokens)
    # pi budgets only the messages' own text; their serialised lines ("[Assistant tool calls]: …") are
    # longer, so the request is fitted once more as it is sent, oldest parts dropped first.
    budget = conversation_budget(window, max_tokens, template)
    messages = convert_to_llm(list(prep.messages))
    for attempt in range(2):
        text = template.replace("{conversation}", fit_messages(messages, budget), 1)
        request = LlmRequest(
            system_prompt=SUMMARIZER_SYSTEM_PROMPT, messages=[UserMessage(content=[TextContent(text=text)])]
        )
        try:
            response = await complete_text(
                backend, request, max_tokens=max_tokens, signal=signal, what="Branch summarization"
            )
            break
        except CompactionCancelled:
            return BranchSummaryResult(aborted=True)
        except SummarizationFailed as exc:
            # chars/4 undercounts some text (code, other scripts) for a real tokenizer: try once more
            # with half the conversation before giving up
            overflow = exc.response is not None and is_context_overflow(exc.response, window)
            if attempt or not overflow:
                return BranchSummaryResult(error=str(exc))
            budget //= 2
        except CompactionError as exc:
            return BranchSummaryResult(error=str(exc))
    body = "\n".join(b.text for b in response.content if isinstance(b, TextContent))
    read_files, modified_files = compute_file_lists(prep.file_ops)
    summary = BRANCH_SUMMARY_PREAMBLE + body + format_file_lists(read_files, modified_files)
    return BranchSummaryResult(summary, read_files, modified_files)
