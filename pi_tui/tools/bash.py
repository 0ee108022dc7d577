"""The ``bash`` tool: run a command in the session's cwd, stream its output, keep the tail."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.agent.tool import PREFER_STRICT_SCHEMA, AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import TextContent
from pi_tui.util.json_types import JsonObject

from ._common import format_number, opt_number_arg, str_arg
from .truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

if TYPE_CHECKING:
    from pi_tui.sandbox import CommandSandbox
    from pi_tui.sandbox.tool import EscalateFn

    from .output import OutputAccumulator, OutputSnapshot

# The process runner and the output spooler load with the first command: a run that never calls bash
# does not import them.

__all__ = [
    "create_bash_tool",
    "agent_command_env",
    "AGENT_MARKER_ENV",
    "BASH_PARAMETERS",
    "BASH_DESCRIPTION",
    "UPDATE_INTERVAL_SECONDS",
]

BASH_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Bash command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
    },
    "required": ["command"],
}

BASH_DESCRIPTION = (
    "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated "
    f"to last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). If truncated, "
    "full output is saved to a temp file. Optionally provide a timeout in seconds."
)

UPDATE_INTERVAL_SECONDS = 0.1
"""Partial output is sent to ``on_update`` at most this often."""

AGENT_MARKER_ENV: dict[str, str] = {"PI_CODING_AGENT": "true", "AI_AGENT": "pi"}
"""Set for every command, as pi 0.67/0.84 do, so scripts can tell an agent runs them."""

_MAX_TIMEOUT_SECONDS = 2_147_483.647  # what a JS timer can hold; pi rejects longer timeouts


def agent_command_env(
    *,
    session_id: str | None,
    session_file: Path | str | None,
    provider: str,
    model: str,
    reasoning_level: str,
) -> dict[str, str]:
    """The ``PI_*`` variables pi 0.82+ gives the bash tool's commands (not user ``!`` commands).

    A value that is not known (no session file with ``--no-session``) is left out, not set empty.
    """
    env = {"PI_PROVIDER": provider, "PI_MODEL": model, "PI_REASONING_LEVEL": reasoning_level}
    if session_id:
        env["PI_SESSION_ID"] = session_id
    if session_file:
        env["PI_SESSION_FILE"] = str(session_file)
    return env


def create_bash_tool(
    cwd: Path,
    *,
    shell_path: str | None = None,
    command_prefix: str | None = None,
    temp_dir: Path | None = None,
    command_env: Callable[[], Mapping[str, str]] | None = None,
    sandbox: CommandSandbox | None = None,
    escalate: EscalateFn | None = None,
) -> AgentTool:
    """Build the bash tool for ``cwd``.

    Args:
        cwd: The working directory of every command.
        shell_path: The ``shellPath`` setting (a shell binary); default ``/bin/bash``, else ``sh``.
        command_prefix: The ``shellCommandPrefix`` setting, run before every command (e.g. ``shopt -s
            expand_aliases``).
        temp_dir: Where full-output spill files go (default: the system temp directory).
        command_env: Extra variables for each command, read when it starts (see `agent_command_env`),
            so a model or thinking change mid-session is seen.
        sandbox: Runs each command in the OS sandbox (`pi_tui.sandbox`); None runs them directly.
        escalate: Asked when the sandbox refused something (refusal, command, note): ``"once"`` runs the
            command again outside the sandbox, ``"allow"`` widens the sandbox for the session and runs it
            again, None keeps the refusal (see `pi_tui.sandbox.escalation`).
    """

    async def execute(
        tool_call_id: str, params: JsonObject, signal: AbortSignal | None, on_update: ToolUpdateFn | None
    ) -> ToolResult:
        command = str_arg(params, "command")
        timeout = _checked_timeout(opt_number_arg(params, "timeout"))
        if signal is not None and signal.aborted:
            raise ToolError("Command aborted")
        script = f"{command_prefix}\n{command}" if command_prefix else command
        if not cwd.is_dir():
            raise ToolError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")
        from .process import ShellNotFoundError, resolve_shell, shell_env

        try:
            shell = resolve_shell(shell_path)
        except ShellNotFoundError as exc:
            raise ToolError(str(exc)) from exc
        env = {**shell_env(), **AGENT_MARKER_ENV, **(command_env() if command_env else {})}
        if sandbox is None:
            return await _run(shell, script, cwd, timeout, signal, on_update, temp_dir, env)
        from pi_tui.sandbox.tool import run_sandboxed

        def run(argv: list[str], run_env: dict[str, str]) -> Awaitable[ToolResult]:
            return _run(shell, script, cwd, timeout, signal, on_update, temp_dir, run_env, argv=argv)

        return await run_sandboxed(sandbox, [shell, "-c", script], cwd, env, command, run, escalate)

    return AgentTool(
        name="bash",
        label="bash",
        description=BASH_DESCRIPTION,
        parameters=BASH_PARAMETERS,
        execute=execute,
        constrained_sampling=PREFER_STRICT_SCHEMA,
        prompt_snippet="Execute bash commands (ls, grep, find, etc.)",
    )


def _checked_timeout(timeout: float | None) -> float | None:
    if timeout is None:
        return None
    if not math.isfinite(timeout) or timeout <= 0:
        raise ToolError("Invalid timeout: must be a finite number of seconds")
    if timeout > _MAX_TIMEOUT_SECONDS:
        raise ToolError(f"Invalid timeout: maximum is {format_number(_MAX_TIMEOUT_SECONDS)} seconds")
    return timeout


class _Throttle:
    """Sends the accumulated output to ``on_update`` at most every `UPDATE_INTERVAL_SECONDS`."""

    def __init__(self, output: OutputAccumulator, on_update: ToolUpdateFn | None) -> None:
        self._output = output
        self._on_update = on_update
        self._last = 0.0
        self._dirty = False
        self._timer: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        if self._on_update is None:
            return
        self._dirty = True
        delay = UPDATE_INTERVAL_SECONDS - (time.monotonic() - self._last)
        if delay <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(delay, self.flush)

    def flush(self) -> None:
        self.cancel()
        if self._on_update is None or not self._dirty:
            return
        self._dirty = False
        self._last = time.monotonic()
        snap = self._output.snapshot()
        # pi's progress always carries a details object ({} until something is cut), unlike the final result
        details = _details(snap) or {}
        self._on_update(ToolResult(content=[TextContent(text=snap.content)], details=details))

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


async def _run(
    shell: str,
    script: str,
    cwd: Path,
    timeout: float | None,
    signal: AbortSignal | None,
    on_update: ToolUpdateFn | None,
    temp_dir: Path | None,
    env: dict[str, str],
    *,
    argv: list[str] | None = None,
) -> ToolResult:
    from .output import OutputAccumulator
    from .process import run_streaming

    output = OutputAccumulator(temp_dir=temp_dir)
    throttle = _Throttle(output, on_update)
    if on_update is not None:
        on_update(ToolResult(content=[], details=None))

    def on_data(chunk: bytes) -> None:
        output.feed(chunk)
        throttle.poke()

    try:
        try:
            outcome = await run_streaming(
                argv or [shell, "-c", script],
                cwd=cwd,
                env=env,
                on_data=on_data,
                signal=signal,
                timeout=timeout,
            )
        except OSError as exc:
            raise ToolError(f"Failed to start shell {shell}: {exc.strerror or exc}") from exc
        output.finish()
        throttle.flush()
        snap = output.snapshot()
    finally:
        throttle.cancel()
        output.close()

    if outcome.aborted:
        raise ToolError(_with_status(_format(snap, empty=""), "Command aborted"), details=_details(snap))
    if outcome.timed_out:
        assert timeout is not None
        status = f"Command timed out after {format_number(timeout)} seconds"
        raise ToolError(_with_status(_format(snap, empty=""), status), details=_details(snap))
    text = _format(snap, empty="(no output)")
    if outcome.exit_code not in (0, None):
        raise ToolError(
            _with_status(text, f"Command exited with code {outcome.exit_code}"), details=_details(snap)
        )
    return ToolResult(content=[TextContent(text=text)], details=_details(snap))


def _with_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


def _format(snap: OutputSnapshot, *, empty: str) -> str:
    text = snap.content or empty
    truncation = snap.truncation
    if not truncation.truncated:
        return text
    first = truncation.total_lines - truncation.output_lines + 1
    last = truncation.total_lines
    path = snap.full_output_path
    if truncation.last_line_partial:
        notice = (
            f"[Showing last {format_size(truncation.output_bytes)} of line {last} "
            f"(line is {format_size(snap.last_line_bytes)}). Full output: {path}]"
        )
    elif truncation.truncated_by == "lines":
        notice = f"[Showing lines {first}-{last} of {truncation.total_lines}. Full output: {path}]"
    else:
        notice = (
            f"[Showing lines {first}-{last} of {truncation.total_lines} "
            f"({format_size(DEFAULT_MAX_BYTES)} limit). Full output: {path}]"
        )
    return f"{text}\n\n{notice}"


def _details(snap: OutputSnapshot) -> JsonObject | None:
    """pi's bash details: ``{truncation, fullOutputPath}``, only when something was cut."""
    if not snap.truncation.truncated:
        return None
    return {
        "truncation": snap.truncation.to_dict(),
        "fullOutputPath": str(snap.full_output_path) if snap.full_output_path else None,
    }
