from __future__ import annotations

from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text

from .helpers import MODEL, example, model_requests, open_session, session_entries, user_texts

POLICY = "\n\n# Policy\n\nNever output secrets."


async def test_a_persistent_marker_is_added_before_every_request_and_replayed_on_resume(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([text("a")]), Reply([text("b")]), Reply([text("c")])])
    async with open_session(["-e", example("marker_before_request")], project, model=MODEL) as session:
        await session.prompt("one")
        await session.prompt("two")
        entries = session_entries(session)
    async with open_session(["-c"], project, model=MODEL) as resumed:  # the extension is not loaded now
        await resumed.prompt("three")

    first, second, third = model_requests(fake)
    assert user_texts(first) == ["one", "[marker]"]
    assert user_texts(second) == ["one", "[marker]", "two", "[marker]"]
    # replay applies the persisted patches without running any hook code
    assert user_texts(third) == ["one", "[marker]", "two", "[marker]", "three"]
    transforms = [e for e in entries if e["type"] == "context_transform"]
    assert [t["transformerName"] for t in transforms] == ["marker", "marker"]
    assert transforms[0]["patch"][0]["invalidateCacheReason"] == "add marker"


async def test_ephemeral_context_is_sent_last_and_never_persisted(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([text("a")]), Reply([text("b")])])
    async with open_session(["-e", example("ephemeral_injection")], project, model=MODEL) as session:
        await session.prompt("one")
        await session.prompt("two")
        entries = session_entries(session)

    first, second = model_requests(fake)
    assert user_texts(first) == ["one", "[request-only]"]
    assert user_texts(second) == ["one", "two", "[request-only]"]
    assert "[request-only]" not in str(entries)
    # the request-only tail sits after the cache breakpoint, which ends the cached "two"
    blocks = [b for m in second.body["messages"] if m["role"] == "user" for b in m["content"]]
    marked = [b["text"] for b in blocks if "cache_control" in b]
    assert marked[-1] == "two"


async def test_a_turn_end_policy_part_is_persisted_and_sent_from_the_next_request(
    fake: FakeLLM, project: Path
) -> None:
    fake.script([Reply([text("a")]), Reply([text("b")])])
    async with open_session(["-e", example("turn_end_policy")], project, model=MODEL) as session:
        await session.prompt("one")
        await session.prompt("two")
        entries = session_entries(session)

    first, second = model_requests(fake)
    assert not first.system.endswith(POLICY)
    assert second.system.endswith(POLICY)
    # the seed's handler sets the part after every turn: one persisted transform per turn
    transforms = [e for e in entries if e["type"] == "context_transform"]
    assert [t["transformerName"] for t in transforms] == ["system-policy", "system-policy"]
    assert transforms[0]["patch"][0]["partName"] == "policy"
