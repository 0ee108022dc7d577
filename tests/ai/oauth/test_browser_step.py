"""`authorize_in_browser`, the browser step every PKCE login (Anthropic, OpenAI Codex, OpenRouter,
Radius) goes through: the loopback redirect raced with a pasted answer, the port-taken fallback and the
state check, each as the providers had them."""

from __future__ import annotations

import dataclasses
import urllib.parse
import urllib.request

import pytest

from pi_tui.ai.oauth import AuthEvent, AuthPrompt, OAuthError
from pi_tui.ai.oauth.callback import BrowserStep, authorize_in_browser

from .helpers import ScriptedInteraction

# Any free port for the tests whose server listens: a fixed one (OpenAI Codex's 1455) is shared with
# every other test process on the machine (the other xdist worker, another checkout's run), and while
# one of them holds it the step falls back to the paste alone, so the redirect reaches someone else's
# server or none at all.
STEP = BrowserStep(
    provider_name="Example",
    port=0,
    path="/auth/callback",
    redirect_host="localhost",
    instructions="Open it.",
    manual_message="Paste it:",
    expected_state="S1",
    state_mismatch="State mismatch: start again",
    paste_only_if_port_taken=True,
    listening_message="Listening on {uri}",
)
# The provider's fixed port, for the tests whose server cannot bind (an address not this machine's):
# the fallback names that port in the redirect URI.
FIXED_PORT_STEP = dataclasses.replace(STEP, port=1455)


def _url(redirect_uri: str) -> str:
    return "https://auth.example/authorize?" + urllib.parse.urlencode({"redirect_uri": redirect_uri})


def test_the_browser_redirect_brings_the_code() -> None:
    def browser(event: AuthEvent) -> None:
        if event.kind == "auth_url":
            assert event.url is not None and event.message == "Open it."
            redirect = urllib.parse.parse_qs(urllib.parse.urlsplit(event.url).query)["redirect_uri"][0]
            back = redirect.replace("localhost", "127.0.0.1") + "?code=C1&state=S1"
            with urllib.request.urlopen(back, timeout=10) as answer:
                assert b"Example login completed" in answer.read()

    io = ScriptedInteraction(on_event=browser)
    got, redirect_uri = authorize_in_browser(io, STEP, _url)
    assert (got.code, got.state) == ("C1", "S1")
    assert redirect_uri.startswith("http://localhost:") and redirect_uri.endswith("/auth/callback")
    assert [e.message for e in io.events if e.kind == "progress"] == [f"Listening on {redirect_uri}"]
    assert [p.placeholder for p in io.prompts] == [redirect_uri]


def test_a_taken_port_falls_back_to_a_pasted_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_OAUTH_CALLBACK_HOST", "192.0.2.1")  # not this machine's: binding it fails
    pasted: list[AuthPrompt] = []

    def paste(prompt: AuthPrompt) -> str:
        pasted.append(prompt)
        return "http://localhost:1455/auth/callback?code=C2&state=S1"

    io = ScriptedInteraction(answer=paste)
    got, redirect_uri = authorize_in_browser(io, FIXED_PORT_STEP, _url)
    assert got.code == "C2" and redirect_uri == "http://localhost:1455/auth/callback"
    assert [p.message for p in pasted] == ["Paste it:"]
    assert not any(e.kind == "progress" for e in io.events)  # nothing listens, so nothing says it does


def test_a_taken_port_is_an_error_where_the_provider_needs_the_redirect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PI_OAUTH_CALLBACK_HOST", "192.0.2.1")
    strict = dataclasses.replace(FIXED_PORT_STEP, paste_only_if_port_taken=False)
    with pytest.raises(OAuthError, match="cannot listen for the login callback"):
        authorize_in_browser(ScriptedInteraction(answer=lambda _: "code"), strict, _url)


def test_a_pasted_answer_of_another_login_is_refused() -> None:
    io = ScriptedInteraction(answer=lambda _: "http://localhost:1455/auth/callback?code=C3&state=OTHER")
    with pytest.raises(OAuthError, match="^State mismatch: start again$"):
        authorize_in_browser(io, STEP, _url)
