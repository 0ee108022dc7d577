"""RPC ``bash``: run a user's shell command (pi's ``!cmd``) and stream its output.

Output streams to the client as ``bash_execution_update`` deltas; the result is pi's ``BashResult``
(the displayed tail, truncated like the bash tool's, with the full output spilled to a file when it
is long), and the command joins the conversation as a ``bashExecution`` message. An extension's
``user_bash`` handler may answer instead of the shell, as in pi.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import BashExecutionMessage
from pi_tui.tools.output import OutputAccumulator, sanitize_output
from pi_tui.tools.process import resolve_shell, run_streaming, shell_env

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["BashRun"]


class BashRun:
    """One ``bash`` command; `abort` kills its process tree."""

    def __init__(self, session: AgentSession, command: str, *, exclude_from_context: bool = False) -> None:
        self.session = session
        self.command = command
        self.exclude = exclude_from_context
        self.signal = AbortSignal()

    def abort(self) -> None:
        self.signal.abort()

    async def _from_extension(self) -> BashExecutionMessage | None:
        ext = self.session.extensions
        if ext is None:
            return None
        answer = await ext.emit_user_bash(self.command, self.exclude, str(self.session.cwd))
        result = answer.get("result") if isinstance(answer, dict) else None
        if not isinstance(result, dict):
            return None
        return BashExecutionMessage(
            command=self.command,
            output=str(result.get("output", "")),
            exit_code=result.get("exitCode") if isinstance(result.get("exitCode"), int) else None,
            cancelled=bool(result.get("cancelled", False)),
            truncated=bool(result.get("truncated", False)),
            full_output_path=result.get("fullOutputPath")
            if isinstance(result.get("fullOutputPath"), str)
            else None,
            exclude_from_context=self.exclude or None,
        )

    async def execute(self, on_delta: Callable[[str], None]) -> BashExecutionMessage:
        answered = await self._from_extension()
        if answered is not None:
            return answered
        settings = self.session.settings
        shell = resolve_shell(settings.shell_path if settings is not None else None)
        prefix = settings.shell_command_prefix if settings is not None else None
        script = f"{prefix}\n{self.command}" if prefix else self.command
        output = OutputAccumulator()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

        def on_data(chunk: bytes) -> None:
            output.feed(chunk)
            text = decoder.decode(chunk)
            if text:
                on_delta(sanitize_output(text))

        argv, env = [shell, "-c", script], shell_env()
        sandbox = self.session.sandbox
        launch = None
        if sandbox is not None:
            from pi_tui.sandbox import SandboxUnavailableError

            try:
                launch = sandbox.prepare(argv, self.session.cwd, env)
            except SandboxUnavailableError as exc:  # asked for and unavailable: fail closed
                output.close()
                return BashExecutionMessage(
                    command=self.command, output=str(exc), exit_code=1, cancelled=False
                )
            argv, env = launch.argv, launch.env
        try:
            outcome = await run_streaming(
                argv,
                cwd=self.session.cwd,
                env=env,
                on_data=on_data,
                signal=self.signal,
            )
            output.finish()
            snap = output.snapshot()
        finally:
            output.close()
        text = snap.content
        if sandbox is not None and launch is not None:
            if outcome.exit_code not in (0, None):
                found = sandbox.explain(text, launch)
                if found is not None:
                    text = f"{text}\n\n{found[1]}"
            notice = sandbox.take_notice()  # once: commands run unsandboxed
            if notice is not None:
                text = f"{notice}\n{text}"
        return BashExecutionMessage(
            command=self.command,
            output=text,
            exit_code=None if outcome.aborted else outcome.exit_code,
            cancelled=outcome.aborted,
            truncated=snap.truncation.truncated,
            full_output_path=str(snap.full_output_path) if snap.full_output_path else None,
            exclude_from_context=self.exclude or None,
        )

    @staticmethod
    def result_json(message: BashExecutionMessage) -> dict[str, Any]:
        """pi's ``BashResult``."""
        data: dict[str, Any] = {
            "output": message.output,
            "exitCode": message.exit_code,
            "cancelled": message.cancelled,
            "truncated": message.truncated,
        }
        if message.full_output_path:
            data["fullOutputPath"] = message.full_output_path
        if data["exitCode"] is None:
            del data["exitCode"]
        return data
