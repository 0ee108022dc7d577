"""``!cmd`` and ``!!cmd``: run a shell command from the editor and show it as a bash block.

The output is stored as a ``bashExecution`` message (pi's shape): ``!cmd`` reaches the model with the
next prompt, ``!!cmd`` is kept out of the context. Escape kills a running command.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_tui.ai.stream import AbortSignal

    from .app import PiApp

__all__ = ["UserBash", "run_user_bash"]

_EXIT = re.compile(r"Command exited with code (\d+)")
_STATUS = re.compile(r"(?:\n\n)?(?:Command exited with code \d+|Command aborted)\Z")
"""The status line the bash tool adds for the model; a command the user ran records its own output and
its exit code apart (the context states the exit code once, and the card says "(exit N)")."""


def _own_output(text: str) -> str:
    """The command's output as it printed it: no status line, and nothing for no output."""
    text = _STATUS.sub("", text)
    return "" if text == "(no output)" else text


class UserBash:
    """The app's ``!cmd`` state: at most one command runs at a time, and Escape kills it."""

    def __init__(self) -> None:
        self.signal: AbortSignal | None = None
        """Aborts the running command; None when none runs."""

    @property
    def running(self) -> bool:
        return self.signal is not None

    def cancel(self) -> bool:
        """Kill the running ``!cmd``; False when none runs."""
        if self.signal is None:
            return False
        self.signal.abort("cancelled")
        return True


async def run_user_bash(app: PiApp, text: str) -> None:
    """Run ``!cmd`` (or ``!!cmd``) in the project directory and record it in the session."""
    from pi_tui.agent.tool import result_text
    from pi_tui.ai.stream import AbortSignal
    from pi_tui.ai.types import BashExecutionMessage
    from pi_tui.tools.bash import create_bash_tool

    from .blocks import BashBlock

    session = app.require_session()
    exclude = text.startswith("!!")
    command = text[2:] if exclude else text[1:]
    command = command.strip()
    if not command:
        return
    state = app.user_bash
    if state.running:
        app.chat_notice("A bash command is already running. Press Esc to cancel it first.", "warning")
        if not app.editor.text:  # as pi: the command waits in the editor instead of being lost
            app.set_editor_text(text)
        return
    block = BashBlock(command, exclude)
    # as pi: while the agent answers, the command shows above the editor and joins the chat when the turn
    # is over, after the answer, where the conversation records it
    deferred = session.is_streaming
    if deferred:
        app.show_pending_block(block)
    else:
        app.chat.add(block)
    await session.checkpoint_before_user_bash()  # checkpoints: what the command changes
    ext = session.extensions
    handled: dict[str, Any] | None = None
    if ext is not None:
        handled = await ext.emit_user_bash(command, exclude, str(session.cwd))
    output, code, cancelled = "", 0, False
    if handled and isinstance(handled.get("result"), dict):
        result = handled["result"]
        output = str(result.get("output", ""))
        code = int(result.get("exitCode", 0) or 0)
    else:
        settings = session.settings
        tool = create_bash_tool(
            session.cwd,
            shell_path=settings.shell_path if settings is not None else None,
            command_prefix=settings.shell_command_prefix if settings is not None else None,
            sandbox=session.sandbox,
        )
        signal = AbortSignal()
        state.signal = signal
        try:
            tool_result = await tool.execute(
                "user-bash", {"command": command}, signal, lambda r: block.set_partial(result_text(r))
            )
            output = result_text(tool_result)
        except Exception as exc:  # the tool reports failures (non-zero exit, timeout) by raising
            output = str(exc)
            match = _EXIT.search(output)
            code = int(match.group(1)) if match else 1
            cancelled = signal.aborted
        finally:
            state.signal = None
        output = _own_output(output)
    block.set_outcome(output, code, cancelled)
    app.files_changed()  # the next `@` offers what the command made
    message = BashExecutionMessage(
        command=command,
        output=output,
        exit_code=None if cancelled else code,
        cancelled=cancelled,
        exclude_from_context=exclude or None,
    )
    if session.is_streaming:
        # as pi: recorded once the turn is over, after its answer and tool results, never between a
        # tool call and its result
        await session.wait_for_idle()
    session.record_bash_execution(message)
    if deferred:
        await block.remove()
        app.chat.add(message)
