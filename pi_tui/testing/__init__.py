"""An offline fake LLM server for tests: Anthropic Messages, OpenAI Chat Completions and Responses, Gemini,
Mistral, Amazon Bedrock ConverseStream, pi's own pi-messages (Radius).

Extension authors and our own tests drive a real SDK (or the whole agent) against it::

    from pi_tui.testing import FakeLLM, Reply, Fault, text, thinking, tool_call

    fake = FakeLLM(context_window=200_000)
    fake.script([Reply([tool_call("read", {"path": "a.py"})]), Reply([text("done")])])
    with fake.serve() as server:  # server.anthropic_base_url, server.openai_base_url (…/v1),
        ...                           # server.gemini_base_url (…/v1beta), server.mistral_base_url
        ...                           # (…/mistral), server.azure_base_url (…/openai/v1),
        ...                           # server.pi_messages_base_url (…/pi/v1), server.url,
        ...                           # server.token_url
        ...
    fake.assert_script_consumed()
    assert fake.violations == []

What it does:

- **Script.** Each request consumes one turn: a `Reply` of neutral parts (`text`, `thinking`,
  `tool_call`) rendered for whichever API was called, a `Fault` (HTTP errors, mid-stream errors,
  truncation, socket drops, stalls), or a callable ``(RecordedRequest) -> turn``. After the script a
  ``responder`` may take over; otherwise the request gets a 500 (``x-should-retry: false``) and
  `FakeLLM.assert_script_consumed` fails.
- **Validation** (strict by default) with the providers' real status codes and error texts; every
  violation is recorded with a rule id. Rule ids:

  - Anthropic: ``anthropic.required_field``, ``invalid_role``, ``empty_content``, ``empty_text``,
    ``prefill_whitespace``, ``max_tokens``, ``tool_name``, ``tool_choice_unknown``, ``tool_use_id``,
    ``tool_result_missing``, ``tool_result_unexpected``, ``tool_result_order``, ``thinking_config``,
    ``thinking_budget``, ``thinking_tool_choice``, ``thinking_temperature``, ``thinking_signature``,
    ``thinking_replay_missing``, ``cache_control_invalid``, ``cache_control_limit``, ``cache_ttl_order``,
    ``context_window``, ``invalid_json``.
  - Chat Completions: ``openai.required_field``, ``invalid_role``, ``assistant_empty``,
    ``tool_response_missing``, ``tool_message_orphan``, ``stream_options``, ``tool_name``,
    ``context_window``, ``invalid_json``.
  - Responses: ``responses.required_field``, ``invalid_role``, ``call_id_unknown``,
    ``call_output_missing``, ``tool_name``, ``context_window``, ``invalid_json``.
  - Gemini (``…/models/{model}:streamGenerateContent`` or ``:generateContent`` under any prefix, so
    Vertex paths too): ``gemini.required_field``, ``invalid_role``, ``empty_parts``, ``empty_text``,
    ``invalid_part``, ``function_call_position``, ``function_response_count``, ``function_response_id``,
    ``function_response_missing``, ``thought_signature_missing`` (Gemini 3: the current turn's first
    call), ``thought_signature_invalid``, ``thought_signature_unknown``, ``tool_name``,
    ``thinking_config``, ``thinking_budget``, ``context_window``, ``invalid_json``.
  - pi-messages (``…/pi/v1/messages``, answered with pi's own stream events): ``pi-messages.required_field``,
    ``invalid_role``, ``tool_result_missing``, ``tool_result_unexpected``, ``context_window``.
  - Bedrock (``…/model/{modelId}/converse-stream``, answered as the AWS binary event stream; with
    ``FakeLLM(aws_credentials={key_id: secret})`` SigV4 signatures are verified, a bearer token must equal
    ``api_key``): ``bedrock.required_field``, ``invalid_role``, ``empty_content``, ``empty_text``,
    ``invalid_block``, ``tool_result_missing``, ``tool_result_unexpected``, ``tool_name``,
    ``cache_point_limit``, ``thinking_signature``, ``max_tokens``, ``context_window``, ``invalid_json``.

- **Prompt-cache simulation** (Anthropic breakpoints with 20-block look-back, per-model minimum,
  5m/1h TTL on an injectable clock; OpenAI automatic 1024 + 128·k prefixes; Gemini implicit caching the
  same way, as ``cachedContentTokenCount``; Bedrock ``cachePoint`` blocks with Anthropic's rules),
  reported in each API's usage fields and summarised by `FakeLLM.cache_stats`.
- **Google token endpoint**: ``POST /token`` answers the jwt-bearer (service account) and refresh-token
  (gcloud login) grants with ``ya29.fake-…`` tokens the Gemini routes then accept as bearer credentials
  (``engine.google_token_lifetime`` sets their lifetime; refresh tokens starting ``revoked`` are refused).
- **Tokens** are counted by a deterministic heuristic, `count_tokens` (``ceil(chars/4)`` plus small
  per-block overheads; details in ``pi_tui/testing/_tokens.py``).
- **Thinking signatures**: the fake signs thinking as `fake_signature(text)` and, with thinking on,
  rejects replayed blocks whose signature it did not issue, like the real API. Gemini signatures are
  base64 (thoughts, the first call of an answer, or a trailing empty part) and checked the same way.

The script's JSON form (for ``python -m pi_tui.testing.server`` and ``POST /_fake/script``) is
documented in `pi_tui.testing.server`. A pytest fixture lives in `pi_tui.testing.pytest_plugin`.
"""

from __future__ import annotations

from ._cache import FakeClock
from ._fake import FakeLLM
from ._http import FakeServer
from ._limits import ModelLimits
from ._records import (
    CacheStats,
    CacheUsage,
    RecordedRequest,
    RequestCacheStats,
    ResponseSummary,
    ToolResultView,
    Violation,
)
from ._script import (
    FAULT_KINDS,
    Fault,
    Part,
    Reply,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    Turn,
    fake_signature,
    text,
    thinking,
    tool_call,
    turn_from_dict,
    turns_from_json,
)
from ._tokens import count_tokens

__all__ = [
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
]
