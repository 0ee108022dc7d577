"""Small text helpers the screens share (no Textual here)."""

from __future__ import annotations

from datetime import UTC, datetime

from pi_tui.util.format import fmt_tokens

__all__ = ["fmt_tokens", "fmt_cost", "fmt_size", "fmt_age", "one_line", "share"]


def fmt_cost(dollars: float) -> str:
    return f"${dollars:.4f}"


def fmt_size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f}MB"
    if size >= 1024:
        return f"{size / 1024:.0f}KB"
    return f"{size}B"


def fmt_age(when: datetime, now: datetime | None = None) -> str:
    """How long ago, as pi's pickers show it (``5m``, ``3h``, ``2d``, or a date past a month)."""
    now = now or datetime.now(UTC)
    if when.tzinfo is None:  # naive means local time, the rule of `pi_tui.session.paths.parse_iso`
        when = when.astimezone()
    seconds = max(0.0, (now - when).total_seconds())
    if seconds < 60:
        return "now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    if seconds < 30 * 86400:
        return f"{int(seconds // 86400)}d"
    return when.astimezone().strftime("%Y-%m-%d")  # the local date, as pi shows it


def one_line(text: str, width: int = 80) -> str:
    """Whitespace collapsed, cut to ``width`` with an ellipsis."""
    text = " ".join(text.split())
    return (text[: width - 1] + "…") if len(text) > width else text


def share(tokens: int, window: int) -> str:
    """Share of the context window, e.g. ``3.1%``."""
    return f"{100 * tokens / window:.1f}%" if window else "?"
