"""What loading a session file found and did: skipped lines, kept-as-is entries, repairs.

The UI shows `LoadReport.summary()` in one line; `LoadReport.has_problems` says whether to warn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SkippedLine", "KeptRawEntry", "ReattachedEntry", "TornTail", "LoadReport"]

_MAX_LISTED = 3


@dataclass(frozen=True, slots=True)
class SkippedLine:
    line_no: int  # 1-based line number in the file
    reason: str


@dataclass(frozen=True, slots=True)
class KeptRawEntry:
    """An entry kept unchanged because its type is unknown or it failed validation."""

    line_no: int
    type: str
    problem: str | None  # None: an unknown type (written by a newer version), not an error


@dataclass(frozen=True, slots=True)
class ReattachedEntry:
    """An entry whose parent was missing, attached to the entry before it in the file (or made a root)."""

    entry_id: str
    missing_parent: str
    attached_to: str | None


@dataclass(frozen=True, slots=True)
class TornTail:
    """An incomplete last line (a write interrupted by a crash): where it starts and how long it is."""

    line_no: int
    offset: int
    length: int


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _listed(items: list[str]) -> str:
    shown = "; ".join(items[:_MAX_LISTED])
    return shown + (f"; and {len(items) - _MAX_LISTED} more" if len(items) > _MAX_LISTED else "")


@dataclass
class LoadReport:
    """The outcome of loading one session file."""

    path: Path | None = None
    lines: int = 0  # non-blank lines read
    entries: int = 0  # tree entries loaded (the header excluded)
    skipped: list[SkippedLine] = field(default_factory=list)
    raw: list[KeptRawEntry] = field(default_factory=list)
    reattached: list[ReattachedEntry] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    salvaged: list[int] = field(
        default_factory=list
    )  # lines where an entry glued to a torn one was recovered
    header_missing: bool = False
    torn_tail: TornTail | None = None
    unterminated_tail: bool = False  # the last line is complete JSON but lacks its newline
    migrated_from: int | None = None
    repairs: list[str] = field(default_factory=list)  # what the first write did (backups made, lines fixed)

    @property
    def skipped_line_numbers(self) -> list[int]:
        return [s.line_no for s in self.skipped]

    @property
    def nothing_readable(self) -> bool:
        """The file has lines but neither a session header nor any entry: not a session at all (pi refuses
        to open such a file)."""
        return self.header_missing and self.entries == 0 and not self.raw and self.lines > 0

    @property
    def has_problems(self) -> bool:
        """True when something was lost from view or repaired (an unknown entry type is not a problem)."""
        return bool(
            self.skipped
            or self.header_missing
            or self.reattached
            or self.duplicate_ids
            or self.salvaged
            or any(r.problem is not None for r in self.raw)
        )

    def summary(self) -> str:
        """One line for the user; empty when there is nothing worth saying."""
        parts: list[str] = []
        if self.header_missing:
            parts.append(
                "no valid session header (a new one is written on the next save; the original is kept as .bak)"
            )
        if self.skipped:
            n = len(self.skipped)
            parts.append(
                f"skipped {n} unreadable {_plural(n, 'line', 'lines')} "
                f"({_listed([f'line {s.line_no}: {s.reason}' for s in self.skipped])})"
            )
        if self.salvaged:
            n = len(self.salvaged)
            lines = ", ".join(str(x) for x in self.salvaged[:_MAX_LISTED])
            parts.append(
                f"recovered {n} {_plural(n, 'entry', 'entries')} glued to a broken line (line {lines})"
            )
        invalid = [r for r in self.raw if r.problem is not None]
        unknown = [r for r in self.raw if r.problem is None]
        if invalid:
            n = len(invalid)
            details = [f"line {r.line_no}: {r.type or '?'}: {r.problem}" for r in invalid]
            parts.append(
                f"kept {n} invalid {_plural(n, 'entry', 'entries')} unchanged but unused ({_listed(details)})"
            )
        if unknown:
            n = len(unknown)
            types = ", ".join(sorted({r.type or "?" for r in unknown}))
            parts.append(f"kept {n} {_plural(n, 'entry', 'entries')} of unknown type ({types}) unchanged")
        if self.reattached:
            n = len(self.reattached)
            parts.append(
                f"{n} {_plural(n, 'entry', 'entries')} with a missing parent attached to the entry before "
                f"{_plural(n, 'it', 'them')}"
            )
        if self.duplicate_ids:
            n = len(self.duplicate_ids)
            parts.append(f"{n} duplicate entry {_plural(n, 'id', 'ids')} (the later entry wins)")
        if self.migrated_from is not None:
            parts.append(
                f"migrated from format v{self.migrated_from} (rewritten as v3 on the next save; "
                "the original is kept as .bak)"
            )
        parts.extend(self.repairs)
        if not parts:
            return ""
        text = "; ".join(parts)
        return f"Session {self.path.name}: {text}." if self.path else f"Session: {text}."
