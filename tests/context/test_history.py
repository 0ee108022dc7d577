from __future__ import annotations

from pi_tui.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_tui.context.engine import replay_entries
from pi_tui.context.envelope import ContextEnvelope
from pi_tui.context.history import DetachThresholds, apply_history_detach, find_detach_point, is_history_pair
from pi_tui.context.patches import apply_ops
from pi_tui.session import SessionManager

SMALL = DetachThresholds(chunk_min_messages=4, chunk_min_tokens=10, keep_min_messages=4, keep_min_tokens=10)


def _turns(env: ContextEnvelope, count: int, start: int = 0) -> ContextEnvelope:
    for n in range(start, start + count):
        call = ToolCall(id=f"t{n}", name="read", arguments={"path": f"f{n}.py"})
        env = env.with_cached_appended(UserMessage(content=f"question {n} " + "x" * 40, timestamp=n), f"u{n}")
        env = env.with_cached_appended(
            AssistantMessage(content=[call], stop_reason="toolUse", timestamp=n), f"a{n}"
        )
        env = env.with_cached_appended(
            ToolResultMessage(
                tool_call_id=f"t{n}", tool_name="read", content=[TextContent(text="y" * 80)], timestamp=n
            ),
            f"r{n}",
        )
    return env


def test_no_detach_below_the_thresholds() -> None:
    assert find_detach_point(_turns(ContextEnvelope(), 2), SMALL) is None
    assert find_detach_point(_turns(ContextEnvelope(), 40)) is None  # the default thresholds want more


def test_detach_cuts_at_a_turn_boundary_and_keeps_pairs_together() -> None:
    env = _turns(ContextEnvelope(), 6)
    last = find_detach_point(env, SMALL)
    assert last == "r1"  # 6 messages (two whole turns) are the first chunk meeting the minimums
    out = apply_history_detach(env, {"lastEntryId": last})
    assert [is_history_pair(m) for m in out.cached[:2]] == [True, True]
    assert out.cached[2].content.startswith("question 2")
    assert (
        "question 0" in out.cached[1].content[0].text
        and "[Tool result]: yyy" in out.cached[1].content[0].text
    )
    # a second detachment freezes the next chunk after the first panel, which stays unchanged
    again = apply_history_detach(out, {"lastEntryId": "r3"})
    assert again.cached[:2] == out.cached[:2]
    assert again.cached[3].tool_call_id == "history_2"


def test_history_detach_is_reserved_and_replays_from_the_session(tmp_path) -> None:
    manager = SessionManager.in_memory(tmp_path)
    for n in range(3):
        manager.append_message(UserMessage(content=f"q{n}", timestamp=n))
        manager.append_message(AssistantMessage(content=[TextContent(text=f"a{n}")], timestamp=n))
    first_answer = manager.get_entries()[1].id
    manager.append_context_transform(
        "history",
        [
            {
                "op": "history_detach",
                "scope": "cached",
                "lastEntryId": first_answer,
                "invalidateCacheReason": "r",
            }
        ],
    )
    env = replay_entries(ContextEnvelope(), manager.get_branch())
    assert [getattr(m, "role", None) for m in env.cached] == [
        "assistant",
        "toolResult",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert "[User]: q0" in env.cached[1].content[0].text
    assert apply_ops(ContextEnvelope(), []) == ContextEnvelope()
