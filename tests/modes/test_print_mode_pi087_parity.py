"""Print (``-p``) and ``--mode json`` endings as pi 0.87.1 ends them, found by running both programs on
the same fake-server script:

- ``-p`` prints each text block of the final answer on its own line (pi writes ``text + "\\n"`` per block),
  so an answer whose text is split by a thinking block does not run its sentences together (an answer
  that already ends with a newline gets no second one: pi's would end with a blank line);
- ``--mode json`` reports a failed answer in its event stream only: no ``Error:`` line on stderr and exit
  code 0, as pi (only text mode turns a failed answer into exit code 1).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from pi_tui.args import parse_args
from pi_tui.modes.print_mode import run_print_mode
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Fault, Reply, text, thinking, tool_call


async def _run(project: Path, args: list[str], prompt: str) -> tuple[int, str, str]:
    startup = create_session(parse_args([*args, prompt]), project)
    out, err = io.StringIO(), io.StringIO()
    try:
        code = await run_print_mode(
            startup.session, [prompt], json_mode="json" in args, stdout=out, stderr=err
        )
    finally:
        await startup.session.close()
    return code, out.getvalue(), err.getvalue()


async def test_print_mode_puts_each_text_block_of_the_answer_on_its_own_line(
    tmp_path: Path, fake: FakeLLM
) -> None:
    fake.script([Reply([text("First part."), thinking("more to say"), text("Second part.")])])
    code, out, err = await _run(tmp_path, ["-p", "--model", "fake-anthropic/claude-fake"], "q")
    assert (code, err) == (0, "")
    assert out == "First part.\nSecond part.\n"


async def test_print_mode_single_block_answer_keeps_its_own_newlines(tmp_path: Path, fake: FakeLLM) -> None:
    fake.script([Reply([text("line one\nline two\n")])])
    code, out, _ = await _run(tmp_path, ["-p", "--model", "fake-anthropic/claude-fake"], "q")
    assert code == 0
    assert out == "line one\nline two\n"  # no blank line added after the answer's own newline


async def test_json_mode_reports_a_failed_answer_in_the_stream_and_exits_0(
    tmp_path: Path, fake: FakeLLM
) -> None:
    fake.script([Fault("auth")])
    code, out, err = await _run(tmp_path, ["--mode", "json", "--model", "fake-anthropic/claude-fake"], "q")
    records = [json.loads(line) for line in out.splitlines()]
    ends = [
        r["message"] for r in records if r["type"] == "message_end" and r["message"]["role"] == "assistant"
    ]
    assert ends[-1]["stopReason"] == "error" and "401" in ends[-1]["errorMessage"]
    assert records[-1]["type"] == "agent_settled"
    assert (code, err) == (0, "")


async def test_print_mode_still_fails_a_failed_answer_with_exit_1(tmp_path: Path, fake: FakeLLM) -> None:
    fake.script([Fault("auth")])
    code, out, err = await _run(tmp_path, ["-p", "--model", "fake-anthropic/claude-fake"], "q")
    assert code == 1 and out == ""
    assert err.startswith("Error: ") and "401" in err


async def test_json_mode_failed_tool_results_carry_empty_details_as_pi(tmp_path: Path, fake: FakeLLM) -> None:
    """pi 0.87.1 builds every failed tool result as ``{content, details: {}}`` (an unknown tool, a tool
    that raised, a blocked or aborted call), in the ``tool_execution_end`` record and the stored
    toolResult message alike: a client reading ``result.details.<field>`` must not meet ``null``."""
    fake.script(
        [
            Reply([tool_call("bogus", {"a": 1}), tool_call("read", {"path": "missing.txt"})]),
            Reply([text("done")]),
        ]
    )
    code, out, _ = await _run(tmp_path, ["--mode", "json", "--model", "fake-anthropic/claude-fake"], "q")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    ends = {r["toolName"]: r for r in records if r["type"] == "tool_execution_end"}
    results = {
        r["message"]["toolName"]: r["message"]
        for r in records
        if r["type"] == "message_end" and r["message"]["role"] == "toolResult"
    }
    for name in ("bogus", "read"):
        assert ends[name]["isError"] is True and ends[name]["result"]["details"] == {}
        assert results[name]["isError"] is True and results[name]["details"] == {}


async def test_print_mode_stops_at_the_first_failed_prompt_deliberately(
    tmp_path: Path, fake: FakeLLM
) -> None:
    """A deliberate difference (docs/user-guide.md): pi 0.87.1 would send "second" on top of the failed
    "first" and exit 0 with its answer; pi-tui stops and reports the failure."""
    fake.script([Fault("auth"), Reply([text("second ok")])])
    startup = create_session(parse_args(["-p", "--model", "fake-anthropic/claude-fake"]), tmp_path)
    out, err = io.StringIO(), io.StringIO()
    try:
        code = await run_print_mode(startup.session, ["first", "second"], stdout=out, stderr=err)
    finally:
        await startup.session.close()
    assert (code, out.getvalue()) == (1, "")
    assert "401" in err.getvalue() and len(fake.requests) == 1


async def test_json_mode_never_says_details_null(tmp_path: Path, fake: FakeLLM) -> None:
    """pi's records have no ``details`` key where a tool result has none (JSON drops ``undefined``), so a
    client testing ``"details" in result`` or reading ``details.<field>`` never meets ``null``."""
    (tmp_path / "a.txt").write_text("alpha\n")
    fake.script(
        [
            Reply(
                [tool_call("bash", {"command": "echo one; echo two"}), tool_call("read", {"path": "a.txt"})]
            ),
            Reply([text("done")]),
        ]
    )
    code, out, _ = await _run(tmp_path, ["--mode", "json", "--model", "fake-anthropic/claude-fake"], "q")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert any(r["type"] == "tool_execution_update" for r in records)
    assert '"details":null' not in out.replace(" ", "")


async def test_print_mode_prints_nothing_for_an_answer_without_text(tmp_path: Path, fake: FakeLLM) -> None:
    """An answer of thinking only: pi prints no line at all (it writes a line per text block)."""
    fake.script([Reply([thinking("only thinking")])])
    code, out, err = await _run(tmp_path, ["-p", "--model", "fake-anthropic/claude-fake"], "q")
    assert (code, out, err) == (0, "", "")
