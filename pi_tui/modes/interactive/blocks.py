"""The blocks of the chat log: one widget per thing the conversation shows.

Each block owns its look (``DEFAULT_CSS``, pi theme variables only) and keeps state as CSS classes
(``-collapsed``, ``-error``, ``-running``). Streaming blocks take text in O(1) per token: deltas are
buffered and written at most ~30 times a second.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from .blocks_base import Block, TypingClock
from .file_links import LINKED_PATH_TOOLS, file_url
from .screen_rows import RowCounter, tail_rows
from .search_marks import Highlighted

if TYPE_CHECKING:
    from textual.geometry import Size
    from textual.timer import Timer

    from .markdown_block import AssistantText

__all__ = [
    "AssistantText",
    "BashBlock",
    "Block",
    "NoticeBlock",
    "SummaryBlock",
    "ThinkingBlock",
    "ToolBlock",
    "UserBlock",
    "CustomBlock",
    "diff_text",
]

FLUSH_SECONDS = 1 / 20
"""Streamed text reaches the screen at most this often: each append re-lays out the growing message."""

KEY_QUIET_SECONDS = 0.05
"""A write of streamed text waits until the editor has had no key for this long: a key that arrives
while the chat is being re-laid out waits for it (the key's own frame takes ~15 ms)."""

MAX_TYPING_DELAY = 0.5
"""…but streamed text is never held back longer than this, however fast the user types."""

SPLIT_CHARS = 1200
"""A streamed answer continues in a new markdown widget after this many characters (at a paragraph
break outside a code fence), so each append re-lays out a small widget, not the whole answer."""

PREVIEW_LINES: dict[str, int] = {"read": 10, "write": 10, "ls": 20, "find": 20, "grep": 15, "bash": 5}
"""Collapsed tool output, in lines, per tool (pi's numbers; bash's are screen rows); other tools get
`OTHER_PREVIEW_LINES`."""

OTHER_PREVIEW_LINES = 10
"""Collapsed output of a tool without a preview of its own, in lines (pi's fallback preview)."""


def __getattr__(name: str) -> Any:
    # AssistantText lives apart with Textual's Markdown (markdown-it, pygments: ~35 ms to import), so a
    # new session gets ready without it; the warm-up loads it before the first answer.
    if name == "AssistantText":
        from .markdown_block import AssistantText

        return AssistantText
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _tools_expanded(app: object) -> bool:
    """Whether the app shows tool output expanded (Ctrl+O); a host app without pi's keys never does."""
    from .app import PiApp

    return isinstance(app, PiApp) and app.tools_expanded


def _thinking_hidden(app: object) -> bool:
    """Whether the app hides thinking (Ctrl+T, ``hideThinkingBlock``); a host app without pi's keys
    never does."""
    from .app import PiApp

    return isinstance(app, PiApp) and app.hide_thinking


def _key_text(app: object, pi_id: str, default: str) -> str:
    """The keys of action ``pi_id`` as the app's hints write them (the user's own keys when rebound);
    ``default`` in a host app without pi's keys."""
    from .app import PiApp

    return (app.key_text(pi_id) or default) if isinstance(app, PiApp) else default


def _key_hint(words: str, key: str, action: str, colors: dict[str, str]) -> Text:
    """pi's hint for a key: ``words`` then ``(KEY ACTION)``, the key dim and the rest muted (as in
    ``... (25 earlier lines, ctrl+o to expand)``; ``words`` ends with ``(`` or ``, ``)."""
    muted = Style(color=colors.get("pi-muted") or None)
    dim = Style(color=colors.get("pi-dim") or None)
    return Text.assemble((words, muted), (key, dim), (f" {action})", muted))


def _hidden_thinking_label(app: object) -> str:
    """What a hidden thinking block shows: pi's "Thinking...", or what an extension set instead."""
    from .app import PiApp

    return app.hidden_thinking_label if isinstance(app, PiApp) else "Thinking..."


def links_on(app: object) -> bool:
    """Whether ``app`` writes links as OSC 8 links (`PiApp.hyperlinks`)."""
    from .app import PiApp

    return isinstance(app, PiApp) and app.hyperlinks


def work_dir(app: object) -> Path:
    """The directory ``app``'s tools work in (`PiApp.cwd`); elsewhere the process's."""
    from .app import PiApp

    return app.cwd if isinstance(app, PiApp) else Path.cwd()


def mermaid_mode(app: object) -> str:
    """``markdown.mermaid`` in ``app`` (`PiApp.mermaid_mode`); elsewhere ``off``."""
    from .app import PiApp

    return app.mermaid_mode if isinstance(app, PiApp) else "off"


def typing_delay(now: float, pending_since: float) -> float:
    """How much longer a due write of streamed text should wait for a gap between key presses (0: write
    now). Writing in the gaps keeps typing responsive while an answer streams."""
    quiet_for = now - TypingClock.last_key
    if quiet_for >= KEY_QUIET_SECONDS or now - pending_since >= MAX_TYPING_DELAY:
        return 0.0
    return min(KEY_QUIET_SECONDS - quiet_for, pending_since + MAX_TYPING_DELAY - now)


class UserBlock(Static, Highlighted, Block):
    """A message the user sent."""

    DEFAULT_CSS = """
    UserBlock {
        background: $pi-user-message-bg;
        color: $pi-user-message-text;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Text(text), markup=False)
        self.text = text


THINKING_WRITE_CHARS = 4000
"""A streamed thought longer than this is written less often than every three frames (in proportion)."""


class ThinkingBlock(Static, Highlighted, Block):
    """Thinking, shown whole as italic markdown in the thinking colour, as pi 0.87.1 shows it.

    While the app hides thinking (Ctrl+T, the ``hideThinkingBlock`` setting) it is one line, pi's
    "Thinking..." (or the label an extension set with ``ctx.ui.set_hidden_thinking_label``). A click shows a hidden block or hides a shown one, that
    block only, until Ctrl+T sets every block again.
    """

    DEFAULT_CSS = """
    ThinkingBlock {
        color: $pi-thinking-text;
        text-style: italic;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__("", markup=False)
        self.text = text
        self._dirty = False
        self._shown: tuple[bool, str] | None = None
        self._clicked: bool | None = None  # this block shown (False) or hidden (True) by a click

    def on_mount(self) -> None:
        self._render_text()

    @property
    def hidden(self) -> bool:
        """Whether it shows only pi's "Thinking..." line (a click's choice, else the chat's)."""
        if self._clicked is not None:
            return self._clicked
        return self.is_attached and _thinking_hidden(self.app)

    def follow_chat(self) -> None:
        """Ctrl+T: forget the click's choice, hidden or shown as the chat says (pi clears them too)."""
        self._clicked = None
        self._render_text()

    def follow_label(self) -> None:
        """The app's label for hidden thinking changed: a hidden block shows the new one."""
        self._render_text()

    def _render_text(self) -> None:
        if not self.is_attached:
            return  # drawn once mounted, when the app says whether thinking is hidden
        hidden = self.hidden
        body = self.text.strip()
        if hidden:
            label = _hidden_thinking_label(self.app)
            if (True, label) != self._shown:
                self._shown = (True, label)
                self.update(Text(label))
            return
        if (False, body) == self._shown:
            return
        self._shown = (False, body)
        from .drawn_once import DrawnOnce
        from .rich_markdown import PiMarkdown

        # the widget's colour and italic are the base; the markdown's own styles (bold, code) go on top.
        # Drawn once for both its height and its lines (Textual draws a Rich renderable for each).
        drawn = PiMarkdown(body or "…", style="none", code_theme="ansi_dark", hyperlinks=links_on(self.app))
        self.update(DrawnOnce(drawn))

    def append_delta(self, delta: str) -> None:
        self.text += delta
        if not self._dirty:
            self._dirty = True
            # Each write renders the whole thought as markdown again (~3 ms per 2,000 characters): a long
            # one is written less often, so the work per second stays about the same as it grows.
            scale = max(1.0, len(self.text) / THINKING_WRITE_CHARS)
            self.set_timer(min(FLUSH_SECONDS * 3 * scale, 1.0), self._flush)

    def _flush(self) -> None:
        self._dirty = False
        self._render_text()

    def set_final_text(self, text: str) -> None:
        """The message's final thinking text replaces what streamed, drawn at once."""
        self.text = text
        self._flush()

    def toggle(self) -> None:
        self._clicked = not self.hidden
        self._render_text()

    def on_click(self) -> None:
        self.toggle()


def diff_text(diff: str, colors: dict[str, str] | None = None) -> Text:
    """pi's display diff (``+NN line`` / ``-NN line`` / context) coloured by the theme's diff tokens."""
    colors = colors or {}
    added = colors.get("pi-tool-diff-added", "green")
    removed = colors.get("pi-tool-diff-removed", "red")
    context = colors.get("pi-tool-diff-context", "")
    out = Text()
    for line in diff.splitlines():
        style = context
        if line.startswith("+"):
            style = added
        elif line.startswith("-"):
            style = removed
        out.append(line + "\n", style=style)
    out.rstrip()
    return out


def args_summary(name: str, args: dict[str, Any]) -> str:
    for key in ("path", "command", "pattern", "query", "url"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value.splitlines()[0][:200]
    text = json.dumps(args, ensure_ascii=False)
    return text if len(text) <= 120 else text[:119] + "…"


def format_duration(seconds: float) -> str:
    """A run time as pi's bash card shows it: ``1.2s`` under a minute, then ``2m 5s``, ``1h 0m 7s``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m {rest}s"
    return f"{minutes // 60}h {minutes % 60}m {rest}s"


class ToolBlock(Highlighted, Block):
    """One tool call: a title with its arguments, then its (collapsible) result; errors marked.

    ``edit`` shows the diff the tool reports; ``write`` shows the new content; ``read`` shows only its
    title until expanded (or an error). Long output is cut to a preview; Ctrl+O (or a click) expands
    every tool block.

    The card is one widget that draws all its lines (title, the dim hint around cut output, the output,
    bash's timing) itself: a long session's window holds mostly tool cards, and every layout and every
    garbage collection walks each mounted widget. Its lines are made when drawn, from the card's state,
    so output streamed into it costs nothing until the next frame.
    """

    DEFAULT_CSS = """
    ToolBlock {
        height: auto;
        background: $pi-tool-pending-bg;
        color: $pi-tool-output;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    ToolBlock.-success { background: $pi-tool-success-bg; }
    ToolBlock.-error { background: $pi-tool-error-bg; color: $pi-error; }
    """
    # The output takes the card's colour ($pi-tool-output, $pi-error for a failed call); the title
    # ($pi-tool-title, bold) and the dim lines ($pi-dim) are styled as they are drawn, from the theme's
    # variables: a theme change re-draws the card (`notify_style_update`).

    def __init__(self, tool_call_id: str, name: str, args: dict[str, Any]) -> None:
        super().__init__(classes="-running")
        self.tool_call_id = tool_call_id
        self.tool_name = name
        self.args = args
        self.result_text = ""
        self.diff: str | None = None
        self.is_error = False
        self.done = False
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self._ticker: Timer | None = None
        self._drawn: Text | None = None
        """The card's lines as last made; None: make them again when next drawn."""
        self._drawn_with: dict[str, str] | None = None
        """The theme variables `_drawn` was styled with."""
        self._wrap_width: int | None = None
        """The width the card's text was last measured at (a bash preview is cut to screen rows)."""
        self._drawn_width: int | None = None
        """The width `_drawn` was cut for."""
        self._row_counter = RowCounter()
        """Counts a bash preview's rows, only what was added since when its output grows as it streams."""
        self._linked: tuple[str, str] | None = None
        """The path the title links and its ``file://`` address, once made."""
        self._timed = False
        """Whether the lines last made have the timing line (a tick that only changes its text keeps
        the card's height: no layout)."""

    def _changed(self, *, layout: bool = True) -> None:
        """What the card shows changed: its lines are made again when next drawn."""
        self._drawn = None
        self.refresh(layout=layout)

    def render(self) -> Text:
        colors = self.app.theme_variables
        width = self._preview_width()
        if self._drawn is None or self._drawn_with is not colors or self._drawn_width != width:
            self._drawn_width = width
            self._drawn = self._lines(colors)
            self._drawn_with = colors
        return self._drawn

    def _preview_width(self) -> int | None:
        """The width a bash preview is cut to screen rows at (None for other cards, and before layout)."""
        if self.tool_name != "bash":
            return None
        return self._wrap_width or self.content_region.width or None

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.tool_name == "bash" and width and width != self._wrap_width:
            # the preview's rows depend on the width: drop the lines made for another before measuring
            self._wrap_width = width
            if self._drawn is not None and self._drawn_width != width:
                self._changed(layout=False)
        return super().get_content_height(container, viewport, width)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        # A new theme (or the same one reloaded with new colours) has new variables: the title, hints and
        # diff are drawn again in its colours (the card's own rules may not have changed at all).
        if self._drawn is not None and self.is_attached and self._drawn_with is not self.app.theme_variables:
            self._changed(layout=False)

    def mark_started(self) -> None:
        """The tool began to run: a bash card starts counting its time (a card from history never does)."""
        if self.tool_name != "bash" or self.started_at is not None or self.done:
            return
        self.started_at = time.monotonic()
        self._changed()
        if self.is_attached:
            self._ticker = self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        # Only the timing's text changes: the card keeps its height once the line is there.
        self._changed(layout=not self._timed)

    def timing_text(self) -> str:
        """``Elapsed …`` while running, ``Took …`` when done; empty when the start was not seen."""
        if self.started_at is None:
            return ""
        end = self.ended_at if self.ended_at is not None else time.monotonic()
        label = "Took" if self.ended_at is not None else "Elapsed"
        return f"{label} {format_duration(end - self.started_at)}"

    def _title_text(self) -> Text:
        mark = "✗" if self.is_error else ("✓" if self.done else "…")
        label = "$" if self.tool_name == "bash" else self.tool_name  # pi titles a bash call "$ command"
        summary = args_summary(self.tool_name, self.args)
        url = self._path_url()
        return Text.assemble((f"{mark} {label} ", "bold"), (summary, Style(link=url)) if url else summary)

    def _path_url(self) -> str | None:
        """The ``file://`` address the title's path links to (read, edit, write, ls, with hyperlinks on),
        made once per path the card shows (a streamed call's path grows as it arrives)."""
        path = self.args.get("path")
        if self.tool_name not in LINKED_PATH_TOOLS or not isinstance(path, str) or not path:
            return None
        if not self.is_attached or not links_on(self.app):
            return None
        if self._linked is None or self._linked[0] != path:
            self._linked = (path, file_url(path, work_dir(self.app)))
        return self._linked[1]

    def set_args(self, args: dict[str, Any]) -> None:
        self.args = args
        self._changed()

    def set_partial(self, text: str) -> None:
        self.result_text = text
        self._changed()

    def set_result(self, text: str, is_error: bool, details: Any = None) -> None:
        """The tool finished: show its output (and diff), mark success or error."""
        self.result_text = text
        self.is_error = is_error
        self.done = True
        if self.started_at is not None and self.ended_at is None:
            self.ended_at = time.monotonic()
            if self._ticker is not None:
                self._ticker.stop()
                self._ticker = None
        if isinstance(details, dict) and isinstance(details.get("diff"), str):
            self.diff = details["diff"]
        # A card built from history, not mounted yet, takes its classes as they are when it mounts: styling
        # it now (Textual applies the whole style sheet to a node whose classes change) was done twice for
        # nothing, for every finished card mounted while reading a long session up.
        attached = self.is_attached
        self.remove_class("-running", update=attached)
        self.add_class("-error" if is_error else "-success", update=attached)
        self._changed()

    def _content(self, colors: dict[str, str]) -> Text:
        if self.diff and not self.is_error:
            return diff_text(self.diff, colors)
        if self.tool_name == "write" and not self.is_error and isinstance(self.args.get("content"), str):
            return diff_text("\n".join("+" + line for line in self.args["content"].splitlines()), colors)
        if self.tool_name == "edit" and not self.done and isinstance(self.args.get("edits"), list):
            lines: list[str] = []
            for edit in self.args["edits"]:
                if isinstance(edit, dict):
                    lines += ["-" + x for x in str(edit.get("oldText", "")).splitlines()]
                    lines += ["+" + x for x in str(edit.get("newText", "")).splitlines()]
            return diff_text("\n".join(lines), colors)
        command = self.args.get("command")
        if self.tool_name == "bash" and not self.result_text and isinstance(command, str):
            # the title names the command: the body repeats it only when the title shows part of it
            cut = command != args_summary(self.tool_name, self.args)
            return Text("$ " + command if cut else "")
        return Text(self.result_text.rstrip("\n"))

    def _lines(self, colors: dict[str, str]) -> Text:
        """The card's lines: the title, then the output (cut to its preview unless expanded, bash's to
        its tail) with the dim hint after it (before it for bash), then bash's timing."""
        title = self._title_text()
        title.stylize_before(Style(bold=True, color=colors.get("pi-tool-title") or None))
        parts = [title]
        dim = Style(color=colors.get("pi-dim") or None)
        expanded = "-expanded" in self.classes or (self.is_attached and _tools_expanded(self.app))
        if self.tool_name != "read" or expanded or self.is_error:
            # pi 0.75.5+: a collapsed read shows only its title (the file is the model's to read)
            content = self._content(colors)
            if content.plain.strip():
                tail = self.tool_name == "bash"
                limit = PREVIEW_LINES.get(self.tool_name, OTHER_PREVIEW_LINES)
                width = self._drawn_width if tail else None
                if expanded:
                    shown, left_out = content, 0
                elif width:  # pi counts and keeps bash's screen rows, as wrapped at the card's width
                    shown, left_out = tail_rows(content, limit, width, self._row_counter)
                else:
                    shown, left_out = _cut(content, limit, tail)
                # pi's words: "... (25 earlier lines, ctrl+o to expand)" above bash's last lines,
                # "... (N more lines, ctrl+o to expand)" under the others' first ones (a write's with its total)
                total = f", {limit + left_out} total" if self.tool_name == "write" else ""
                hint = _key_hint(
                    f"... ({left_out} {'earlier' if tail else 'more'} lines{total}, ",
                    self._key("app.tools.expand", "ctrl+o"),
                    "to expand",
                    colors,
                )
                if left_out and tail:
                    parts.append(hint)
                parts.append(shown)
                if left_out and not tail:
                    parts.append(hint)
        timing = self.timing_text()
        self._timed = bool(timing)
        if timing:
            parts.append(Text(timing, style=dim))
        return Text("\n").join(parts)

    def refresh_expansion(self) -> None:
        self._changed()

    def _key(self, pi_id: str, default: str) -> str:
        return _key_text(self.app, pi_id, default) if self.is_attached else default

    def on_click(self) -> None:
        self.toggle_class("-expanded")
        self._changed()


def _cut(content: Text, limit: int, tail: bool) -> tuple[Text, int]:
    """``content`` cut to its first (``tail``: last) ``limit`` lines, and how many lines were left out.
    Plain output (streamed bash output can be long) is cut as a string, without splitting every line."""
    text = content.plain
    count = text.count("\n") + 1
    if count <= limit:
        return content, 0
    if not content.spans:
        kept = text.rsplit("\n", limit)[1:] if tail else text.split("\n", limit)[:limit]
        return Text("\n".join(kept), style=content.style), count - limit
    lines = content.split("\n", allow_blank=True)
    return Text("\n").join(lines[-limit:] if tail else lines[:limit]), count - limit


USER_BASH_PREVIEW_LINES = 20
"""Collapsed output of a command the user ran, in lines (pi's number; the model's bash calls show 5)."""


class BashBlock(ToolBlock):
    """A ``!cmd`` the user ran (``!!cmd``: its output stays out of the context).

    As pi draws it: the last 20 lines of the output; while the command runs, a spinner and "Running...
    (escape/ctrl+c to cancel)" under them; once it is over, how many more lines there are, and "(exit N)" for a
    failure or "(cancelled)" for a command the user stopped.
    """

    SPIN_SECONDS = 0.1
    """How often the running line's spinner turns (the working line's pace)."""

    def __init__(self, command: str, exclude: bool) -> None:
        self.exclude = exclude
        self.exit_code: int | None = None
        self.cancelled = False
        self.spin = 0
        self._spinner: Timer | None = None
        super().__init__("", "bash", {"command": command})

    def on_mount(self) -> None:
        if not self.done and self._spinner is None:
            self._spinner = self.set_interval(self.SPIN_SECONDS, self._turn)

    def _turn(self) -> None:
        self.spin += 1
        self._changed(layout=False)  # the running line keeps its length: no layout

    def set_outcome(self, output: str, exit_code: int | None, cancelled: bool) -> None:
        """The command is over: its own output (no status line), its exit code, whether it was stopped."""
        self.exit_code = exit_code
        self.cancelled = cancelled
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None
        self.set_result(output, bool(exit_code) or cancelled)

    def _lines(self, colors: dict[str, str]) -> Text:
        title = self._title_text()
        title.stylize_before(Style(bold=True, color=colors.get("pi-tool-title") or None))
        parts = [title]
        muted = Style(color=colors.get("pi-muted") or None)
        expanded = "-expanded" in self.classes or (self.is_attached and _tools_expanded(self.app))
        output = Text(self.result_text.rstrip("\n"))
        left_out = 0
        if output.plain.strip():
            shown, left_out = _cut(output, USER_BASH_PREVIEW_LINES, tail=True)
            if self._drawn_width:  # as pi: the last lines, and of those no more screen rows than lines
                shown, _ = tail_rows(shown, USER_BASH_PREVIEW_LINES, self._drawn_width)
            parts.append(output if expanded else shown)
        if not self.done:
            from .status import WorkingLine

            frames = WorkingLine.FRAMES
            running = Text.assemble(
                (frames[self.spin % len(frames)] + " ", Style(color=colors.get("pi-bash-mode") or None)),
                (f"Running... ({self._cancel_keys()} to cancel)", muted),
            )
            parts.append(running)
        else:
            if left_out:
                expand = self._key("app.tools.expand", "ctrl+o")
                parts.append(
                    _key_hint("(", expand, "to collapse", colors)
                    if expanded
                    else _key_hint(f"... {left_out} more lines (", expand, "to expand", colors)
                )
            if self.cancelled:
                parts.append(Text("(cancelled)", style=Style(color=colors.get("pi-warning") or None)))
            elif self.exit_code:
                parts.append(
                    Text(f"(exit {self.exit_code})", style=Style(color=colors.get("pi-error") or None))
                )
        return Text("\n").join(parts)

    def _cancel_keys(self) -> str:
        """The keys that stop the command, as pi names them (``escape/ctrl+c``; the user's own keys)."""
        keys = [self._key("app.interrupt", "escape"), self._key("app.clear", "ctrl+c")]
        return "/".join(key for key in keys if key)

    def _title_text(self) -> Text:
        mark = "✗" if self.is_error else ("✓" if self.done else "…")
        suffix = " (not sent to the model)" if self.exclude else ""
        return Text.assemble((f"{mark} ", "bold"), ("$ " + str(self.args.get("command", "")), "bold"), suffix)


class NoticeBlock(Static, Highlighted, Block):
    """A status line: info, warning, error, retry countdown, abort, cache invalidation, command output."""

    DEFAULT_CSS = """
    NoticeBlock { color: $pi-muted; padding: 0 1; margin: 1 0 0 0; }
    NoticeBlock.-warning { color: $pi-warning; }
    NoticeBlock.-error { color: $pi-error; border-left: outer $pi-error; }
    NoticeBlock.-success { color: $pi-success; }
    NoticeBlock.-output { color: $pi-text; border-left: outer $pi-border-muted; }
    """

    def __init__(self, text: str, level: str = "info", *, expanded: str | None = None) -> None:
        super().__init__(Text(text), markup=False, classes=f"-{level}")
        self.text = text
        self.expanded = expanded
        """Shown instead of ``text`` while Ctrl+O expands (the start-up header's full key list)."""

    def set_text(self, text: str) -> None:
        self.text = text
        self.update(Text(text))

    def on_mount(self) -> None:
        if self.expanded is not None:
            self.refresh_expansion()

    def refresh_expansion(self) -> None:
        """The long form while Ctrl+O expands, the short one otherwise (a plain notice has one form)."""
        if self.expanded is not None:
            self.update(Text(self.expanded if _tools_expanded(self.app) else self.text))


class SummaryBlock(Static, Highlighted, Block):
    """A compaction or branch summary, shown as such; click (or Ctrl+O) expands the full text."""

    DEFAULT_CSS = """
    SummaryBlock {
        background: $pi-custom-message-bg;
        color: $pi-custom-message-text;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    """

    def __init__(self, kind: str, summary: str, tokens_before: int | None = None) -> None:
        super().__init__("", markup=False)
        label = "[compaction]" if kind == "compaction" else "[branch]"
        extra = f" {tokens_before:,} tokens summarised" if tokens_before else ""
        self.head = Text.assemble((label, "bold"), extra)
        self.summary = summary
        self._opened = False  # expanded by a click
        self._show(expanded=False)

    def _show(self, *, expanded: bool) -> None:
        # Collapsed, the line says what it is and no more, as pi's: a summary's first lines are no
        # preview of it (a first compaction inside a long turn starts "No prior history.").
        self.set_class(expanded, "-expanded")
        if expanded:
            self.update(self.head + Text("\n" + self.summary))
        else:
            self.update(self.head + Text(" (click or ctrl+o to expand)"))

    def on_mount(self) -> None:
        self.refresh_expansion()

    def refresh_expansion(self) -> None:
        """Expanded when clicked open or while Ctrl+O expands everything."""
        self._show(expanded=self._opened or _tools_expanded(self.app))

    def on_click(self) -> None:
        self._opened = "-expanded" not in self.classes
        self._show(expanded=self._opened)


class CustomBlock(Static, Highlighted, Block):
    """An extension's custom message (its renderer's lines, or the content)."""

    DEFAULT_CSS = """
    CustomBlock {
        background: $pi-custom-message-bg;
        color: $pi-custom-message-text;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    """

    def __init__(self, label: str, body: str) -> None:
        super().__init__(Text.assemble((f"[{escape(label)}] ", "bold"), body), markup=False)
