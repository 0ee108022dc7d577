from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from pi_tui.runtime.agent_session import AgentSession
from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import run_cli

from .helpers import MODEL, Events, model_requests, module, open_session, open_startup, write_extension


def _ext(tmp_path: Path, name: str, code: str) -> list[str]:
    return ["-e", str(write_extension(tmp_path / "exts", name, code))]


@asynccontextmanager
async def _with_extension(
    tmp_path: Path, project: Path, name: str, code: str
) -> AsyncIterator[tuple[AgentSession, Events]]:
    """A session on the fake server's model with the one extension ``name`` (source ``code``), and the
    events it emits from then on."""
    async with open_session(_ext(tmp_path, name, code), project, model=MODEL) as session:
        yield session, Events(session)


async def test_a_raising_handler_is_reported_with_its_extension_and_the_app_goes_on(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = (
        "def register(pi):\n"
        "    pi.on('agent_start', lambda event: 1 / 0)\n"
        "    pi.on('input', lambda event: {}['missing'])\n"
    )
    fake.script([Reply([text("fine")])])
    async with _with_extension(tmp_path, project, "fragile", code) as (session, events):
        await session.prompt("hello")
        answer = session.last_assistant_message()

    assert answer is not None and answer.content[0].text == "fine"
    assert model_requests(fake)[0].last_user_text() == "hello"
    errors = sorted(events.errors(), key=lambda e: e["event"])
    assert [(e["extension"], e["event"]) for e in errors] == [
        ("fragile", "agent_start"),
        ("fragile", "input"),
    ]
    assert errors[0]["error"] == "ZeroDivisionError: division by zero"
    assert errors[0]["extensionPath"].endswith("fragile.py")


async def test_a_raising_context_handler_fails_only_that_request(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = (
        "CALLS = []\n"
        "def register(pi):\n"
        "    @pi.on('context')\n"
        "    def flaky(event):\n"
        "        CALLS.append(event.reason)\n"
        "        if len(CALLS) == 1:\n"
        "            raise RuntimeError('context broke')\n"
    )
    fake.script([Reply([text("second works")])])
    async with _with_extension(tmp_path, project, "flaky", code) as (session, events):
        await session.prompt("first")
        failed = session.last_assistant_message()
        await session.prompt("second")
        answered = session.last_assistant_message()

    assert failed is not None and failed.stop_reason == "error"
    assert "flaky" in (failed.error_message or "") and "context broke" in (failed.error_message or "")
    assert answered is not None and answered.content[0].text == "second works"
    assert len(model_requests(fake)) == 1
    assert [(e["extension"], e["event"]) for e in events.errors()] == [("flaky", "context")]


async def test_a_slow_informational_handler_does_not_hold_up_the_agent(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = (
        "import asyncio\n"
        "GATE = asyncio.Event()\n"
        "CALLS = []\n"
        "def register(pi):\n"
        "    @pi.on('message_start')\n"
        "    async def slow(event):\n"
        "        CALLS.append(event.message.role)\n"
        "        if len(CALLS) == 1:\n"
        "            await GATE.wait()\n"
    )
    fake.script([Reply([text("not blocked")])])
    async with _with_extension(tmp_path, project, "slow", code) as (session, events):
        session.extensions.informational_timeout = 0.05
        await session.prompt("hello")  # returns although the first handler is still waiting
        ext = module(session, "slow")
        before = list(ext.CALLS)
        ext.GATE.set()
        await session.extensions.drain()
        after = list(ext.CALLS)

    assert session.last_assistant_message().content[0].text == "not blocked"
    # the later events queued behind the slow one, in order, and ran once it finished
    assert before == ["user"]
    assert after == ["user", "assistant"]
    (error,) = events.errors()
    assert error["event"] == "message_start" and "still running" in error["error"]


async def test_a_raising_tool_call_handler_blocks_the_tool(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = "def register(pi):\n    pi.on('tool_call', lambda event: None if event.tool_name != 'bash' else 1 / 0)\n"
    fake.script([Reply([tool_call("bash", {"command": "touch ran.txt"})]), Reply([text("ok")])])
    async with _with_extension(tmp_path, project, "gate", code) as (session, events):
        await session.prompt("run")

    (result,) = model_requests(fake)[1].tool_results()
    assert result.is_error and 'extension "gate" failed' in result.content
    assert not (project / "ran.txt").exists()
    assert [(e["extension"], e["event"]) for e in events.errors()] == [("gate", "tool_call")]


async def test_a_raising_tool_result_handler_keeps_the_result(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = (
        "def register(pi):\n"
        "    pi.on('tool_result', lambda event: 1 / 0)\n"
        "    pi.on('tool_result', lambda event: {'details': {'seen': True}})\n"
    )
    (project / "a.txt").write_text("content")
    fake.script([Reply([tool_call("read", {"path": "a.txt"})]), Reply([text("ok")])])
    async with _with_extension(tmp_path, project, "post", code) as (session, events):
        await session.prompt("read")
        stored = [m for m in session.messages if m.role == "toolResult"][0]

    (result,) = model_requests(fake)[1].tool_results()
    assert (result.content, result.is_error) == ("content", False)
    assert stored.details == {"seen": True}  # the next handler still ran
    assert [e["event"] for e in events.errors()] == ["tool_result"]


async def test_the_message_hook_transforms_finalized_messages_and_a_failure_keeps_the_original(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = (
        "def register(pi):\n"
        "    @pi.on('message')\n"
        "    def redact(event):\n"
        "        m = event.message\n"
        "        if m.role == 'assistant':\n"
        "            for block in m.content:\n"
        "                if block.type == 'text':\n"
        "                    block.text = block.text.replace('hunter2', '*******')\n"
        "            return {'message': m}\n"
        "        if m.role == 'user' and m.content[0].text == 'break':\n"
        "            raise ValueError('cannot handle this one')\n"
    )
    fake.script([Reply([text("the password is hunter2")]), Reply([text("ok")])])
    async with _with_extension(tmp_path, project, "redactor", code) as (session, events):
        await session.prompt("tell me")
        shown = [e.message for e in events.of("message_end") if e.message.role == "assistant"]
        await session.prompt("break")

    assert shown[0].content[0].text == "the password is *******"
    second = model_requests(fake)[1]
    assistant = [m for m in second.messages if m["role"] == "assistant"][0]
    assert assistant["content"][0]["text"] == "the password is *******"  # history holds the transformed text
    assert second.last_user_text() == "break"
    assert [(e["extension"], e["event"]) for e in events.errors()] == [("redactor", "message")]


async def test_before_provider_request_replaces_the_payload_in_a_chain(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    code = (
        "def register(pi):\n"
        "    @pi.on('before_provider_request')\n"
        "    async def first(event):\n"
        "        return {**event.payload, 'metadata': {'user_id': 'ext-user'}}\n"
        "    @pi.on('before_provider_request')\n"
        "    def second(event):\n"
        "        return {**event.payload, 'max_tokens': 123}\n"
        "    @pi.on('before_provider_request')\n"
        "    async def awaits(event):\n"
        "        import asyncio\n"
        "        await asyncio.sleep(0)\n"
        "        return {'broken': True}\n"
    )
    fake.script([Reply([text("ok")])])
    async with _with_extension(tmp_path, project, "payload", code) as (session, events):
        await session.prompt("hi")
        await session.extensions.drain()

    body = model_requests(fake)[0].body
    assert body["metadata"] == {"user_id": "ext-user"} and body["max_tokens"] == 123
    assert "broken" not in body
    (error,) = events.errors()
    assert error["event"] == "before_provider_request" and "must not await" in error["error"]


async def test_a_failing_command_is_reported_and_sys_exit_in_register_does_not_end_the_app(
    project: Path, tmp_path: Path
) -> None:
    command = "def register(pi):\n    pi.register_command('boom', handler=lambda args, ctx: 1 / 0)\n"
    exiting = "import sys\ndef register(pi):\n    sys.exit(3)\n"
    argv = _ext(tmp_path, "cmd", command) + _ext(tmp_path, "exits", exiting)
    async with open_startup(argv, project) as startup:
        events = Events(startup.session)
        await startup.session.prompt("/boom now")
        names = [e.name for e in startup.session.extensions.extensions]

    assert names == ["cmd"]
    assert any("exits.py" in w and "SystemExit" in w for w in startup.warnings)
    assert [(e["extension"], e["event"]) for e in events.errors()] == [("cmd", "command /boom")]


def test_print_mode_shows_extension_errors_on_stderr_and_still_answers(project: Path, tmp_path: Path) -> None:
    path = write_extension(
        tmp_path, "noisy", "def register(pi):\n    pi.on('agent_end', lambda event: 1 / 0)\n"
    )
    run = run_cli(["--provider", "faux", "-e", str(path), "-p", "hello"], project)

    assert run.returncode == 0 and run.stdout.strip()
    assert 'Extension "noisy" failed in agent_end: ZeroDivisionError: division by zero' in run.stderr
