"""The footer, in pi's spirit: where you are, what it cost, which model thinks how hard."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from pi_tui.util.format import fmt_tokens
from pi_tui.util.ignore import find_git_root

__all__ = ["FooterState", "StatusFooter", "fmt_tokens", "git_branch"]


def git_branch(cwd: Path) -> str | None:
    """The checked-out branch, read from ``.git/HEAD`` (no subprocess on the way to the first frame)."""
    root = find_git_root(cwd)
    if root is None:
        return None
    head = root / ".git"
    if head.is_file():  # a worktree: "gitdir: …"
        try:
            target = head.read_text().split(":", 1)[1].strip()
            head = (root / target).resolve()
        except (OSError, IndexError):
            return None
    try:
        ref = (head / "HEAD").read_text().strip()
    except OSError:
        return None
    if ref.startswith("ref: refs/heads/"):
        return ref[len("ref: refs/heads/") :]
    return ref[:8] or None


@dataclass
class FooterState:
    """Everything the footer shows (the app fills it; the footer only renders)."""

    cwd: str = ""
    branch: str | None = None
    session_name: str | None = None
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_hit: float | None = None
    """The newest answer's cache read share of its prompt, in percent (``CH``), as pi's footer shows it."""
    cost: float = 0.0
    context_tokens: int | None = None
    context_window: int = 0
    model: str = ""
    provider: str | None = None
    """Shown before the model, in parentheses, when models of more than one provider are available and
    the line has room (pi's ``(anthropic) claude-sonnet-4-5``)."""
    thinking: str | None = None
    auto_compaction: bool = False
    """Automatic compaction is on: `` (auto)`` follows the context share, as in pi."""
    statuses: dict[str, str] = field(default_factory=dict)
    sandbox: str | None = None
    """``sandbox: workspace-write``, ``sandbox: off``, ``not sandboxed`` (see `CommandSandbox.status`)."""


class StatusFooter(Static):
    """Line 1: cwd (branch) • name, and the sandbox on the right. Line 2: tokens, cache, cost, context % and the model. Line 3:
    extension statuses."""

    DEFAULT_CSS = """
    StatusFooter { height: auto; color: $pi-dim; padding: 0 1; background: $pi-background; }
    """

    def __init__(self) -> None:
        super().__init__("", id="footer")
        self.state = FooterState()

    def show(self, state: FooterState) -> None:
        self.state = state
        self.refresh(layout=True)

    def plain(self, width: int = 100) -> str:
        """The footer as plain text (what a user reads; tests use it)."""
        from rich.console import Console

        console = Console(width=width, color_system=None, file=None, record=True, legacy_windows=False)
        with console.capture() as capture:
            console.print(self.render_state(self.state, width))
        return capture.get()

    def render(self) -> Text:
        return self.render_state(self.state, self.size.width)

    def render_state(self, s: FooterState, width: int) -> Text:
        """The footer's lines at ``width`` columns.

        Line 1 keeps the sandbox whole (it says whether commands are confined) and cuts the directory
        before it; line 2 keeps the token counts, cost and context share whole, as pi does, and gives
        the model what is left (cut without an ellipsis, as pi cuts it, or left out when nothing is
        left); two spaces always separate the sides.
        """
        vars_ = self.app.theme_variables if self.is_attached else {}
        warn, err = vars_.get("pi-warning", "yellow"), vars_.get("pi-error", "red")
        line1 = (
            s.cwd
            + (f" ({s.branch})" if s.branch else "")
            + (f" • {s.session_name}" if s.session_name else "")
        )
        parts: list[tuple[str, str]] = []
        for label, value in (("↑", s.input), ("↓", s.output), ("R", s.cache_read), ("W", s.cache_write)):
            if value:
                parts.append((f"{label}{fmt_tokens(value)}", ""))
        if (s.cache_read or s.cache_write) and s.cache_hit is not None:
            parts.append((f"CH{s.cache_hit:.1f}%", ""))
        if s.cost:
            parts.append((f"${s.cost:.3f}", ""))
        if s.context_window:
            auto = " (auto)" if s.auto_compaction else ""
            if s.context_tokens is None:
                parts.append((f"?/{fmt_tokens(s.context_window)}{auto}", ""))
            else:
                pct = 100 * s.context_tokens / s.context_window
                style = err if pct > 90 else warn if pct > 70 else ""
                parts.append((f"{pct:.1f}%/{fmt_tokens(s.context_window)}{auto}", style))
        stats = Text(" ").join(Text(t, style=st) for t, st in parts)
        level = "thinking off" if s.thinking == "off" else s.thinking  # a bare "off" says nothing, as pi
        model = Text(s.model + (f" • {level}" if level else ""))
        if s.provider and stats.cell_len + _GAP + len(s.provider) + 3 + model.cell_len <= width:
            model = Text(f"({s.provider}) ") + model  # only with room for all of it, as pi
        sandbox = Text(
            s.sandbox or "", style=warn if s.sandbox in ("not sandboxed", "sandbox: invalid") else ""
        )
        lines = [
            _row(Text(line1), sandbox, width, keep="right"),
            _row(stats, model, width, keep="left"),
        ]
        if s.statuses:
            status = Text(" ".join(s.statuses[k] for k in sorted(s.statuses)))
            _cut(status, width)
            lines.append(status)
        return Text("\n").join(lines)


_GAP = 2
_MIN_CUT = 6  # a directory cut shorter than this says nothing ("f..."): it is left out instead
_DOTS = "..."


def _cut(text: Text, width: int) -> None:
    """Cut ``text`` in place to ``width`` columns, ending in three dots when cut (pi's footer ellipsis)."""
    if text.cell_len <= width:
        return
    if width <= len(_DOTS):
        text.truncate(max(0, width))
        return
    text.truncate(width - len(_DOTS))
    text.append(_DOTS)


def _row(left: Text, right: Text, width: int, *, keep: str) -> Text:
    """``left`` and ``right`` on one line of ``width`` columns, ``right`` flush right.

    ``keep`` names the side shown whole (cut with three dots only when it alone is wider than the line).
    With ``keep="left"`` (the stats line) the right side is cut without an ellipsis to whatever fits
    after the two-column gap, as pi cuts the model name; with ``keep="right"`` (the directory line) the
    left side is cut with three dots, or left out when it would get fewer than six columns.
    """
    left, right = left.copy(), right.copy()
    if not right.plain:
        _cut(left, width)
        return left
    if keep == "left":
        _cut(left, width)
        room = width - left.cell_len - _GAP
        if right.cell_len > room:
            if room <= 0:
                return left
            right.truncate(room)
    else:
        _cut(right, width)
        room = width - right.cell_len - _GAP
        if left.cell_len > room:
            if room < _MIN_CUT:
                return Text(" " * (width - right.cell_len)) + right
            _cut(left, room)
    pad = max(_GAP if left.plain else 0, width - left.cell_len - right.cell_len)
    return left + Text(" " * pad) + right
