"""Compaction and branch summaries (pi §6).

- `prepare_compaction`: what to summarise and what to keep (cut points, split turns, file lists);
- `summarize_compaction`: the summary request — by default the session's own cached request plus one
  instruction message, so the provider's prompt cache serves it;
- `append_compaction`: stored as a ``context_transform`` entry with a ``compaction_apply`` op;
- `CompactionController`: the threshold / overflow / manual triggers, events and extension hooks;
- `generate_branch_summary` and friends: the summary of a branch left in ``/tree``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_tui.util.lazy import lazy_exports

if TYPE_CHECKING:
    from pi_tui.agent.serialize import TOOL_RESULT_MAX_CHARS, serialize_conversation, serialize_messages

    from .branch_summary import (
        BranchPreparation,
        BranchSummaryResult,
        TreePreparation,
        collect_entries_for_branch_summary,
        generate_branch_summary,
        prepare_branch_entries,
    )
    from .controller import CompactionController
    from .errors import (
        ALREADY_COMPACTED,
        COMPACTION_CANCELLED,
        NOTHING_TO_COMPACT,
        OVERFLOW_RECOVERY_FAILED,
        AlreadyCompacted,
        CompactionCancelled,
        CompactionError,
        NothingToCompact,
    )
    from .file_ops import FileOps, compute_file_lists, extract_file_ops, format_file_lists
    from .path import CompactionMark, compaction_mark
    from .persist import TRANSFORMER_NAME, CompactionResult, append_compaction, compaction_patch
    from .prepare import CompactionPreparation, CutPoint, find_cut_point, prepare_compaction
    from .prompts import CHECKPOINT_HEADING, is_checkpoint_request
    from .summarize import SummarizationFailed, SummaryBackend, SummaryOutcome, summarize_compaction
    from .tokens import context_tokens, should_compact, usage_tokens

__all__ = [
    "ALREADY_COMPACTED",
    "CHECKPOINT_HEADING",
    "COMPACTION_CANCELLED",
    "NOTHING_TO_COMPACT",
    "OVERFLOW_RECOVERY_FAILED",
    "TOOL_RESULT_MAX_CHARS",
    "TRANSFORMER_NAME",
    "AlreadyCompacted",
    "BranchPreparation",
    "BranchSummaryResult",
    "CompactionCancelled",
    "CompactionController",
    "CompactionError",
    "CompactionMark",
    "CompactionPreparation",
    "CompactionResult",
    "CutPoint",
    "FileOps",
    "NothingToCompact",
    "SummarizationFailed",
    "SummaryBackend",
    "SummaryOutcome",
    "TreePreparation",
    "append_compaction",
    "collect_entries_for_branch_summary",
    "compaction_mark",
    "compaction_patch",
    "compute_file_lists",
    "context_tokens",
    "extract_file_ops",
    "find_cut_point",
    "format_file_lists",
    "generate_branch_summary",
    "is_checkpoint_request",
    "prepare_branch_entries",
    "prepare_compaction",
    "serialize_conversation",
    "serialize_messages",
    "should_compact",
    "summarize_compaction",
    "usage_tokens",
]

# Lazy exports: a one-turn run needs the controller's threshold check, not the summariser, the branch
# summary or the cut-point search; importing the package must not load them.
_LAZY: dict[str, str] = {  # name -> the module that defines it, imported on first use
    "TOOL_RESULT_MAX_CHARS": "pi_tui.agent.serialize",
    "serialize_conversation": "pi_tui.agent.serialize",
    "serialize_messages": "pi_tui.agent.serialize",
    "BranchPreparation": ".branch_summary",
    "BranchSummaryResult": ".branch_summary",
    "TreePreparation": ".branch_summary",
    "collect_entries_for_branch_summary": ".branch_summary",
    "generate_branch_summary": ".branch_summary",
    "prepare_branch_entries": ".branch_summary",
    "CompactionController": ".controller",
    "ALREADY_COMPACTED": ".errors",
    "COMPACTION_CANCELLED": ".errors",
    "NOTHING_TO_COMPACT": ".errors",
    "OVERFLOW_RECOVERY_FAILED": ".errors",
    "AlreadyCompacted": ".errors",
    "CompactionCancelled": ".errors",
    "CompactionError": ".errors",
    "NothingToCompact": ".errors",
    "FileOps": ".file_ops",
    "compute_file_lists": ".file_ops",
    "extract_file_ops": ".file_ops",
    "format_file_lists": ".file_ops",
    "CompactionMark": ".path",
    "compaction_mark": ".path",
    "TRANSFORMER_NAME": ".persist",
    "CompactionResult": ".persist",
    "append_compaction": ".persist",
    "compaction_patch": ".persist",
    "CompactionPreparation": ".prepare",
    "CutPoint": ".prepare",
    "find_cut_point": ".prepare",
    "prepare_compaction": ".prepare",
    "CHECKPOINT_HEADING": ".prompts",
    "is_checkpoint_request": ".prompts",
    "SummarizationFailed": ".summarize",
    "SummaryBackend": ".summarize",
    "SummaryOutcome": ".summarize",
    "summarize_compaction": ".summarize",
    "context_tokens": ".tokens",
    "should_compact": ".tokens",
    "usage_tokens": ".tokens",
}


__getattr__ = lazy_exports(__name__, _LAZY)
