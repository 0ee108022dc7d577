"""pi's built-in tools: read, bash, edit, write (on by default) and grep, find, ls (read-only extras).

Every tool follows the `pi_tui.agent.tool.AgentTool` contract: ``execute`` returns a `ToolResult`
and raises `ToolError` with the text the model should see. Output is truncated by the tool itself
(see `pi_tui.tools.truncate`); tools that change files hold the per-file lock of
`pi_tui.tools.mutation_queue` for their whole read-modify-write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.agent.tool import AgentTool

from .bash import create_bash_tool
from .edit import FileChangeFn, create_edit_tool, prepare_edit_arguments
from .find import create_find_tool
from .grep import create_grep_tool
from .images import ImageResizer, ResizedImage, detect_image_mime_type
from .ls import create_ls_tool
from .mutation_queue import file_mutation, with_file_mutation
from .paths import resolve_read_path, resolve_to_cwd
from .read import create_read_tool
from .truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    TruncationResult,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)
from .write import create_write_tool

if TYPE_CHECKING:
    from pi_tui.sandbox import CommandSandbox
    from pi_tui.sandbox.tool import EscalateFn

    from .image_resize import ResizeLimits

__all__ = [
    "DEFAULT_TOOL_NAMES",
    "ALL_TOOL_NAMES",
    "create_coding_tools",
    "create_read_tool",
    "create_bash_tool",
    "create_edit_tool",
    "create_write_tool",
    "create_grep_tool",
    "create_find_tool",
    "create_ls_tool",
    "prepare_edit_arguments",
    "FileChangeFn",
    "file_mutation",
    "with_file_mutation",
    "resolve_to_cwd",
    "resolve_read_path",
    "ImageResizer",
    "ResizedImage",
    "detect_image_mime_type",
    "DEFAULT_MAX_LINES",
    "DEFAULT_MAX_BYTES",
    "GREP_MAX_LINE_LENGTH",
    "TruncationResult",
    "format_size",
    "truncate_head",
    "truncate_tail",
    "truncate_line",
]

DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")
"""The tools active when no ``--tools`` flag says otherwise."""

ALL_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")


def create_coding_tools(
    cwd: Path,
    *,
    shell_path: str | None = None,
    command_prefix: str | None = None,
    image_resizer: ImageResizer | None = None,
    auto_resize_images: bool = True,
    image_limits: Callable[[], ResizeLimits] | None = None,
    on_file_change: FileChangeFn | None = None,
    command_env: Callable[[], Mapping[str, str]] | None = None,
    sandbox: CommandSandbox | None = None,
    escalate: EscalateFn | None = None,
    model_takes_images: Callable[[], bool] | None = None,
) -> dict[str, AgentTool]:
    """All seven built-in tools bound to ``cwd``, keyed by name in `ALL_TOOL_NAMES` order.

    Args:
        cwd: The session's working directory; relative paths start here and commands run here.
        shell_path: The ``shellPath`` setting for bash.
        command_prefix: The ``shellCommandPrefix`` setting for bash.
        image_resizer: Fits images read by the read tool into the model's limits (see `create_read_tool`).
        auto_resize_images: The ``images.autoResize`` setting.
        image_limits: The current model's image limits, asked per read (see `create_read_tool`).
        on_file_change: Records edit's and write's file changes (checkpoints; see `FileChangeFn`).
        command_env: Extra variables for bash commands, read per command (see `agent_command_env`).
        sandbox: The OS sandbox bash commands run in (None: unsandboxed).
        escalate: Asked when the sandbox refused something (see `create_bash_tool`).
        model_takes_images: Whether the current model accepts images, asked per read (see
            `create_read_tool`).
    """
    cwd = Path(cwd)
    return {
        "read": create_read_tool(
            cwd,
            image_resizer=image_resizer,
            auto_resize_images=auto_resize_images,
            image_limits=image_limits,
            model_takes_images=model_takes_images,
        ),
        "bash": create_bash_tool(
            cwd,
            shell_path=shell_path,
            command_prefix=command_prefix,
            command_env=command_env,
            sandbox=sandbox,
            escalate=escalate,
        ),
        "edit": create_edit_tool(cwd, on_change=on_file_change),
        "write": create_write_tool(cwd, on_change=on_file_change),
        "grep": create_grep_tool(cwd),
        "find": create_find_tool(cwd),
        "ls": create_ls_tool(cwd),
    }
