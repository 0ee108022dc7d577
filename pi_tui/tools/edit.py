"""The ``edit`` tool: one or more exact-text replacements in a single file."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.agent.tool import PREFER_STRICT_SCHEMA, AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import TextContent
from pi_tui.util import json_safe
from pi_tui.util.json_types import JsonObject

from ._common import finish_in_thread, raise_if_aborted, str_arg
from .mutation_queue import file_mutation
from .paths import resolve_to_cwd

if TYPE_CHECKING:
    from .edit_diff import Edit

# The matching and diff machinery (edit_diff) loads on the first edit: most runs never edit.

__all__ = [
    "create_edit_tool",
    "prepare_edit_arguments",
    "EDIT_PARAMETERS",
    "EDIT_DESCRIPTION",
    "FileChangeFn",
]

log = logging.getLogger(__name__)

FileChangeFn = Callable[[Path, bytes | None, bytes | None, str], JsonObject | None]
"""``(path, before, after, tool name) -> checkpoint JSON``: records a file change (see
`pi_tui.checkpoints.Checkpointer.record_file`); the result goes into ``details["checkpoint"]``.
Called under the file's mutation lock, in a worker thread. ``None`` bytes: the file did not exist."""

EDIT_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
        "edits": {
            "type": "array",
            "description": (
                "One or more targeted replacements. Each edit is matched against the original file, not "
                "incrementally. Do not include overlapping or nested edits. If two changes touch the same block "
                "or nearby lines, merge them into one edit instead."
            ),
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {
                        "type": "string",
                        "description": (
                            "Exact text for one targeted replacement. It must be unique in the original file and "
                            "must not overlap with any other edits[].oldText in the same call."
                        ),
                    },
                    "newText": {"type": "string", "description": "Replacement text for this targeted edit."},
                },
                "required": ["oldText", "newText"],
            },
        },
    },
    "required": ["path", "edits"],
}

EDIT_DESCRIPTION = (
    "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping "
    "region of the original file. If two changes affect the same block or nearby lines, merge them into one edit "
    "instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes."
)

# Times the edits are matched again when another program changes the file while it is being written.
_ATTEMPTS = 3

_GUIDELINES = [
    "To change several separate places in one file, send one edit call with several edits[] entries; each "
    "oldText is matched against the file as it was before the call, so entries must not overlap.",
]


def prepare_edit_arguments(args: JsonObject) -> JsonObject:
    """Accept the shapes models actually send.

    ``edits`` given as a JSON string is parsed; the legacy single ``oldText``/``newText`` pair is
    moved into ``edits`` (after any edits already there).
    """
    if not isinstance(args, dict):
        return args
    prepared = dict(args)
    edits = prepared.get("edits")
    if isinstance(edits, str):
        try:
            parsed = json_safe.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            prepared["edits"] = parsed
        elif isinstance(parsed, dict):
            prepared["edits"] = [parsed]
    old_text, new_text = prepared.get("oldText"), prepared.get("newText")
    if isinstance(old_text, str) and isinstance(new_text, str):
        existing = prepared.get("edits")
        merged = list(existing) if isinstance(existing, list) else []
        merged.append({"oldText": old_text, "newText": new_text})
        prepared["edits"] = merged
        del prepared["oldText"], prepared["newText"]
    return prepared


def _parse_edits(params: JsonObject) -> list[Edit]:
    from .edit_diff import Edit

    raw = params.get("edits")
    if not isinstance(raw, list) or not raw:
        raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
    edits: list[Edit] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ToolError(
                f"Edit tool input is invalid. edits[{index}] must be an object with oldText and newText."
            )
        old_text, new_text = item.get("oldText"), item.get("newText")
        if not isinstance(old_text, str) or not isinstance(new_text, str):
            raise ToolError(f"Edit tool input is invalid. edits[{index}] needs string oldText and newText.")
        edits.append(Edit(old_text, new_text))
    return edits


def create_edit_tool(cwd: Path, *, on_change: FileChangeFn | None = None) -> AgentTool:
    """Build the edit tool for ``cwd``. The read-modify-write runs under the file's mutation lock.

    ``on_change`` records the file's content before and after (checkpoints).
    """

    async def execute(
        tool_call_id: str, params: JsonObject, signal: AbortSignal | None, on_update: ToolUpdateFn | None
    ) -> ToolResult:
        params = prepare_edit_arguments(params)
        path = str_arg(params, "path")
        edits = _parse_edits(params)
        absolute = resolve_to_cwd(path, cwd)
        async with file_mutation(absolute):
            # Abort is checked between steps, never by abandoning a step, so the lock is held until
            # the file operation in flight has finished.
            raise_if_aborted(signal)
            plan = await finish_in_thread(lambda: _plan_edit(absolute, path, edits))
            raise_if_aborted(signal)

            def write() -> JsonObject | None:
                from pi_tui.util.atomic_file import FileChangedError, replace_file_bytes  # writers only

                nonlocal plan
                for attempt in range(_ATTEMPTS):
                    try:
                        # Only over the content the edits were matched against: a change another program
                        # made since (an editor saving) is never overwritten; the edits apply to it instead.
                        replace_file_bytes(absolute, plan.final_bytes, expected=plan.original)
                        break
                    except FileChangedError:
                        if attempt == _ATTEMPTS - 1:
                            raise
                        plan = _plan_edit(absolute, path, edits)
                return record_change(on_change, absolute, plan.original, plan.final_bytes, "edit")

            try:
                checkpoint = await finish_in_thread(write)  # one thread hop for the write and its checkpoint
            except OSError as exc:  # the file still has its old content (see pi_tui.util.atomic_file)
                raise ToolError(f"Could not edit file: {path}. {exc.strerror or exc}.") from exc
            if checkpoint is not None:
                plan.details["checkpoint"] = checkpoint
            raise_if_aborted(signal)
        return ToolResult(
            content=[TextContent(text=f"Successfully replaced {len(edits)} block(s) in {path}.")],
            details=plan.details,
        )

    return AgentTool(
        name="edit",
        label="edit",
        description=EDIT_DESCRIPTION,
        parameters=EDIT_PARAMETERS,
        execute=execute,
        constrained_sampling=PREFER_STRICT_SCHEMA,
        prompt_snippet="Make surgical edits to files (find exact text and replace)",
        prompt_guidelines=list(_GUIDELINES),
        prepare_arguments=prepare_edit_arguments,
    )


def record_change(
    on_change: FileChangeFn | None, path: Path, before: bytes | None, after: bytes | None, tool: str
) -> JsonObject | None:
    """Call ``on_change``; a failing checkpoint is logged and never fails the tool's change."""
    if on_change is None:
        return None
    try:
        return on_change(path, before, after, tool)
    except Exception:
        log.warning("checkpoint of %s failed", path, exc_info=True)
        return None


class _Plan:
    __slots__ = ("final_bytes", "details", "original")

    def __init__(self, final_bytes: bytes, details: JsonObject, original: bytes) -> None:
        self.final_bytes = final_bytes
        self.details = details
        self.original = original


def _plan_edit(absolute: Path, path: str, edits: list[Edit]) -> _Plan:
    if not absolute.is_file():
        raise ToolError(f"File not found: {path}")
    if not os.access(absolute, os.R_OK | os.W_OK):
        raise ToolError(f"Could not edit file: {path}. Error code: EACCES.")
    # surrogateescape keeps bytes that are not UTF-8 intact through the round trip.
    original = absolute.read_bytes()
    raw = original.decode("utf-8", "surrogateescape")
    from .edit_diff import (
        apply_edits,
        detect_line_ending,
        generate_diff,
        generate_unified_patch,
        normalize_to_lf,
        restore_line_endings,
        strip_bom,
    )

    bom, content = strip_bom(raw)
    ending = detect_line_ending(content)
    applied = apply_edits(normalize_to_lf(content), edits, path)
    final = bom + restore_line_endings(applied.new_content, ending)
    diff = generate_diff(applied.base_content, applied.new_content)
    details: JsonObject = {
        "diff": _displayable(diff.diff),
        "patch": _displayable(generate_unified_patch(path, applied.base_content, applied.new_content)),
    }
    if diff.first_changed_line is not None:
        details["firstChangedLine"] = diff.first_changed_line
    return _Plan(final.encode("utf-8", "surrogateescape"), details, original)


def _displayable(text: str) -> str:
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
