from __future__ import annotations

import subprocess
import sys

import anthropic

import pi_tui.testing
from pi_tui.testing import FakeLLM, Fault, Reply

from ._helpers import ANTHROPIC_MODEL, user

EXPECTED = {
    "FAULT_KINDS",
    "CacheStats",
    "CacheUsage",
    "FakeClock",
    "FakeLLM",
    "FakeServer",
    "Fault",
    "ModelLimits",
    "Part",
    "RecordedRequest",
    "Reply",
    "RequestCacheStats",
    "ResponseSummary",
    "TextPart",
    "ThinkingPart",
    "ToolCallPart",
    "ToolResultView",
    "Turn",
    "Violation",
    "count_tokens",
    "fake_signature",
    "text",
    "thinking",
    "tool_call",
    "turn_from_dict",
    "turns_from_json",
}


def test_public_names_do_not_drift() -> None:
    assert set(pi_tui.testing.__all__) == EXPECTED
    assert all(hasattr(pi_tui.testing, name) for name in EXPECTED)


def test_importing_the_fake_loads_no_provider_sdk() -> None:
    code = "import sys, pi_tui.testing; print(sorted(m for m in ('anthropic', 'openai', 'httpx2') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "[]"


def test_server_exposes_base_urls_for_both_sdks() -> None:
    fake = FakeLLM()
    with fake.serve() as server:
        env = server.env()

    assert server.url == f"http://127.0.0.1:{server.port}"
    assert server.anthropic_base_url == server.url
    assert server.openai_base_url == server.url + "/v1"
    assert env["ANTHROPIC_BASE_URL"] == server.url and env["OPENAI_BASE_URL"] == server.url + "/v1"


def test_a_single_turn_can_be_scripted_without_a_list(fake_llm: FakeLLM, claude: anthropic.Anthropic) -> None:
    fake_llm.script(Reply("only one")).script(lambda request: "and a callable")
    first = claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=10, messages=[user("hi")])
    second = claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=10, messages=[user("hi")])

    assert (first.content[0].text, second.content[0].text) == ("only one", "and a callable")


def test_stream_fault_past_the_end_still_withholds_the_final_frame(
    fake_llm: FakeLLM, claude: anthropic.Anthropic
) -> None:
    fake_llm.script(Fault("truncate", after_frames=1000, reply=Reply("short")))
    with claude.messages.stream(model=ANTHROPIC_MODEL, max_tokens=10, messages=[user("hi")]) as stream:
        message = stream.get_final_message()

    response = fake_llm.wait_for_delivery().response
    assert message.content[0].text == "short"
    assert message.stop_reason == "end_turn"  # message_delta arrived; only message_stop was withheld
    assert response is not None and (response.frames_sent, response.frames_planned) == (5, 6)
