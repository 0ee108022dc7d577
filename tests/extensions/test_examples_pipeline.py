from __future__ import annotations

from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import (
    MODEL,
    example,
    install,
    model_requests,
    module,
    open_session,
    session_entries,
    user_texts,
)


def _e(*names: str) -> list[str]:
    return [arg for name in names for arg in ("-e", example(name))]


async def test_input_transforms_chain_and_handled_swallows_the_prompt(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session(_e("input_actions", "input_sources"), project, model=MODEL) as session:
        await session.prompt("shout hello")
        await session.prompt("ignore me")
        await session.prompt("plain")
        seen = module(session, "input_sources").SEEN

    requests = model_requests(fake)
    assert [r.last_user_text() for r in requests] == ["HELLO", "plain"]
    # the second handler saw the first one's output; "ignore me" stopped at the first handler
    assert seen == [("interactive", "HELLO"), ("interactive", "plain")]


async def test_before_agent_start_messages_accumulate_and_system_prompts_chain(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([text("done")])])
    async with open_session(_e("agent_start_context", "agent_start_second"), project, model=MODEL) as session:
        base = session.system_prompt()
        await session.prompt("hello")
        seen = module(session, "agent_start_second").SEEN_PROMPTS
        envelope = session.current_envelope()
        entries = session_entries(session)

    (request,) = model_requests(fake)
    assert request.system == base + "\nExtra instructions\nNew instructions"
    assert seen == [base + "\nExtra instructions"]
    assert user_texts(request) == ["hello", "Context the LLM should see", "Text the LLM sees"]
    # the override extends the base prompt: one extra system part, the cached base parts unchanged
    assert envelope.part("before_agent_start").text == "\nExtra instructions\nNew instructions"
    custom = [e for e in entries if e["type"] == "custom_message"]
    assert [(c["customType"], c["display"], c.get("details")) for c in custom] == [
        ("my-context", False, None),
        ("my-extension", True, {"any": "data"}),
    ]


async def test_the_base_system_prompt_returns_when_no_extension_changes_it(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    once = tmp_path / "once.py"
    once.write_text(
        "CALLS = []\n"
        "def register(pi):\n"
        "    @pi.on('before_agent_start')\n"
        "    def first_only(event):\n"
        "        CALLS.append(event.prompt)\n"
        "        if len(CALLS) == 1:\n"
        "            return {'systemPrompt': 'You are a pirate.'}\n"
    )
    fake.script([Reply([text("arr")]), Reply([text("plain")])])
    async with open_session(["-e", str(once)], project, model=MODEL) as session:
        base = session.system_prompt()
        await session.prompt("first")
        replaced = session.current_envelope().system_parts
        await session.prompt("second")

    first, second = model_requests(fake)
    assert first.system == "You are a pirate."
    assert [(p.name, p.text) for p in replaced] == [("system", "You are a pirate.")]
    assert second.system == base


async def test_context_handlers_filter_and_inject_on_every_request(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([text("hi")]), Reply([text("ok")])])
    async with open_session(_e("context_filter"), project, model=MODEL) as session:
        await session.prompt("hello")
        await session.prompt("IRRELEVANT aside")
        entries = session_entries(session)

    first, second = model_requests(fake)
    assert user_texts(first) == ["hello", "[synthetic note]"]
    assert user_texts(second) == ["hello", "[synthetic note]"]
    # request-only: the session keeps what was said
    users = [e["message"]["content"] for e in entries if e.get("message", {}).get("role") == "user"]
    assert users == [[{"type": "text", "text": "hello"}], [{"type": "text", "text": "IRRELEVANT aside"}]]


async def test_agent_end_gets_only_the_runs_new_messages(fake: FakeLLM, project: Path) -> None:
    (project / "notes.txt").write_text("a note")
    fake.script(
        [Reply([tool_call("read", {"path": "notes.txt"})]), Reply([text("read it")]), Reply([text("bye")])]
    )
    async with open_session(_e("agent_lifecycle"), project, model=MODEL) as session:
        await session.prompt("read notes")
        await session.prompt("thanks")
        runs = module(session, "agent_lifecycle").RUNS

    assert runs[0]["started"] and runs[1]["started"]
    assert runs[0]["roles"] == ["user", "assistant", "toolResult", "assistant"]
    assert runs[1]["roles"] == ["user", "assistant"]
    assert runs[1]["branch_length"] > runs[0]["branch_length"]


async def test_turn_and_message_events_follow_the_loop(fake: FakeLLM, project: Path) -> None:
    (project / "notes.txt").write_text("a note")
    fake.script([Reply([tool_call("read", {"path": "notes.txt"})]), Reply([text("done")])])
    async with open_session(_e("turn_tracker"), project, model=MODEL) as session:
        await session.prompt("read notes")
        log = list(module(session, "turn_tracker").LOG)

    updates = [entry for entry in log if entry[0] == "message_update"]
    assert updates and all(role == "assistant" for _, role, _ in updates)
    assert [entry for entry in log if entry[0] != "message_update"] == [
        ("message_start", "user"),
        ("message_end", "user"),
        ("turn_start", 0, True),
        ("message_start", "assistant"),
        ("message_end", "assistant"),
        ("message_start", "toolResult"),
        ("message_end", "toolResult"),
        ("turn_end", 0, "assistant", ["toolResult"]),
        ("turn_start", 1, True),
        ("message_start", "assistant"),
        ("message_end", "assistant"),
        ("turn_end", 1, "assistant", []),
    ]


async def test_an_example_installed_in_the_agent_dir_is_discovered(
    agent_dir: Path, fake: FakeLLM, project: Path
) -> None:
    install(agent_dir / "extensions", "input_actions")
    fake.script([Reply([text("ok")])])
    async with open_session([], project, model=MODEL) as session:
        await session.prompt("shout quietly")

    assert model_requests(fake)[0].last_user_text() == "QUIETLY"
