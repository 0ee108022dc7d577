from __future__ import annotations

from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import (
    MODEL,
    ext,
    model_requests,
    open_session,
    panel_index,
    panel_text,
    prompt_index,
    session_entries,
    write_settings,
)

PLAN = {
    "action": "set",
    "items": [{"text": "write the parser"}, {"text": "test it", "status": "in_progress"}],
}


async def test_todo_tool_changes_show_in_the_tail_panel_of_the_next_request(
    fake: FakeLLM, project: Path
) -> None:
    fake.script(
        [
            Reply([tool_call("todo", PLAN)]),
            Reply([tool_call("todo", {"action": "update", "id": 1, "status": "done"})]),
            Reply([text("ok")]),
        ]
    )
    async with open_session(ext("todo"), project, model=MODEL) as session:
        await session.prompt("plan the work")

    first, second, third = model_requests(fake)
    assert panel_text(first, "Todo") is None  # an empty list sends no panel
    assert panel_text(second, "Todo") == "- [ ] #1 write the parser\n- [~] #2 test it"
    assert panel_text(third, "Todo") == "- [x] #1 write the parser\n- [~] #2 test it"
    assert panel_index(third, "Todo") > prompt_index(third, "plan the work")  # tail: after the conversation
    assert "todo" in third.tool_names
    result = third.tool_results()[-3]  # the update's own result, before the panel pair
    assert result.content.startswith("Updated #1.\n- [x] #1 write the parser")


async def test_a_bad_call_is_an_error_and_leaves_the_list_as_it_was(fake: FakeLLM, project: Path) -> None:
    fake.script(
        [
            Reply([tool_call("todo", PLAN)]),
            Reply([tool_call("todo", {"action": "update", "id": 7, "status": "done"})]),
            Reply([tool_call("todo", {"action": "add", "text": "   "})]),
            Reply([text("ok")]),
        ]
    )
    async with open_session(ext("todo"), project, model=MODEL) as session:
        await session.prompt("go")

    requests = model_requests(fake)
    missing = [r for r in requests[2].tool_results() if not r.tool_call_id.startswith("panel_")][-1]
    blank = [r for r in requests[3].tool_results() if not r.tool_call_id.startswith("panel_")][-1]
    assert missing.is_error and missing.content == "No todo item #7 (items: #1, #2)"
    assert blank.is_error and blank.content == "An item needs a non-empty text"
    assert panel_text(requests[3], "Todo") == "- [ ] #1 write the parser\n- [~] #2 test it"


async def test_the_list_is_rebuilt_from_the_session_in_a_new_process_and_after_reload(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([tool_call("todo", PLAN)]), Reply([text("planned")]), Reply([text("again")])])
    async with open_session(ext("todo"), project, model=MODEL) as session:
        await session.prompt("plan")
        await session.reload()
        await session.prompt("after reload")
        entries = session_entries(session)

    fake.script([Reply([text("resumed")])])
    async with open_session(["-c", *ext("todo")], project, model=MODEL) as resumed:
        await resumed.prompt("resume")

    stored = [e["data"] for e in entries if e["type"] == "custom" and e["customType"] == "todo"]
    assert stored == [
        {
            "items": [
                {"id": 1, "text": "write the parser", "status": "pending"},
                {"id": 2, "text": "test it", "status": "in_progress"},
            ],
            "nextId": 3,
        }
    ]
    after_reload, after_resume = model_requests(fake)[2], model_requests(fake)[3]
    assert panel_text(after_reload, "Todo") == "- [ ] #1 write the parser\n- [~] #2 test it"
    assert panel_text(after_resume, "Todo") == "- [ ] #1 write the parser\n- [~] #2 test it"


async def test_navigating_the_tree_restores_the_list_of_the_active_branch(
    fake: FakeLLM, project: Path
) -> None:
    fake.script(
        [
            Reply([tool_call("todo", {"action": "add", "text": "first"})]),
            Reply([text("one")]),
            Reply([tool_call("todo", {"action": "add", "text": "second"})]),
            Reply([text("two")]),
            Reply([text("back")]),
        ]
    )
    async with open_session(ext("todo"), project, model=MODEL) as session:
        await session.prompt("add first")
        branch_point = session.session_manager.get_leaf_id()
        await session.prompt("add second")
        await session.navigate(branch_point)
        await session.prompt("where are we")

    last = model_requests(fake)[-1]
    assert panel_text(last, "Todo") == "- [ ] #1 first"


async def test_placement_prefix_from_the_flag_puts_the_panel_before_the_conversation(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([tool_call("todo", PLAN)]), Reply([text("ok")])])
    async with open_session([*ext("todo"), "--todo-placement", "prefix"], project, model=MODEL) as session:
        await session.prompt("plan the work")

    second = model_requests(fake)[1]
    assert panel_index(second, "Todo") < prompt_index(second, "plan the work")


async def test_placement_prefix_from_settings(fake: FakeLLM, project: Path, agent_dir: Path) -> None:
    write_settings(agent_dir, {"todo": {"placement": "prefix"}})
    fake.script([Reply([tool_call("todo", PLAN)]), Reply([text("ok")])])
    async with open_session(ext("todo"), project, model=MODEL) as session:
        await session.prompt("plan the work")

    second = model_requests(fake)[1]
    assert panel_index(second, "Todo") < prompt_index(second, "plan the work")
