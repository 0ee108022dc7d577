"""The engine: turns one HTTP request into a response `Plan`, with no I/O of its own.

It owns the script cursor, the prompt cache, the request log and the clock. Every public method
takes the engine lock, so the threaded HTTP server (and a test thread reading the log) can share it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from pi_tui.util import json_safe
from pi_tui.util.collector import collector_paused
from pi_tui.util.json_types import JsonObject

from ._azure import AZURE_PREFIX, azure_refusal, azure_unauthorized
from ._bedrock import BEDROCK_ROUTE, bedrock_auth_error, bedrock_frames, bedrock_segments, validate_bedrock
from ._bedrock import STOP_REASONS as BEDROCK_STOP_REASONS
from ._bedrock import model_from_path as bedrock_model
from ._cache import PromptCache
from ._codex import CODEX_SUFFIX, codex_refusal, codex_usage_limit, decode_body
from ._errors import anthropic_error, base_headers, error_plan, http_fault_plan, stream_error_frame
from ._google_token import parse_form, token_plan
from ._limits import ModelLimits, resolve_limits
from ._pi_messages import STOP_REASONS as PI_MESSAGES_STOP_REASONS
from ._pi_messages import pi_messages_error, pi_messages_frames, validate_pi_messages
from ._plan import Plan, json_plan
from ._records import CacheUsage, RecordedRequest, ResponseSummary, Violation
from ._render_anthropic import anthropic_frames, anthropic_message
from ._render_common import RenderContext, output_tokens
from ._render_gemini import FINISH_REASONS as GEMINI_FINISH_REASONS
from ._render_gemini import api_key_details, gemini_error, gemini_frames, gemini_response
from ._render_mistral import FINISH_REASONS as MISTRAL_FINISH_REASONS
from ._render_mistral import mistral_frames, mistral_unauthorized
from ._render_openai import FINISH_REASONS, chat_completion, chat_frames, responses_frames, responses_object
from ._script import Fault, Reply, TextPart, Turn, fake_signature
from ._tokens import Segment, segments_for
from ._validate_anthropic import validate_anthropic
from ._validate_gemini import validate_gemini
from ._validate_mistral import validate_mistral
from ._validate_openai import validate_chat, validate_responses

__all__ = ["Engine", "Responder"]

log = logging.getLogger(__name__)

Responder = Callable[[RecordedRequest], Any]

_ROUTES = {
    "/v1/messages": "anthropic",
    "/v1/messages/count_tokens": "anthropic-count-tokens",
    "/v1/chat/completions": "openai-chat",
    "/chat/completions": "openai-chat",
    "/v1/responses": "openai-responses",
    "/responses": "openai-responses",
    # Mistral's chat API has the same path as Chat Completions; the fake serves it under a /mistral prefix
    # (``FakeServer.mistral_base_url``) so that each request is checked against the right rules.
    "/mistral/v1/chat/completions": "mistral",
    # pi's own protocol (Radius) posts to ``{baseUrl}/messages``, Anthropic's path when the base URL ends in
    # /v1: the fake serves it under /pi (``FakeServer.pi_messages_base_url``).
    "/pi/v1/messages": "pi-messages",
}
# Cloudflare AI Gateway: ``/v1/{account}/{gateway}/{compat|openai|anthropic}`` before the upstream API's
# own path; the gateway takes its token in ``cf-aig-authorization`` (never ``Authorization``/``x-api-key``,
# which it would pass on as the upstream provider's key).
_CLOUDFLARE_GATEWAY_ROUTE = re.compile(r"^/v1/[^/{}]+/[^/{}]+/(?:compat|openai|anthropic)(?P<rest>/.*)$")
# Gemini: ``…/models/{model}:streamGenerateContent`` under any prefix (``/v1beta``, Vertex's
# ``/v1/publishers/google`` or ``/v1/projects/{p}/locations/{l}/publishers/google``).
_GEMINI_ROUTE = re.compile(
    r"^(?P<prefix>.*?)/models/(?P<model>[^/:]+):(?P<method>streamGenerateContent|generateContent)$"
)
_REDACTED = {
    "x-api-key",
    "authorization",
    "api-key",
    "cookie",
    "proxy-authorization",
    "x-goog-api-key",
    "cf-aig-authorization",
}
_NO_RETRY = {"x-should-retry": "false"}
_DEFAULT_MODELS = ("claude-sonnet-4-6", "claude-opus-4-8", "claude-haiku-4-5", "gpt-5", "gpt-4o")


class Engine:
    """Answers requests according to a script; see `pi_tui.testing.FakeLLM` for the options."""

    def __init__(
        self,
        *,
        defaults: ModelLimits,
        model_limits: Mapping[str, ModelLimits],
        api_key: str | None,
        strict: bool,
        clock: Callable[[], float],
        reasoning_field: str | None,
        openai_cache_ttl: float,
        responder: Responder | None,
        aws_credentials: Mapping[str, str] | None = None,
    ) -> None:
        self.defaults = defaults
        self.model_limits = dict(model_limits)
        self.api_key = api_key
        self.strict = strict
        self.clock = clock
        self.reasoning_field = reasoning_field
        self.openai_cache_ttl = openai_cache_ttl
        self.responder = responder
        self.aws_credentials = dict(aws_credentials) if aws_credentials is not None else None
        self.lock = threading.RLock()
        self.delivered = threading.Condition(self.lock)
        self.cache = PromptCache()
        self.turns: list[Turn | Callable[[RecordedRequest], Any]] = []
        self.cursor = 0
        self.records: list[RecordedRequest] = []
        self.problems: list[str] = []
        self._signatures: set[tuple[str, str]] = set()
        self._tool_number = 0
        self._seq = 0
        self.google_token_lifetime = 3599  # seconds, for tokens from the fake token endpoint
        self._google_tokens: set[str] = set()
        self.azure_deployments: frozenset[str] | None = None  # None: any deployment name exists

    # -- state -----------------------------------------------------------------------------------

    def reset(self) -> None:
        with self.lock:
            self.cache.clear()
            self.turns.clear()
            self.cursor = 0
            self.records.clear()
            self.problems.clear()
            self._signatures.clear()
            self._tool_number = 0
            self._seq = 0
            self._google_tokens.clear()

    def limits(self, model: str) -> ModelLimits:
        return resolve_limits(model, self.model_limits, self.defaults)

    def signature_ok(self, thinking_text: str, signature: str) -> bool:
        return signature == fake_signature(thinking_text) or (signature, thinking_text) in self._signatures

    def signature_issued(self, signature: str) -> bool:
        """Whether the fake ever sent ``signature`` (Gemini: signatures are not tied to one text)."""
        return any(sent == signature for sent, _ in self._signatures)

    def _remember_signature(self, signature: str, thinking_text: str) -> None:
        self._signatures.add((signature, thinking_text))

    def _next_tool_number(self) -> int:
        self._tool_number += 1
        return self._tool_number

    # -- entry point -----------------------------------------------------------------------------

    def handle(self, method: str, path: str, headers: Mapping[str, str], raw: bytes) -> Plan:
        """Decide the answer to one request. ``headers`` must have lower-case names.

        No cyclic collection runs meanwhile: decoding and checking a big body (a resumed session's
        100,000 messages) makes hundreds of thousands of containers that all stay alive in the request
        log, and with the collector on, its collections walked them over and over, twice the cost of
        the decoding and checking themselves. None of it is garbage.
        """
        path, _, query = path.partition("?")
        path = path.rstrip("/") or "/"
        with self.lock, collector_paused():
            if method == "POST" and BEDROCK_ROUTE.match(path) is not None:
                return self._generate("bedrock", method, f"{path}?{query}" if query else path, headers, raw)
            gemini = _GEMINI_ROUTE.match(path)
            if gemini is not None and method == "POST":
                return self._generate("gemini", method, f"{path}?{query}" if query else path, headers, raw)
            if path.endswith(CODEX_SUFFIX) and method == "POST":
                return self._generate("openai-responses", method, path, headers, raw)
            if path == f"{AZURE_PREFIX}responses" and method == "POST":
                return self._generate("openai-responses", method, f"{path}?{query}", headers, raw)
            if path == "/token" and method == "POST":
                return self._google_token(path, headers, raw)
            api = _ROUTES.get(path)
            gateway = _CLOUDFLARE_GATEWAY_ROUTE.match(path)
            if gateway is not None and method == "POST" and api is None:
                api = _ROUTES.get(gateway["rest"])
                if api is not None and "cf-aig-authorization" not in headers:
                    message = "AI Gateway authorization required: send the token in cf-aig-authorization"
                    return error_plan(api, 401, message, 0)
            if method == "GET" and path in ("/v1/models", "/models"):
                return self._models(headers)
            if api is None or method != "POST":
                flavour = "anthropic" if "anthropic-version" in headers else "openai-chat"
                return error_plan(flavour, 404, f"{method} {path} is not served by the fake LLM server", 0)
            return self._generate(api, method, path, headers, raw)

    def note_delivery(self, seq: int, frames_sent: int, aborted_at: int | None) -> None:
        """Called by the HTTP adapter once a plan has been sent (or the client went away)."""
        with self.lock:
            for record in reversed(self.records):
                if record.seq == seq and record.response is not None:
                    record.response.frames_sent = frames_sent
                    record.response.aborted_at_frame = aborted_at
                    record.response.delivered = True
                    break
            self.delivered.notify_all()

    # -- generation ------------------------------------------------------------------------------

    def _generate(self, api: str, method: str, path: str, headers: Mapping[str, str], raw: bytes) -> Plan:
        self._seq += 1
        seq = self._seq
        record = RecordedRequest(seq, api, method, path, _redact(headers), None, time=self.clock())
        self.records.append(record)
        key = _presented_key(headers, path)
        azure = path.startswith(AZURE_PREFIX)
        codex = path.endswith(CODEX_SUFFIX)
        if codex:
            decoded = decode_body(headers, raw)
            if isinstance(decoded, Plan):
                return self._answer(record, decoded, "violation", message="undecodable zstd body")
            raw = decoded
        if api == "bedrock":
            denied = bedrock_auth_error(
                method,
                path,
                headers,
                raw,
                credentials=self.aws_credentials,
                api_key=self.api_key,
                seq=seq,
            )
            if denied is not None:
                return self._answer(record, denied, "auth", message=_message_of(denied))
            key = _aws_key_id(headers) or key
        elif self.api_key is not None and key != self.api_key and key not in self._google_tokens:
            plan = azure_unauthorized(seq) if azure else _auth_error(api, key, seq, headers)
            return self._answer(record, plan, "auth")
        try:
            body = json_safe.loads(raw or b"null", limit=json_safe.MAX_RECORD_DEPTH)
        except ValueError:
            body = None
        record.body = body
        if not isinstance(body, dict):
            return self._reject_unparsable(record)
        gemini = _GEMINI_ROUTE.match(path.partition("?")[0]) if api == "gemini" else None
        if gemini is not None:
            record.model = gemini.group("model")
            record.stream = gemini.group("method") == "streamGenerateContent"
        elif api == "bedrock":
            record.model = bedrock_model(path)
            record.stream = True
        else:
            record.model = body.get("model") if isinstance(body.get("model"), str) else None
            record.stream = api == "pi-messages" or bool(body.get("stream"))  # pi-messages always streams
        if codex and isinstance(body, dict):
            refused = codex_refusal(headers, body, seq)
            if refused is not None:
                return self._answer(record, refused, "fault", message=_message_of(refused))
        if azure:
            refusal = azure_refusal(path.partition("?")[2], record.model, self.azure_deployments, seq)
            if refusal is not None:
                return self._answer(record, refusal, "fault", message=_message_of(refusal))
        flavour = "anthropic" if api == "anthropic-count-tokens" else api
        segments = bedrock_segments(body) if api == "bedrock" else segments_for(flavour, body)
        record.prompt_tokens = sum(seg.tokens for seg in segments)
        limits = self.limits(record.model or "")
        record.violations = self._validate(
            api, body, seq, segments, record.prompt_tokens, limits, record.model
        )
        if record.violations and self.strict:
            first = record.violations[0]
            plan = error_plan(flavour, first.status, first.message, seq, param=first.param, code=first.code)
            return self._answer(record, plan, "violation", message=first.message)
        if api == "anthropic-count-tokens":
            plan = json_plan(200, {"input_tokens": record.prompt_tokens}, base_headers(seq), seq)
            return self._answer(record, plan, "info")

        turn = self._next_turn(record)
        if isinstance(turn, Plan):
            return turn
        window = limits.context_window or 0
        # A mid-stream error on a non-streaming request has nowhere to go but the status line.
        if isinstance(turn, Fault) and (turn.is_http or (turn.kind == "stream_error" and not record.stream)):
            if codex and turn.kind == "rate_limit" and turn.message is None:
                plan = codex_usage_limit(seq)  # the subscription's limit, as the backend words it
            else:
                plan = http_fault_plan(api, turn, seq, prompt_tokens=record.prompt_tokens, window=window)
            return self._answer(record, plan, "fault", fault=turn.kind, message=_message_of(plan))
        reply = turn.streamed_reply() if isinstance(turn, Fault) else turn
        record.cache = self._simulate_cache(api, body, segments, key, limits, record.model)
        return self._render(record, api, body, reply, turn if isinstance(turn, Fault) else None)

    def _validate(
        self,
        api: str,
        body: JsonObject,
        seq: int,
        segments: list[Segment],
        tokens: int,
        limits: ModelLimits,
        model: str | None = None,
    ) -> list[Violation]:
        if api.startswith("anthropic"):
            return validate_anthropic(
                body,
                seq=seq,
                segments=segments,
                prompt_tokens=tokens,
                limits=limits,
                signature_ok=self.signature_ok,
                count_only=api == "anthropic-count-tokens",
            )
        if api == "bedrock":
            return validate_bedrock(
                body, seq=seq, prompt_tokens=tokens, limits=limits, signature_ok=self.signature_ok
            )
        if api == "openai-chat":
            return validate_chat(body, seq=seq, prompt_tokens=tokens, limits=limits)
        if api == "mistral":
            return validate_mistral(body, seq=seq, prompt_tokens=tokens, limits=limits)
        if api == "pi-messages":
            return validate_pi_messages(body, seq=seq, prompt_tokens=tokens, limits=limits)
        if api == "gemini":
            return validate_gemini(
                body,
                model=model or "",
                seq=seq,
                prompt_tokens=tokens,
                limits=limits,
                signature_issued=self.signature_issued,
            )
        return validate_responses(body, seq=seq, prompt_tokens=tokens, limits=limits)

    def _reject_unparsable(self, record: RecordedRequest) -> Plan:
        api = "anthropic" if record.api.startswith("anthropic") else record.api
        if api == "gemini":
            message = "Invalid JSON payload received. Expected an object, got something else."
            violation = Violation("gemini.invalid_json", message, api, record.seq)
            record.violations = [violation]
            return self._answer(record, gemini_error(400, message, record.seq), "violation", message=message)
        if api == "bedrock":
            message = "Could not parse the request body as JSON."
            record.violations = [Violation("bedrock.invalid_json", message, api, record.seq)]
            return self._answer(
                record, error_plan(api, 400, message, record.seq), "violation", message=message
            )
        if api == "anthropic":
            message, rule = (
                "There was an error parsing the body as JSON. The body must be a JSON object.",
                "anthropic",
            )
        else:
            message, rule = (
                "We could not parse the JSON body of your request. The body must be a JSON object.",
                ("openai" if api == "openai-chat" else "responses"),
            )
        violation = Violation(f"{rule}.invalid_json", message, api, record.seq)
        record.violations = [violation]
        return self._answer(record, error_plan(api, 400, message, record.seq), "violation", message=message)

    def _next_turn(self, record: RecordedRequest) -> Turn | Plan:
        source: Any
        if self.cursor < len(self.turns):
            index = self.cursor
            source = self.turns[index]
            self.cursor += 1
            record.turn_index = index
        elif self.responder is not None:
            source = self.responder
        else:
            done = self.cursor
            message = (
                f"pi_tui.testing fake LLM: the script is exhausted: request #{record.seq} arrived after all "
                f"{done} scripted turns were used. Add turns with fake.script([...]) or set a responder."
            )
            self.problems.append(message)
            plan = error_plan(record.api, 500, message, record.seq, headers=_NO_RETRY)
            return self._answer(record, plan, "exhausted", message=message)
        if callable(source) and not isinstance(source, Reply | Fault):
            try:
                result = source(record)
            except Exception as exc:  # a broken responder must fail the test, not hang the client
                log.exception("fake LLM responder raised")
                message = f"pi_tui.testing fake LLM: the responder raised {type(exc).__name__}: {exc}"
                self.problems.append(message)
                plan = error_plan(record.api, 500, message, record.seq, headers=_NO_RETRY)
                return self._answer(record, plan, "responder_error", message=message)
            source = _as_turn(result)
            if source is None:
                message = (
                    f"pi_tui.testing fake LLM: the responder returned {result!r} for request #{record.seq}"
                )
                self.problems.append(message)
                plan = error_plan(record.api, 500, message, record.seq, headers=_NO_RETRY)
                return self._answer(record, plan, "responder_error", message=message)
        record.turn = source
        return source

    def _simulate_cache(
        self,
        api: str,
        body: JsonObject,
        segments: list[Segment],
        key: str | None,
        limits: ModelLimits,
        model_id: str | None = None,
    ) -> CacheUsage:
        key_id = hashlib.sha256((key or "").encode()).hexdigest()[:16]
        model = model_id or str(body.get("model", ""))
        now = self.clock()
        if api in ("anthropic", "bedrock"):
            # Bedrock: explicit cachePoint blocks only, with Anthropic's rules (Bedrock serves Claude's cache).
            control = body.get("cache_control") if api == "anthropic" else None
            return self.cache.anthropic(
                segments,
                key_id=key_id,
                model=model,
                automatic=control if isinstance(control, dict) else None,
                min_tokens=limits.min_cacheable_tokens or 0,
                now=now,
            )
        if api == "gemini":
            # Implicit caching: a request that repeats a recent prompt's prefix reads it from the cache.
            return self.cache.openai(
                segments,
                key_id=key_id,
                model=model,
                cache_key="gemini-implicit",
                ttl_seconds=self.openai_cache_ttl,
                now=now,
                min_tokens=limits.min_cacheable_tokens or 1024,
            )
        retention = body.get("prompt_cache_retention")
        ttl = 86400.0 if retention == "24h" else self.openai_cache_ttl
        cache_key = body.get("prompt_cache_key") if isinstance(body.get("prompt_cache_key"), str) else None
        return self.cache.openai(
            segments, key_id=key_id, model=model, cache_key=cache_key, ttl_seconds=ttl, now=now
        )

    def _render(
        self, record: RecordedRequest, api: str, body: JsonObject, reply: Reply, fault: Fault | None
    ) -> Plan:
        cache = record.cache
        output, reasoning = output_tokens(reply)
        usage = {
            "input": cache.input,
            "cache_read": cache.cache_read,
            "cache_write": cache.cache_write,
            "cache_write_5m": cache.cache_write_5m,
            "cache_write_1h": cache.cache_write_1h,
            "output": output,
            "reasoning": reasoning,
        }
        if reply.usage:
            usage.update(reply.usage)
            if "cache_write" in reply.usage:
                usage["cache_write_5m"], usage["cache_write_1h"] = reply.usage["cache_write"], 0
        ctx = RenderContext(
            seq=record.seq,
            model=record.model or "",
            body=body,
            usage=usage,
            created=int(1_700_000_000 + self.clock()),
            next_tool_number=self._next_tool_number,
            remember_signature=self._remember_signature,
            reasoning_field=self.reasoning_field,
        )
        stop = reply.resolved_stop_reason()
        if api == "anthropic":
            sent_stop = stop
        elif api == "gemini":
            sent_stop = GEMINI_FINISH_REASONS[stop]
        elif api == "mistral":
            sent_stop = MISTRAL_FINISH_REASONS[stop]
        elif api == "pi-messages":
            sent_stop = PI_MESSAGES_STOP_REASONS[stop]
        elif api == "bedrock":
            sent_stop = BEDROCK_STOP_REASONS[stop]
        else:
            sent_stop = FINISH_REASONS[stop]
        headers = base_headers(record.seq)
        if api == "bedrock":
            headers["content-type"] = "application/vnd.amazon.eventstream"
            headers["x-amzn-requestid"] = f"fake-{record.seq:04d}-0000-0000-0000-000000000000"
            frames = bedrock_frames(reply, ctx, sent_stop)
            plan = Plan(200, headers, frames=frames, first_byte_delay=reply.first_byte_delay, seq=record.seq)
        elif api == "gemini":
            ctx.model = record.model or ""
            sse = "alt=sse" in record.path.partition("?")[2].split("&")
            if record.stream:
                frames = gemini_frames(reply, ctx, sse=sse)
                headers["content-type"] = "text/event-stream" if sse else "application/json; charset=UTF-8"
                plan = Plan(
                    200, headers, frames=frames, first_byte_delay=reply.first_byte_delay, seq=record.seq
                )
            else:
                plan = json_plan(200, gemini_response(reply, ctx), headers, record.seq)
                plan.first_byte_delay = reply.first_byte_delay
        elif record.stream:
            render = {
                "mistral": mistral_frames,
                "pi-messages": pi_messages_frames,
                "anthropic": anthropic_frames,
                "openai-chat": chat_frames,
                "openai-responses": responses_frames,
            }
            frames = render[api](reply, ctx)
            headers["content-type"] = "text/event-stream; charset=utf-8"
            plan = Plan(200, headers, frames=frames, first_byte_delay=reply.first_byte_delay, seq=record.seq)
        else:
            build = {
                "mistral": chat_completion,
                "anthropic": anthropic_message,
                "openai-chat": chat_completion,
                "openai-responses": responses_object,
            }
            plan = json_plan(200, build[api](reply, ctx), headers, record.seq)
            plan.first_byte_delay = reply.first_byte_delay
        plan.frame_delay = reply.frame_delay
        neutral = {k: usage[k] for k in ("input", "output", "cache_read", "cache_write")}
        rendered_frames = len(plan.frames or [])
        if fault is not None:
            _apply_stream_fault(plan, api, fault)
            stop_sent = None
        else:
            stop_sent = sent_stop
        summary = ResponseSummary(
            plan.status,
            "fault" if fault else "reply",
            fault=fault.kind if fault else None,
            stop_reason=stop_sent,
            usage=neutral,
            frames_planned=rendered_frames,
            tool_call_ids=list(ctx.tool_ids),
        )
        record.response = summary
        return plan

    def _answer(
        self,
        record: RecordedRequest,
        plan: Plan,
        kind: str,
        *,
        fault: str | None = None,
        message: str | None = None,
    ) -> Plan:
        record.response = ResponseSummary(plan.status, kind, fault=fault, message=message)
        plan.seq = record.seq
        return plan

    # -- Google's token endpoint ------------------------------------------------------------------

    def _google_token(self, path: str, headers: Mapping[str, str], raw: bytes) -> Plan:
        self._seq += 1
        seq = self._seq
        form = parse_form(raw)
        record = RecordedRequest(seq, "google-token", "POST", path, _redact(headers), form, time=self.clock())
        self.records.append(record)
        token = f"ya29.fake-{len(self._google_tokens) + 1:04d}"
        plan, issued = token_plan(form, seq, token, self.google_token_lifetime)
        if issued:
            self._google_tokens.add(token)
        return self._answer(
            record, plan, "info" if issued else "auth", message=None if issued else _message_of(plan)
        )

    # -- models ----------------------------------------------------------------------------------

    def _models(self, headers: Mapping[str, str]) -> Plan:
        ids = list(dict.fromkeys([*_DEFAULT_MODELS, *self.model_limits]))
        if "anthropic-version" in headers:
            data = [
                {
                    "type": "model",
                    "id": m,
                    "display_name": m,
                    "created_at": "2025-01-01T00:00:00Z",
                    "lifecycle": "active",
                    "max_input_tokens": self.limits(m).context_window,
                    "max_tokens": self.limits(m).max_output_tokens,
                }
                for m in ids
                if m.startswith("claude")
            ]
            payload: JsonObject = {
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        else:
            data = [{"id": m, "object": "model", "created": 1_700_000_000, "owned_by": "fake"} for m in ids]
            payload = {"object": "list", "data": data}
        return json_plan(200, payload)


def _apply_stream_fault(plan: Plan, api: str, fault: Fault) -> None:
    """Cut a rendered answer according to a stream fault."""
    if plan.frames is None:  # non-streaming request
        if fault.kind == "truncate":
            plan.end = "truncate"
        elif fault.kind == "drop":
            plan.end = "drop"
            plan.body = None
        elif fault.kind == "stall":
            plan.end = "stall"
            plan.body = None
            plan.stall_seconds = fault.stall_seconds
        return
    # Never keep the final frame, so the fault always bites however large after_frames is.
    kept = plan.frames[: min(fault.after_frames, len(plan.frames) - 1)]
    if fault.kind == "stream_error":
        kept.append(stream_error_frame(api, fault, len(kept)))
    elif fault.kind == "truncate":
        plan.end = "truncate"
    elif fault.kind == "drop":
        plan.end = "drop"
    elif fault.kind == "stall":
        plan.end = "stall"
        plan.stall_seconds = fault.stall_seconds
    plan.frames = kept


def _as_turn(result: Any) -> Turn | None:
    if isinstance(result, Reply | Fault):
        return result
    if isinstance(result, str | TextPart) or isinstance(result, list | tuple):
        return Reply(result)
    return None


def _presented_key(headers: Mapping[str, str], path: str = "") -> str | None:
    gateway = headers.get("cf-aig-authorization", "")
    if gateway.lower().startswith("bearer "):  # Cloudflare AI Gateway: the gateway's own token
        return gateway[7:].strip()
    if "x-api-key" in headers:
        return headers["x-api-key"]
    if "x-goog-api-key" in headers:
        return headers["x-goog-api-key"]
    from urllib.parse import parse_qs

    query_key = parse_qs(path.partition("?")[2]).get("key")
    if query_key:
        return query_key[0]
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return headers.get("api-key")


def _redact(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: ("<redacted>" if k in _REDACTED else v) for k, v in headers.items()}


def _auth_error(api: str, key: str | None, seq: int, headers: Mapping[str, str]) -> Plan:
    if api == "gemini":
        if headers.get("authorization", "").lower().startswith("bearer "):
            message = (
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
                "other valid authentication credential. See "
                "https://developers.google.com/identity/sign-in/web/devconsole-project."
            )
            return gemini_error(401, message, seq)
        if not key:
            message = (
                "Method doesn't allow unregistered callers (callers without established identity). Please use "
                "API Key or other form of API consumer identity to call this API."
            )
            return gemini_error(403, message, seq)
        return gemini_error(
            400, "API key not valid. Please pass a valid API key.", seq, details=api_key_details()
        )
    if api == "mistral":
        return mistral_unauthorized(seq)
    if api == "pi-messages":
        return pi_messages_error(401, "Invalid or expired API key", seq, code="unauthorized")
    if api.startswith("anthropic"):
        text = "invalid x-api-key" if key else "x-api-key header is required"
        return anthropic_error(401, "authentication_error", text, seq)
    shown = f"{key[:3]}***{key[-4:]}" if key and len(key) > 8 else "***"
    message = f"Incorrect API key provided: {shown}. You can find your API key at https://platform.openai.com/account/api-keys."
    return error_plan(api, 401, message, seq, code="invalid_api_key")


def _message_of(plan: Plan) -> str | None:
    try:
        payload = json.loads(plan.body or b"{}")
    except ValueError:
        return None
    error = payload.get("error") if isinstance(payload, dict) else None
    if error is None and isinstance(payload, dict) and isinstance(payload.get("message"), str):
        return str(payload["message"])  # AWS: the message at the top level
    return error.get("message") if isinstance(error, dict) else None


def _aws_key_id(headers: Mapping[str, str]) -> str | None:
    """The access key id of a SigV4-signed request (the prompt cache is per account, as on AWS)."""
    credential = headers.get("authorization", "").partition("Credential=")[2]
    return credential.partition("/")[0] or None
