from __future__ import annotations

import asyncio
import concurrent.futures
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.modes.interactive.blocks import NoticeBlock
from pi_tui.modes.interactive.dialogs import SelectDialog
from pi_tui.modes.interactive.screens.login_screen import LoginScreen
from pi_tui.testing.oauth_server import FakeAuthServer

from .helpers import make_app, submit, type_text, until


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer() as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        yield server


def _notices(app) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(b.text, "error" if b.has_class("-error") else "info") for b in app.chat.query(NoticeBlock)]


async def _until_notice(pilot, app, part: str) -> None:  # type: ignore[no-untyped-def]
    """Wait for a chat notice that contains ``part``."""
    await until(pilot, lambda: any(part in text for text, _ in _notices(app)))


async def _until_dialog(pilot, app, title: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """Wait for a choice dialog (titled ``title``, when given)."""
    await until(
        pilot,
        lambda: isinstance(app.screen, SelectDialog) and (title is None or app.screen.title_text == title),
    )


def _shown_rows(app) -> list[str]:  # type: ignore[no-untyped-def]
    """The rows a choice dialog shows now (after its filter), without the highlight's gutter."""
    from textual.widgets import OptionList

    rows = app.screen.query_one(OptionList)
    return [str(rows.get_option_at_index(i).prompt)[2:] for i in range(rows.option_count)]


def _login_screen(app) -> LoginScreen | None:  # type: ignore[no-untyped-def]
    return app.screen if isinstance(app.screen, LoginScreen) else None


async def _until_login_shows(pilot, app, part: str) -> LoginScreen:  # type: ignore[no-untyped-def]
    """Wait for the login screen to show a line that contains ``part``; returns the screen."""
    await until(
        pilot,
        lambda: (
            _login_screen(app) is not None and any(part in line.plain for line in _login_screen(app).lines)
        ),
    )
    screen = _login_screen(app)
    assert screen is not None
    return screen


async def _answer(pilot, app, question: str, value: str) -> None:  # type: ignore[no-untyped-def]
    """Wait for the login screen to ask ``question`` in its input line, then type ``value`` and Enter."""
    await until(
        pilot,
        lambda: (
            _login_screen(app) is not None
            and _login_screen(app).query_one("#login-input").display
            and question in str(_login_screen(app).query_one("#login-question").render())
        ),
    )
    await type_text(pilot, value)
    await pilot.press("enter")


def _url(screen: LoginScreen) -> str:
    return next(line.plain for line in screen.lines if "/oauth/authorize?" in line.plain)


async def _pick_account(pilot, app) -> None:  # type: ignore[no-untyped-def]
    await _until_dialog(pilot, app)
    assert app.screen.title_text == "Select authentication method for Anthropic:"  # the provider's name
    assert app.screen.options == ["Sign in with an account", "Sign in with an API key"]
    await pilot.press("enter")  # "Sign in with an account"


async def _anthropic_login_screen(pilot, app) -> LoginScreen:  # type: ignore[no-untyped-def]
    """``/login anthropic``, sign in with an account: the login screen once it shows the browser URL."""
    await until(pilot, app.ready.is_set)
    await submit(pilot, app, "/login anthropic")
    await _pick_account(pilot, app)
    return await _until_login_shows(pilot, app, "/oauth/authorize?")


def _subscription_auth() -> str:
    """auth.json with a valid Anthropic subscription (OAuth) login."""
    import time

    expires = int(time.time() * 1000) + 3600_000
    login = {"type": "oauth", "access": "sk-ant-oat01-x", "refresh": "r", "expires": expires}
    return json.dumps({"anthropic": login})


def _open(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as page:
        return bytes(page.read())


async def test_login_dialog_completes_through_the_browser_callback(
    tmp_path: Path, agent_dir: Path, auth_server: FakeAuthServer
) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        screen = await _anthropic_login_screen(pilot, app)
        location = await asyncio.to_thread(auth_server.browser_approve, _url(screen))
        page = await asyncio.to_thread(_open, location)
        assert b"login completed" in page
        await _until_notice(pilot, app, "Logged in to Anthropic")
        assert not isinstance(app.screen, LoginScreen)
        stored = json.loads((agent_dir / "auth.json").read_text())["anthropic"]
        assert stored["access"] in auth_server.valid_access_tokens()
        notice = next(text for text, _ in _notices(app) if "Logged in" in text)
        assert notice == f"Logged in to Anthropic. Credentials saved to {agent_dir / 'auth.json'}"
        assert stored["access"] not in app.export_screenshot()


async def test_the_flow_reaching_a_dialog_being_taken_down_changes_nothing_and_the_login_completes(
    tmp_path: Path, agent_dir: Path, auth_server: FakeAuthServer
) -> None:
    """The flow's thread reaches the dialog through call_from_thread at any moment, also while its
    dismissal takes it down: Textual removes a screen's children first, and the screen counts as
    attached until it goes itself. The browser's callback racing the dismissal withdrew the pasted-code
    question then, and looking the question up failed (NoMatches on the flow's thread). The test puts
    the dialog in that state (its children gone, the screen still up) and calls what the thread calls."""
    from textual.containers import Vertical

    from pi_tui.ai.oauth import AuthEvent, AuthPrompt

    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        screen = await _anthropic_login_screen(pilot, app)
        await until(pilot, lambda: screen.query_one("#login-input").display)  # the paste question is up
        url = _url(screen)
        await screen.query_one(Vertical).remove()
        assert screen.is_attached and app.screen is screen
        screen.withdraw()
        screen.show_event(AuthEvent("progress", message="Exchanging the code"))
        assert screen.lines[-1].plain == "Exchanging the code"  # kept, though nothing shows it now
        unanswered: concurrent.futures.Future[str | None] = concurrent.futures.Future()
        screen.ask(AuthPrompt("manual_code", "Paste it:"), unanswered)
        assert unanswered.result(timeout=0) is None  # nobody can answer: the flow is told at once
        # the browser's answer still logs in, and the dialog goes
        location = await asyncio.to_thread(auth_server.browser_approve, url)
        assert b"login completed" in await asyncio.to_thread(_open, location)
        await _until_notice(pilot, app, "Logged in to Anthropic")
        assert not isinstance(app.screen, LoginScreen)
    stored = json.loads((agent_dir / "auth.json").read_text())["anthropic"]
    assert stored["access"] in auth_server.valid_access_tokens()


async def test_login_dialog_takes_a_pasted_redirect_url(
    tmp_path: Path, agent_dir: Path, auth_server: FakeAuthServer
) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        screen = await _anthropic_login_screen(pilot, app)
        location = await asyncio.to_thread(auth_server.browser_approve, _url(screen))
        await until(pilot, lambda: screen.query_one("#login-input").display)
        screen.query_one("#login-input").value = location  # type: ignore[attr-defined]
        await pilot.press("enter")
        await _until_notice(pilot, app, "Logged in to Anthropic")
    assert (
        json.loads((agent_dir / "auth.json").read_text())["anthropic"]["access"]
        in auth_server.valid_access_tokens()
    )


async def test_escape_cancels_the_login_quietly(
    tmp_path: Path, agent_dir: Path, auth_server: FakeAuthServer
) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login anthropic")
        await _pick_account(pilot, app)
        await until(pilot, lambda: _login_screen(app) is not None and bool(_login_screen(app).lines))
        screen = _login_screen(app)
        assert screen is not None
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, LoginScreen))
        assert screen.interaction.cancel.is_set()
        assert [n for n in _notices(app) if n[1] == "error"] == []
    assert not (agent_dir / "auth.json").exists()


async def test_device_code_login_shows_the_code_then_logs_in_and_logout_removes_it(
    tmp_path: Path, agent_dir: Path, auth_server: FakeAuthServer
) -> None:
    auth_server.device_script = ["authorization_pending", "authorization_pending", "ok"]
    auth_server.device_interval = 0.2
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login xai")
        await _until_dialog(pilot, app)
        # pi's words: the provider's name and its own label for the account login
        assert app.screen.title_text == "Select authentication method for xAI:"
        assert app.screen.options == ["Sign in with SuperGrok or X Premium", "Sign in with an API key"]
        await pilot.press("enter")  # sign in with an account
        await _until_login_shows(pilot, app, "ABCD-1234")
        await _until_notice(pilot, app, "Logged in to xAI")
        assert json.loads((agent_dir / "auth.json").read_text())["xai"]["type"] == "oauth"
        await submit(pilot, app, "/logout xai")
        await until(pilot, lambda: any(text == "Logged out of xAI" for text, _ in _notices(app)))
    assert json.loads((agent_dir / "auth.json").read_text()) == {}


async def test_logout_names_a_stored_api_key_by_its_provider_not_the_subscription(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": "sk-ant-x"}}))
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/logout")
        await _until_dialog(pilot, app)
        assert app.screen.options == ["Anthropic ✓ configured"]
        await pilot.press("enter")
        await _until_notice(pilot, app, "Removed stored API key for Anthropic.")
    assert json.loads((agent_dir / "auth.json").read_text()) == {}


async def test_api_key_login_saves_the_key(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login")
        await _until_dialog(pilot, app)
        await pilot.press("down", "enter")  # "Sign in with an API key"
        await _until_dialog(pilot, app, "Select provider to configure:")
        await type_text(pilot, "openrouter")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: _login_screen(app) is not None and _login_screen(app).query_one("#login-input").display,
        )
        screen = _login_screen(app)
        assert screen is not None and screen.query_one("#login-input").password  # type: ignore[attr-defined]
        await type_text(pilot, "sk-or-test-key")
        await pilot.press("enter")
        await _until_notice(pilot, app, "Saved API key for OpenRouter")
    assert json.loads((agent_dir / "auth.json").read_text())["openrouter"] == {
        "type": "api_key",
        "key": "sk-or-test-key",
    }


async def test_a_cloudflare_key_login_asks_for_the_ids_too(tmp_path: Path, agent_dir: Path) -> None:
    """pi asks for the account and gateway ids after the key and stores them beside it; so does /login."""
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login cloudflare-ai-gateway")
        await _answer(pilot, app, "Enter Cloudflare API key:", "cf-token")
        await _answer(pilot, app, "Enter Cloudflare account ID:", "acct1")
        await _answer(pilot, app, "Enter Cloudflare AI Gateway ID:", "gw1")
        await _until_notice(pilot, app, "Saved API key for Cloudflare AI Gateway")
    assert json.loads((agent_dir / "auth.json").read_text())["cloudflare-ai-gateway"] == {
        "type": "api_key",
        "key": "cf-token",
        "env": {"CLOUDFLARE_ACCOUNT_ID": "acct1", "CLOUDFLARE_GATEWAY_ID": "gw1"},
    }


@pytest.mark.parametrize(
    ("provider", "method_title", "downs", "answers", "stored"),
    [
        (
            "amazon-bedrock",
            "Select Amazon Bedrock authentication method:",
            1,
            [("Enter AWS profile name:", "work")],
            {"type": "api_key", "env": {"AWS_PROFILE": "work"}},
        ),
        (
            "google-vertex",
            "Select Google Vertex AI authentication method:",
            2,
            [
                ("Enter Google Cloud project ID:", "proj"),
                ("Enter Google Cloud location:", "us-central1"),
                ("Enter service account credentials file path:", "/keys/sa.json"),
            ],
            {
                "type": "api_key",
                "env": {
                    "GOOGLE_CLOUD_PROJECT": "proj",
                    "GOOGLE_CLOUD_LOCATION": "us-central1",
                    "GOOGLE_APPLICATION_CREDENTIALS": "/keys/sa.json",
                },
            },
        ),
    ],
    ids=["bedrock-profile", "vertex-service-account"],
)
async def test_cloud_logins_ask_the_method_then_what_it_needs(
    tmp_path: Path,
    agent_dir: Path,
    provider: str,
    method_title: str,
    downs: int,
    answers: list[tuple[str, str]],
    stored: dict[str, object],
) -> None:
    """As pi: Bedrock offers a bearer token, an AWS profile or the existing credential chain; Vertex an API
    key, application-default credentials or a service-account file (with project and location)."""
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, f"/login {provider}")
        await _until_dialog(pilot, app, method_title)
        await pilot.press(*(["down"] * downs), "enter")
        for question, value in answers:
            await _answer(pilot, app, question, value)
        await _until_notice(pilot, app, "Saved API key for")
    assert json.loads((agent_dir / "auth.json").read_text())[provider] == stored


async def test_switching_to_claude_on_a_subscription_login_warns_once(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "auth.json").write_text(_subscription_auth())
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert not any("extra usage" in text for text, _ in _notices(app))  # faux: nothing to warn about
        for _ in range(2):
            app.switch_model(app.session.registry.find("anthropic", "claude-sonnet-4-6"), None)
            await pilot.pause()
        warnings = [text for text, _ in _notices(app) if "Anthropic subscription auth is active" in text]
        assert len(warnings) == 1


async def test_the_extra_usage_warning_can_be_turned_off_as_in_pi(tmp_path: Path, agent_dir: Path) -> None:
    """pi 0.87.1's setting ``warnings.anthropicExtraUsage: false`` silences the subscription warning."""
    (agent_dir / "auth.json").write_text(_subscription_auth())
    (agent_dir / "settings.json").write_text(json.dumps({"warnings": {"anthropicExtraUsage": False}}))
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        app.switch_model(app.session.registry.find("anthropic", "claude-sonnet-4-6"), None)
        await pilot.pause()
        await pilot.pause()
        assert not any("Anthropic subscription auth is active" in text for text, _ in _notices(app))
        assert app.session.model.provider == "anthropic"


async def test_escape_in_the_provider_list_goes_back_to_the_method_menu(
    tmp_path: Path, agent_dir: Path
) -> None:
    """As pi: Escape in "Select provider to configure" returns to the method menu; Escape there closes."""
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login")
        await _until_dialog(pilot, app)
        assert app.screen.title_text == "Select authentication method:"
        await pilot.press("down", "enter")  # "Sign in with an API key"
        await _until_dialog(pilot, app, "Select provider to configure:")
        await pilot.press("escape")
        await _until_dialog(pilot, app, "Select authentication method:")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SelectDialog))


async def test_radius_login_asks_browser_or_device_code_then_signs_in(
    tmp_path: Path, agent_dir: Path, auth_server: FakeAuthServer
) -> None:
    auth_server.device_script = ["authorization_pending", "authorization_pending", "ok"]
    auth_server.device_interval = 0.2
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login radius")
        await _until_dialog(pilot, app)
        assert app.screen.title_text == "Select authentication method for Radius:"
        await pilot.press("enter")  # sign in with an account
        await _until_dialog(pilot, app, "Sign in to Radius:")
        await pilot.press("down", "enter")  # the device code
        await _until_login_shows(pilot, app, "ABCD-1234")
        await _until_notice(pilot, app, "Logged in to Radius")
    stored = json.loads((agent_dir / "auth.json").read_text())["radius"]
    assert stored["type"] == "oauth" and stored["access"] in auth_server.valid_access_tokens()


async def test_api_key_provider_rows_are_the_name_and_status_as_in_pi(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi lists a provider by name and status (no id), so rows fit one line; the id still finds it."""
    (agent_dir / "auth.json").write_text(json.dumps({"openrouter": {"type": "api_key", "key": "sk-or-x"}}))
    monkeypatch.setenv("GROQ_API_KEY", "gsk-x")
    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login")
        await _until_dialog(pilot, app)
        await pilot.press("down", "enter")  # "Sign in with an API key"
        await until(
            pilot, lambda: isinstance(app.screen, SelectDialog) and "provider" in app.screen.title_text
        )
        labels = dict(zip(app.screen.values, app.screen.options, strict=True))
        assert labels["cloudflare-ai-gateway"] == "Cloudflare AI Gateway • unconfigured"
        assert labels["openrouter"] == "OpenRouter ✓ configured"
        assert labels["groq"] == "Groq ✓ env: GROQ_API_KEY"
        assert all(len(label) <= 76 for label in labels.values())
        await type_text(pilot, "cloudflare-ai-gateway")  # pi searches ids too
        await pilot.press("enter")
        await until(
            pilot,
            lambda: (
                _login_screen(app) is not None
                and "Enter Cloudflare API key:"
                in str(_login_screen(app).query_one("#login-question").render())
            ),
        )
        await pilot.press("escape")  # cancel the login: nothing is left waiting for an answer
        await until(pilot, lambda: _login_screen(app) is None)


async def test_the_account_list_names_providers_as_pi_does_sorted_by_name(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login")
        await _until_dialog(pilot, app)
        await pilot.press("enter")  # "Sign in with an account"
        await until(pilot, lambda: app.screen.title_text == "Select provider to configure:")
        names = [option.split(" • ")[0].split(" ✓ ")[0] for option in app.screen.options]
        assert names == [
            "Anthropic",
            "GitHub Copilot",
            "Kimi For Coding",
            "Meta",
            "OpenAI Codex",
            "OpenRouter",
            "Radius",
            "xAI",
        ]
        # the filter also knows the login's own name, as pi's does
        await type_text(pilot, "chatgpt")
        await until(pilot, lambda: _shown_rows(app) == ["OpenAI Codex • unconfigured"])
        await pilot.press("escape", "escape")
        # the provider's name finds it, as its id does
        await submit(pilot, app, "/login Kimi For Coding")
        await _until_dialog(pilot, app)
        assert app.screen.title_text == "Select authentication method for Kimi For Coding:"
        assert app.screen.options == ["Sign in with Kimi Code", "Sign in with an API key"]


async def test_a_malformed_auth_json_stops_the_login_before_it_asks_anything(
    tmp_path: Path, agent_dir: Path
) -> None:
    broken = '{"anthropic": {"type": "api_key", "key": "sk-x"'
    (agent_dir / "auth.json").write_text(broken)
    app = make_app(tmp_path, agent_dir)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login groq")
        await until(
            pilot,
            lambda: (
                _login_screen(app) is not None
                or any("Cannot log in to Groq" in text for text, _ in _notices(app))
            ),
        )
        # no key was asked for (it would have been thrown away), and the file is as it was
        assert _login_screen(app) is None
        error = next(text for text, kind in _notices(app) if "Cannot log in to Groq" in text)
        assert str(agent_dir / "auth.json") in error and "invalid JSON" in error and "/login" in error
    assert (agent_dir / "auth.json").read_text() == broken


async def test_providers_from_models_json_take_a_key_too_as_in_pi(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi's API-key list holds the providers models.json adds, under their id, with where their key
    comes from (checked side by side with pi 0.87.1: 40 built-in providers plus these)."""
    model = {"id": "m", "contextWindow": 1000, "maxTokens": 100}
    providers = {
        "local-a": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "k",
            "models": [model],
        },
        "local-b": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "$LOCAL_B_KEY",
            "models": [model],
        },
        "local-c": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "!echo x",
            "models": [model],
        },
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    monkeypatch.setenv("LOCAL_B_KEY", "kb")
    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/login")
        await _until_dialog(pilot, app)
        await pilot.press("down", "enter")  # "Sign in with an API key"
        await _until_dialog(pilot, app, "Select provider to configure:")
        labels = dict(zip(app.screen.values, app.screen.options, strict=True))
        assert len(labels) == 43
        assert labels["local-a"] == "local-a ✓ models_json_key"
        assert labels["local-b"] == "local-b ✓ env: LOCAL_B_KEY"
        assert labels["local-c"] == "local-c ✓ models_json_command"
        await type_text(pilot, "local-a")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: _login_screen(app) is not None and _login_screen(app).query_one("#login-input").display,
        )
        await type_text(pilot, "sk-local")
        await pilot.press("enter")
        await _until_notice(pilot, app, "Saved API key for local-a")
    assert json.loads((agent_dir / "auth.json").read_text())["local-a"] == {
        "type": "api_key",
        "key": "sk-local",
    }
