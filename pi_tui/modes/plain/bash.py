"""``!cmd`` and ``!!cmd`` in the line mode: run a shell command in the project and print its output.

As in the full-screen editor (and pi): the output is stored as a ``bashExecution`` message, which reaches
the model with the next prompt for ``!cmd`` and stays out of the context for ``!!cmd``. Extensions may
answer the command themselves (``user_bash``). Escape or Ctrl+C kills it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession


from pi_tui.agent.tool import result_text

from .render import EventPrinter
from .terminal import Terminal

__all__ = ["run_user_bash"]

_EXIT = re.compile(r"Command exited with code (\d+)")


async def run_user_bash(text: str, session: AgentSession, terminal: Terminal, printer: EventPrinter) -> None:
    """Run ``text`` (``!cmd`` or ``!!cmd``) and record it in the session."""
    from pi_tui.ai.stream import AbortSignal
    from pi_tui.ai.types import BashExecutionMessage
    from pi_tui.tools.bash import create_bash_tool

    exclude = text.startswith("!!")
    command = text[2 if exclude else 1 :].strip()
    if not command:
        return
    printer.line(f"$ {command}" + ("  (not sent to the model)" if exclude else ""), "\x1b[2m")
    output, code, cancelled = "", 0, False
    handled = None
    await session.checkpoint_before_user_bash()  # the checkpoint then holds just what the command changes
    if session.extensions is not None:
        handled = await session.extensions.emit_user_bash(command, exclude, str(session.cwd))
    if handled and isinstance(handled.get("result"), dict):
        output = str(handled["result"].get("output", ""))
        code = int(handled["result"].get("exitCode", 0) or 0)
    else:
        settings = session.settings
        tool = create_bash_tool(
            session.cwd,
            shell_path=settings.shell_path if settings is not None else None,
            command_prefix=settings.shell_command_prefix if settings is not None else None,
            sandbox=session.sandbox,
        )
        signal = AbortSignal()
        with terminal.watch_abort(lambda: signal.abort("cancelled")):
            try:
                output = result_text(await tool.execute("user-bash", {"command": command}, signal, None))
            except Exception as exc:  # the tool reports a non-zero exit, a timeout or a kill by raising
                output = str(exc)
                match = _EXIT.search(output)
                code = int(match.group(1)) if match else 1
                cancelled = signal.aborted
    if output:
        printer.line(output.rstrip("\n"))
    if cancelled:
        printer.line("Cancelled.", "\x1b[2m")
    elif code:
        printer.line(f"Exit code {code}", "\x1b[31m")
    session.record_bash_execution(
        BashExecutionMessage(
            command=command,
            output=output,
            exit_code=None if cancelled else code,
            cancelled=cancelled,
            exclude_from_context=exclude or None,
        )
    )
