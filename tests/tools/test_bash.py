from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from pathlib import Path

import pytest

from pi_tui.agent.tool import ToolResult
from pi_tui.ai.stream import AbortSignal
from pi_tui.tools.bash import create_bash_tool

from .helpers import run, run_error, run_text, text_of


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in (b"Z", b"X")  # a zombie has already died; only its parent has not reaped it


def _wait_until_dead(pid: int, limit: float = 5.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="process checks read /proc")


async def test_runs_the_command_in_cwd(tmp_path: Path) -> None:
    assert await run_text(create_bash_tool(tmp_path), {"command": "pwd"}) == f"{tmp_path}\n"


async def test_stdout_and_stderr_are_merged(tmp_path: Path) -> None:
    text = await run_text(create_bash_tool(tmp_path), {"command": "echo out; echo err 1>&2; echo out2"})
    assert text == "out\nerr\nout2\n"


async def test_empty_output_says_no_output(tmp_path: Path) -> None:
    result = await run(create_bash_tool(tmp_path), {"command": "true"})
    assert text_of(result) == "(no output)"
    assert result.details is None


async def test_stdin_is_closed(tmp_path: Path) -> None:
    text = await run_text(create_bash_tool(tmp_path), {"command": "read line; echo rc=$?"})
    assert text == "rc=1\n"


async def test_non_zero_exit_is_an_error_with_the_output(tmp_path: Path) -> None:
    error = await run_error(create_bash_tool(tmp_path), {"command": "echo oops; exit 3"})
    assert str(error) == "oops\n\n\nCommand exited with code 3"


async def test_non_zero_exit_without_output_gives_only_the_status(tmp_path: Path) -> None:
    error = await run_error(create_bash_tool(tmp_path), {"command": "exit 7"})
    assert str(error) == "(no output)\n\nCommand exited with code 7"


async def test_ansi_escapes_and_carriage_returns_are_removed(tmp_path: Path) -> None:
    command = r"printf '\033[1;31mred\033[0m\r\n\033]0;title\007plain\r\n'"
    assert await run_text(create_bash_tool(tmp_path), {"command": command}) == "red\nplain\n"


async def test_command_prefix_runs_before_the_command(tmp_path: Path) -> None:
    tool = create_bash_tool(tmp_path, command_prefix="export GREETING=hi")
    assert await run_text(tool, {"command": 'echo "$GREETING"'}) == "hi\n"


async def test_a_custom_shell_path_is_used(tmp_path: Path) -> None:
    shell = tmp_path / "myshell"
    shell.write_text('#!/bin/sh\necho "custom $1 [$2]"\n')
    shell.chmod(0o755)
    text = await run_text(create_bash_tool(tmp_path, shell_path=str(shell)), {"command": "echo hi"})
    assert text == "custom -c [echo hi]\n"


async def test_a_missing_custom_shell_is_an_error(tmp_path: Path) -> None:
    error = await run_error(create_bash_tool(tmp_path, shell_path="/no/such/shell"), {"command": "true"})
    assert str(error) == "Custom shell path not found: /no/such/shell"


async def test_a_missing_working_directory_is_an_error(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    error = await run_error(create_bash_tool(gone), {"command": "true"})
    assert str(error) == f"Working directory does not exist: {gone}\nCannot execute bash commands."


async def test_fractional_timeouts_are_printed_as_given(tmp_path: Path) -> None:
    error = await run_error(create_bash_tool(tmp_path), {"command": "sleep 5", "timeout": 0.2})
    assert str(error) == "Command timed out after 0.2 seconds"


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), "soon"])
async def test_invalid_timeouts_are_rejected(tmp_path: Path, timeout: object) -> None:
    error = await run_error(create_bash_tool(tmp_path), {"command": "true", "timeout": timeout})
    assert "timeout" in str(error)


async def test_timeout_kills_the_whole_process_tree(tmp_path: Path) -> None:
    child_pid = tmp_path / "child.pid"
    escaped_pid = tmp_path / "escaped.pid"
    command = (
        f"sleep 30 & echo $! > {child_pid}; "
        f"setsid sh -c 'echo $$ > {escaped_pid}.tmp; mv {escaped_pid}.tmp {escaped_pid}; exec sleep 30' & "
        f"while [ ! -e {escaped_pid} ]; do sleep 0.01; done; echo started; wait"
    )
    error = await run_error(create_bash_tool(tmp_path), {"command": command, "timeout": 1})
    assert str(error) == "started\n\n\nCommand timed out after 1 seconds"
    for pid_file in (child_pid, escaped_pid):
        pid = int(pid_file.read_text())
        assert _wait_until_dead(pid), f"process {pid} from {pid_file.name} survived the timeout"


async def test_abort_kills_the_process_tree(tmp_path: Path) -> None:
    child_pid = tmp_path / "child.pid"
    signal = AbortSignal()

    def on_update(result: ToolResult) -> None:
        if "started" in text_of(result):
            signal.abort()

    command = f"sleep 30 & echo $! > {child_pid}; echo started; wait"
    error = await run_error(
        create_bash_tool(tmp_path), {"command": command}, signal=signal, on_update=on_update
    )
    assert str(error) == "started\n\n\nCommand aborted"
    assert _wait_until_dead(int(child_pid.read_text()))


async def test_an_already_aborted_signal_runs_nothing(tmp_path: Path) -> None:
    signal = AbortSignal()
    signal.abort()
    marker = tmp_path / "ran"
    error = await run_error(create_bash_tool(tmp_path), {"command": f"touch {marker}"}, signal=signal)
    assert str(error) == "Command aborted"
    assert not marker.exists()


async def test_a_background_job_holding_the_pipe_does_not_hang_the_tool(tmp_path: Path) -> None:
    pid_file = tmp_path / "bg.pid"
    started = time.monotonic()
    text = await run_text(
        create_bash_tool(tmp_path), {"command": f"sleep 30 & echo $! > {pid_file}; echo done"}
    )
    assert text == "done\n"
    assert time.monotonic() - started < 10
    os.kill(int(pid_file.read_text()), 9)


async def test_partial_output_streams_through_on_update(tmp_path: Path) -> None:
    updates: list[str] = []
    gate = tmp_path / "gate"

    def on_update(result: ToolResult) -> None:
        text = text_of(result)
        updates.append(text)
        if text == "first\n":
            gate.touch()  # only now may the command print its second line

    command = f"echo first; while [ ! -e {gate} ]; do sleep 0.01; done; echo second"
    result = await run(create_bash_tool(tmp_path), {"command": command, "timeout": 20}, on_update=on_update)
    assert text_of(result) == "first\nsecond\n"
    assert updates[0] == ""
    assert "first\n" in updates


async def test_long_output_keeps_the_tail_and_spills_everything_to_a_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = await run(create_bash_tool(tmp_path), {"command": "seq 1 30000"})
    text = text_of(result)
    full_path = result.details["fullOutputPath"]
    assert re.fullmatch(re.escape(str(tmp_path)) + r"/pi-bash-[0-9a-f]{16}\.log", full_path)
    body, notice = text.rsplit("\n\n", 1)
    assert notice == f"[Showing lines 28001-30000 of 30000. Full output: {full_path}]"
    assert body.split("\n")[0] == "28001"
    assert Path(full_path).read_text() == "".join(f"{i}\n" for i in range(1, 30001))
    assert result.details["truncation"]["truncatedBy"] == "lines"


async def test_wide_output_uses_the_byte_limit_notice(tmp_path: Path) -> None:
    command = "for i in $(seq 1 100); do printf '%01000d\\n' $i; done"
    result = await run(create_bash_tool(tmp_path, temp_dir=tmp_path), {"command": command})
    text = text_of(result)
    path = result.details["fullOutputPath"]
    assert text.endswith(f"\n\n[Showing lines 50-100 of 100 (50.0KB limit). Full output: {path}]")
    assert len(Path(path).read_text().split("\n")) == 101


async def test_a_huge_last_line_shows_its_end(tmp_path: Path) -> None:
    command = "head -c 60000 /dev/zero | tr '\\0' 'x'"
    result = await run(create_bash_tool(tmp_path, temp_dir=tmp_path), {"command": command})
    text = text_of(result)
    path = result.details["fullOutputPath"]
    assert text == "x" * 51200 + f"\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {path}]"
    assert result.details["truncation"]["lastLinePartial"] is True


async def test_a_failing_command_with_long_output_keeps_notice_and_status(tmp_path: Path) -> None:
    error = await run_error(create_bash_tool(tmp_path, temp_dir=tmp_path), {"command": "seq 1 3000; exit 2"})
    text = str(error)
    assert text.endswith(
        "Full output: " + error.details["fullOutputPath"] + "]\n\nCommand exited with code 2"
    )
    assert error.details["truncation"]["totalLines"] == 3000


async def test_cancelling_the_tool_task_kills_the_process_tree(tmp_path: Path) -> None:
    child_pid = tmp_path / "child.pid"
    started = asyncio.Event()

    def on_update(result: ToolResult) -> None:
        if "started" in text_of(result):
            started.set()

    command = f"sleep 30 & echo $! > {child_pid}; echo started; wait"
    task = asyncio.create_task(run(create_bash_tool(tmp_path), {"command": command}, on_update=on_update))
    await asyncio.wait_for(started.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _wait_until_dead(int(child_pid.read_text()))
