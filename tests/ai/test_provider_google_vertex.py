from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from pi_tui.ai.providers import _google_adc
from pi_tui.ai.providers._rs256 import load_private_key, sign_rs256
from pi_tui.ai.providers.google_vertex import stream_google_vertex, vertex_endpoint
from pi_tui.ai.stream import Done, Error, LlmRequest, StreamOptions
from pi_tui.ai.types import AssistantMessage, Model, UserMessage
from pi_tui.testing import FakeLLM, Reply, text

KEY = "vertex-test-key"
MODEL = "gemini-3.1-pro-preview"


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    fake = FakeLLM(api_key=KEY)
    with fake.serve():
        yield fake
    assert fake.violations == []


@pytest.fixture(autouse=True)
def fresh_tokens(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in (
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
    ):
        monkeypatch.delenv(name, raising=False)
    _google_adc.clear_token_cache()
    yield
    _google_adc.clear_token_cache()


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _model(fake: FakeLLM, base_url: str | None = None) -> Model:
    assert fake.server is not None
    return Model(
        id=MODEL,
        api="google-vertex",
        provider="google-vertex",
        base_url=fake.server.url if base_url is None else base_url,
        reasoning=True,
        compat={
            "thinkingLevelMap": {
                "off": None,
                "minimal": None,
                "low": "low",
                "medium": "medium",
                "high": "high",
            }
        },
    )


async def _ask(model: Model, api_key: str | None = None) -> AssistantMessage:
    final = None
    request = LlmRequest("", [UserMessage(content="hi")])
    async for event in stream_google_vertex(model, request, StreamOptions(api_key=api_key, thinking="low")):
        final = event
    assert isinstance(final, Done | Error)
    return final.message if isinstance(final, Done) else final.error


def _adc_env(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-1")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")


def _service_account(tmp_path: Path, key: rsa.RSAPrivateKey, token_uri: str) -> Path:
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path = tmp_path / "sa.json"
    info = {
        "type": "service_account",
        "project_id": "proj-1",
        "private_key_id": "kid-1",
        "private_key": pem,
        "client_email": "bot@proj-1.iam.gserviceaccount.com",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info))
    return path


def _b64url_json(part: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_endpoints_follow_the_sdks_hosts_and_paths() -> None:
    model = Model(
        id=MODEL,
        api="google-vertex",
        provider="google-vertex",
        base_url="https://{location}-aiplatform.googleapis.com",
    )
    method = f"publishers/google/models/{MODEL}:streamGenerateContent?alt=sse"
    assert vertex_endpoint(model, "k") == ("https://aiplatform.googleapis.com", f"/v1/{method}")
    assert vertex_endpoint(model, None, "p", "us-central1") == (
        "https://us-central1-aiplatform.googleapis.com",
        f"/v1/projects/p/locations/us-central1/{method}",
    )
    assert vertex_endpoint(model, None, "p", "global")[0] == "https://aiplatform.googleapis.com"
    assert vertex_endpoint(model, None, "p", "eu")[0] == "https://aiplatform.eu.rep.googleapis.com"
    versioned = model.model_copy(update={"base_url": "https://proxy.example/v1beta1"})
    assert vertex_endpoint(versioned, None, "p", "eu") == ("https://proxy.example/v1beta1", f"/{method}")


async def test_api_key_uses_the_express_path_and_key_header(fake: FakeLLM) -> None:
    fake.script([Reply([text("hello from vertex")])])
    message = await _ask(_model(fake), api_key=KEY)
    assert message.text() == "hello from vertex"
    request = fake.requests[-1]
    assert request.path == f"/v1/publishers/google/models/{MODEL}:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "<redacted>" and "authorization" not in request.headers


async def test_service_account_jwt_is_exchanged_once_and_the_token_cached(
    fake: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rsa_key: rsa.RSAPrivateKey
) -> None:
    assert fake.server is not None
    _adc_env(monkeypatch, _service_account(tmp_path, rsa_key, fake.server.token_url))
    fake.script([Reply([text("one")]), Reply([text("two")])])
    first = await _ask(_model(fake), api_key="gcp-vertex-credentials")
    second = await _ask(_model(fake), api_key=None)

    assert (first.text(), second.text()) == ("one", "two")
    token_requests = [r for r in fake.requests if r.api == "google-token"]
    assert len(token_requests) == 1
    form = token_requests[0].body
    assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    header_b64, claims_b64, signature_b64 = form["assertion"].split(".")
    assert _b64url_json(header_b64) == {"alg": "RS256", "typ": "JWT", "kid": "kid-1"}
    claims = _b64url_json(claims_b64)
    assert claims["iss"] == "bot@proj-1.iam.gserviceaccount.com"
    assert claims["aud"] == fake.server.token_url
    assert claims["scope"] == "https://www.googleapis.com/auth/cloud-platform"
    assert claims["exp"] - claims["iat"] == 3600
    signature = base64.urlsafe_b64decode(signature_b64 + "=" * (-len(signature_b64) % 4))
    rsa_key.public_key().verify(
        signature, f"{header_b64}.{claims_b64}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    vertex_calls = [r for r in fake.requests if r.api == "gemini"]
    assert [r.response.status for r in vertex_calls if r.response] == [200, 200]


async def test_a_token_near_expiry_is_replaced(
    fake: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rsa_key: rsa.RSAPrivateKey
) -> None:
    assert fake.server is not None
    _adc_env(monkeypatch, _service_account(tmp_path, rsa_key, fake.server.token_url))
    fake.engine.google_token_lifetime = 30  # under the minute of early refresh
    fake.script([Reply([text("one")]), Reply([text("two")])])
    await _ask(_model(fake))
    await _ask(_model(fake))
    assert len([r for r in fake.requests if r.api == "google-token"]) == 2


async def test_authorized_user_refreshes_and_sends_its_quota_project(
    fake: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fake.server is not None
    path = tmp_path / "adc.json"
    info = {
        "type": "authorized_user",
        "client_id": "cid",
        "client_secret": "secret",
        "refresh_token": "1//refresh",
        "quota_project_id": "billing-proj",
        "token_uri": fake.server.token_url,
    }
    path.write_text(json.dumps(info))
    _adc_env(monkeypatch, path)
    fake.script([Reply([text("ok")])])
    assert (await _ask(_model(fake))).text() == "ok"
    token_request = next(r for r in fake.requests if r.api == "google-token")
    assert token_request.body == {
        "grant_type": "refresh_token",
        "client_id": "cid",
        "client_secret": "secret",
        "refresh_token": "1//refresh",
    }
    assert fake.requests[-1].headers["x-goog-user-project"] == "billing-proj"


async def test_revoked_login_is_one_line_naming_gcloud(
    fake: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fake.server is not None
    path = tmp_path / "adc.json"
    info = {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "revoked-1"}
    path.write_text(json.dumps({**info, "token_uri": fake.server.token_url}))
    _adc_env(monkeypatch, path)
    message = await _ask(_model(fake))
    text_ = message.error_message or ""
    assert message.stop_reason == "error" and "\n" not in text_
    assert "invalid_grant: Token has been expired or revoked." in text_
    assert "gcloud auth application-default login" in text_
    assert not [r for r in fake.requests if r.api == "gemini"]


@pytest.mark.parametrize(
    ("unset", "expected"),
    [
        ("GOOGLE_CLOUD_PROJECT", "Vertex AI requires a project ID: set GOOGLE_CLOUD_PROJECT"),
        ("GOOGLE_CLOUD_LOCATION", "Vertex AI requires a location: set GOOGLE_CLOUD_LOCATION"),
        (
            "GOOGLE_APPLICATION_CREDENTIALS",
            "Vertex AI needs credentials: no application-default credentials file",
        ),
    ],
)
async def test_missing_setup_is_a_clear_one_line_error(
    fake: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unset: str, expected: str
) -> None:
    path = tmp_path / "adc.json"
    path.write_text(
        json.dumps({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"})
    )
    _adc_env(monkeypatch, path)
    if unset == "GOOGLE_APPLICATION_CREDENTIALS":
        monkeypatch.setenv(unset, str(tmp_path / "missing.json"))
    else:
        monkeypatch.delenv(unset)
    message = await _ask(_model(fake))
    assert (message.error_message or "").startswith(expected)
    assert "\n" not in (message.error_message or "")


async def test_an_unknown_bearer_token_is_a_401_with_what_to_check(
    fake: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rsa_key: rsa.RSAPrivateKey
) -> None:
    other = FakeLLM()  # a token endpoint whose tokens the Vertex fake never issued
    with other.serve() as server:
        _adc_env(monkeypatch, _service_account(tmp_path, rsa_key, server.token_url))
        message = await _ask(_model(fake))
    text_ = message.error_message or ""
    assert text_.startswith("401 UNAUTHENTICATED: Request had invalid authentication credentials.")
    assert "application-default credentials" in text_


def test_rs256_signatures_verify_with_the_public_key(rsa_key: rsa.RSAPrivateKey) -> None:
    for form in (serialization.PrivateFormat.PKCS8, serialization.PrivateFormat.TraditionalOpenSSL):
        pem = rsa_key.private_bytes(serialization.Encoding.PEM, form, serialization.NoEncryption()).decode()
        signature = sign_rs256(load_private_key(pem), b"payload")
        rsa_key.public_key().verify(signature, b"payload", padding.PKCS1v15(), hashes.SHA256())
    with pytest.raises(ValueError, match="no PEM private key"):
        load_private_key("not a key")
