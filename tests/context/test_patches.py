from __future__ import annotations

import pytest

from pi_tui.ai.types import AssistantMessage, TextContent, ToolDefinition, UserMessage
from pi_tui.context.envelope import ContextEnvelope, SystemPart
from pi_tui.context.hooks import ContextHookError, run_context_hooks
from pi_tui.context.patches import PatchError, apply_ops, validate_ops


def _env() -> ContextEnvelope:
    env = ContextEnvelope(
        system_parts=(
            SystemPart("base", "You are helpful."),
            SystemPart("environment", "\nCurrent date: 2026-11-22"),
        ),
        tools=(ToolDefinition(name="read"), ToolDefinition(name="bash")),
    )
    env = env.with_cached_appended(UserMessage(content="hi", timestamp=1), "e1")
    return env.with_cached_appended(
        AssistantMessage(content=[TextContent(text="hello")], timestamp=2), "e2"
    ).with_cached_appended(UserMessage(content="next", timestamp=3), "e3")


def test_cached_op_without_reason_is_refused_naming_the_extension_and_op() -> None:
    ops = [{"op": "system_part_set", "scope": "cached", "partName": "policy", "text": "x"}]
    with pytest.raises(PatchError) as err:
        validate_ops(ops, phase="turn_end", source="policy-ext")
    assert "policy-ext" in str(err.value) and "system_part_set" in str(err.value)
    assert "invalidateCacheReason" in str(err.value)


def test_persistent_phases_refuse_uncached_ops() -> None:
    ops = [{"op": "messages_uncached_append", "scope": "uncached", "messages": []}]
    with pytest.raises(PatchError, match="before_request"):
        validate_ops(ops, phase="before_request", source="x")
    assert validate_ops(ops, phase="ephemeral", source="x") == ops


def test_compaction_apply_is_reserved_for_the_builtin() -> None:
    ops = [{"op": "compaction_apply", "scope": "cached", "summary": "s", "invalidateCacheReason": "c"}]
    with pytest.raises(PatchError, match="reserved"):
        validate_ops(ops, phase="turn_end", source="x")
    validate_ops(ops, phase="builtin", source="compaction")


def test_unknown_op_and_wrong_scope_are_refused() -> None:
    with pytest.raises(PatchError, match="unknown op"):
        validate_ops([{"op": "nope", "scope": "cached"}], phase="ephemeral", source="x")
    with pytest.raises(PatchError, match="scope"):
        validate_ops(
            [{"op": "tools_remove", "scope": "uncached", "names": ["bash"]}], phase="ephemeral", source="x"
        )


def test_apply_is_pure_and_each_op_does_what_it_says() -> None:
    env = _env()
    out = apply_ops(
        env,
        [
            {"op": "system_part_set", "scope": "cached", "partName": "policy", "text": "\nNo secrets."},
            {"op": "system_part_set", "scope": "cached", "partName": "base", "text": "You are terse."},
            {"op": "tools_remove", "scope": "cached", "names": ["bash"]},
            {"op": "options_set", "scope": "cached", "options": {"temperature": 0.2}},
            {
                "op": "messages_uncached_append",
                "scope": "uncached",
                "messages": [{"role": "user", "content": "eph"}],
            },
        ],
    )
    assert env.system_compiled == "You are helpful.\nCurrent date: 2026-11-22"
    assert out.system_compiled == "You are terse.\nCurrent date: 2026-11-22\nNo secrets."
    assert [t.name for t in out.tools] == ["read"]
    assert out.options == {"temperature": 0.2}
    assert [m.content for m in out.uncached] == ["eph"]
    assert out.messages[-1].content == "eph" and len(out.cached) == 3


def test_compaction_apply_keeps_from_first_kept_entry() -> None:
    out = apply_ops(
        _env(), [{"op": "compaction_apply", "summary": "S", "firstKeptEntryId": "e3", "tokensBefore": 10}]
    )
    assert [m.role for m in out.cached] == ["compactionSummary", "user"]
    assert out.cached[0].summary == "S" and out.cached_origins == (None, "e3")


def test_messages_cached_replace_keeps_origins_of_unchanged_positions() -> None:
    env = _env()
    kept = [m.to_json_dict() for m in env.cached[:2]]
    out = apply_ops(
        env, [{"op": "messages_cached_replace", "messages": [*kept, {"role": "user", "content": "m"}]}]
    )
    assert out.cached_origins == ("e1", "e2", None)


async def test_pi_style_messages_result_applies_only_at_ephemeral() -> None:
    calls: list[str] = []

    def pi_style(event):  # ignores reason, as seed 002 handlers do
        calls.append(event.reason)
        return {"messages": [*event.messages, UserMessage(content="[injected]", timestamp=9)]}

    env = _env()
    for phase in ("before_request", "turn_end"):
        out = await run_context_hooks(phase, env, [("pi-ext", pi_style)])
        assert out.envelope == env and out.persisted == []
    out = await run_context_hooks("ephemeral", env, [("pi-ext", pi_style)])
    assert out.envelope.cached == env.cached  # appended content does not disturb the cached region
    assert [m.content for m in out.envelope.uncached] == ["[injected]"]
    assert calls == ["before_request", "turn_end", "ephemeral"]


async def test_handlers_chain_in_order_and_persistent_results_are_reported() -> None:
    persisted = []

    async def first(event, ctx):
        if event.reason != "turn_end":
            return None
        return {
            "transformerName": "policy",
            "patch": [
                {
                    "op": "system_part_set",
                    "scope": "cached",
                    "partName": "p",
                    "text": "A",
                    "invalidateCacheReason": "r",
                }
            ],
        }

    def second(event, ctx):
        assert event.state.envelope.part("p").text == "A"
        return None

    out = await run_context_hooks(
        "turn_end", _env(), [("a", first), ("b", second)], on_persist=lambda rec, env: persisted.append(rec)
    )
    assert out.envelope.part("p").text == "A"
    assert persisted == [{"transformerName": "policy", "patch": out.persisted[0]["patch"]}]


async def test_a_raising_hook_fails_with_its_extension_named() -> None:
    def broken(event):
        raise ValueError("boom")

    with pytest.raises(ContextHookError, match="'broken-ext'.*boom"):
        await run_context_hooks("ephemeral", _env(), [("broken-ext", broken)])
