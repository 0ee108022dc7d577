"""Running one tool command through the sandbox: wrap, run, explain a refusal, escalate if the user agrees."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from pi_tui.agent.tool import ToolError, ToolResult
from pi_tui.ai.types import TextContent

from .diagnose import Refusal
from .runner import CommandSandbox, SandboxUnavailableError

__all__ = ["run_sandboxed"]

RunFn = Callable[[list[str], dict[str, str]], Awaitable[ToolResult]]
EscalateFn = Callable[[Refusal, str, str], Awaitable[str | None]]

_EXITED = "Command exited with code"


async def run_sandboxed(
    sandbox: CommandSandbox,
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    command: str,
    run: RunFn,
    escalate: EscalateFn | None,
) -> ToolResult:
    """Run ``argv`` under ``sandbox`` with ``run``; on a refusal, say what was refused and maybe escalate.

    Raises:
        ToolError: The sandbox cannot start (fail closed), or the command failed (with the refusal named).
    """
    try:
        launch = sandbox.prepare(argv, cwd, env)
    except SandboxUnavailableError as exc:
        raise ToolError(str(exc)) from exc
    notice = sandbox.take_notice()
    try:
        if notice is not None:
            done = await _prefixed(run(launch.argv, launch.env), notice)
        else:
            done = await run(launch.argv, launch.env)
    except ToolError as exc:
        message = str(exc)
        if _EXITED not in message:  # aborted or timed out: nothing to explain
            raise
        found = sandbox.explain(message, launch)
        if found is None:
            raise
        refusal, note = found
        decision = await escalate(refusal, command, note) if escalate is not None else None
        if decision is None:
            raise ToolError(f"{message}\n\n{note}", details=exc.details) from None
    else:
        # A refused write the command went on past (`cmd > /elsewhere/file; next` exits 0): said and asked
        # about as a failure is, or the model and the user take the missing file for written. Only a
        # refusal naming its path counts here: a successful command may print the words for other reasons.
        found = sandbox.explain(_text(done), launch)
        if found is None or not found[0].target:
            return done
        refusal, note = found
        decision = await escalate(refusal, command, note) if escalate is not None else None
        if decision is None:
            gap = "\n" if _text(done).endswith("\n") else "\n\n"
            return ToolResult(content=[*done.content, TextContent(text=gap + note)], details=done.details)
    if decision == "once":
        prefix = "[sandbox] The user let this command run once outside the sandbox; it ran again:"
        return await _prefixed(run(list(argv), dict(env)), prefix)
    if refusal.kind == "network":
        sandbox.allow_host(refusal.target)
        what = f"network access to {refusal.target}"
    else:
        what = f"writes to {sandbox.allow_path(Path(refusal.target))}"
    prefix = f"[sandbox] The user allowed {what} for this session; the command ran again:"
    try:
        relaunch = sandbox.prepare(argv, cwd, env)
    except SandboxUnavailableError as exc:
        raise ToolError(str(exc)) from exc
    return await _prefixed(run(relaunch.argv, relaunch.env), prefix)


def _text(result: ToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextContent))


async def _prefixed(result: Awaitable[ToolResult], prefix: str) -> ToolResult:
    try:
        done = await result
    except ToolError as exc:
        raise ToolError(f"{prefix}\n{exc}", details=exc.details) from None
    # on a line of its own: the parts of a result are shown joined as they are
    return ToolResult(content=[TextContent(text=prefix + "\n"), *done.content], details=done.details)
