"""``--mode json`` prints what pi 0.87.1 prints for the same prompt and fake-server script
(tests/fixtures/pi087/json-mode.events.jsonl): the same event types in the same order, each record with
the same keys (an empty delta counts as an event of its own). Ids, timestamps, text chunking and usage
numbers are not compared."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.args import parse_args
from pi_tui.modes.print_mode import run_print_mode
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, turns_from_json
from tests.e2e.helpers import write_models_json
from tests.pi087 import Pi087

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pi087"
PROMPT = "Change world to there in hello.txt and show it"
# Streaming deltas: how many a message has depends on chunking, so runs of them count once.
_DELTAS = {"text_delta", "toolcall_delta", "thinking_delta", "tool_execution_update"}


def _shape(records: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """(type, detail, keys) per record, runs of one delta kind collapsed."""
    out: list[tuple[str, ...]] = []
    for record in records:
        kind = record["type"]
        if kind == "message_update":
            event = record["assistantMessageEvent"]
            # an empty delta (Anthropic opens each tool call's arguments with one) is an event of its own
            detail = event["type"] + (" (empty)" if event.get("delta") == "" else "")
        elif kind in ("message_start", "message_end"):
            detail = record["message"]["role"]
        else:
            detail = ""
        shape = (kind, detail, ",".join(sorted(record)))
        if out and out[-1] == shape and (detail in _DELTAS or kind in _DELTAS):
            continue
        out.append(shape)
    return out


async def test_json_mode_event_order_and_shapes_match_pi_0_87_1(tmp_path: Path, fake: FakeLLM) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "hello.txt").write_text("hello world\n")
    fake.script(turns_from_json(json.loads((FIXTURES / "plain.script.json").read_text())))
    startup = create_session(
        parse_args(["--mode", "json", "--model", "fake-anthropic/claude-fake", PROMPT]), project
    )
    out = io.StringIO()
    try:
        code = await run_print_mode(
            startup.session, [PROMPT], json_mode=True, stdout=out, stderr=io.StringIO()
        )
        session_file = startup.session.session_manager.path
    finally:
        await startup.session.close()
    assert code == 0
    assert fake.violations == []
    ours = [json.loads(line) for line in out.getvalue().splitlines()]
    pis = [json.loads(line) for line in (FIXTURES / "json-mode.events.jsonl").read_text().splitlines()]

    assert _shape(ours[1:]) == _shape(pis[1:])  # the header line's fields are compared below
    assert set(ours[0]) == set(pis[0])
    update = next(r for r in ours if r["type"] == "message_update")
    assert "message" not in update and "partial" not in update["assistantMessageEvent"]
    system = next(r for r in ours if r["type"] == "message_start")
    pi_system = next(r for r in pis if r["type"] == "message_start")
    assert system["message"]["role"] == "system" and system["message"]["content"] == ""
    assert list(system["message"]) == list(pi_system["message"])  # the keys, in pi's order
    assert list(system["message"]["sections"])[0] == "preamble"
    # what was announced is what the session file got
    assert session_file is not None
    written = [json.loads(line) for line in session_file.read_text().splitlines()[1:]]
    assert [e["message"] for e in written if e.get("message", {}).get("role") == "system"] == [
        system["message"]
    ]
    assert [t["name"] for t in system["message"]["toolsAdded"]] == ["read", "bash", "edit", "write"]
    assert (project / "hello.txt").read_text() == "hello there\n"
    # what a client reads inside the records: the bash tool's progress carries details ({} here) from its
    # first output on, and the edit's patch is pi's unified diff, hunk header counts and all
    assert _partial_results(ours) == _partial_results(pis)
    assert _patches(ours) == _patches(pis)
    # pi's assistant message_start carries what the provider's opening event said of the usage
    # (Anthropic's message_start: the prompt's input and cache counts, one output token); pi serialises the
    # record late, so in its recording some starts show it and some still show zeros; ours always shows it
    assert any(_start_usage_known(pair) for pair in _assistant_usage(pis))
    assert all(_start_usage_known(pair) for pair in _assistant_usage(ours))


def _assistant_usage(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(usage on message_start, usage on message_end) of each assistant message."""
    starts = [
        r["message"]["usage"]
        for r in records
        if r["type"] == "message_start" and r["message"]["role"] == "assistant"
    ]
    ends = [
        r["message"]["usage"]
        for r in records
        if r["type"] == "message_end" and r["message"]["role"] == "assistant"
    ]
    assert len(starts) == len(ends) > 1
    return list(zip(starts, ends, strict=True))


def _start_usage_known(pair: tuple[dict[str, Any], dict[str, Any]]) -> bool:
    start, end = pair
    prompt = ("input", "cacheRead", "cacheWrite")
    return (
        all(start[k] == end[k] for k in prompt)
        and start["output"] == 1
        and start["totalTokens"] == sum(start[k] for k in prompt) + 1
        and start["cost"]["total"] > 0
    )


def _partial_results(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in r["partialResult"].items() if k != "content"}
        for r in records
        if r["type"] == "tool_execution_update"
    ]


def _patches(records: list[dict[str, Any]]) -> list[str]:
    return [
        r["result"]["details"]["patch"]
        for r in records
        if r["type"] == "tool_execution_end" and "patch" in (r["result"].get("details") or {})
    ]


# Reasoning, text and two tool calls in one answer, then a redacted thinking block: where each API's
# thinking, text and tool-call blocks start and end relative to each other.
THINKING_SCRIPT = {
    "turns": [
        {
            "parts": [
                {"type": "thinking", "thinking": "Let me look at it."},
                {"type": "text", "text": "Reading."},
                {"type": "tool_call", "name": "read", "input": {"path": "hello.txt"}},
                {"type": "tool_call", "name": "read", "input": {"path": "nope.txt"}},
            ]
        },
        {
            "parts": [
                {"type": "thinking", "thinking": "ok", "redacted": True},
                {"type": "text", "text": "Done."},
            ]
        },
    ]
}


def _stream_of(
    argv: list[str], env: dict[str, str], project: Path, agent_dir: Path, model: str, script: dict[str, Any]
) -> list[Any]:
    fake = FakeLLM()
    fake.script(turns_from_json(script))
    (project / "hello.txt").write_text("hello world\n")
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        done = subprocess.run(
            [*argv, "--mode", "json", "--model", model, PROMPT],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=50,
        )
    assert done.returncode == 0, done.stderr
    assert fake.violations == []
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "script"),
    [
        ("fake-openai/gpt-fake", "plain"),
        ("fake-responses/gpt-fake-r", "plain"),
        ("fake-anthropic/claude-fake", "thinking"),
        ("fake-openai/gpt-fake", "thinking"),
        ("fake-responses/gpt-fake-r", "thinking"),
    ],
)
def test_json_mode_streams_what_pi_streams_through_each_api(
    tmp_path: Path, agent_dir: Path, pi087: Pi087, model: str, script: str
) -> None:
    turns = json.loads((FIXTURES / "plain.script.json").read_text()) if script == "plain" else THINKING_SCRIPT
    project = tmp_path / "proj"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    ours = _stream_of([sys.executable, "-m", "pi_tui"], env, project, agent_dir, model, turns)
    pis = _stream_of(pi087.argv(), pi087.env(), project, agent_dir, model, turns)
    assert _shape(ours[1:]) == _shape(pis[1:])
    # the streamed deltas add up to what pi's add up to (Responses ends each summary part with a blank line)
    assert _thinking_streamed(ours) == _thinking_streamed(pis)


def _thinking_streamed(records: list[dict[str, Any]]) -> list[str]:
    return [
        r["assistantMessageEvent"]["delta"]
        for r in records
        if r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "thinking_delta"
    ]


def _without_keys(env: dict[str, str]) -> dict[str, str]:
    """``env`` with no provider credentials in it (nothing ending in _KEY or _TOKEN, no cloud profiles)."""
    return {
        k: v
        for k, v in env.items()
        if not k.endswith(("_KEY", "_TOKEN", "_API_KEYS")) and not k.startswith(("AWS_", "GOOGLE_", "AZURE_"))
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model_args", "ours_say"),
    [
        (["--model", "anthropic/claude-sonnet-4-5"], "No API key for anthropic"),
        ([], "No models available"),
    ],
    ids=["no-key", "no-model"],
)
def test_json_mode_without_a_usable_model_prints_the_session_header_then_fails_as_pi(
    tmp_path: Path, agent_dir: Path, pi087: Pi087, model_args: list[str], ours_say: str
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    runs: dict[str, subprocess.CompletedProcess[str]] = {}
    own_env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    for name, argv, env in (
        ("ours", [sys.executable, "-m", "pi_tui"], own_env),
        ("pi", pi087.argv(), pi087.env()),
    ):
        runs[name] = subprocess.run(
            [*argv, "--mode", "json", "-p", *model_args, "hi"],
            cwd=project,
            env=_without_keys(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=50,
        )
    for name, run in runs.items():
        assert run.returncode == 1, (name, run.stderr)
        records = [json.loads(line) for line in run.stdout.splitlines()]
        assert [r["type"] for r in records] == ["session"], (name, run.stdout)
        assert records[0]["cwd"] == str(project)
    assert set(json.loads(runs["ours"].stdout)) == set(json.loads(runs["pi"].stdout))
    assert runs["pi"].stderr.startswith("No API key found")
    assert runs["ours"].stderr.startswith(ours_say) and runs["ours"].stderr.count("\n") == 1
    assert not list(agent_dir.rglob("*.jsonl"))  # nothing was sent, so no session file was written
