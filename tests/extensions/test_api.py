from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pi_tui.args import parse_args
from pi_tui.extensions.api import ExtensionContext, FeatureUnavailableError
from pi_tui.extensions.discovery import ExtensionSource
from pi_tui.extensions.extension import Extension
from pi_tui.runtime.factory import StartupError, create_session
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import (
    MODEL,
    model_requests,
    module,
    open_session,
    open_startup,
    session_entries,
    user_texts,
    write_extension,
)

TOOLS = """
from pi_tui.extensions.api import ToolError

CALLS = []

def register(pi):
    async def execute(tool_call_id, params, signal, on_update, ctx):
        CALLS.append((tool_call_id, dict(params), ctx.cwd))
        if params["name"] == "nobody":
            raise ToolError("no such person")
        return {"content": [{"type": "text", "text": "Hello, " + params["name"] + "!"}], "details": {"n": 1}}

    pi.register_tool(
        name="greet",
        label="Greet",
        description="Greets someone by name.",
        parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        execute=execute,
        prompt_snippet="greet: say hello to a person",
        prompt_guidelines=["Greet people with the greet tool."],
        prepare_arguments=lambda args: {"name": args.get("who", args.get("name", ""))},
    )
    pi.register_tool({"name": "read", "description": "A replacement read.", "parameters": {"type": "object"},
                      "execute": lambda tool_call_id, params: "replaced read"})
"""

LATE = """
def register(pi):
    pi.register_tool(name="greet", description="second", parameters={"type": "object"}, execute=lambda *a: "x")
"""


def _ext(tmp_path: Path, name: str, code: str) -> list[str]:
    return ["-e", str(write_extension(tmp_path / "exts", name, code))]


async def test_registered_tools_run_shape_the_prompt_and_follow_the_conflict_rules(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    fake.script(
        [
            Reply([tool_call("greet", {"who": "Ada"}), tool_call("greet", {"name": "nobody"})]),
            Reply([tool_call("read", {"path": "x"})]),
            Reply([text("done")]),
        ]
    )
    argv = _ext(tmp_path, "tools", TOOLS) + _ext(tmp_path, "late", LATE)
    async with open_startup(argv, project, model=MODEL) as startup:
        session = startup.session
        await session.prompt("greet Ada")
        calls = module(session, "tools").CALLS

    first, second, third = model_requests(fake)
    assert "greet" in first.tool_names and "greet: say hello to a person" in first.system
    assert "Greet people with the greet tool." in first.system
    assert [(r.content, r.is_error) for r in second.tool_results()] == [
        ("Hello, Ada!", False),
        ("no such person", True),
    ]
    assert [c[1] for c in calls] == [{"name": "Ada"}, {"name": "nobody"}]  # prepare_arguments ran
    assert calls[0][2] == str(project.resolve())
    assert third.tool_results()[-1].content == "replaced read"
    assert 'Extension "tools" overrides the built-in tool "read"' in startup.warnings
    assert any('Tool "greet" of extension "late" ignored' in w for w in startup.warnings)


async def test_a_command_runs_while_the_agent_is_working(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = """
import asyncio
STARTED = asyncio.Event()
GATE = asyncio.Event()
STATUS = []

def register(pi):
    async def wait(tool_call_id, params, signal, on_update, ctx):
        STARTED.set()
        await GATE.wait()
        return "waited"
    pi.register_tool(name="wait", description="Waits.", parameters={"type": "object"}, execute=wait)

    def status(args, ctx):
        STATUS.append((args, ctx.is_idle()))
        GATE.set()
    pi.register_command("status", handler=status, description="Show status",
                        get_argument_completions=lambda prefix: [p for p in ("all", "brief") if p.startswith(prefix)])
"""
    fake.script([Reply([tool_call("wait", {})]), Reply([text("done")])])
    async with open_session(_ext(tmp_path, "busy", code), project, model=MODEL) as session:
        ext = module(session, "busy")
        run = asyncio.ensure_future(session.prompt("start"))
        await ext.STARTED.wait()  # the agent is inside the tool call
        await session.prompt("/status brief")
        await run
        command = session.extensions.registry.commands["status"]

    assert ext.STATUS == [("brief", False)]
    assert command.get_argument_completions("b") == ["brief"]
    assert len(model_requests(fake)) == 2


async def test_flags_come_from_unknown_command_line_options(project: Path, tmp_path: Path) -> None:
    code = """
def register(pi):
    pi.register_flag("plan", type="boolean", description="Start in plan mode")
    pi.register_flag("profile", {"type": "string", "default": "dev"})
    pi.register_command("flags", handler=lambda args, ctx: FLAGS.append((pi.get_flag("plan"), pi.get_flag("profile"), pi.get_flag("other"))))
FLAGS = []
"""
    argv = [*_ext(tmp_path, "flags", code), "--profile", "prod", "--plan"]
    async with open_startup(argv, project) as startup:
        await startup.session.prompt("/flags")
        flags = module(startup.session, "flags").FLAGS

    assert flags == [(True, "prod", None)]
    assert not any("--plan" in w or "--profile" in w for w in startup.warnings)


def test_an_option_no_extension_declares_stops_start_up(project: Path, tmp_path: Path) -> None:
    code = """
def register(pi):
    pi.register_flag("plan", type="boolean")
"""
    argv = [*_ext(tmp_path, "flags", code), "--plan", "--other", "x"]
    with pytest.raises(StartupError) as failed:
        create_session(parse_args(["--provider", "faux", *argv]), project)
    assert failed.value.message == "Error: Unknown option: --other" and failed.value.exit_code == 1


async def test_send_message_delivery_modes(fake: FakeLLM, project: Path, tmp_path: Path) -> None:
    code = """
def register(pi):
    def note(args, ctx):
        mode, _, body = args.partition(" ")
        if mode == "next":
            pi.send_message({"customType": "note", "content": body}, deliver_as="next_turn")
        elif mode == "now":
            pi.send_message({"customType": "note", "content": body})
        elif mode == "trigger":
            pi.send_message({"customType": "note", "content": body}, {"triggerTurn": True})
    pi.register_command("note", handler=note)
"""
    fake.script([Reply([text("a")]), Reply([text("b")])])
    async with open_session(_ext(tmp_path, "notes", code), project, model=MODEL) as session:
        await session.prompt("/note next for the next prompt")
        await session.prompt("/note now appended quietly")
        await session.prompt("question")
        await session.prompt("/note trigger start a turn")
        await session.extensions.drain()
        entries = session_entries(session)

    first, second = model_requests(fake)
    assert user_texts(first) == ["appended quietly", "question", "for the next prompt"]
    assert user_texts(second)[-1] == "start a turn"
    notes = [e["content"] for e in entries if e["type"] == "custom_message"]
    assert notes == ["appended quietly", "for the next prompt", "start a turn"]


async def test_send_user_message_goes_through_the_input_event_as_an_extension(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = """
SOURCES = []
def register(pi):
    pi.on("input", lambda event: SOURCES.append((event.source, event.text)))
    pi.register_command("ask", handler=lambda args, ctx: pi.send_user_message("/ask " + args))
"""
    fake.script([Reply([text("answered")])])
    async with open_session(_ext(tmp_path, "asker", code), project, model=MODEL) as session:
        await session.prompt("/ask why")
        await session.extensions.drain()
        sources = module(session, "asker").SOURCES

    # no command expansion for extension messages: "/ask why" reached the model verbatim
    assert sources == [("extension", "/ask why")]
    assert model_requests(fake)[0].last_user_text() == "/ask why"


async def test_entries_names_labels_tools_and_thinking(fake: FakeLLM, project: Path, tmp_path: Path) -> None:
    code = """
OUT = {}
def register(pi):
    def run(args, ctx):
        OUT["entry"] = pi.append_entry("my-state", {"n": 1})
        pi.set_session_name("named by extension")
        OUT["name"] = pi.get_session_name()
        pi.set_active_tools(["read", "nope"])
        OUT["active"] = pi.get_active_tools()
        OUT["all"] = sorted(t["name"] for t in pi.get_all_tools())
        pi.set_thinking_level("high")
        OUT["thinking"] = pi.get_thinking_level()
        OUT["model_ok"] = pi.set_model("fake-openai/gpt-fake")
        OUT["model_missing"] = pi.set_model("nope/none")
        OUT["usage"] = ctx.get_context_usage()
    pi.register_command("run", handler=run)
"""
    fake.script([Reply([text("hi")]), Reply([text("again")])])
    async with open_session(_ext(tmp_path, "misc", code), project, model=MODEL) as session:
        await session.prompt("hello")
        await session.prompt("/run")
        out = dict(module(session, "misc").OUT)
        await session.prompt("next")
        entries = session_entries(session)

    assert out["name"] == "named by extension" and out["active"] == ["read"]
    assert {"read", "bash", "edit", "write"} <= set(out["all"])
    assert out["thinking"] == "off"  # clamped: the fake models do not reason
    assert out["model_ok"] is True and out["model_missing"] is False
    assert out["usage"].tokens > 0 and out["usage"]["contextWindow"] == 200_000
    assert any(e["type"] == "custom" and e["id"] == out["entry"] and e["data"] == {"n": 1} for e in entries)
    third = model_requests(fake)[-1]
    assert third.api == "openai-chat" and third.tool_names == ["read"]


async def test_exec_collects_output_and_kills_on_timeout(project: Path, tmp_path: Path) -> None:
    code = f"""
import sys
OUT = []
def register(pi):
    async def run(args, ctx):
        OUT.append(await pi.exec({sys.executable!r}, ["-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"]))
        OUT.append(await pi.exec({sys.executable!r}, ["-c", "import time; time.sleep(30)"], timeout=0.2))
    pi.register_command("run", handler=run)
"""
    async with open_session(_ext(tmp_path, "proc", code), project) as session:
        await session.prompt("/run")
        done, slow = module(session, "proc").OUT

    assert (done.stdout, done.stderr, done.code, done.killed) == ("out\n", "err\n", 3, False)
    assert slow.killed and slow["killed"]


async def test_the_event_bus_connects_extensions(project: Path, tmp_path: Path) -> None:
    sender = "def register(pi):\n    pi.register_command('ping', handler=lambda args, ctx: pi.events.emit('ping', args))\n"
    receiver = "GOT = []\ndef register(pi):\n    pi.events.on('ping', GOT.append)\n"
    async with open_session(
        _ext(tmp_path, "sender", sender) + _ext(tmp_path, "receiver", receiver), project
    ) as session:
        await session.prompt("/ping hello")
        got = module(session, "receiver").GOT

    assert got == ["hello"]


async def test_print_mode_context_has_no_ui_and_dialogs_decline(project: Path, tmp_path: Path) -> None:
    code = """
OUT = []
def register(pi):
    async def ask(args, ctx):
        OUT.append((ctx.has_ui, ctx.mode, await ctx.ui.confirm("Sure?", "really"), await ctx.ui.select("Pick", ["a"])))
        ctx.ui.notify("hello", "info")
    pi.register_command("ask", handler=ask)
"""
    async with open_session(["-p", *_ext(tmp_path, "dialogs", code)], project) as session:
        await session.prompt("/ask")
        out = module(session, "dialogs").OUT

    assert out == [(False, "print", False, None)]


async def test_an_attached_ui_answers_dialogs(project: Path, tmp_path: Path) -> None:
    code = """
OUT = []
def register(pi):
    async def ask(args, ctx):
        ctx.ui.set_status("dialogs", "asking")  # the bridge has no status line: a no-op
        OUT.append((ctx.has_ui, await ctx.ui.confirm("Delete?", "all files")))
    pi.register_command("ask", handler=ask)
"""

    class Bridge:
        def __init__(self) -> None:
            self.asked: list[str] = []

        async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
            self.asked.append(f"{title} {message}")
            return True

    bridge = Bridge()
    async with open_session(_ext(tmp_path, "dialogs", code), project) as session:
        session.attach_ui(bridge, "tui")
        await session.prompt("/ask")
        out = module(session, "dialogs").OUT

    assert out == [(True, True)]
    assert bridge.asked == ["Delete? all files"]


async def test_a_panel_is_sent_with_each_request(fake: FakeLLM, project: Path, tmp_path: Path) -> None:
    code = """
TODO = ["write tests"]
def register(pi):
    pi.register_panel("Todo", lambda: "\\n".join(TODO), placement="tail", refresh_on=["todo_changed"])
    def add(args, ctx):
        TODO.append(args)
        pi.events.emit("todo_changed")
    pi.register_command("todo", handler=add)
"""
    fake.script([Reply([text("a")]), Reply([text("b")])])
    async with open_session(_ext(tmp_path, "todo", code), project, model=MODEL) as session:
        await session.prompt("one")
        await session.prompt("/todo ship it")
        await session.prompt("two")

    first, second = model_requests(fake)
    assert "write tests" in str(first.body["messages"]) and "ship it" not in str(first.body["messages"])
    assert "ship it" in str(second.body["messages"])


async def test_command_context_session_actions(fake: FakeLLM, project: Path, tmp_path: Path) -> None:
    code = """
OUT = []
def register(pi):
    async def fresh(args, ctx):
        await ctx.wait_for_idle()
        OUT.append(await ctx.new_session())
    pi.register_command("fresh", handler=fresh)
"""
    fake.script([Reply([text("a")])])
    async with open_session(_ext(tmp_path, "actions", code), project, model=MODEL) as session:
        await session.prompt("hello")
        before = session.session_manager.id
        handler_module = module(session, "actions")
        await session.prompt("/fresh")
        after = session.session_manager.id
        reloaded = module(session, "actions")

    # the command's instance finishes its handler; the new session has the extension loaded afresh
    assert handler_module.OUT == [{"cancelled": False}]
    assert reloaded is not handler_module and reloaded.OUT == []
    assert after != before


def test_compact_without_a_compaction_runtime_says_so() -> None:
    session = SimpleNamespace(cwd=Path("."))
    runner = SimpleNamespace(session=session)
    ctx = ExtensionContext(runner, Extension(ExtensionSource(Path("x.py"), "cli")))  # type: ignore[arg-type]

    with pytest.raises(FeatureUnavailableError, match="Compaction is not available"):
        asyncio.run(ctx.compact())
