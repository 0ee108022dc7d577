from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator

from pi_tui.ai import registry
from pi_tui.ai.providers.faux import FauxScript, faux_reply, set_faux_script
from pi_tui.ai.stream import Done, Error, LlmRequest, StreamEvent, StreamOptions, StreamStart
from pi_tui.ai.types import AssistantMessage, Model, UserMessage

REQUEST = LlmRequest("s", [UserMessage(content="hi")])


async def _collect(model: Model) -> list[StreamEvent]:
    return [event async for event in registry.stream(model, REQUEST, StreamOptions())]


async def test_unknown_api_ends_with_an_error_event_instead_of_raising() -> None:
    events = await _collect(Model(id="x", api="carrier-pigeon", provider="p"))
    assert isinstance(events[0], StreamStart)
    assert isinstance(events[-1], Error)
    assert "carrier-pigeon" in (events[-1].error.error_message or "")


async def test_faux_models_are_dispatched_to_the_faux_provider() -> None:
    script = FauxScript(faux_reply("scripted hello"))
    previous = set_faux_script(script)
    try:
        events = await _collect(Model(id="faux-1", api="faux", provider="faux"))
    finally:
        set_faux_script(previous)
    assert isinstance(events[-1], Done)
    assert events[-1].message.text() == "scripted hello"
    assert script.call_count == 1


async def test_registered_apis_override_dispatch() -> None:
    async def custom(model: Model, request: LlmRequest, options: StreamOptions) -> AsyncIterator[StreamEvent]:
        message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        yield StreamStart(partial=message)
        yield Done(reason="stop", message=message)

    registry.register_api("custom-api", custom)
    try:
        assert "custom-api" in registry.known_apis()
        events = await _collect(Model(id="c", api="custom-api", provider="c"))
    finally:
        registry.unregister_api("custom-api")
    assert [type(e) for e in events] == [StreamStart, Done]


def test_importing_the_providers_does_not_import_the_sdks() -> None:
    code = (
        "import sys, pi_tui.ai.registry, pi_tui.ai.providers.anthropic, "
        "pi_tui.ai.providers.openai_completions, pi_tui.ai.providers.openai_responses, pi_tui.ai.cost\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'openai', 'httpx2', 'httpx'))\n"
        "print(heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
