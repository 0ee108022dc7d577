"""Hostile inputs (issue #15, item 6): each ends with an outcome the user can see and a session file that
is valid JSONL with nothing lost.

Cases covered elsewhere, not repeated here:

- torn last line and corrupt middle line of a resumed session: ``tests/e2e/test_sessions.py``
  (``test_torn_last_line_and_corrupt_middle_line_are_reported_and_nothing_is_lost``) and
  ``tests/session/test_robustness.py``; random foreign bytes and lines: ``tests/session/test_foreign_lines_fuzz.py``;
- a 50 MB line that is not JSON, and 10,000 malformed lines, on RPC stdin:
  ``tests/modes/rpc/test_rpc_robustness.py``;
- an extension that prints in ``--mode json``: ``tests/safety/test_json_stdout.py``;
- a hook that never returns: ``tests/safety/test_hook_timeout.py`` (and abort during one:
  ``tests/safety/test_abort_during_hooks.py``);
- SIGTERM/SIGHUP/SIGINT/SIGKILL during a tool: ``tests/safety/test_signals.py``;
- the gate's bypasses and the secret corpus: ``tests/shipped_extensions/``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.types import AssistantMessage, UserMessage
from pi_tui.session import SessionManager
from pi_tui.testing import FakeLLM, Fault, Reply, text, tool_call
from tests.e2e.helpers import run_cli, write_models_json
from tests.modes.rpc.rpc_client import RpcProcess

from .helpers import MODEL, session_lines

pytestmark = pytest.mark.slow


def _session_path(agent_dir: Path) -> Path:
    (path,) = list((agent_dir / "sessions").rglob("*.jsonl"))
    return path


def _messages(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation's messages in the session file (the recorded prompt, a system message, left out)."""
    return [line["message"] for line in lines if line.get("type") == "message" and line["message"]["role"] != "system"]


def _reloads_cleanly(path: Path) -> list[Any]:
    with SessionManager.open(path, read_only=True) as reopened:
        assert reopened.load_report.skipped_line_numbers == []
        return list(reopened.build_context().messages)


# --- a provider that stalls -------------------------------------------------------------------------


def test_a_provider_that_stalls_mid_answer_ends_the_run_with_a_timeout_error(
    tmp_path: Path, agent_dir: Path
) -> None:
    settings = {"httpIdleTimeoutMs": 500, "retry": {"maxRetries": 1, "baseDelayMs": 50}}
    (agent_dir).mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    fake = FakeLLM()
    # silent for a minute after two frames, twice (the first try and its one retry)
    fake.script([Fault("stall", after_frames=2, stall_seconds=60)] * 2)
    started = time.monotonic()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "-p", "hello?"], tmp_path, timeout=40)
    elapsed = time.monotonic() - started

    assert run.returncode == 1
    assert run.stdout == ""
    assert "timed out" in run.stderr.lower(), run.stderr
    assert len(fake.requests) == 2  # retried once, as the setting asks
    assert elapsed < 20
    messages = _messages(session_lines(agent_dir))
    assert messages[0]["role"] == "user" and messages[0]["content"] == [
        {"type": "text", "text": "hello?"}
    ]  # the prompt is kept
    assert messages[-1]["role"] == "assistant" and messages[-1]["stopReason"] == "error"
    _reloads_cleanly(_session_path(agent_dir))


def test_a_provider_that_never_sends_headers_ends_the_rpc_prompt_with_an_error(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir).mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(
        json.dumps({"httpIdleTimeoutMs": 500, "retry": {"enabled": False}})
    )
    fake = FakeLLM()
    fake.script([Fault("stall", after_frames=0, stall_seconds=60), Reply([text("second try answers")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, *MODEL)
        try:
            rpc.call({"type": "prompt", "message": "first"})
            end, _ = rpc.event("agent_end", timeout=20)
            (failed,) = [m for m in end["messages"] if m["role"] == "assistant"]
            assert failed["stopReason"] == "error" and "timed out" in failed["errorMessage"].lower()
            rpc.event("agent_settled")
            # the session goes on: the next prompt is answered
            rpc.call({"type": "prompt", "message": "second"})
            end, _ = rpc.event("agent_end", timeout=20)
            assert end["messages"][-1]["content"][0]["text"] == "second try answers"
            assert rpc.close() == 0
        finally:
            rpc.kill()
    texts = [m["role"] for m in _messages(session_lines(agent_dir))]
    assert texts == ["user", "assistant", "user", "assistant"]


# --- huge inputs ------------------------------------------------------------------------------------


def test_a_50_mb_prompt_on_stdin_in_print_mode_is_kept_and_refused_by_the_provider_with_a_clear_error(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("never")])])
    line = "z" * (50 * 1024 * 1024)
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "-p"], tmp_path, stdin=line + "\n", timeout=60)

    assert run.returncode == 1
    assert "prompt is too long" in run.stderr, run.stderr[-2000:]
    messages = _messages(session_lines(agent_dir))
    assert messages[0]["role"] == "user"
    (block,) = (
        messages[0]["content"] if isinstance(messages[0]["content"], list) else [messages[0]["content"]]
    )
    sent = block["text"] if isinstance(block, dict) else block
    assert sent.rstrip("\n") == line  # nothing of the 50 MB lost
    assert messages[-1]["stopReason"] == "error"


def test_a_50_mb_prompt_line_over_rpc_is_answered_and_saved(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("never")])])
    line = "q" * (50 * 1024 * 1024)
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, *MODEL)
        try:
            rpc.send_raw((json.dumps({"id": "big", "type": "prompt", "message": line}) + "\n").encode())
            answer, _ = rpc.response("big", timeout=40)
            assert answer["success"] is True
            end, _ = rpc.event("agent_end", timeout=40)
            assert "prompt is too long" in end["messages"][-1]["errorMessage"]
            assert rpc.call({"type": "get_state"})["data"]["isStreaming"] is False
            assert rpc.close() == 0
        finally:
            rpc.kill()
    messages = _messages(session_lines(agent_dir))
    assert messages[0]["content"] in (line, [{"type": "text", "text": line}])


def test_huge_tool_output_reaches_the_model_truncated_with_the_full_output_kept_in_a_file(
    tmp_path: Path, agent_dir: Path
) -> None:
    command = "yes 0123456789 | head -c 30000000; echo; echo LAST-LINE"
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": command})]), Reply([text("seen")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "-p", "run it"], tmp_path, timeout=60)

    assert run.returncode == 0, run.stderr
    assert run.stdout == "seen\n"
    (result,) = fake.requests[1].tool_results()
    assert len(result.content.encode()) < 60 * 1024  # the 30 MB never reaches the model
    assert "LAST-LINE" in result.content  # bash keeps the tail
    notice = result.content[result.content.rindex("[") :]
    assert "Full output:" in notice, notice
    full = Path(notice.split("Full output:")[1].strip(" ]\n"))
    assert full.stat().st_size > 30_000_000
    lines = session_lines(agent_dir)
    saved = _messages(lines)[2]
    assert saved["role"] == "toolResult"
    assert len(json.dumps(saved)) < 100 * 1024  # the session file stays small too
    _reloads_cleanly(_session_path(agent_dir))


def test_a_binary_file_read_by_read_is_sent_as_text_and_the_session_round_trips(
    tmp_path: Path, agent_dir: Path
) -> None:
    blob = bytes(range(256)) * 64 + b"\xff\xfe\x00\x00\xc3"
    (tmp_path / "blob.bin").write_bytes(blob)
    fake = FakeLLM()
    fake.script([Reply([tool_call("read", {"path": "blob.bin"})]), Reply([text("it is binary")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "-p", "read blob.bin"], tmp_path, timeout=60)

    assert run.returncode == 0, run.stderr
    assert run.stdout == "it is binary\n"
    assert fake.violations == []
    (result,) = fake.requests[1].tool_results()
    assert not result.is_error
    assert "\x00" in result.content or "\ufffd" in result.content  # as pi: decoded as UTF-8, lossy
    assert (tmp_path / "blob.bin").read_bytes() == blob  # untouched
    path = _session_path(agent_dir)
    assert all(line.startswith(b"{") for line in path.read_bytes().splitlines())  # NULs are escaped
    reloaded = _reloads_cleanly(path)
    assert [m.role for m in reloaded] == ["user", "assistant", "toolResult", "assistant"]


def test_binary_output_of_a_bash_command_is_sanitized_and_the_session_round_trips(
    tmp_path: Path, agent_dir: Path
) -> None:
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 16 + b"\x1b[31mred\x1b[0m\r\nend\n")
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": "cat blob.bin"})]), Reply([text("binary")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "-p", "cat it"], tmp_path, timeout=60)

    assert run.returncode == 0, run.stderr
    assert fake.violations == []
    (result,) = fake.requests[1].tool_results()
    controls = {ch for ch in result.content if ord(ch) < 32 and ch not in "\n\t"}
    assert controls == set(), sorted(map(ord, controls))  # no escape sequences, NULs or carriage returns
    assert "red" in result.content and result.content.rstrip().endswith("end")
    reloaded = _reloads_cleanly(_session_path(agent_dir))
    assert [m.role for m in reloaded] == ["user", "assistant", "toolResult", "assistant"]


# --- a foreign session ------------------------------------------------------------------------------


def test_a_session_with_foreign_entries_resumes_and_keeps_every_foreign_byte(
    tmp_path: Path, agent_dir: Path
) -> None:
    manager = SessionManager.create(tmp_path)
    manager.append_message(UserMessage(content="old question"))
    manager.append_message(
        AssistantMessage(
            content=[{"type": "text", "text": "old answer"}],
            api="anthropic-messages",
            provider="fake-anthropic",
            model="claude-fake",
            stop_reason="stop",
        )
    )
    manager.close()
    assert manager.path is not None
    path = manager.path
    last_id = json.loads(path.read_bytes().splitlines()[-1])["id"]
    newer = {"type": "hologram", "id": "f00d0001", "parentId": last_id, "payload": {"x": 1}}
    foreign = [
        json.dumps(newer).encode() + b"\n",  # an entry type of a newer pi
        b"[1, 2, 3]\n",  # JSON, but not an entry
        b'"just a string"\n',
        b"\xff\xfe not utf-8 at all\n",
    ]
    original = path.read_bytes() + b"".join(foreign)
    path.write_bytes(original)

    fake = FakeLLM()
    fake.script([Reply([text("new answer")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "--session", str(path), "-p", "new question"], tmp_path, timeout=60)

    assert run.returncode == 0, run.stderr
    assert run.stdout == "new answer\n"
    assert "skipped 3 unreadable lines" in run.stderr  # the three that are not entries are reported
    sent = [m for m in fake.requests[0].messages if m["role"] != "system"]
    assert len(sent) == 3  # old question, old answer, new question: the foreign lines add nothing
    after = path.read_bytes()
    assert after.startswith(original)  # every foreign byte kept where it was
    new = [json.loads(line) for line in after[len(original) :].splitlines()]
    # (a session without a recorded prompt gets its first one at its next request, as pi does)
    assert [e["message"]["role"] for e in new if e["type"] == "message"] == ["system", "user", "assistant"]
