"""The ``write`` tool: create or overwrite a file, making parent directories as needed."""

from __future__ import annotations

from pathlib import Path

from pi_tui.agent.tool import PREFER_STRICT_SCHEMA, AgentTool, ToolError, ToolResult, ToolUpdateFn
from pi_tui.ai.stream import AbortSignal
from pi_tui.ai.types import TextContent
from pi_tui.util.json_types import JsonObject

from ._common import finish_in_thread, raise_if_aborted, str_arg
from .edit import FileChangeFn, record_change
from .mutation_queue import file_mutation
from .paths import resolve_to_cwd

__all__ = ["create_write_tool", "WRITE_PARAMETERS", "WRITE_DESCRIPTION", "js_length"]

WRITE_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
        "content": {"type": "string", "description": "Content to write to the file"},
    },
    "required": ["path", "content"],
}

WRITE_DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
    "Automatically creates parent directories."
)


def js_length(text: str) -> int:
    """The JavaScript ``length`` of ``text`` (UTF-16 code units), which is what pi reports as "bytes"."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def create_write_tool(cwd: Path, *, on_change: FileChangeFn | None = None) -> AgentTool:
    """Build the write tool for ``cwd``. The write runs under the file's mutation lock.

    ``on_change`` records the file's content before and after (checkpoints).
    """

    async def execute(
        tool_call_id: str, params: JsonObject, signal: AbortSignal | None, on_update: ToolUpdateFn | None
    ) -> ToolResult:
        path = str_arg(params, "path")
        content = str_arg(params, "content")
        absolute = resolve_to_cwd(path, cwd)
        data = content.encode("utf-8", "surrogatepass")
        details: JsonObject | None = None
        async with file_mutation(absolute):
            raise_if_aborted(signal)
            before: bytes | None = None

            def prepare() -> None:
                nonlocal before
                if on_change is not None:  # checkpoints: the old content, read under the lock
                    before = _read_if_file(absolute)
                absolute.parent.mkdir(parents=True, exist_ok=True)

            def write() -> JsonObject | None:
                from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

                replace_file_bytes(absolute, data)
                return record_change(on_change, absolute, before, data, "write")

            try:
                await finish_in_thread(prepare)
                raise_if_aborted(signal)
                checkpoint = await finish_in_thread(write)  # one hop for the write and its checkpoint
            except OSError as exc:
                raise ToolError(f"Could not write file: {path}. {exc.strerror or exc}") from exc
            if checkpoint is not None:
                details = {"checkpoint": checkpoint}
            raise_if_aborted(signal)
        return ToolResult(
            # pi 0.85 dropped the byte count from this text
            content=[TextContent(text=f"Successfully wrote to {path}")],
            details=details,
        )

    return AgentTool(
        name="write",
        label="write",
        description=WRITE_DESCRIPTION,
        parameters=WRITE_PARAMETERS,
        execute=execute,
        constrained_sampling=PREFER_STRICT_SCHEMA,
        prompt_snippet="Create or overwrite files",
    )


def _read_if_file(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
