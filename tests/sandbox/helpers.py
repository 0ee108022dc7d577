"""Running real commands through the sandboxed bash tool."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.agent.tool import ToolError
from pi_tui.sandbox import CommandSandbox
from pi_tui.sandbox.policy import SandboxSettings
from pi_tui.sandbox.tool import EscalateFn
from pi_tui.tools.bash import create_bash_tool


@dataclass
class Outcome:
    ok: bool
    text: str
    parts: list[str] = field(default_factory=list)
    """The result's text blocks as they are (the tool card joins them with nothing between)."""


@dataclass
class Box:
    """A project, a folder outside it, and a sandbox for the project."""

    project: Path
    outside: Path
    settings: SandboxSettings = field(default_factory=SandboxSettings)
    override: str | None = None
    escalate: EscalateFn | None = None
    bwrap_path: str | None = None
    _sandbox: CommandSandbox | None = None

    @property
    def sandbox(self) -> CommandSandbox:
        if self._sandbox is None:
            self._sandbox = CommandSandbox(
                lambda: self.settings,
                self.project,
                agent_dir=Path(os.environ["PI_CODING_AGENT_DIR"]),
                override=self.override,
                bwrap_path=self.bwrap_path,
            )
        return self._sandbox

    async def run(self, command: str, timeout: float | None = 30) -> Outcome:
        tool = create_bash_tool(self.project, sandbox=self.sandbox, escalate=self.escalate)
        params: dict[str, object] = {"command": command}
        if timeout is not None:
            params["timeout"] = timeout
        try:
            result = await tool.execute("t", params, None, None)
        except ToolError as exc:
            return Outcome(False, str(exc))
        parts = [getattr(c, "text", "") for c in result.content]
        return Outcome(True, "\n".join(parts), parts)
