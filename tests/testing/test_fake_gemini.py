from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text, thinking, tool_call

KEY = "k"
MODEL3 = "gemini-3.1-pro-preview"


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    fake = FakeLLM(api_key=KEY)
    with fake.serve():
        yield fake


def _post(
    url: str, body: Any, headers: dict[str, str | None] | None = None, raw: bytes | None = None
) -> tuple[int, bytes]:
    data = raw if raw is not None else json.dumps(body).encode()
    sent = {
        name: value for name, value in {"x-goog-api-key": KEY, **(headers or {})}.items() if value is not None
    }
    request = urllib.request.Request(url, data=data, headers=sent, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _url(fake: FakeLLM, model: str = MODEL3, method: str = "streamGenerateContent?alt=sse") -> str:
    assert fake.server is not None
    return f"{fake.server.gemini_base_url}/models/{model}:{method}"


def _user(text_: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text_}]}


def test_gemini_3_rejects_an_unsigned_call_in_the_current_turn_with_the_real_text(fake: FakeLLM) -> None:
    body = {
        "contents": [
            _user("go"),
            {"role": "model", "parts": [{"functionCall": {"name": "read", "args": {}, "id": "c1"}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "read", "response": {"output": "x"}, "id": "c1"}}],
            },
        ]
    }
    status, payload = _post(_url(fake), body)
    assert status == 400
    error = json.loads(payload)["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"].startswith("Function call is missing a thought_signature in functionCall parts.")
    assert [v.rule for v in fake.violations] == ["gemini.thought_signature_missing"]


def test_signatures_must_be_base64_and_issued_by_the_fake(fake: FakeLLM) -> None:
    def body(signature: str) -> dict[str, Any]:
        part = {"text": "t", "thought": True, "thoughtSignature": signature}
        return {"contents": [_user("a"), {"role": "model", "parts": [part, {"text": "b"}]}, _user("c")]}

    assert _post(_url(fake, "gemini-2.5-flash"), body("sig_fake_1"))[0] == 400
    assert _post(_url(fake, "gemini-2.5-flash"), body("c2lnbg=="))[0] == 400
    assert [v.rule for v in fake.violations] == [
        "gemini.thought_signature_invalid",
        "gemini.thought_signature_unknown",
    ]


def test_response_count_must_match_the_calls(fake: FakeLLM) -> None:
    calls = [{"functionCall": {"name": "read", "args": {}}}, {"functionCall": {"name": "ls", "args": {}}}]
    body = {
        "contents": [
            _user("go"),
            {"role": "model", "parts": calls},
            {"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"output": "x"}}}]},
        ]
    }
    assert _post(_url(fake, "gemini-2.5-flash"), body)[0] == 400
    assert [v.rule for v in fake.violations] == ["gemini.function_response_count"]


def test_thinking_level_on_a_2_5_model_is_rejected(fake: FakeLLM) -> None:
    body = {"contents": [_user("a")], "generationConfig": {"thinkingConfig": {"thinkingLevel": "LOW"}}}
    status, payload = _post(_url(fake, "gemini-2.5-pro"), body)
    assert (
        status == 400
        and json.loads(payload)["error"]["message"] == "Thinking level is not supported for this model."
    )


def test_non_streamed_and_json_array_answers(fake: FakeLLM) -> None:
    fake.script(
        [Reply([thinking("hm"), text("one"), tool_call("read", {"path": "a"})]), Reply([text("two words")])]
    )
    thoughts = {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}}
    status, payload = _post(_url(fake, method="generateContent"), {"contents": [_user("a")], **thoughts})
    assert status == 200
    response = json.loads(payload)
    parts = response["candidates"][0]["content"]["parts"]
    assert parts[0]["thought"] is True and parts[0]["thoughtSignature"]
    assert parts[1] == {"text": "one"}
    assert parts[2]["functionCall"] == {"name": "read", "args": {"path": "a"}, "id": "call_fake_0001"}
    assert response["candidates"][0]["finishReason"] == "STOP"
    status, payload = _post(_url(fake, method="streamGenerateContent"), {"contents": [_user("b")]})
    chunks = json.loads(payload)
    assert status == 200 and isinstance(chunks, list)
    assert (
        "".join(p.get("text", "") for c in chunks for p in c["candidates"][0]["content"]["parts"])
        == "two words"
    )


def test_a_wrong_key_is_googles_400_api_key_invalid(fake: FakeLLM) -> None:
    status, payload = _post(_url(fake), {"contents": [_user("a")]}, headers={"x-goog-api-key": "bad"})
    error = json.loads(payload)["error"]
    assert status == 400 and error["details"][0]["reason"] == "API_KEY_INVALID"


def test_token_endpoint_grants_and_refusals(fake: FakeLLM) -> None:
    assert fake.server is not None
    url = fake.server.token_url
    form = b"grant_type=refresh_token&client_id=c&client_secret=s&refresh_token=r1"
    status, payload = _post(url, None, {"content-type": "application/x-www-form-urlencoded"}, raw=form)
    token = json.loads(payload)
    assert status == 200 and token["token_type"] == "Bearer" and token["expires_in"] == 3599
    revoked = form.replace(b"r1", b"revoked-1")
    status, payload = _post(url, None, {"content-type": "application/x-www-form-urlencoded"}, raw=revoked)
    assert status == 400 and json.loads(payload)["error"] == "invalid_grant"
    bogus = b"grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=not.a"
    assert _post(url, None, raw=bogus)[0] == 400
    # The issued token is accepted as a bearer credential on the Gemini routes.
    fake.script([Reply([text("ok")])])
    bearer = {"authorization": f"Bearer {token['access_token']}", "x-goog-api-key": None}
    assert _post(_url(fake), {"contents": [_user("a")]}, headers=bearer)[0] == 200
