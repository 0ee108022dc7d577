"""Provider-shaped error answers: HTTP error bodies, mid-stream error frames, and fault texts."""

from __future__ import annotations

from pi_tui.util.json_types import JsonObject

from ._plan import Plan, json_plan, sse_data, sse_event
from ._script import Fault

__all__ = [
    "anthropic_error",
    "error_plan",
    "http_fault_plan",
    "openai_error",
    "openai_status_fault",
    "stream_error_frame",
]

# (status, Anthropic error.type, Anthropic message, OpenAI status, OpenAI type, OpenAI code, OpenAI message)
_HTTP_FAULTS: dict[str, tuple[int, str, str, int, str, str | None, str]] = {
    "rate_limit": (
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization. Please try again later.",
        429,
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again in 1ms.",
    ),
    "overloaded": (
        529,
        "overloaded_error",
        "Overloaded",
        503,
        "server_error",
        None,
        "The engine is currently overloaded, please try again later.",
    ),
    "api_error": (
        500,
        "api_error",
        "Internal server error",
        500,
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    "auth": (
        401,
        "authentication_error",
        "invalid x-api-key",
        401,
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
    ),
    "request_too_large": (
        413,
        "request_too_large",
        "Request exceeds the maximum allowed number of bytes.",
        413,
        "invalid_request_error",
        "request_too_large",
        "Request too large. The request body exceeds the maximum allowed size.",
    ),
}
_RETRYABLE = {"rate_limit", "overloaded", "api_error"}
_STREAM_ERROR_STATUS = {"overloaded_error": "overloaded", "rate_limit_error": "rate_limit"}
_STREAM_ERROR_TEXT = {"overloaded_error": "Overloaded", "api_error": "Internal server error"}


def openai_status_fault(fault: Fault) -> tuple[str, int, int | None]:
    """``(kind, status, retry-after ms)`` of an HTTP fault for the APIs that answer with OpenAI's statuses
    and their own bodies (Mistral, pi-messages): a ``stream_error`` on a request that does not stream is
    a rate limit (error type ``rate_limit_error``) or else overloaded; the retry delay is given only for
    the kinds a client retries."""
    kind = fault.kind
    if kind == "stream_error":
        kind = "rate_limit" if fault.error_type == "rate_limit_error" else "overloaded"
    status = fault.status or _HTTP_FAULTS[kind][3]
    return kind, status, fault.retry_after_ms if kind in _RETRYABLE else None


def request_id(seq: int) -> str:
    return f"req_fake_{seq:04d}"


def base_headers(seq: int) -> dict[str, str]:
    rid = request_id(seq)
    return {"request-id": rid, "x-request-id": rid}


def anthropic_error(
    status: int, error_type: str, message: str, seq: int, headers: dict[str, str] | None = None
) -> Plan:
    """An Anthropic error answer: ``{"type":"error","error":{type,message},"request_id"}``."""
    payload = {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id(seq),
    }
    return json_plan(status, payload, {**base_headers(seq), **(headers or {})}, seq)


def openai_error(
    status: int,
    message: str,
    seq: int,
    *,
    error_type: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Plan:
    """An OpenAI error answer: ``{"error":{message,type,param,code}}``."""
    payload = {"error": {"message": message, "type": error_type, "param": param, "code": code}}
    return json_plan(status, payload, {**base_headers(seq), **(headers or {})}, seq)


def error_plan(
    api: str,
    status: int,
    message: str,
    seq: int,
    *,
    param: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Plan:
    """A 4xx/5xx in the shape of ``api``; the error type is derived from the status."""
    if api == "gemini":
        from ._render_gemini import gemini_error

        return gemini_error(status, message, seq, headers=headers)
    if api == "mistral":
        from ._render_mistral import mistral_error

        return mistral_error(status, message, seq, headers=headers, code=code)
    if api == "pi-messages":
        from ._pi_messages import pi_messages_error

        return pi_messages_error(status, message, seq, headers=headers, code=code)
    if api == "bedrock":
        from ._bedrock import bedrock_error, exception_for_status

        return bedrock_error(status, exception_for_status(status), message, seq, headers)
    if api.startswith("anthropic"):
        kind = {
            401: "authentication_error",
            404: "not_found_error",
            413: "request_too_large",
            429: "rate_limit_error",
        }
        error_type = kind.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return anthropic_error(status, error_type, message, seq, headers)
    error_type = "server_error" if status >= 500 else "invalid_request_error"
    return openai_error(status, message, seq, error_type=error_type, param=param, code=code, headers=headers)


def overflow_text(api: str, tokens: int, window: int) -> tuple[str, str, str | None]:
    """(message, param, code) of a context-overflow 400 for ``api``."""
    if api == "anthropic":
        return f"prompt is too long: {tokens} tokens > {window} maximum", "messages", None
    if api == "openai-responses":
        text = "Your input exceeds the context window of this model. Please adjust your input and try again."
        return text, "input", "context_length_exceeded"
    text = (
        f"This model's maximum context length is {window} tokens. However, your messages resulted in {tokens} "
        "tokens. Please reduce the length of the messages."
    )
    return text, "messages", "context_length_exceeded"


def http_fault_plan(api: str, fault: Fault, seq: int, *, prompt_tokens: int, window: int) -> Plan:
    """The answer to an HTTP fault turn."""
    if api == "gemini":
        from ._render_gemini import gemini_fault_plan

        return gemini_fault_plan(fault, seq, prompt_tokens=prompt_tokens, window=window)
    if api == "mistral":
        from ._render_mistral import mistral_fault_plan

        return mistral_fault_plan(fault, seq, prompt_tokens=prompt_tokens, window=window)
    if api == "pi-messages":
        from ._pi_messages import pi_messages_fault_plan

        return pi_messages_fault_plan(fault, seq, prompt_tokens=prompt_tokens, window=window)
    if api == "bedrock":
        from ._bedrock import bedrock_fault_plan

        return bedrock_fault_plan(fault, seq, prompt_tokens=prompt_tokens, window=window)
    kind = fault.kind
    if kind == "context_overflow":
        tokens = fault.tokens if fault.tokens is not None else max(prompt_tokens, window + 1)
        message, param, code = overflow_text(api, tokens, window)
        if fault.message:
            message = fault.message
        status = fault.status or 400
        if api == "anthropic":
            return anthropic_error(status, "invalid_request_error", message, seq)
        return openai_error(status, message, seq, param=param, code=code)
    if kind == "stream_error":  # a mid-stream error on a non-streaming request becomes its HTTP twin
        kind = _STREAM_ERROR_STATUS.get(fault.error_type or "overloaded_error", "api_error")
    status, a_type, a_text, o_status, o_type, o_code, o_text = _HTTP_FAULTS[kind]
    headers = {}
    if kind in _RETRYABLE and fault.retry_after_ms is not None:
        headers["retry-after-ms"] = str(fault.retry_after_ms)
    if api == "anthropic":
        return anthropic_error(fault.status or status, a_type, fault.message or a_text, seq, headers)
    return openai_error(
        fault.status or o_status,
        fault.message or o_text,
        seq,
        error_type=o_type,
        code=o_code,
        headers=headers,
    )


def stream_error_frame(api: str, fault: Fault, sequence_number: int) -> bytes:
    """The SSE frame a ``stream_error`` fault sends after its first frames."""
    if api == "gemini":
        from ._render_gemini import gemini_stream_error_frame

        return gemini_stream_error_frame(fault)
    if api == "mistral":
        from ._render_mistral import mistral_stream_error_frame

        return mistral_stream_error_frame(fault)
    if api == "pi-messages":
        from ._pi_messages import pi_messages_stream_error_frame

        return pi_messages_stream_error_frame(fault)
    if api == "bedrock":
        from ._bedrock import bedrock_stream_error_frame

        return bedrock_stream_error_frame(fault)
    error_type = fault.error_type or "overloaded_error"
    message = fault.message or _STREAM_ERROR_TEXT.get(error_type, error_type)
    if api == "anthropic":
        return sse_event("error", {"type": "error", "error": {"type": error_type, "message": message}})
    if api == "openai-responses":
        data: JsonObject = {
            "type": "error",
            "code": error_type,
            "message": message,
            "param": None,
            "sequence_number": sequence_number,
        }
        return sse_event("error", data)
    return sse_data({"error": {"message": message, "type": error_type, "param": None, "code": error_type}})
