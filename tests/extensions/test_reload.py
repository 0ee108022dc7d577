from __future__ import annotations

import asyncio
from pathlib import Path

from pi_tui.runtime.agent_session import AgentSession
from pi_tui.testing import FakeLLM, Reply, text

from .helpers import MODEL, Events, model_requests, module, open_session, user_texts, write_extension

VERSIONED = """
STATE = {{"count": 0, "events": []}}

def register(pi):
    @pi.on("session_start")
    def restore(event, ctx):
        STATE["events"].append(("session_start", event.reason))
        for entry in ctx.session_manager.get_branch():
            if entry.type == "custom" and entry.custom_type == "counter":
                STATE["count"] = entry.data

    pi.on("session_shutdown", lambda event: STATE["events"].append(("session_shutdown", event.reason)))
    pi.on("resources_discover", lambda event: STATE["events"].append(("resources_discover", event.reason)))

    @pi.on("input")
    def tag(event):
        STATE["count"] += 1
        pi.append_entry("counter", STATE["count"])
        return {{"action": "transform", "text": "{version}: " + event.text}}

    pi.register_command("{version}", handler=lambda args, ctx: None)
"""


async def _prompt_across_an_edit(session: AgentSession, path: Path) -> None:
    """Prompt "hello", edit the watched extension at ``path`` to v2 and wait for the watcher to reload
    it, then prompt "again" (v1 tags the first prompt, v2 the second)."""
    await session.prompt("hello")
    assert session.extensions is not None
    reloaded = asyncio.ensure_future(session.extensions.wait_for_reload())
    path.write_text(VERSIONED.format(version="v2"))
    await asyncio.wait_for(reloaded, timeout=20)
    await session.prompt("again")


async def test_reload_tears_down_reimports_and_restores_state_from_entries(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    path = write_extension(tmp_path, "versioned", VERSIONED.format(version="v1"))
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session(["-e", str(path)], project, model=MODEL) as session:
        await session.prompt("hello")
        old = module(session, "versioned")
        path.write_text(VERSIONED.format(version="v2"))
        await session.reload()
        new = module(session, "versioned")
        commands = sorted(session.extensions.registry.commands)
        await session.prompt("again")

    assert new is not old
    assert old.STATE["events"] == [
        ("session_start", "startup"),
        ("resources_discover", "startup"),
        ("session_shutdown", "reload"),
    ]
    assert new.STATE["events"] == [
        ("session_start", "reload"),
        ("resources_discover", "reload"),
        ("session_shutdown", "quit"),
    ]
    assert new.STATE["count"] == 2  # restored from the session's entries, then counted on
    assert commands == ["v2"]
    second = model_requests(fake)[1]
    assert user_texts(second) == ["v1: hello", "v2: again"]


async def test_editing_a_loaded_extension_changes_the_next_prompt_without_a_restart(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    path = write_extension(tmp_path, "versioned", VERSIONED.format(version="v1"))
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session(["-e", str(path)], project, model=MODEL) as session:
        await session.start(watch=True)
        await session.extensions.wait_watching()
        await _prompt_across_an_edit(session, path)
        state = module(session, "versioned").STATE

    _, second = model_requests(fake)
    assert user_texts(second) == ["v1: hello", "v2: again"]  # same session, history intact
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user"]
    assert state["count"] == 2


async def test_a_reload_that_breaks_an_extension_reports_it_and_keeps_the_session(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    path = write_extension(tmp_path, "versioned", VERSIONED.format(version="v1"))
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session(["-e", str(path)], project, model=MODEL) as session:
        events = Events(session)
        await session.prompt("hello")
        path.write_text("def register(pi):\n    raise RuntimeError('half-written edit')\n")
        await session.reload()
        await session.extensions.drain()
        loaded = [e.name for e in session.extensions.extensions]
        await session.prompt("again")

    assert loaded == []
    (error,) = events.errors()
    assert error["event"] == "load" and "half-written edit" in error["error"]
    assert user_texts(model_requests(fake)[1]) == ["v1: hello", "again"]


async def test_an_extension_added_after_start_up_is_hot_reloaded_after_reload(
    fake: FakeLLM, project: Path, agent_dir: Path
) -> None:
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session([], project, model=MODEL) as session:
        await session.start(watch=True)
        assert session.extensions is None  # nothing to load at start-up
        path = write_extension(agent_dir / "extensions", "versioned", VERSIONED.format(version="v1"))
        await session.reload()  # /reload finds it
        await session.extensions.wait_watching()
        await _prompt_across_an_edit(session, path)

    _, second = model_requests(fake)
    assert user_texts(second) == ["v1: hello", "v2: again"]


async def test_a_watcher_left_with_nothing_to_watch_watches_what_a_later_reload_loads(
    fake: FakeLLM, project: Path, agent_dir: Path
) -> None:
    folder = agent_dir / "extensions"
    first = write_extension(folder, "first", "def register(pi):\n    pass\n")
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session([], project, model=MODEL) as session:
        await session.start(watch=True)
        await session.extensions.wait_watching()
        first.unlink()
        await session.reload()  # nothing left to watch: the watcher ends
        await session.extensions.wait_watching()
        path = write_extension(folder, "versioned", VERSIONED.format(version="v1"))
        await session.reload()
        assert [e.name for e in session.extensions.extensions] == ["versioned"]
        await session.extensions.wait_watching()
        await _prompt_across_an_edit(session, path)

    _, second = model_requests(fake)
    assert user_texts(second) == ["v1: hello", "v2: again"]


LIFECYCLE = """
EVENTS = []

def register(pi):
    pi.on("session_start", lambda event: EVENTS.append(
        ("session_start", event.reason, event.get("previous_session_file"))))
    pi.on("session_shutdown", lambda event: EVENTS.append(
        ("session_shutdown", event.reason, event.get("target_session_file"))))
    pi.on("resources_discover", lambda event: EVENTS.append(("resources_discover", event.reason)))
"""


async def test_switching_sessions_in_the_same_folder_replaces_the_extensions_as_pi_does(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    """pi 0.87.1 builds a new runtime for /resume, /new and /fork alike, whatever the folder: the loaded
    extensions get ``session_shutdown`` (the reason, the file moved to) and are torn down, fresh ones are
    imported and get ``session_start`` (the reason, the file left) and ``resources_discover``."""
    from pi_tui.session import SessionManager

    path = write_extension(tmp_path, "lifecycle", LIFECYCLE)
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session(["-e", str(path)], project, model=MODEL) as session:
        await session.prompt("hello")
        first = session.session_manager.path
        startup = module(session, "lifecycle")
        await session.new_session()
        await session.prompt("again")
        second = session.session_manager.path
        after_new = module(session, "lifecycle")
        await session.switch_session(SessionManager.open(first, session_dir=first.parent))
        after_resume = module(session, "lifecycle")
        answer = session.session_manager.get_branch()[-1].id
        await session.fork(answer)
        forked = session.session_manager.path
        after_fork = module(session, "lifecycle")

    assert len({id(startup), id(after_new), id(after_resume), id(after_fork)}) == 4  # imported afresh
    assert startup.EVENTS[-1] == ("session_shutdown", "new", str(second))  # the file it will write
    assert after_new.EVENTS == [
        ("session_start", "new", str(first)),
        ("resources_discover", "startup"),
        ("session_shutdown", "resume", str(first)),
    ]
    assert after_resume.EVENTS == [
        ("session_start", "resume", str(second)),
        ("resources_discover", "startup"),
        ("session_shutdown", "fork", str(forked)),
    ]
    assert after_fork.EVENTS[:2] == [("session_start", "fork", str(first)), ("resources_discover", "startup")]
    assert after_fork.EVENTS[2:] == [("session_shutdown", "quit", None)]
