from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pi_tui.args import parse_args
from pi_tui.context.panels import Panel
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from ..e2e.helpers import write_models_json

FIXED = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _policy_handler(event):
    if event.reason == "turn_end" and event.state.envelope.part("policy") is None:
        return {
            "transformerName": "policy",
            "patch": [
                {
                    "op": "system_part_set",
                    "scope": "cached",
                    "partName": "policy",
                    "text": "\n\n# Policy\n\nNever output secrets.",
                    "invalidateCacheReason": "add policy section",
                }
            ],
        }
    if event.reason == "ephemeral":
        return {
            "patch": [
                {
                    "op": "messages_uncached_append",
                    "scope": "uncached",
                    "messages": [{"role": "user", "content": "[request-only note]"}],
                }
            ]
        }
    return None


def _setup(session, todo_state: list[str], now: datetime = FIXED) -> None:
    session.set_context_handlers(lambda: [("policy-ext", _policy_handler)])
    session.panels.clock = lambda: now
    session.panels.register(Panel("Todo", lambda: "\n".join(todo_state) or "(empty)", placement="prefix"))
    session.panels.register(Panel("Status", lambda: "clean working tree", placement="tail"))
    session.restore_panel_state()


def _script() -> list[Reply]:
    return [
        Reply([tool_call("bash", {"command": "echo hi"})]),
        Reply([text("first answer")]),
        Reply([text("second answer")]),
    ]


async def _run(cwd: Path, agent_dir: Path, *, resume: bool) -> tuple[FakeLLM, list[dict]]:
    fake = FakeLLM()
    fake.script(_script())
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        startup = create_session(parse_args(["--model", "fake-anthropic/claude-fake"]), cwd)
        session = startup.session
        _setup(session, ["write tests"])
        await session.prompt("one")
        if resume:  # the process ends here (every entry is already on disk); a new one continues
            await session.close()
            startup = create_session(parse_args(["-c", "--model", "fake-anthropic/claude-fake"]), cwd)
            session = startup.session
            # later wall clock: unchanged panels must keep their persisted refresh time
            _setup(session, ["write tests"], now=FIXED.replace(hour=15))
        await session.prompt("two")
        path = session.session_manager.path
        await session.close()
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return fake, entries


async def test_live_and_resumed_requests_are_byte_identical_and_hit_the_cache(
    tmp_path: Path, agent_dir: Path
) -> None:
    cwd = tmp_path / "repo"
    cwd.mkdir()
    live_fake, live_entries = await _run(cwd, agent_dir, resume=False)
    # a fresh sessions dir for the second run so that -c finds that run's session only
    for f in (agent_dir / "sessions").rglob("*.jsonl"):
        f.rename(f.with_suffix(".live"))
    resumed_fake, entries = await _run(cwd, agent_dir, resume=True)

    assert live_fake.violations == [] and resumed_fake.violations == []
    live_last, resumed_last = live_fake.requests[-1], resumed_fake.requests[-1]
    assert json.dumps(resumed_last.body, sort_keys=True) == json.dumps(live_last.body, sort_keys=True)

    # the persistent transform is in the file once, and replayed (the policy is in the second request)
    transforms = [e for e in entries if e["type"] == "context_transform"]
    assert len(transforms) == 1 and transforms[0]["transformerName"] == "policy"
    assert "Never output secrets." in json.dumps(resumed_last.body["system"])
    # request-only content is sent but never persisted
    assert "[request-only note]" in json.dumps(resumed_last.body["messages"])
    assert "[request-only note]" not in json.dumps(entries)

    # the resumed process's request reads the whole prefix its previous request wrote
    before = resumed_fake.requests[-2]
    assert resumed_last.cache.cache_read >= before.cache.cache_read + before.cache.cache_write
