from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent.tool import AgentTool, text_result
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.runtime.cache_warmer import format_warming_status, format_warming_usage, warming_rows
from pi_tui.session.entries import UsageEntry
from pi_tui.testing import FakeLLM, RecordedRequest, Reply, text, tool_call

from .helpers import Events, open_session, write_settings

MODEL = "fake-anthropic/claude-fake"
# Prices high enough that a refresh of a small fake prompt saves more than $0.05 while a run lasts.
DEAR = {"input": 1000, "output": 1000, "cacheRead": 100, "cacheWrite": 1250}


class ManualClock:
    """The warmer's clock, moved by the test: timers fire only in `advance`."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.timers: list[_Timer] = []

    def now_ms(self) -> float:
        return self.now

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(self.now + delay_ms, callback)
        self.timers.append(timer)
        return timer

    def pending(self) -> list[_Timer]:
        return [t for t in self.timers if not t.cancelled and not t.fired]

    def advance(self, ms: float) -> None:
        self.now += ms
        for timer in sorted(self.pending(), key=lambda t: t.due):
            if timer.due <= self.now:
                timer.fired = True
                timer.callback()


class _Timer:
    def __init__(self, due: float, callback: Callable[[], None]) -> None:
        self.due, self.callback = due, callback
        self.cancelled = self.fired = False

    def cancel(self) -> None:
        self.cancelled = True


def is_refresh(request: RecordedRequest) -> bool:
    return isinstance(request.body, dict) and request.body.get("max_tokens") == 1


def answer(request: RecordedRequest) -> Reply:
    """A refresh gets "ok"; a prompt gets a call of the ``wait`` tool, and its result the answer "done"."""
    if is_refresh(request):
        return Reply([text("ok")])
    last = request.body["messages"][-1]["content"]
    if isinstance(last, list) and any(block.get("type") == "tool_result" for block in last):
        return Reply([text("done")])
    return Reply([tool_call("wait", {})])


@pytest.fixture
def warm_fake(agent_dir: Path) -> Any:
    fake = FakeLLM()
    fake.responder = answer
    with fake.serve() as server:
        model = {
            "id": "claude-fake",
            "contextWindow": 200_000,
            "maxTokens": 8192,
            "cost": DEAR,
            "promptCache": {"short": 300, "long": 3600},
        }
        provider = {
            "baseUrl": server.anthropic_base_url,
            "api": "anthropic-messages",
            "apiKey": "k",
            "models": [model],
        }
        agent_dir.mkdir(parents=True, exist_ok=True)
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake-anthropic": provider}}))
        yield fake


class Gate:
    """A tool that runs until the test opens the gate: a long tool run."""

    def __init__(self) -> None:
        self.running = asyncio.Event()
        self.open = asyncio.Event()

    def tool(self) -> AgentTool:
        async def execute(_id: str, _params: dict[str, Any], _signal: Any, _update: Any) -> Any:
            self.running.set()
            await self.open.wait()
            return text_result("finished")

        schema = {"type": "object", "properties": {}}
        return AgentTool(name="wait", label="wait", description="Waits.", parameters=schema, execute=execute)


def prepare(session: AgentSession) -> tuple[ManualClock, Gate]:
    clock = ManualClock()
    session.cache_warmer.clock = clock
    gate = Gate()
    session.add_tool(gate.tool())
    return clock, gate


def usage_entries(session: AgentSession) -> list[UsageEntry]:
    return [e for e in session.session_manager.get_entries() if isinstance(e, UsageEntry)]


async def test_a_long_tool_run_gets_the_request_sent_again_with_a_one_token_cap(
    warm_fake: FakeLLM, project: Path
) -> None:
    async with open_session(["--model", MODEL], project) as session:
        clock, gate = prepare(session)
        events = Events(session)
        run = asyncio.create_task(session.prompt("go"))
        await gate.running.wait()
        assert session.cache_warmer.status.state == "scheduled"
        rows = dict(warming_rows(session.cache_warmer))
        assert rows["Cache warming"] == "streaming"
        assert rows["Warming status"].startswith(
            "Decision in 4m 30s (100% continuation probability while agent is running, expected savings $"
        )
        assert rows["Warming status"].endswith(" >= $0.050 -> warm)")
        assert rows["Refresh cost"].startswith("$") and rows["Cache miss penalty"].startswith("$")
        clock.advance(269_999)
        assert len(warm_fake.requests) == 1
        clock.advance(1)  # 90% of the 300 s cache lifetime
        await session.cache_warmer.settled()
        first, refresh = warm_fake.requests
        assert refresh.body == {**first.body, "max_tokens": 1}
        appended = [e.to_json() for e in events.of("entry_appended")]
        assert [(a["entry"]["type"], a["entry"]["kind"]) for a in appended] == [("usage", "cache_warm")]
        entries = usage_entries(session)
        assert [(e.kind, e.provider, e.model) for e in entries] == [
            ("cache_warm", "fake-anthropic", "claude-fake")
        ]
        assert session.cache_warmer.status.state == "scheduled"  # and again 270 s later
        gate.open.set()
        await run
        assert warm_fake.violations == []
        # the refresh is in the totals, never in the context: the next request carries what it would have
        last = warm_fake.requests[-1].body
        assert [m["role"] for m in last["messages"]] == ["user", "assistant", "user"]
        assert "ok" not in json.dumps(last["messages"])
        stats = session.stats()
        assert stats.assistant_messages == 2
        refresh_cost = entries[0].usage["cost"]["total"]
        assert refresh_cost > 0
        answers = sum(m.usage.cost.total for m in session.messages if getattr(m, "role", "") == "assistant")
        assert stats.cost == pytest.approx(answers + refresh_cost)
        assert f"${stats.cost:.4f}" in await session.render_context()  # /context's session totals
        status = session.cache_warmer.status
        assert (status.state, status.reason) == ("inactive", "agent run settled")
        assert clock.pending() == []


async def test_streaming_mode_stops_when_the_run_ends_and_idle_mode_goes_on_between_runs(
    warm_fake: FakeLLM, project: Path, agent_dir: Path
) -> None:
    write_settings(agent_dir, {"cacheWarming": "idle"})
    async with open_session(["--model", MODEL], project) as session:
        clock, gate = prepare(session)
        gate.open.set()
        await session.prompt("go")
        status = session.cache_warmer.status
        assert status.state == "scheduled" and status.decision is not None
        assert status.decision.phase == "idle" and status.decision.continuation_probability == 0.15
        clock.advance(270_000)
        await session.cache_warmer.settled()
        assert [is_refresh(r) for r in warm_fake.requests] == [False, False, True]
        assert warm_fake.requests[2].body == {**warm_fake.requests[1].body, "max_tokens": 1}
        # a new prompt replaces the entry to keep warm: the next refresh repeats that one
        await session.prompt("more")
        clock.advance(270_000)
        await session.cache_warmer.settled()
        assert warm_fake.requests[-1].body == {**warm_fake.requests[-2].body, "max_tokens": 1}
        assert len(usage_entries(session)) == 2


async def test_idle_warming_stops_when_the_saving_is_too_small(
    warm_fake: FakeLLM, project: Path, agent_dir: Path
) -> None:
    config = json.loads((agent_dir / "models.json").read_text())
    config["providers"]["fake-anthropic"]["models"][0]["cost"] = {
        "input": 3,
        "output": 15,
        "cacheRead": 0.3,
        "cacheWrite": 3.75,
    }
    (agent_dir / "models.json").write_text(json.dumps(config))
    write_settings(agent_dir, {"cacheWarming": "idle"})
    async with open_session(["--model", MODEL], project) as session:
        clock, gate = prepare(session)
        gate.open.set()
        await session.prompt("go")
        clock.advance(270_000)
        await session.cache_warmer.settled()
        assert not any(is_refresh(r) for r in warm_fake.requests)
        status = session.cache_warmer.status
        assert status.state == "inactive" and status.decision is not None
        assert format_warming_status(status, clock.now) == (
            "Stopped (15% continuation probability, expected savings $0.000 < $0.050 -> stop)"
        )


async def test_off_sends_nothing_and_a_model_without_a_cache_lifetime_is_not_warmed(
    warm_fake: FakeLLM, project: Path, agent_dir: Path
) -> None:
    write_settings(agent_dir, {"cacheWarming": "off"})
    async with open_session(["--model", MODEL], project) as session:
        _clock, gate = prepare(session)
        run = asyncio.create_task(session.prompt("go"))
        await gate.running.wait()
        assert session.cache_warmer.status.reason == "cache warming disabled"
        assert _clock.pending() == []
        gate.open.set()
        await run
    config = json.loads((agent_dir / "models.json").read_text())
    del config["providers"]["fake-anthropic"]["models"][0]["promptCache"]
    (agent_dir / "models.json").write_text(json.dumps(config))
    write_settings(agent_dir, {})
    async with open_session(["--model", MODEL], project) as session:
        _clock, gate = prepare(session)
        run = asyncio.create_task(session.prompt("go"))
        await gate.running.wait()
        assert session.cache_warmer.status.reason == "cache lifetime unavailable"
        gate.open.set()
        await run


async def test_a_project_cannot_turn_warming_on(warm_fake: FakeLLM, project: Path, agent_dir: Path) -> None:
    write_settings(agent_dir, {"cacheWarming": "off"})
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text(json.dumps({"cacheWarming": "idle"}))
    async with open_session(["--model", MODEL], project) as session:
        assert session.settings is not None and session.settings.cache_warming == "off"


async def test_closing_the_session_cancels_the_timer(warm_fake: FakeLLM, project: Path) -> None:
    async with open_session(["--model", MODEL], project) as session:
        clock, gate = prepare(session)
        run = asyncio.create_task(session.prompt("go"))
        await gate.running.wait()
        assert clock.pending()
        session.abort()
        gate.open.set()
        await run
    assert clock.pending() == []
    assert len(warm_fake.requests) == 1


def test_usage_line_keeps_three_decimals_at_least() -> None:
    assert format_warming_usage(0.1423, None) == "Cache warmed: $0.1423"
    assert format_warming_usage(0.05, "extension override") == "Cache warmed (extension override): $0.050"
    assert format_warming_usage(0.000123, None) == "Cache warmed: $0.000123"


EXTENSION = """
seen = []

def register(pi):
    @pi.on("cache_warming_decision")
    def decide(event):
        seen.append((event.action, event.continuation_probability, event.warm_cost > 0, event["missCost"] > 0))
        return {"action": "stop"}
"""


async def test_an_extension_can_stop_a_refresh_and_sees_the_economics(
    warm_fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    ext = tmp_path / "warm_ext.py"
    ext.write_text(EXTENSION)
    async with open_session(["--model", MODEL, "-e", str(ext)], project) as session:
        clock, gate = prepare(session)
        run = asyncio.create_task(session.prompt("go"))
        await gate.running.wait()
        clock.advance(270_000)
        await session.cache_warmer.settled()
        assert len(warm_fake.requests) == 1  # nothing sent
        status = session.cache_warmer.status
        assert (status.state, status.reason, status.extension_override) == (
            "inactive",
            "stopped by extension",
            True,
        )
        assert format_warming_status(status, clock.now).startswith(
            "Stopped (extension override, 100% continuation probability while agent is running, expected savings $"
        )
        gate.open.set()
        await run
        assert session.extensions is not None
        module = session.extensions.extensions[0].module
        assert module.seen == [("warm", 1.0, True, True)]


async def test_turning_warming_off_stops_it_at_once(warm_fake: FakeLLM, project: Path) -> None:
    async with open_session(["--model", MODEL], project) as session:
        clock, gate = prepare(session)
        run = asyncio.create_task(session.prompt("go"))
        await gate.running.wait()
        assert session.settings is not None
        session.settings.set("cacheWarming", "off")
        session.cache_warmer.on_mode_changed()
        assert clock.pending() == []
        assert session.cache_warmer.status.reason == "cache warming disabled"
        gate.open.set()
        await run
        assert not any(is_refresh(r) for r in warm_fake.requests)


def test_only_anthropic_budget_thinking_cannot_be_replayed() -> None:
    from pi_tui.ai.types import Model
    from pi_tui.runtime.cache_warmer import is_replayable

    claude = Model(id="c", name="c", api="anthropic-messages", provider="p", reasoning=True)
    assert not is_replayable(claude, "high")
    assert is_replayable(claude, "off")
    assert is_replayable(claude.model_copy(update={"compat": {"forceAdaptiveThinking": True}}), "high")
    assert is_replayable(claude.model_copy(update={"reasoning": False}), "high")
    assert is_replayable(claude.model_copy(update={"api": "openai-responses"}), "high")


async def test_closing_during_a_refresh_aborts_it_and_records_nothing(
    warm_fake: FakeLLM, project: Path
) -> None:
    from pi_tui.testing import Fault

    warm_fake.responder = lambda request: (
        Fault("stall", reply=Reply([text("ok")]), after_frames=1) if is_refresh(request) else answer(request)
    )
    async with open_session(["--model", MODEL], project) as session:
        clock, gate = prepare(session)
        run = asyncio.create_task(session.prompt("go"))
        await gate.running.wait()
        clock.advance(270_000)
        while len(warm_fake.requests) < 2:  # the refresh is on its way and its answer stalls
            await asyncio.sleep(0.01)
        assert session.cache_warmer.status.state == "refreshing"
        session.cache_warmer.cancel()  # what closing (or switching sessions) does first
        await asyncio.wait_for(session.cache_warmer.settled(), timeout=20)  # bound: below the stall's 30 s
        assert usage_entries(session) == []
        assert session.cache_warmer.status.reason == "inactive"
        assert clock.pending() == []
        gate.open.set()
        await run


async def test_the_first_request_after_a_deferred_resume_is_warmed_too(
    warm_fake: FakeLLM, project: Path
) -> None:
    from bench.big_sessions import big_session_lines

    path = project / "big.jsonl"
    path.write_text("\n".join(big_session_lines(2_000, project)) + "\n")  # over 1 MiB: deferred
    # (one prompt in print mode: the history is deferred, the first request sends its old part as it is)
    async with open_session(["--session", str(path), "--model", MODEL, "-p", "go"], project) as session:
        assert session.session_manager.deferred_history is not None
        clock, gate = prepare(session)
        run = asyncio.create_task(session.prompt("go"))
        await gate.running.wait()
        assert session.session_manager.deferred_history is None  # built once the body was written
        assert session.cache_warmer.status.state == "scheduled"
        clock.advance(270_000)
        await session.cache_warmer.settled()
        first, refresh = warm_fake.requests
        assert len(first.body["messages"]) > 1_500
        assert refresh.body == {**first.body, "max_tokens": 1}
        assert [e.kind for e in usage_entries(session)] == ["cache_warm"]
        gate.open.set()
        await run
        assert warm_fake.violations == []
