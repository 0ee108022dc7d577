from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.modes.rpc.handlers import COMMANDS
from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json

from .rpc_client import Record, RpcProcess

pytestmark = pytest.mark.slow

PIXEL = {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "mimeType": "image/png"}  # fmt: skip
LONG = " ".join(f"w{i}" for i in range(60))


def _types(records: list[Record]) -> list[str]:
    return [r["type"] for r in records if r["type"] != "message_update"]


def _roles(records: list[Record], kind: str) -> list[str]:
    return [r["message"]["role"] for r in records if r["type"] == kind]


def _script() -> list[Any]:
    return [
        # 1. a prompt with two tool calls the loop runs in parallel
        Reply(
            [
                text("Reading both."),
                tool_call("read", {"path": "a.txt"}),
                tool_call("read", {"path": "b.txt"}),
            ]
        ),
        Reply([text("Both read.")]),
        # 2. a slow answer that a steer interrupts after it
        Reply([text(LONG)], frame_delay=0.02),
        Reply([text("after steer")]),
        # 3. a slow answer that is aborted
        Reply([text(LONG * 5)], frame_delay=0.05),
    ]


def _drive_logins(rpc: RpcProcess) -> None:
    """The login commands without a login (test_rpc_login.py runs real ones against a fake server)."""
    providers = rpc.call({"type": "get_login_providers"})["data"]["providers"]
    assert {"oauth", "api_key"} <= {p["authType"] for p in providers if p["id"] == "anthropic"}
    assert rpc.call({"type": "abort_login"})["data"] == {"aborted": False}
    assert rpc.call({"type": "logout", "provider": "anthropic"})["data"] == {"removed": False}
    response, _ = rpc.response(rpc.send({"type": "login", "provider": "nope"}))
    assert response["success"] is False and response["error"].startswith('No login for "nope"')


def test_every_command_and_the_event_order(tmp_path: Path, agent_dir: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("alpha\n")
    (repo / "b.txt").write_text("beta\n")
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 50}}))
    fake = FakeLLM()
    fake.script(_script())
    fake.responder = lambda _request: Reply([text("## Goal\nRead files.")])  # compaction summaries
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(repo, "--model", "fake-openai/gpt-fake")
        try:
            _drive(rpc, repo, fake)
            _drive_logins(rpc)
            assert rpc.close() == 0
            assert COMMANDS <= rpc.sent_types, sorted(COMMANDS - rpc.sent_types)
        finally:
            rpc.kill()
    fake.assert_script_consumed()
    assert fake.violations == []


def _drive(rpc: RpcProcess, repo: Path, fake: FakeLLM) -> None:  # noqa: PLR0915 (one scenario, in order)
    state = rpc.call({"type": "get_state"}, timeout=30)["data"]
    assert state["model"]["provider"] == "fake-openai" and state["model"]["id"] == "gpt-fake"
    assert (
        state["thinkingLevel"] == "off" and state["isStreaming"] is False and state["isCompacting"] is False
    )
    assert state["steeringMode"] == "one-at-a-time" and state["followUpMode"] == "one-at-a-time"
    assert state["messageCount"] == 0 and state["pendingMessageCount"] == 0
    assert state["autoCompactionEnabled"] is True
    first_file = state["sessionFile"]
    assert state["sessionId"] in first_file

    # --- a prompt with parallel tool calls: the response first, then the whole event sequence -------
    pid = rpc.send({"type": "prompt", "message": "read a.txt and b.txt", "images": [PIXEL]})
    response = rpc.next()
    assert response == {"id": pid, "type": "response", "command": "prompt", "success": True}
    _settled, events = rpc.event("agent_settled")
    types = _types(events)
    assert types == [
        "agent_start",
        "turn_start",
        "message_start", "message_end",  # the system prompt, announced on the session's first turn
        "message_start", "message_end",  # the prompt
        "message_start", "message_end",  # the assistant with two tool calls
        "tool_execution_start", "tool_execution_start",
        "tool_execution_end", "tool_execution_end",
        "message_start", "message_end", "message_start", "message_end",  # results, in call order
        "turn_end",
        "turn_start", "message_start", "message_end", "turn_end",
        "agent_end",
    ]  # fmt: skip
    assert _roles(events, "message_end")[:3] == ["system", "user", "assistant"]
    system = next(e["message"] for e in events if e["type"] == "message_end")
    assert "read" in [t["name"] for t in system["toolsAdded"]] and system["content"] == ""
    assert list(system) == ["role", "content", "sections", "timestamp", "toolsAdded"]  # as pi writes it
    prompt_message = [e["message"] for e in events if e["type"] == "message_end"][1]
    assert prompt_message["content"][1] == PIXEL
    assert all("turnIndex" not in e for e in events)
    starts = [e for e in events if e["type"] == "tool_execution_start"]
    assert [s["args"]["path"] for s in starts] == ["a.txt", "b.txt"]
    results = [
        e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "toolResult"
    ]
    assert [r["toolCallId"] for r in results] == [s["toolCallId"] for s in starts]
    assert "alpha" in json.dumps(results[0]) and "beta" in json.dumps(results[1])
    assistant_start = next(
        e for e in events if e["type"] == "message_start" and e["message"]["role"] == "assistant"
    )
    assert assistant_start["message"]["stopReason"] == "pending"
    updates = [e for e in events if e["type"] == "message_update"]
    assert updates and all(
        "message" not in u and "partial" not in u["assistantMessageEvent"] for u in updates
    )
    assert all("usage" in u for u in updates)
    toolcall_starts = [
        u["assistantMessageEvent"] for u in updates if u["assistantMessageEvent"]["type"] == "toolcall_start"
    ]
    assert [t["toolName"] for t in toolcall_starts] == ["read", "read"]
    assert events[-1]["willRetry"] is False

    assert rpc.call({"type": "get_last_assistant_text"})["data"] == {"text": "Both read."}
    messages = rpc.call({"type": "get_messages"})["data"]["messages"]
    # the recorded prompt leads, as pi lists it (tests/modes/rpc/fixtures/pi087-rpc.jsonl)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "toolResult", "toolResult", "assistant"]
    assert messages[0] == system
    assert rpc.call({"type": "get_state"})["data"]["messageCount"] == len(messages)

    # --- bash: streamed output, BashResult, and it joins the next prompt's context ---------------------
    bid = rpc.send({"type": "bash", "command": "echo hi-from-bash"})
    response, before = rpc.response(bid)
    assert [b for b in before if b["type"] == "bash_execution_update"] == [
        {"type": "bash_execution_update", "id": bid, "delta": "hi-from-bash\n"}
    ]
    assert response["data"] == {
        "output": "hi-from-bash\n",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
    }
    slow = rpc.send({"type": "bash", "command": "sleep 30"})
    second = rpc.send({"type": "bash", "command": "echo no"})
    refused, _ = rpc.response(second)
    assert refused["success"] is False and "already running" in refused["error"]
    assert rpc.call({"type": "abort_bash"})["command"] == "abort_bash"
    aborted_bash, _ = rpc.response(slow)
    assert aborted_bash["data"]["cancelled"] is True

    # --- steer while the answer streams; a plain prompt meanwhile is refused ---------------------------
    sid = rpc.send({"type": "prompt", "message": "count slowly"})
    rpc.response(sid)
    rpc.event("message_update")
    busy = rpc.send({"type": "prompt", "message": "again"})
    refused, _ = rpc.response(busy)
    assert refused["success"] is False
    assert refused["error"].startswith("Agent is already processing. Specify streamingBehavior")
    steer = rpc.send({"type": "steer", "message": "stop counting"})
    response, before = rpc.response(steer)
    assert response["success"] is True
    assert before[-1:] == [{"type": "queue_update", "steering": ["stop counting"], "followUp": []}] or any(
        b == {"type": "queue_update", "steering": ["stop counting"], "followUp": []} for b in before
    )
    state = rpc.call({"type": "get_state"})["data"]
    assert state["isStreaming"] is True and state["pendingMessageCount"] == 1
    # a built-in command runs at once while the agent works; the run still settles afterwards
    shown, before = rpc.response(rpc.send({"type": "prompt", "message": "/session"}))
    assert shown["success"] is True and [b for b in before if b["type"] == "command_output"]
    _settled, events = rpc.event("agent_settled")
    types = _types(events)
    first_turn_end = types.index("turn_end")
    after = events[[i for i, e in enumerate(events) if e["type"] == "turn_end"][0] :]
    assert {"type": "queue_update", "steering": [], "followUp": []} in after
    # pi's order: the next turn starts, the queue gives the steer up, then the steer's messages
    assert [e["type"] for e in after if e["type"] != "message_update"][:5] == [
        "turn_end", "turn_start", "queue_update", "message_start", "message_end"
    ]  # fmt: skip
    steered = [e for e in after if e["type"] == "message_end" and e["message"]["role"] == "user"]
    assert steered and "stop counting" in json.dumps(steered[0]["message"])
    assert types[first_turn_end + 1 :].count("turn_start") == 1
    assert "hi-from-bash" in json.dumps(fake.requests[2].body)  # the bash output reached the model

    # --- abort: the response comes after agent_end and agent_settled ------------------------------------
    aid = rpc.send({"type": "prompt", "message": "write a lot"})
    rpc.response(aid)
    rpc.event("message_update")
    abort = rpc.send({"type": "abort"})
    response, before = rpc.response(abort)
    assert response == {"id": abort, "type": "response", "command": "abort", "success": True}
    assert _types(before)[-2:] == ["agent_end", "agent_settled"]
    last = [e for e in before if e["type"] == "message_end"][-1]["message"]
    assert last["stopReason"] == "aborted"
    assert rpc.call({"type": "get_state"})["data"]["isStreaming"] is False

    # --- models and thinking ------------------------------------------------------------------------
    models = rpc.call({"type": "get_available_models"})["data"]["models"]
    labels = [f"{m['provider']}/{m['id']}" for m in models]
    assert "fake-anthropic/claude-fake" in labels and "fake-openai/gpt-fake" in labels
    model = rpc.call({"type": "set_model", "provider": "fake-anthropic", "modelId": "claude-fake"})["data"]
    assert model["id"] == "claude-fake" and model["api"] == "anthropic-messages"
    missing, _ = rpc.response(rpc.send({"type": "set_model", "provider": "nope", "modelId": "x"}))
    assert missing["error"] == "Model not found: nope/x"
    cycled = rpc.call({"type": "cycle_model"})["data"]
    assert set(cycled) == {"model", "thinkingLevel", "isScoped"} and cycled["model"]["id"] != "claude-fake"
    rpc.call({"type": "set_model", "provider": "faux", "modelId": "faux-1"})  # a reasoning model
    levels = rpc.call({"type": "get_available_thinking_levels"})["data"]["levels"]
    assert levels[0] == "off" and "high" in levels
    rpc.call({"type": "set_thinking_level", "level": "max"})
    assert rpc.call({"type": "get_state"})["data"]["thinkingLevel"] == levels[-1]
    cycled_level, before = rpc.response(rpc.send({"type": "cycle_thinking_level"}))
    assert cycled_level["data"] == {"level": "off"}
    assert {"type": "thinking_level_changed", "level": "off"} in before
    rpc.call({"type": "set_model", "provider": "fake-openai", "modelId": "gpt-fake"})
    assert rpc.call({"type": "get_available_thinking_levels"})["data"] == {"levels": ["off"]}
    assert rpc.call({"type": "cycle_thinking_level"})["data"] is None
    assert "data" not in rpc.call({"type": "set_thinking_level", "level": "high"})
    bad_level, _ = rpc.response(rpc.send({"type": "set_thinking_level", "level": "extreme"}))
    assert bad_level["success"] is False and "extreme" in bad_level["error"]

    # --- queue modes, compaction and retry toggles ------------------------------------------------------
    rpc.call({"type": "set_steering_mode", "mode": "all"})
    rpc.call({"type": "set_follow_up_mode", "mode": "all"})
    bad_mode, _ = rpc.response(rpc.send({"type": "set_steering_mode", "mode": "sometimes"}))
    assert bad_mode["success"] is False
    rpc.call({"type": "set_auto_compaction", "enabled": False})
    rpc.call({"type": "set_auto_retry", "enabled": False})
    rpc.call({"type": "abort_retry"})
    state = rpc.call({"type": "get_state"})["data"]
    assert state["steeringMode"] == "all" and state["followUpMode"] == "all"
    assert state["autoCompactionEnabled"] is False
    rpc.call({"type": "set_auto_compaction", "enabled": True})
    _, before = rpc.response(rpc.send({"type": "follow_up", "message": "later please"}))
    assert before == [{"type": "queue_update", "steering": [], "followUp": ["later please"]}]
    assert rpc.call({"type": "get_state"})["data"]["pendingMessageCount"] == 1
    cleared, before = rpc.response(rpc.send({"type": "clear_queue"}))
    assert cleared["data"] == {"steering": [], "followUp": ["later please"]}
    assert before == [{"type": "queue_update", "steering": [], "followUp": []}]
    cleared, before = rpc.response(rpc.send({"type": "clear_queue"}))
    assert cleared["data"] == {"steering": [], "followUp": []}
    assert before == [{"type": "queue_update", "steering": [], "followUp": []}]

    # --- the session: stats, names, entries, tree, commands, export, context ----------------------------
    stats = rpc.call({"type": "get_session_stats"})["data"]
    assert stats["userMessages"] == 4 and stats["assistantMessages"] == 5 and stats["toolCalls"] == 2
    assert stats["toolResults"] == 2 and stats["sessionFile"] == first_file
    assert stats["tokens"]["total"] == sum(
        stats["tokens"][k] for k in ("input", "output", "cacheRead", "cacheWrite")
    )
    assert stats["contextUsage"]["contextWindow"] == 200_000
    rpc.send({"type": "set_session_name", "name": "rpc test"})
    changed, _ = rpc.event("session_info_changed")
    assert changed == {"type": "session_info_changed", "name": "rpc test"}
    empty, _ = rpc.response(rpc.send({"type": "set_session_name", "name": "  "}))
    assert empty["error"] == "Session name cannot be empty"
    assert rpc.call({"type": "get_state"})["data"]["sessionName"] == "rpc test"
    entries = rpc.call({"type": "get_entries"})["data"]
    ids = [e["id"] for e in entries["entries"]]
    assert entries["leafId"] == ids[-1]
    since = rpc.call({"type": "get_entries", "since": ids[-2]})["data"]
    assert [e["id"] for e in since["entries"]] == ids[-1:]
    unknown_entry, _ = rpc.response(rpc.send({"type": "get_entries", "since": "zzz"}))
    assert unknown_entry["error"] == "Entry not found: zzz"
    tree = rpc.call({"type": "get_tree"})["data"]
    assert tree["leafId"] == entries["leafId"] and tree["tree"][0]["entry"]["id"] == ids[0]
    listed = rpc.call({"type": "get_commands"})["data"]["commands"]
    assert {c["source"] for c in listed} == {"builtin"} and "context" in [c["name"] for c in listed]
    shown, before = rpc.response(rpc.send({"type": "prompt", "message": "/session"}))
    assert shown["success"] is True
    output = [b for b in before if b["type"] == "command_output"]
    assert len(output) == 1 and "rpc test" in output[0]["text"]
    out = repo / "export.html"
    assert rpc.call({"type": "export_html", "outputPath": str(out)})["data"] == {"path": str(out)}
    assert "read a.txt and b.txt" in out.read_text()
    context = rpc.call({"type": "get_context"})["data"]
    assert context["markdown"].startswith("# Context")
    assert {"parts", "tokens", "breakpoints", "panels", "ledger", "messages"} <= set(context)
    assert context["tokens"]["total"] > 0 and context["parts"][0]["tokens"] > 0
    assert len(context["ledger"]["requests"]) == 5

    # --- compaction --------------------------------------------------------------------------------------
    cid = rpc.send({"type": "compact", "customInstructions": "focus on files"})
    response, before = rpc.response(cid, timeout=30)
    assert response["success"] is True, response
    assert response["data"]["summary"].startswith("## Goal") and response["data"]["tokensBefore"] > 0
    assert {"type": "compaction_start", "reason": "manual"} in before
    end = next(b for b in before if b["type"] == "compaction_end")
    assert end["reason"] == "manual" and end["aborted"] is False and end["result"] == response["data"]
    assert any("focus on files" in json.dumps(r.body) for r in fake.requests[5:])

    # --- fork, clone, new session, switch back -----------------------------------------------------------
    forks = rpc.call({"type": "get_fork_messages"})["data"]["messages"]
    assert [f["text"] for f in forks] == [
        "read a.txt and b.txt",
        "count slowly",
        "stop counting",
        "write a lot",
    ]
    forked = rpc.call({"type": "fork", "entryId": forks[1]["entryId"]})["data"]
    assert forked == {"text": "count slowly", "cancelled": False}
    fork_state = rpc.call({"type": "get_state"})["data"]
    assert fork_state["sessionFile"] != first_file
    assert "stop counting" not in json.dumps(rpc.call({"type": "get_messages"})["data"])
    assert rpc.call({"type": "clone"})["data"] == {"cancelled": False}
    assert rpc.call({"type": "new_session", "parentSession": first_file})["data"] == {"cancelled": False}
    assert rpc.call({"type": "get_state"})["data"]["messageCount"] == 0
    nobody, _ = rpc.response(rpc.send({"type": "switch_session", "sessionPath": str(repo / "none.jsonl")}))
    assert nobody["success"] is False and "not found" in nobody["error"]
    assert rpc.call({"type": "switch_session", "sessionPath": first_file})["data"] == {"cancelled": False}
    back = rpc.call({"type": "get_state"})["data"]
    assert back["sessionFile"] == first_file and back["sessionName"] == "rpc test"
    assert rpc.call({"type": "switch_session", "sessionPath": first_file})["data"] == {"cancelled": False}

    # --- bad input answered, with the id ------------------------------------------------------------------
    unknown, _ = rpc.response(rpc.send({"id": 7, "type": "teleport"}))
    assert unknown == {
        "id": 7,
        "type": "response",
        "command": "teleport",
        "success": False,
        "error": "Unknown command: teleport",
    }
    wrong, _ = rpc.response(rpc.send({"type": "prompt", "message": 5}))
    assert wrong["success"] is False and wrong["command"] == "prompt" and '"message"' in wrong["error"]
    wrong, _ = rpc.response(rpc.send({"type": "set_auto_retry", "enabled": "yes"}))
    assert wrong["success"] is False and '"enabled"' in wrong["error"]
    # --- pi-tui: rewind (checkpoints; tests/checkpoints/test_rpc_rewind.py has the details) ---
    assert rpc.call({"type": "rewind", "entryId": None, "mode": "code"})["data"]["applied"] is True
