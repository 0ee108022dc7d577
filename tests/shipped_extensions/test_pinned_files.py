from __future__ import annotations

import asyncio
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import (
    MODEL,
    ScriptedUI,
    ext,
    model_requests,
    module,
    open_session,
    panel_index,
    panel_text,
    prompt_index,
    write_settings,
)

LISTENER = """
import asyncio

SEEN = {"pinned_files:changed": asyncio.Event(), "pinned_files:watching": asyncio.Event()}


def register(pi):
    for name, event in SEEN.items():
        pi.events.on(name, lambda data, event=event: event.set())
"""


def listener(tmp_path: Path) -> list[str]:
    path = tmp_path / "listener.py"
    path.write_text(LISTENER)
    return ["-e", str(path)]


async def test_pin_command_shows_the_file_in_the_tail_panel(fake: FakeLLM, project: Path) -> None:
    (project / "notes.md").write_text("alpha\nbeta\n")
    fake.script([Reply([text("ok")])])
    async with open_session(ext("pinned_files"), project, model=MODEL) as session:
        ui = ScriptedUI()
        session.attach_ui(ui, "tui")
        await session.prompt("/pin notes.md")
        await session.prompt("/pin missing.md")
        await session.prompt("look")

    request = model_requests(fake)[0]
    assert panel_text(request, "Pinned files") == "File: notes.md (2 lines)\nalpha\nbeta"
    assert panel_index(request, "Pinned files") > prompt_index(request, "look")
    assert ui.notices == [("Pinned notes.md", "info"), ("missing.md does not exist", "error")]


async def test_a_change_on_disk_is_reported_by_the_watcher_and_shown_next_request(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    notes = project / "notes.md"
    notes.write_text("version 1\n")
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session([*ext("pinned_files"), *listener(tmp_path)], project, model=MODEL) as session:
        await session.start()
        seen = module(session, "listener").SEEN
        await session.prompt("/pin notes.md")
        await asyncio.wait_for(seen["pinned_files:watching"].wait(), 10)
        await session.prompt("first")
        seen["pinned_files:changed"].clear()
        notes.write_text("version 2\n")
        await asyncio.wait_for(seen["pinned_files:changed"].wait(), 10)
        await session.prompt("second")

    first, second = (panel_text(r, "Pinned files") for r in model_requests(fake))
    assert first == "File: notes.md (1 line)\nversion 1"
    assert second == "File: notes.md (1 line)\nversion 2"


async def test_the_model_pins_with_the_tool_and_sees_edits_and_deletion(fake: FakeLLM, project: Path) -> None:
    (project / "a.txt").write_text("one\n")
    fake.script(
        [
            Reply([tool_call("pin", {"action": "pin", "path": "a.txt"})]),
            Reply([tool_call("edit", {"path": "a.txt", "edits": [{"oldText": "one", "newText": "two"}]})]),
            Reply([tool_call("bash", {"command": "rm a.txt"})]),
            Reply([text("done")]),
        ]
    )
    async with open_session(ext("pinned_files"), project, model=MODEL) as session:
        await session.prompt("pin it")

    panels = [panel_text(r, "Pinned files") for r in model_requests(fake)]
    assert panels == [
        None,
        "File: a.txt (1 line)\none",
        "File: a.txt (1 line)\ntwo",
        "File: a.txt\n(file deleted)",
    ]


async def test_large_files_are_capped_with_a_note(fake: FakeLLM, project: Path, agent_dir: Path) -> None:
    write_settings(agent_dir, {"pinnedFiles": {"maxBytes": 100}})
    (project / "big.txt").write_text("".join(f"line {i:03d}\n" for i in range(50)))  # 450 bytes
    fake.script([Reply([text("ok")])])
    async with open_session(ext("pinned_files"), project, model=MODEL) as session:
        await session.prompt("/pin big.txt")
        await session.prompt("look")

    panel = panel_text(model_requests(fake)[0], "Pinned files")
    assert panel is not None
    lines = panel.splitlines()
    assert lines[0] == "File: big.txt (50 lines)"
    assert lines[1:-1] == [f"line {i:03d}" for i in range(11)]
    assert lines[-1] == (
        "[truncated: showing the first 11 of 50 lines (98 of 450 bytes); "
        "use the read tool with an offset for the rest]"
    )


async def test_pins_survive_a_restart_and_unpin_removes_the_panel(fake: FakeLLM, project: Path) -> None:
    (project / "a.txt").write_text("A\n")
    (project / "b.txt").write_text("B\n")
    fake.script([Reply([text("one")]), Reply([text("two")]), Reply([text("three")])])
    async with open_session(ext("pinned_files"), project, model=MODEL) as session:
        await session.prompt("/pin a.txt")
        await session.prompt("/pin ./b.txt")
        await session.prompt("first")

    async with open_session(["-c", *ext("pinned_files")], project, model=MODEL) as resumed:
        await resumed.prompt("second")
        await resumed.prompt("/unpin all")
        await resumed.prompt("third")

    first, second, third = (panel_text(r, "Pinned files") for r in model_requests(fake))
    assert first == second == "File: a.txt (1 line)\nA\n\nFile: b.txt (1 line)\nB"
    assert third is None


async def test_binary_files_are_described_not_shown(fake: FakeLLM, project: Path) -> None:
    (project / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    fake.script([Reply([text("ok")])])
    async with open_session(ext("pinned_files"), project, model=MODEL) as session:
        await session.prompt("/pin blob.bin")
        await session.prompt("look")

    assert (
        panel_text(model_requests(fake)[0], "Pinned files")
        == "File: blob.bin\n(binary file, 30 bytes, not shown)"
    )
