"""The bundled ``mcp`` extension against a real MCP server on the SDK's own server classes.

Each test that starts a stdio server pays the server's own start-up (~0.5–1 s, its ``import mcp``), so
the scenarios are grouped: one session per behaviour family.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.resources.trust_store import TrustState
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import MODEL, Events, ScriptedUI, ext, model_requests, open_session

DEMO = Path(__file__).parent / "mcp_servers" / "demo.py"


def write_mcp(agent_dir: Path, servers: dict[str, Any]) -> Path:
    path = agent_dir / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def demo(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(DEMO)], **extra}


def tool_result_texts(request: Any) -> list[str]:
    return [r.content for r in request.tool_results()]


async def test_the_proxy_searches_describes_and_calls_and_its_definition_never_changes(
    fake: FakeLLM, agent_dir: Path, project: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("DEMO_SECRET_VALUE", "from-env")
    write_mcp(agent_dir, {"demo": demo(env={"DEMO_TOKEN": "${DEMO_SECRET_VALUE}"})})
    fake.script(
        [
            Reply([tool_call("mcp", {})]),
            Reply([tool_call("mcp", {"search": "add integers"})]),
            Reply([tool_call("mcp", {"describe": "demo/add"})]),
            Reply([tool_call("mcp", {"tool": "demo/add", "args": {"a": 2, "b": 40}})]),
            Reply([tool_call("mcp", {"tool": "echo", "args": {"text": "hi"}})]),
            Reply([tool_call("mcp", {"tool": "demo/nope", "args": {}})]),
            Reply([text("done")]),
        ]
    )
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("use the MCP tools")  # naming the server would start it early

    requests = model_requests(fake)
    results = tool_result_texts(requests[-1])
    assert results[0] == "demo: lazy, tools not listed yet"  # nothing started before it was needed
    assert results[1].splitlines()[0] == "demo/add: Add two integers."
    assert '"a"' in results[2] and "Add two integers." in results[2]
    assert results[3] == "42"
    assert results[4].startswith("hi | cwd=") and f"cwd={project}" in results[4]
    assert results[4].endswith("DEMO_TOKEN=from-env")  # ${VAR} expanded from the environment
    assert 'No MCP tool "demo/nope"' in results[5]
    # The tool block is byte-identical in every request: connecting the server never touched it.
    tool_blocks = [json.dumps(r.body["tools"], sort_keys=True) for r in requests]
    assert len(set(tool_blocks)) == 1
    assert [t["name"] for t in requests[0].body["tools"] if t["name"].startswith("mcp")] == ["mcp"]


async def test_a_hung_server_times_out_and_a_crashed_one_restarts_and_huge_results_are_cut(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo(timeout=2)})
    fake.script(
        [
            Reply([tool_call("mcp", {"tool": "demo/hang", "args": {}})]),
            Reply([tool_call("mcp", {"tool": "demo/add", "args": {"a": 1, "b": 1}})]),
            Reply([tool_call("mcp", {"tool": "demo/crash", "args": {}})]),
            Reply([tool_call("mcp", {"tool": "demo/add", "args": {"a": 2, "b": 2}})]),
            Reply([tool_call("mcp", {"tool": "demo/huge", "args": {"size": 300000}})]),
            Reply([text("done")]),
        ]
    )
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("go")

    hang, after_hang, crash, after_crash, huge = tool_result_texts(model_requests(fake)[-1])
    assert 'MCP server "demo" did not answer hang within 2s; it is restarted on next use' in hang
    assert after_hang == "2"
    assert 'MCP server "demo" exited during the call to crash' in crash
    assert "demo: crashing now" in crash  # its last stderr lines, to say why
    assert after_crash == "4"
    assert len(huge) < 51_000 and "250000 more characters cut" in huge


async def test_results_pass_the_secret_redactor_like_built_in_tools(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo()})
    fake.script([Reply([tool_call("mcp", {"tool": "demo/leak", "args": {}})]), Reply([text("ok")])])
    async with open_session(ext("mcp", "secret_redactor"), project, model=MODEL) as session:
        await session.prompt("read the config")

    (result,) = tool_result_texts(model_requests(fake)[-1])
    assert result.startswith("config: AWS_SECRET_ACCESS_KEY=")
    assert "wJalrXUtnFEMI/K7MDENG" not in result


async def test_tool_calls_pass_tool_call_handlers_first(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    # The permission gate's hook point: a tool_call handler that blocks MCP calls stops them unrun.
    write_mcp(agent_dir, {"demo": demo()})
    guard = project / "guard.py"
    guard.write_text(
        "def register(pi):\n"
        "    @pi.on('tool_call')\n"
        "    def no_mcp(event):\n"
        "        if event.tool_name == 'mcp' and event.input.get('tool'):\n"
        "            return {'block': True, 'reason': 'no MCP calls here'}\n"
    )
    fake.script([Reply([tool_call("mcp", {"tool": "demo/crash", "args": {}})]), Reply([text("ok")])])
    async with open_session([*ext("mcp"), "-e", str(guard)], project, model=MODEL) as session:
        await session.prompt("go")
        pool_servers = session.extensions.extensions  # the session stays usable
        assert pool_servers

    (result,) = tool_result_texts(model_requests(fake)[-1])
    assert "no MCP calls here" in result


async def test_a_server_that_is_not_installed_is_one_line_and_the_session_goes_on(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"ghost": {"command": "no-such-mcp-server-xyz"}, "demo": demo()})
    fake.script(
        [
            Reply([tool_call("mcp", {"tool": "ghost/anything", "args": {}})]),
            Reply([tool_call("mcp", {"tool": "demo/add", "args": {"a": 3, "b": 4}})]),
            Reply([text("ok")]),
        ]
    )
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("go")

    ghost, added = tool_result_texts(model_requests(fake)[-1])
    assert 'MCP server "ghost" failed to start' in ghost
    assert added == "7"


async def test_direct_servers_offer_their_tools_from_the_first_request(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo(directTools=True)})
    fake.script([Reply([tool_call("demo_add", {"a": 5, "b": 6})]), Reply([text("ok")])])
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("go")

    first, second = model_requests(fake)
    assert {"mcp", "demo_add", "demo_echo"} <= set(first.tool_names)
    assert first.body["tools"] == second.body["tools"]
    assert tool_result_texts(second) == ["11"]


async def test_the_mcp_command_lists_servers_tools_costs_and_logs(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo()})
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp")
        await session.prompt("/mcp tools demo")
        await session.prompt("/mcp costs")
        await session.prompt("/mcp logs demo")
        await session.prompt("/mcp disable demo")
        await session.prompt("/mcp")
    texts = [m for m, _ in ui.notices]
    assert texts[0].startswith("MCP servers:\ndemo: lazy, tools not listed, proxy (stdio: ")
    assert "add (" in texts[1] and "demo: connected, 8 tools" in texts[1]
    assert "the proxy tool" in texts[2] and "demo (proxy): 8 tools = " in texts[2]
    assert "switching to direct adds" in texts[2]
    assert "demo server starting" in texts[3]
    assert texts[5].startswith("MCP servers:\ndemo: disabled")
    assert fake.requests == []  # commands never reach the model


async def test_a_changed_tool_list_is_picked_up_without_touching_the_tool_block(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo()})
    fake.script(
        [
            Reply([tool_call("mcp", {"tool": "demo/grow", "args": {}})]),
            Reply([tool_call("mcp", {"tool": "demo/grown", "args": {}})]),
            Reply([text("ok")]),
        ]
    )
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("grow")

    requests = model_requests(fake)
    assert tool_result_texts(requests[-1]) == ["grew", "I am new"]
    assert requests[0].body["tools"] == requests[-1].body["tools"]


@pytest.mark.parametrize("name", [".mcp.json", ".pi/mcp.json"])
async def test_an_untrusted_projects_mcp_files_are_ignored_and_it_says_so(
    fake: FakeLLM, agent_dir: Path, project: Path, name: str
) -> None:
    """A project holding nothing but an MCP file has something to trust: it is not reported trusted
    (pi's own rule alone would call it trusted), so its servers are not read."""
    (project / name).parent.mkdir(parents=True, exist_ok=True)
    (project / name).write_text(json.dumps({"mcpServers": {"demo": demo()}}))
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp")
        runner = session.extensions
        assert runner is not None
        ctx = runner.context_for(runner.extensions[0])
        assert ctx.is_project_trusted() is False
        assert ctx.project_trust() is TrustState.UNTRUSTED
    assert ui.notices[0] == (
        f"MCP: ignored {name}: the project is not trusted (run with --approve to trust it for one run, or "
        "once with --trust-project to record it, to use its servers)",  # RPC mode: no /trust there
        "warning",
    )
    assert ui.notices[1][0].startswith("No MCP servers configured")


async def test_a_project_with_nothing_to_trust_is_reported_trusted_with_mcp_loaded(
    agent_dir: Path, project: Path
) -> None:
    """pi's report for a project with nothing needing trust, while the mcp extension is loaded; and the
    files it names count again as soon as one appears (checked at each call)."""
    (project / "AGENTS.md").write_text("context files need no trust\n")
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project) as session:
        session.attach_ui(ui, "rpc")
        await session.start()
        runner = session.extensions
        assert runner is not None
        ctx = runner.context_for(runner.extensions[0])
        assert ctx.is_project_trusted() is True
        assert ctx.project_trust() is TrustState.NOTHING_TO_TRUST
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": demo()}}))
        assert ctx.is_project_trusted() is False
    assert not any("ignored" in text for text, _ in ui.notices)


async def test_mcp_argument_completion_stops_once_a_word_is_complete(agent_dir: Path, project: Path) -> None:
    write_mcp(agent_dir, {"demo": demo(), "docs": demo()})
    async with open_session(ext("mcp"), project) as session:
        await session.start()
        complete = session.extensions.registry.commands["mcp"].get_argument_completions
        assert complete("to") == ["tools"]
        assert complete("tools ") == ["tools demo", "tools docs"]
        assert complete("tools do") == ["tools docs"]
        assert complete("tools docs") == []  # Enter runs it rather than picking a candidate
        assert complete("tools docs ") == []
        assert complete("demo") == []
        assert complete("direct demo ") == [
            "direct demo now"
        ]  # switching at once is offered, not typed blind
        assert complete("direct demo now") == []
        assert complete("tools demo ") == []


async def test_context_lists_each_server_with_direct_and_proxy_costs_in_every_view(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    from pi_tui.context.render import render_context
    from pi_tui.modes.rpc.context_view import report_json

    write_mcp(agent_dir, {"demo": demo(), "idle": demo()})
    fake.script(
        [Reply([tool_call("mcp", {"tool": "demo/add", "args": {"a": 1, "b": 2}})]), Reply([text("ok")])]
    )
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("add")
        report = await session.context_report()

    ((title, lines),) = report.sections
    assert title == "MCP servers"
    assert lines[0].startswith("MCP tool costs per request (estimates): the proxy tool ")
    assert lines[1].startswith("  demo (proxy): 8 tools = ") and "returned 1 tokens in 1 calls" in lines[1]
    assert "switching to direct adds" in lines[1]
    assert lines[2] == "  idle: tools not listed yet (start it: /mcp tools idle)"
    assert "## MCP servers\n\nMCP tool costs per request" in render_context(report)
    assert report_json(report)["extensionSections"] == [{"title": "MCP servers", "lines": list(lines)}]


async def test_a_servers_prompts_become_slash_commands_once_it_has_started(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo()})
    fake.script([Reply([text("looks fine")])])
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp tools demo")  # starts the lazy server
        commands = session.extensions.registry.commands
        assert "demo:review" in commands
        assert commands["demo:review"].description == "Ask for a code review. (code=… [focus=…])"
        await session.prompt("/demo:review focus=style")  # the required argument is missing
        await session.prompt('/demo:review code="x = 1" focus=style')

    assert ui.notices[-1] == ("/demo:review: missing code (arguments: code, focus)", "error")
    (request,) = model_requests(fake)
    assert request.messages[-1]["content"][0]["text"] == "Please review this code for style:\nx = 1"


async def test_a_resource_mention_attaches_the_resource_text(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo()})
    fake.script([Reply([text("ok")]), Reply([text("ok")])])
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("summarise @demo:demo://greeting please, and mail me@example.com")
        await session.prompt("and @demo:demo://missing")

    first, second = model_requests(fake)
    assert first.messages[-1]["content"][0]["text"] == (
        "summarise @demo:demo://greeting please, and mail me@example.com\n\n"
        '<resource server="demo" uri="demo://greeting">\nHello from the demo resource\n</resource>'
    )
    assert second.messages[-1]["content"][0]["text"] == "and @demo:demo://missing"
    assert ui.notices[-1][0].startswith('MCP server "demo": reading demo://missing failed: ')


async def test_a_server_printing_garbage_fails_at_once_naming_it(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    script = "import sys, time; print('Welcome to my server!', flush=True); print('oops', file=sys.stderr); time.sleep(60)"
    write_mcp(agent_dir, {"noisy": {"command": sys.executable, "args": ["-c", script], "timeout": 50}})
    fake.script([Reply([tool_call("mcp", {"tool": "noisy/x", "args": {}})]), Reply([text("ok")])])
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("go")

    (result,) = tool_result_texts(model_requests(fake)[-1])
    assert result.startswith(
        'MCP server "noisy" failed to start: wrote something that is not JSON-RPC: \'Welcome to my server!'
    )
    assert "(stderr: oops)" in result


async def test_progress_notifications_stream_as_tool_updates(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo()})
    fake.script([Reply([tool_call("mcp", {"tool": "demo/count", "args": {"n": 3}})]), Reply([text("ok")])])
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        events = Events(session)
        await session.prompt("count")

    updates = [e for e in events.all if getattr(e, "type", None) == "tool_execution_update"]
    texts = [u.partial_result.content[0].text for u in updates]
    assert texts == ["demo/count: 1/3 step 1", "demo/count: 2/3 step 2", "demo/count: 3/3 step 3"]
    assert tool_result_texts(model_requests(fake)[-1]) == ["counted to 3"]


async def test_enable_and_disable_are_saved_in_the_file_the_server_came_from(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    path = agent_dir / "mcp.json"
    original = {
        "mcpServers": {"demo": demo(disabled=False, timeout=30), "other": demo()},
        "settings": {"x": 1},
    }
    path.write_text(json.dumps(original, indent=4) + "\n")
    path.chmod(0o600)
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp disable demo")
    assert ui.notices[-1] == (f"MCP server demo: disabled (saved in {path})", "info")
    saved = path.read_text()
    expected = {
        "mcpServers": {"demo": {**demo(enabled=False), "timeout": 30}, "other": demo()},
        "settings": {"x": 1},
    }
    assert saved == json.dumps(expected, indent=4) + "\n"
    assert list(json.loads(saved)["mcpServers"]["demo"]) == ["command", "args", "enabled", "timeout"]
    assert path.stat().st_mode & 0o777 == 0o600

    ui = ScriptedUI()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp")
        await session.prompt("/mcp enable demo")
    assert ui.notices[0][0].startswith("MCP servers:\ndemo: disabled")
    assert json.loads(path.read_text())["mcpServers"]["demo"]["enabled"] is True


async def test_switching_to_direct_mid_session_records_and_shows_the_cache_invalidation(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo()})
    fake.script([Reply([text("ok")]), Reply([text("ok")]), Reply([text("ok")])])
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("hi")
        await session.prompt("/mcp direct demo")  # without "now": the next session, nothing changes
        await session.prompt("again")
        await session.prompt("/mcp direct demo now")
        await session.prompt("go")
        invalidations = list(session.engine.ledger.invalidations)

    first, second, third = model_requests(fake)
    assert first.body["tools"] == second.body["tools"]
    assert "demo_add" not in second.tool_names and "demo_add" in third.tool_names
    assert "/mcp direct demo now switches at once" in ui.notices[0][0]
    message, level = ui.notices[1]
    assert level == "warning"
    assert message.startswith("MCP server demo switched to direct mid-session (/mcp): adds ")
    (invalidation,) = invalidations
    assert invalidation.request_index == 2
    assert invalidation.source == "extension mcp"
    assert message.startswith(invalidation.reason)


async def test_at_completion_offers_a_servers_resources_once_it_has_started(
    agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo()})
    async with open_session(ext("mcp"), project) as session:
        await session.start()
        registry = session.extensions.registry
        assert registry.mention_candidates("demo:") == []  # lazy: typing "@demo:" starts it
        for _ in range(600):  # wait (at most 30 s) for the server to have started and listed them
            if registry.mention_candidates("demo:"):
                break
            await asyncio.sleep(0.05)
        assert registry.mention_candidates("demo:") == [("demo:demo://greeting", "A short text resource.")]
        assert registry.mention_candidates("greet") == [("demo:demo://greeting", "A short text resource.")]
        assert registry.mention_candidates("demo:nothing") == []
        assert registry.mention_candidates("docs/") == []


async def test_a_message_naming_a_lazy_server_starts_it_before_the_model_calls_it(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    write_mcp(agent_dir, {"demo": demo(), "other": demo()})
    fake.script([Reply([text("ok")]), Reply([text("ok")])])
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("plan the demolition of other-things")  # no server named as a word of its own
        await session.prompt("/mcp")
        await session.prompt("add 2 and 3 with the Demo server")
        await session.prompt("/mcp")

    before, after = (notice for notice, _ in ui.notices if notice.startswith("MCP servers:"))
    assert "demo: lazy" in before and "other: lazy" in before
    assert "demo: lazy" not in after and ("demo: starting" in after or "demo: connected" in after)
    assert "other: lazy" in after


# A bare JSON-RPC server that holds its tools/list answer until prompts/list and resources/list have
# arrived too (at most 5 s) and names its one tool after what it saw.
LISTINGS_SERVER = r"""
import json, os, select, sys, time

def send(message):
    os.write(1, (json.dumps(message) + "\n").encode())

pending, seen, held, deadline = b"", set(), None, None
while True:
    wait = None if held is None else max(0.0, deadline - time.monotonic())
    if select.select([0], [], [], wait)[0]:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        pending += chunk
    *lines, pending = pending.split(b"\n")
    for line in filter(None, lines):
        message = json.loads(line)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": message["params"]["protocolVersion"], "serverInfo": {"name": "raw", "version": "1"},
                "capabilities": {"tools": {}, "prompts": {}, "resources": {}}}})
        elif method == "tools/list":
            held, deadline = rid, time.monotonic() + 5
        elif method in ("prompts/list", "resources/list"):
            seen.add(method)
            send({"jsonrpc": "2.0", "id": rid, "result": {method.split("/")[0]: []}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    if held is not None and (len(seen) == 2 or time.monotonic() >= deadline):
        name = "listed_with_the_others" if len(seen) == 2 else "listed_alone"
        send({"jsonrpc": "2.0", "id": held, "result": {"tools": [
            {"name": name, "inputSchema": {"type": "object"}}]}})
        held = None
"""


# A bare JSON-RPC server that asks for the client's roots once initialized (as the reference filesystem
# server does) and holds its tools/list answer until three pings have come after the roots answer (at most
# 5 s), naming its one tool after what it saw.
ROOTS_SERVER = r"""
import json, os, select, sys, time

def send(message):
    os.write(1, (json.dumps(message) + "\n").encode())

pending, answered, pings, held, deadline = b"", False, 0, None, None
while True:
    wait = None if held is None else max(0.0, deadline - time.monotonic())
    if select.select([0], [], [], wait)[0]:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        pending += chunk
    *lines, pending = pending.split(b"\n")
    for line in filter(None, lines):
        message = json.loads(line)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": message["params"]["protocolVersion"], "serverInfo": {"name": "raw", "version": "1"},
                "capabilities": {"tools": {}}}})
        elif method == "notifications/initialized":
            send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
        elif rid == "roots-1" and method is None:
            answered = True
        elif method == "tools/list":
            held, deadline = rid, time.monotonic() + 5
        elif method == "ping":
            pings += answered
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    if held is not None and (pings >= 3 or time.monotonic() >= deadline):
        name = "listed_after_the_pings" if pings >= 3 else "listed_before_the_pings"
        send({"jsonrpc": "2.0", "id": held, "result": {"tools": [
            {"name": name, "inputSchema": {"type": "object"}}]}})
        held = None
"""


async def test_the_pings_after_the_roots_answer_do_not_wait_for_the_listings(
    agent_dir: Path, project: Path
) -> None:
    # They waited for tools/list's answer: a round trip per ping more before a first call.
    write_mcp(agent_dir, {"raw": {"command": sys.executable, "args": ["-c", ROOTS_SERVER]}})
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp tools raw")

    (listing,) = [notice for notice, _ in ui.notices if notice.startswith("raw")]
    assert listing.splitlines()[-1].startswith("  listed_after_the_pings (")


async def test_tools_prompts_and_resources_are_listed_at_once(agent_dir: Path, project: Path) -> None:
    # Listed one after another, a first call waited for three round trips to the server instead of one.
    write_mcp(agent_dir, {"raw": {"command": sys.executable, "args": ["-c", LISTINGS_SERVER]}})
    ui = ScriptedUI()
    async with open_session(ext("mcp"), project) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp tools raw")

    (listing,) = [notice for notice, _ in ui.notices if notice.startswith("raw")]
    assert listing.splitlines()[-1].startswith("  listed_with_the_others (")
