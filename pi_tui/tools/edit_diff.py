"""Text matching, replacement and diff rendering behind the edit tool.

All edits of one call are matched against the same original text, never against the result of an
earlier edit. Matching is exact first; if some ``oldText`` is only found after normalising
(Unicode compatibility forms, trailing whitespace, smart quotes, dashes, special spaces), the whole
call matches in that normalised space, but only the lines an edit touches are written back in
normalised form — every other line keeps its original bytes.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass

from pi_tui.agent.tool import ToolError

__all__ = [
    "Edit",
    "AppliedEdits",
    "DiffResult",
    "detect_line_ending",
    "normalize_to_lf",
    "restore_line_endings",
    "strip_bom",
    "normalize_for_fuzzy_match",
    "apply_edits",
    "generate_diff",
    "generate_unified_patch",
]

_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPECIAL_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")
_LINES_WITH_ENDINGS = re.compile(r"[^\n]*\n|[^\n]+")


@dataclass(frozen=True, slots=True)
class Edit:
    """One replacement: ``old_text`` must occur exactly once in the original file."""

    old_text: str
    new_text: str


@dataclass(frozen=True, slots=True)
class AppliedEdits:
    """The LF-normalised text before and after the edits."""

    base_content: str
    new_content: str


@dataclass(frozen=True, slots=True)
class DiffResult:
    diff: str
    first_changed_line: int | None


@dataclass(frozen=True, slots=True)
class _Match:
    edit_index: int
    start: int
    length: int
    new_text: str


def detect_line_ending(content: str) -> str:
    """``"\\r\\n"`` if the first line break is CRLF, else ``"\\n"``."""
    lf = content.find("\n")
    if lf == -1:
        return "\n"
    crlf = content.find("\r\n")
    return "\r\n" if crlf != -1 and crlf < lf else "\n"


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def strip_bom(content: str) -> tuple[str, str]:
    """Split off a leading UTF-8 byte-order mark: returns ``(bom, text)``."""
    if content.startswith("\ufeff"):
        return "\ufeff", content[1:]
    return "", content


def normalize_for_fuzzy_match(text: str) -> str:
    """The forgiving form both the file and ``oldText`` are compared in when exact matching fails."""
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPECIAL_SPACES.sub(" ", text)


def _find(content: str, old_text: str) -> tuple[int, int, bool]:
    """(start, length, used_fuzzy) of ``old_text`` in ``content``; start is -1 when absent."""
    exact = content.find(old_text)
    if exact != -1:
        return exact, len(old_text), False
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    index = normalize_for_fuzzy_match(content).find(fuzzy_old)
    if index == -1:
        return -1, 0, False
    return index, len(fuzzy_old), True


def _count(content: str, old_text: str) -> int:
    # Occurrences are counted in the forgiving form, so "unique" means unique even when fuzzy.
    return normalize_for_fuzzy_match(content).count(normalize_for_fuzzy_match(old_text))


def apply_edits(content: str, edits: list[Edit], path: str) -> AppliedEdits:
    """Apply ``edits`` to LF-normalised ``content``.

    Raises:
        ToolError: With pi's message for an empty ``oldText``, no match, more than one match,
            overlapping edits, or edits that change nothing.
    """
    edits = [Edit(normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)) for e in edits]
    total = len(edits)
    for index, edit in enumerate(edits):
        if not edit.old_text:
            name = "oldText" if total == 1 else f"edits[{index}].oldText"
            raise ToolError(f"{name} must not be empty in {path}.")

    used_fuzzy = any(_find(content, e.old_text)[2] for e in edits)
    base = normalize_for_fuzzy_match(content) if used_fuzzy else content

    matches: list[_Match] = []
    for index, edit in enumerate(edits):
        start, length, _ = _find(base, edit.old_text)
        if start == -1:
            where = "the exact text" if total == 1 else f"edits[{index}]"
            raise ToolError(
                f"Could not find {where} in {path}. "
                "The old text must match exactly including all whitespace and newlines."
            )
        occurrences = _count(base, edit.old_text)
        if occurrences > 1:
            if total == 1:
                raise ToolError(
                    f"Found {occurrences} occurrences of the text in {path}. "
                    "The text must be unique. Please provide more context to make it unique."
                )
            raise ToolError(
                f"Found {occurrences} occurrences of edits[{index}] in {path}. "
                "Each oldText must be unique. Please provide more context to make it unique."
            )
        matches.append(_Match(index, start, length, edit.new_text))

    matches.sort(key=lambda m: m.start)
    for previous, current in zip(matches, matches[1:], strict=False):
        if previous.start + previous.length > current.start:
            raise ToolError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )

    if used_fuzzy:
        new_content = _apply_keeping_untouched_lines(content, base, matches)
    else:
        new_content = _apply(base, matches)
    if new_content == content:
        if total == 1:
            raise ToolError(
                f"No changes made to {path}. The replacement produced identical content. "
                "This might indicate an issue with special characters or the text not existing as expected."
            )
        raise ToolError(f"No changes made to {path}. The replacements produced identical content.")
    return AppliedEdits(base_content=content, new_content=new_content)


def _apply(content: str, matches: list[_Match], offset: int = 0) -> str:
    pieces: list[str] = []
    cursor = 0
    for match in matches:  # sorted by start, disjoint
        start = match.start - offset
        pieces.append(content[cursor:start])
        pieces.append(match.new_text)
        cursor = start + match.length
    pieces.append(content[cursor:])
    return "".join(pieces)


def _apply_keeping_untouched_lines(original: str, base: str, matches: list[_Match]) -> str:
    """Apply matches found in the normalised ``base``, copying untouched lines from ``original``.

    Normalisation never adds or removes line breaks, so line N of ``base`` is line N of ``original``.
    """
    original_lines = _LINES_WITH_ENDINGS.findall(original)
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in _LINES_WITH_ENDINGS.findall(base):
        spans.append((offset, offset + len(line)))
        offset += len(line)
    if len(spans) != len(original_lines):
        # Cannot line the two up; fall back to writing the normalised text everywhere.
        return _apply(base, matches)

    groups: list[tuple[int, int, list[_Match]]] = []
    for match in matches:
        first, last = _line_range(spans, match)
        if groups and first < groups[-1][1]:
            start, end, members = groups[-1]
            groups[-1] = (start, max(end, last), [*members, match])
        else:
            groups.append((first, last, [match]))

    pieces: list[str] = []
    line = 0
    for first, last, members in groups:
        pieces.extend(original_lines[line:first])
        block_start, block_end = spans[first][0], spans[last - 1][1]
        pieces.append(_apply(base[block_start:block_end], members, block_start))
        line = last
    pieces.extend(original_lines[line:])
    return "".join(pieces)


def _line_range(spans: list[tuple[int, int]], match: _Match) -> tuple[int, int]:
    """The lines [first, last) a match touches."""
    start, end = match.start, match.start + match.length
    first = next((i for i, (s, e) in enumerate(spans) if s <= start < e), len(spans) - 1)
    last = first
    while last < len(spans) - 1 and spans[last][1] < end:
        last += 1
    return first, last + 1


# --- diff -----------------------------------------------------------------------------------------


def _diff_parts(old: str, new: str) -> list[tuple[str, list[str]]]:
    """Line diff as (kind, lines) parts with kind in {"equal", "removed", "added"}, removals first."""
    old_lines = _LINES_WITH_ENDINGS.findall(old)
    new_lines = _LINES_WITH_ENDINGS.findall(new)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    parts: list[tuple[str, list[str]]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(("equal", old_lines[i1:i2]))
            continue
        if i2 > i1:
            parts.append(("removed", old_lines[i1:i2]))
        if j2 > j1:
            parts.append(("added", new_lines[j1:j2]))
    return [(kind, [line.rstrip("\n") for line in lines]) for kind, lines in parts]


def generate_diff(old: str, new: str, context_lines: int = 4) -> DiffResult:
    """pi's display diff: ``+NN text`` / ``-NN text`` / `` NN text`` lines, ``...`` for skipped runs.

    Line numbers are right-aligned to the widest line number of either version; context lines use
    old-file numbers. ``first_changed_line`` is the first changed line in the new file.
    """
    parts = _diff_parts(old, new)
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    blank = " " * width
    out: list[str] = []
    old_no = new_no = 1
    first_changed: int | None = None
    last_was_change = False

    def context(lines: list[str]) -> None:
        nonlocal old_no, new_no
        for text in lines:
            out.append(f" {old_no:>{width}} {text}")
            old_no += 1
            new_no += 1

    def skip(count: int) -> None:
        nonlocal old_no, new_no
        out.append(f" {blank} ...")
        old_no += count
        new_no += count

    for index, (kind, lines) in enumerate(parts):
        if kind != "equal":
            if first_changed is None:
                first_changed = new_no
            for text in lines:
                if kind == "added":
                    out.append(f"+{new_no:>{width}} {text}")
                    new_no += 1
                else:
                    out.append(f"-{old_no:>{width}} {text}")
                    old_no += 1
            last_was_change = True
            continue
        next_is_change = index + 1 < len(parts) and parts[index + 1][0] != "equal"
        if last_was_change and next_is_change:
            if len(lines) <= context_lines * 2:
                context(lines)
            else:
                context(lines[:context_lines])
                skip(len(lines) - 2 * context_lines)
                context(lines[-context_lines:])
        elif last_was_change:
            context(lines[:context_lines])
            if len(lines) > context_lines:
                skip(len(lines) - context_lines)
        elif next_is_change:
            hidden = max(0, len(lines) - context_lines)
            if hidden:
                skip(hidden)
            context(lines[hidden:])
        else:
            old_no += len(lines)
            new_no += len(lines)
        last_was_change = False
    return DiffResult(diff="\n".join(out), first_changed_line=first_changed)


def generate_unified_patch(path: str, old: str, new: str, context_lines: int = 4) -> str:
    """A standard unified diff of the change (``--- path`` / ``+++ path`` headers)."""
    lines = difflib.unified_diff(
        _LINES_WITH_ENDINGS.findall(old),
        _LINES_WITH_ENDINGS.findall(new),
        fromfile=path,
        tofile=path,
        n=context_lines,
    )
    return "".join(
        _with_counts(line) if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
        for line in lines
    )


_HUNK_HEADER = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _with_counts(line: str) -> str:
    """A hunk header with both line counts, as pi's patches (jsdiff) write them: ``@@ -1,1 +1,1 @@`` where
    difflib leaves out a count of one (``@@ -1 +1 @@``). Other lines are returned as they are."""
    if not line.startswith("@@ "):
        return line
    return _HUNK_HEADER.sub(lambda m: f"@@ -{m[1]}{m[2] or ',1'} +{m[3]}{m[4] or ',1'} @@", line, count=1)
