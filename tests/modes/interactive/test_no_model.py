"""A first run without any key: the app opens fully, says how to get a model, and works once it has one."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.args import parse_args
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.blocks import NoticeBlock
from pi_tui.modes.interactive.markdown_block import AssistantText
from pi_tui.modes.interactive.screens.info_screens import InfoScreen
from pi_tui.modes.interactive.screens.model_screen import ModelScreen
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text

from .helpers import submit, type_text, until


def no_key_app(cwd: Path, agent_dir: Path, argv: list[str] | None = None) -> PiApp:
    """The app as ``pi-tui`` starts it (`run_interactive`), with no key in the environment."""

    def create(_trust: bool | None) -> Any:
        return create_session(parse_args(argv or []), cwd, allow_no_model=True)

    return PiApp(create, cwd=cwd, agent_dir=agent_dir)


def notices(app: PiApp) -> list[str]:
    return [block.text for block in app.chat.query(NoticeBlock)]


def fake_provider(server: Any) -> dict[str, Any]:
    provider = {
        "baseUrl": server.anthropic_base_url,
        "api": "anthropic-messages",
        "apiKey": "test-key",
        "models": [{"id": "claude-fake", "contextWindow": 200_000, "maxTokens": 8192}],
    }
    return {"providers": {"fake": provider}}


def anthropic_at(server: Any, *, key: bool) -> dict[str, Any]:
    """The built-in anthropic provider, pointed at the fake server; its key only when ``key``."""
    provider = {"baseUrl": server.anthropic_base_url, **({"apiKey": "test-key"} if key else {})}
    return {"providers": {"anthropic": provider}}


async def log_in_with_an_anthropic_key(pilot: Any, app: PiApp, key: str = "sk-ant-test") -> None:
    """/login, "Sign in with an API key", the anthropic provider, ``key``: the dialogs a user goes through,
    each waited for; returns once the key is sent (what follows is the caller's to wait for)."""
    from pi_tui.modes.interactive.dialogs import SelectDialog
    from pi_tui.modes.interactive.screens.login_screen import LoginScreen

    await submit(pilot, app, "/login")
    await until(pilot, lambda: isinstance(app.screen, SelectDialog))
    await pilot.press("down", "enter")  # "Sign in with an API key"
    await until(
        pilot,
        lambda: (
            isinstance(app.screen, SelectDialog) and app.screen.title_text == "Select provider to configure:"
        ),
    )
    await type_text(pilot, "anthropic")
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, LoginScreen))
    await type_text(pilot, key)
    await pilot.press("enter")


async def send(pilot: Any, text_: str) -> None:
    await type_text(pilot, text_)
    await pilot.press("enter")


async def test_without_a_key_the_app_opens_commands_work_and_a_prompt_says_what_is_missing(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = no_key_app(tmp_path, agent_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        assert any("No model available" in n and "ANTHROPIC_API_KEY" in n for n in notices(app))
        assert app.footer.state.model == "no model"
        await send(pilot, "/hotkeys")  # a command works at once (it was queued "until start-up is done")
        await until(pilot, lambda: isinstance(app.screen, InfoScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, InfoScreen))
        before = len(notices(app))
        await send(pilot, "hello there")
        await until(pilot, lambda: len(notices(app)) > before)
        refusal = notices(app)[-1]
        assert "ANTHROPIC_API_KEY" in refusal and "/model" in refusal and "\n" not in refusal
        assert not any("Startup is still in progress" in n for n in notices(app))
        assert app.editor.text == "hello there"  # nothing lost: Enter again once a model is there
        assert app.session.session_manager.get_entries() == []  # nothing sent, nothing saved


async def test_a_provider_added_to_models_json_is_offered_by_model_and_then_prompts_work(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("FIRSTREALANSWER")])])
    app = no_key_app(tmp_path, agent_dir)
    with fake.serve() as server:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, app.ready.is_set)
            (agent_dir / "models.json").write_text(json.dumps(fake_provider(server)))
            await send(pilot, "/model")
            await until(pilot, lambda: isinstance(app.screen, ModelScreen))
            screen = app.screen
            assert isinstance(screen, ModelScreen)
            labels = [m.label for m in screen.models]
            assert "fake/claude-fake" in labels and not any(label.startswith("unknown/") for label in labels)
            await type_text(pilot, "claude-fake")
            await pilot.press("enter")
            await until(pilot, lambda: not isinstance(app.screen, ModelScreen))
            assert app.session.has_model and app.footer.state.model == "claude-fake"
            await send(pilot, "hello")
            await until(
                pilot,
                lambda: (
                    not app._busy and any("FIRSTREALANSWER" in b.text for b in app.chat.query(AssistantText))
                ),
            )
    assert len(fake.requests) == 1 and fake.violations == []
    kinds = [entry.type for entry in app.session.session_manager.get_entries()]
    assert kinds[:1] == ["model_change"] and "message" in kinds


async def test_a_model_without_a_key_opens_says_which_variable_and_works_once_the_key_is_configured(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("KEYEDANSWER")])])
    with fake.serve() as server:
        (agent_dir / "models.json").write_text(json.dumps(anthropic_at(server, key=False)))
        app = no_key_app(tmp_path, agent_dir, ["--provider", "anthropic"])
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, app.ready.is_set)
            assert any("No API key for anthropic: set ANTHROPIC_API_KEY" in n for n in notices(app))
            before = len(notices(app))
            await send(pilot, "hello")
            await until(pilot, lambda: len(notices(app)) > before)
            refusal = notices(app)[-1]
            assert "No API key for anthropic: set ANTHROPIC_API_KEY" in refusal and "models.json" in refusal
            assert fake.requests == []
            (agent_dir / "models.json").write_text(json.dumps(anthropic_at(server, key=True)))
            await pilot.press("enter")  # the refused prompt is still in the editor
            await until(
                pilot,
                lambda: not app._busy and any("KEYEDANSWER" in b.text for b in app.chat.query(AssistantText)),
            )
    assert len(fake.requests) == 1


async def test_the_faux_model_can_be_picked_without_any_key(tmp_path: Path, agent_dir: Path) -> None:
    app = no_key_app(tmp_path, agent_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await app.run_command("/model faux/faux-1")
        assert app.session.has_model and app.footer.state.model == "faux-1"
        await send(pilot, "hi")
        await until(
            pilot, lambda: not app._busy and any("faux" in b.text for b in app.chat.query(AssistantText))
        )


async def test_after_a_failed_start_up_input_says_why_and_quit_still_works(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = no_key_app(tmp_path, agent_dir, ["--model", "no-such-model-anywhere"])
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: any("no-such-model-anywhere" in n for n in notices(app)))
        await send(pilot, "hello")
        await until(pilot, lambda: any("pi-tui could not start" in n for n in notices(app)))
        assert not any("Startup is still in progress" in n for n in notices(app))
        assert app.editor.text == "hello"
        app.editor.set_text("")
        await send(pilot, "/quit")
        await until(pilot, lambda: app.return_code is not None)


@pytest.mark.slow
def test_a_first_run_without_keys_in_a_terminal_explains_and_runs_faux_once_picked(
    tmp_path: Path, isolated_home: Path
) -> None:
    agent_dir = isolated_home / ".pi" / "agent"
    project = tmp_path / "project"
    project.mkdir()
    env = {
        "HOME": str(isolated_home),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
    }
    with PtyScreen([sys.executable, "-m", "pi_tui"], cwd=project, env=env, columns=120, lines=40) as term:
        term.wait_for(lambda s: "No model available" in s and "no model" in s, timeout=30)
        assert "%/" not in term.text()  # no context share without a model
        term.send("hello")
        term.wait_for("hello")
        term.send("\r")
        term.wait_for(lambda s: s.count("No model available") >= 2, timeout=30)  # the refusal, one line
        screen = term.text()
        assert "Startup is still in progress" not in screen and "ANTHROPIC_API_KEY" in screen
        term.send("\x03")  # Ctrl+C clears the kept prompt
        term.send("/model faux/faux-1")
        term.wait_for("/model faux/faux-1")
        term.wait_for(lambda s: s.count("faux/faux-1") >= 2)  # the completion menu offers it
        term.send("\x1b")  # close the completion menu, keep the text
        term.wait_for(lambda s: s.count("faux/faux-1") == 1)
        term.send("\r")
        term.wait_for(lambda s: "Model: faux-1" in s, timeout=30)
        term.send("hi there\r")
        term.wait_for("faux provider", timeout=30)
        term.send("\x03\x03")
        assert term.wait_exit(timeout=20) == 0


async def test_after_an_api_key_login_from_no_model_prompts_work_without_a_restart(
    tmp_path: Path, agent_dir: Path
) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("LOGGEDINANSWER")])])
    with fake.serve() as server:
        (agent_dir / "models.json").write_text(json.dumps(anthropic_at(server, key=False)))
        app = no_key_app(tmp_path, agent_dir)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, app.ready.is_set)
            assert not app.session.has_model
            assert any("/login" in n for n in notices(app))  # the command exists: the help names it
            await log_in_with_an_anthropic_key(pilot, app)
            await until(pilot, lambda: app.session.has_model)
            assert app.session.model.provider == "anthropic"
            # one line says it all, as in pi: no separate "Model: …" line after the login's
            await until(pilot, lambda: any("Saved API key for Anthropic." in n for n in notices(app)))
            saved = next(n for n in notices(app) if "Saved API key for Anthropic." in n)
            assert f"Selected {app.session.model.id}." in saved
            assert not [n for n in notices(app) if n.startswith("Model:")]
            await send(pilot, "hello")
            await until(
                pilot,
                lambda: (
                    not app._busy and any("LOGGEDINANSWER" in b.text for b in app.chat.query(AssistantText))
                ),
            )
    assert len(fake.requests) == 1


async def test_the_model_picker_says_how_to_add_a_provider(tmp_path: Path, agent_dir: Path) -> None:
    """With no key only faux is offered: the picker says why the others are missing and names /login."""
    from textual.widgets import Static

    app = no_key_app(tmp_path, agent_dir)
    async with app.run_test(size=(70, 20)) as pilot:
        await until(pilot, app.ready.is_set)
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, ModelScreen))
        hint = str(app.screen.query_one("#model-hint", Static).render())
        assert "/login" in hint and "key" in hint


async def test_opening_the_model_picker_does_not_repeat_the_no_model_warning(
    tmp_path: Path, agent_dir: Path
) -> None:
    """The start-up warning says once how to get a model; the picker says it again itself, so opening
    /model adds nothing to the chat, and picking faux leaves just the "Model:" line."""
    app = no_key_app(tmp_path, agent_dir)
    async with app.run_test(size=(70, 20)) as pilot:
        await until(pilot, app.ready.is_set)
        assert sum("No model available" in n for n in notices(app)) == 1
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, ModelScreen))
        await pilot.press("enter")  # faux, the only model offered
        await until(pilot, lambda: any(n == "Model: faux-1" for n in notices(app)))
        assert sum("No model available" in n for n in notices(app)) == 1
        assert notices(app)[-1] == "Model: faux-1"
