from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM
from tests.e2e.helpers import run_cli, write_models_json
from tests.resources.skill_helpers import write_skill

from .rpc_client import RpcProcess

pytestmark = pytest.mark.slow

ASKER = """
from pi_tui.extensions.api import ExtensionAPI, ExtensionContext


def register(pi: ExtensionAPI) -> None:
    print("stray print while loading")

    async def ask(args: str, ctx: ExtensionContext) -> None:
        print("stray print in a command")
        picked = await ctx.ui.select("Pick one", ["red", "blue"])
        sure = await ctx.ui.confirm("Sure?", "Really do it?", timeout=0.2)
        name = await ctx.ui.input("Name", "your name")
        edited = await ctx.ui.editor("Edit", "prefilled")
        ctx.ui.notify(f"got {[picked, sure, name, edited]!r}", "warning")
        ctx.ui.set_status("k", "status text")
        ctx.ui.set_widget("w", ["l1", "l2"])
        ctx.ui.set_title("title!")

    pi.register_command("ask", handler=ask, description="Ask four questions")
"""

MALFORMED = [
    b"{not json",
    b"",
    b"[1, 2, 3]",
    b'"just a string"',
    b"\xff\xfe garbage",
    b'{"type": ',
    b"null",
    b"}{",
]


def _write_in_background(rpc: RpcProcess, data: bytes) -> threading.Thread:
    thread = threading.Thread(target=rpc.send_raw, args=(data,), daemon=True)
    thread.start()
    return thread


def _send_malformed(rpc: RpcProcess, count: int) -> list[dict]:
    lines = [MALFORMED[i % len(MALFORMED)] for i in range(count)]
    writer = _write_in_background(rpc, b"\n".join(lines) + b"\n")
    answers = [rpc.next() for _ in range(count)]
    writer.join(timeout=30)
    return answers


def test_extension_dialogs_bad_input_and_memory(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "extensions").mkdir(parents=True)
    (agent_dir / "extensions" / "asker.py").write_text(ASKER)
    (agent_dir / "prompts").mkdir()
    (agent_dir / "prompts" / "review.md").write_text("---\ndescription: Review the diff\n---\nReview $@\n")
    write_skill(agent_dir / "skills", "pdf", name="pdf", description="Read PDF files")
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, "--model", "fake-openai/gpt-fake")
        try:
            _dialogs(rpc)
            _bad_input(rpc)
            rpc.send_raw(b'{"id":"last","type":"get_last_assistant_text"}')  # no LF before EOF
            assert rpc.close() == 0
        finally:
            rpc.kill()
    last = [r for r in rpc.records if r.get("id") == "last"]
    assert last == [
        {
            "id": "last",
            "type": "response",
            "command": "get_last_assistant_text",
            "success": True,
            "data": {"text": None},
        }
    ]
    assert "stray print while loading" in rpc.stderr and "stray print in a command" in rpc.stderr
    assert fake.requests == []


def _dialogs(rpc: RpcProcess) -> None:
    listed = rpc.call({"type": "get_commands"}, timeout=30)["data"]["commands"]
    commands = [c for c in listed if c["source"] != "builtin"]
    assert [(c["name"], c["source"]) for c in commands] == [
        ("ask", "extension"),
        ("review", "prompt"),
        ("skill:pdf", "skill"),
    ]
    assert commands[0]["description"] == "Ask four questions"
    assert commands[1]["description"].startswith("Review the diff")
    assert commands[2]["description"] == "Read PDF files"
    paths = [c["sourceInfo"]["path"] for c in commands]
    assert paths[0].endswith("asker.py") and paths[1].endswith("review.md") and paths[2].endswith("SKILL.md")
    assert [c["sourceInfo"]["scope"] for c in commands] == ["user", "user", "user"]
    assert commands[2]["sourceInfo"]["baseDir"].endswith("pdf")

    pid = rpc.send({"type": "prompt", "message": "/ask"})
    select, _ = rpc.event("extension_ui_request")
    assert {k: v for k, v in select.items() if k != "id"} == {
        "type": "extension_ui_request",
        "method": "select",
        "title": "Pick one",
        "options": ["red", "blue"],
    }
    # abort does not wait for an extension command's dialog (pi's abort waits only for the agent)
    assert rpc.call({"type": "abort"}, timeout=10)["success"] is True
    rpc.send({"type": "extension_ui_response", "id": "not-a-request", "value": "red"})  # ignored
    rpc.send({"type": "extension_ui_response", "id": select["id"], "value": "blue"})
    confirm, _ = rpc.event("extension_ui_request")
    assert (
        confirm["method"] == "confirm" and confirm["message"] == "Really do it?" and confirm["timeout"] == 200
    )
    # not answered: it times out and resolves as "no"
    ask_name, _ = rpc.event("extension_ui_request")
    assert ask_name["method"] == "input" and ask_name["placeholder"] == "your name"
    rpc.send({"type": "extension_ui_response", "id": ask_name["id"], "value": "Bob"})
    editor, _ = rpc.event("extension_ui_request")
    assert editor["method"] == "editor" and editor["prefill"] == "prefilled"
    rpc.send({"type": "extension_ui_response", "id": editor["id"], "cancelled": True})
    response, before = rpc.response(pid)
    assert response["success"] is True
    told = [(r["method"], {k: v for k, v in r.items() if k not in ("type", "id", "method")}) for r in before]
    assert told == [
        ("notify", {"message": "got ['blue', False, 'Bob', None]", "notifyType": "warning"}),
        ("setStatus", {"statusKey": "k", "statusText": "status text"}),
        ("setWidget", {"widgetKey": "w", "widgetLines": ["l1", "l2"]}),
        ("setTitle", {"title": "title!"}),
    ]
    assert len({r["id"] for r in before} | {select["id"], confirm["id"]}) == 6


def _bad_input(rpc: RpcProcess) -> None:
    _send_malformed(rpc, 1000)  # warm-up: first-use allocations are not growth
    before = rpc.rss_kb()
    answers = _send_malformed(rpc, 10_000)
    after = rpc.rss_kb()
    assert len(answers) == 10_000
    assert all(a["type"] == "response" and a["success"] is False for a in answers)
    assert all(
        a["command"] == "parse" and a["error"].startswith("Failed to parse command: ") for a in answers
    )
    assert after - before < 4096, f"RSS grew from {before} kB to {after} kB over 10,000 bad lines"
    assert rpc.call({"type": "get_state"})["data"]["isStreaming"] is False

    huge = _write_in_background(rpc, b'{"type": "prompt", "message": "' + b"x" * (50 * 1024 * 1024) + b"\n")
    answer = rpc.next(timeout=40)
    huge.join(timeout=30)
    assert answer["command"] == "parse" and answer["success"] is False
    assert rpc.call({"type": "get_state"})["data"]["messageCount"] == 0

    # CRLF line endings, and U+2028 inside a string is not a line break
    rpc.send_raw(('{"id": "n", "type": "set_session_name", "name": "a\u2028b"}\r\n').encode())
    named, _ = rpc.response("n")
    assert named["success"] is True
    assert rpc.call({"type": "get_state"})["data"]["sessionName"] == "a\u2028b"

    unknown, _ = rpc.response(rpc.send({"type": 42}))
    assert unknown["success"] is False and unknown["error"] == "Unknown command: 42"
    no_message, _ = rpc.response(rpc.send({"type": "steer"}))
    assert no_message["command"] == "steer" and '"message" must be a string' in no_message["error"]
    images, _ = rpc.response(rpc.send({"type": "prompt", "message": "hi", "images": [{"data": 1}]}))
    assert images["success"] is False and "images[0]" in images["error"]
    assert json.dumps(rpc.call({"type": "get_state"})["data"]["pendingMessageCount"]) == "0"


def _responses(stdout: str) -> dict[str, dict[str, object]]:
    records = [json.loads(line) for line in stdout.splitlines()]
    return {str(r["id"]): r for r in records if r.get("type") == "response" and "id" in r}


def test_model_without_a_key_starts_and_the_prompt_says_what_is_missing(
    tmp_path: Path, agent_dir: Path
) -> None:
    # pi 0.87.1 starts too and answers the prompt with an error, so a client can still switch or log in
    stdin = '{"id":"s","type":"get_state"}\n{"id":"p","type":"prompt","message":"hi"}\n'
    run = run_cli(["--mode", "rpc", "--model", "anthropic/claude-opus-4-6"], tmp_path, stdin=stdin)
    assert run.returncode == 0, run.stderr
    answers = _responses(run.stdout)
    state = answers["s"]["data"]
    assert isinstance(state, dict) and state["model"]["id"] == "claude-opus-4-6"
    assert answers["p"]["success"] is False and "ANTHROPIC_API_KEY" in str(answers["p"]["error"])
    assert "ANTHROPIC_API_KEY" in run.stderr and "Traceback" not in run.stderr


def test_no_model_at_all_starts_and_a_model_can_then_be_picked(tmp_path: Path, agent_dir: Path) -> None:
    stdin = (
        '{"id":"p","type":"prompt","message":"hi"}\n'
        '{"id":"m","type":"set_model","provider":"faux","modelId":"faux-1"}\n'
        '{"id":"s","type":"get_state"}\n'
    )
    run = run_cli(["--mode", "rpc"], tmp_path, stdin=stdin)
    assert run.returncode == 0, run.stderr
    answers = _responses(run.stdout)
    assert answers["p"]["success"] is False and "No model available" in str(answers["p"]["error"])
    assert answers["m"]["success"] is True
    state = answers["s"]["data"]
    assert isinstance(state, dict) and state["model"]["provider"] == "faux"
