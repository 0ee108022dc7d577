from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.modes.interactive.blocks import NoticeBlock, UserBlock
from pi_tui.modes.interactive.chat import Notice
from pi_tui.modes.interactive.keys import UNBOUND_KEY

from .helpers import last_user_text, make_app, submit, submit_and_wait, type_text, until


def osc52(text: str) -> str:
    return "\x1b]52;c;" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "\x07"


def _notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.text for b in app.chat.query(NoticeBlock)]


async def _type_import(pilot, app, path: Path) -> None:  # type: ignore[no-untyped-def]
    """``/import PATH`` in the editor: the command typed, the long temporary path put in at once (the pilot
    waits ~0.1 s after each key it presses; key by key, these tests' paths took 40-55 s of the 60 s
    a test may take on a loaded machine)."""
    await type_text(pilot, "/import ")
    app.editor.insert(str(path))
    await pilot.pause()


def _info_text(app) -> str:  # type: ignore[no-untyped-def]
    body = app.screen.query_one("#info-body")
    return "\n".join(line.text for line in body.render_lines(body.region.reset_offset))


async def test_session_name_and_hotkeys_commands(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive.screens.info_screens import InfoScreen

    script = FauxScript(faux_reply("hi"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(120, 60)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "hello")
        await submit_and_wait(pilot, app, "/name refactor")
        await until(pilot, lambda: any("Session name set: refactor" in t for t in _notices(app)))
        await submit(pilot, app, "/session")
        await until(pilot, lambda: isinstance(app.screen, InfoScreen))
        await until(pilot, lambda: "1 user · 1 assistant" in _info_text(app))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, InfoScreen))
        assert app.footer.state.session_name == "refactor"
        assert app.title.startswith("π - refactor")
        await submit(pilot, app, "/hotkeys")
        await until(pilot, lambda: isinstance(app.screen, InfoScreen))
        await until(pilot, lambda: "ctrl+l" in _info_text(app) and "Select a model" in _info_text(app))
        assert script.call_count == 1  # no command reached the model


async def test_unknown_slash_words_go_to_the_model(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(faux_reply("ok"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "/frobnicate now")
        await until(pilot, lambda: script.call_count == 1)
        assert last_user_text(script) == "/frobnicate now"


async def test_new_starts_an_empty_session_and_model_switches_by_name(
    tmp_path: Path, agent_dir: Path
) -> None:
    script = FauxScript(faux_reply("first"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "hello")
        old_id = app.session.session_manager.id
        await submit_and_wait(pilot, app, "/new")
        await until(pilot, lambda: app.session.session_manager.id != old_id)
        assert not list(app.chat.query(UserBlock))
        assert any("New session started" in t for t in _notices(app))
        await submit_and_wait(pilot, app, "/model faux/faux-1")
        await until(pilot, lambda: any(t == "Model: faux-1" for t in _notices(app)))
        await submit_and_wait(pilot, app, "/thinking high")
        assert app.session.thinking == "high" and app.footer.state.thinking == "high"
        assert "-thinking-high" in app.editor.classes


async def test_model_with_a_partial_name_opens_the_picker_on_it_instead_of_guessing(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.modes.interactive.screens.model_screen import ModelScreen

    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        before = app.session.model.label
        await submit(pilot, app, "/model fau")
        await until(pilot, lambda: isinstance(app.screen, ModelScreen))
        assert app.screen.query_one("#model-search").value == "fau"  # type: ignore[attr-defined]
        assert app.session.model.label == before  # nothing switched behind the user's back
        await pilot.press("escape")
        await submit(pilot, app, "/model no-such-model")
        await until(pilot, lambda: isinstance(app.screen, ModelScreen))
        assert app.screen.shown == [] and app.screen.query_one("#model-empty").display  # type: ignore[attr-defined]
        await pilot.press("escape")
        await submit_and_wait(
            pilot, app, "/model FAUX/faux-1"
        )  # an exact reference switches at once, any case
        await until(pilot, lambda: any(t == "Model: faux-1" for t in _notices(app)))


async def test_thinking_picker_starts_on_the_current_level_and_ctrl_s_saves_it_as_default(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.modes.interactive.dialogs import SelectDialog

    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "/thinking low")
        await submit(pilot, app, "/thinking")
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        assert app.screen.chosen() == "low"  # type: ignore[attr-defined]  # the cursor starts on it
        await pilot.press("down")  # medium
        await pilot.press("enter")
        await until(pilot, lambda: app.session.thinking == "medium")
        assert "defaultThinkingLevel" not in _settings_text(agent_dir)  # Enter: this session only
        await submit(pilot, app, "/thinking")
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        await pilot.press("down", "ctrl+s")  # high, saved as the default too (pi 0.84)
        await until(pilot, lambda: app.session.thinking == "high")
        assert json.loads(_settings_text(agent_dir))["defaultThinkingLevel"] == "high"
        assert any(t == "Default thinking level: high" for t in _notices(app))


async def test_thinking_picker_marks_the_current_and_default_levels_and_says_what_each_does(
    tmp_path: Path, agent_dir: Path
) -> None:
    """As pi's selector: ✓ on the session's level, '· default' on the level new sessions start with, and
    a line on each level's reasoning (the filter reads it too)."""
    from pi_tui.modes.interactive.dialogs import SelectDialog

    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "/thinking low")
        await submit(pilot, app, "/thinking")
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        dialog = app.screen
        assert isinstance(dialog, SelectDialog)
        rows = {row.split()[1] if row.startswith("✓") else row.split()[0]: row for row in dialog.options}
        assert rows["low"].startswith("✓ low") and "2k tokens" in rows["low"]
        assert not rows["medium"].startswith("✓") and rows["medium"].endswith("· default")
        assert sum(row.startswith("✓") for row in dialog.options) == 1
        await pilot.press(*"16k", "enter")  # the level's line is searched too: high
        await until(pilot, lambda: app.session.thinking == "high")


def _settings_text(agent_dir: Path) -> str:
    path = agent_dir / "settings.json"
    return path.read_text() if path.exists() else "{}"


async def test_clone_continues_in_a_copy_of_the_conversation_as_pi_does(
    tmp_path: Path, agent_dir: Path
) -> None:
    script = FauxScript(faux_reply("first answer"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "/clone")
        assert any("Nothing to clone yet" in t for t in _notices(app))
        assert script.call_count == 0  # a built-in command, not a prompt for the model
        await submit_and_wait(pilot, app, "hello")
        old = app.session.session_manager
        old_id, old_path = old.id, old.path
        await submit_and_wait(pilot, app, "/clone")
        await until(pilot, lambda: app.session.session_manager.id != old_id)
        assert any("Cloned to new session" in t for t in _notices(app))
        assert [b.text for b in app.chat.query(UserBlock)] == ["hello"]  # the conversation goes on
        clone = app.session.session_manager
        assert clone.path != old_path and str(old_path) in (clone.header.parent_session or "")
        assert script.call_count == 1


async def test_copy_sends_the_last_answer_through_osc52_once(tmp_path: Path, agent_dir: Path) -> None:
    script = FauxScript(faux_reply("copy me"))
    app = make_app(tmp_path, agent_dir, script)
    written: list[str] = []
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        app._driver.write = written.append  # type: ignore[union-attr,method-assign]
        await submit_and_wait(pilot, app, "/copy")
        assert any("No agent messages" in t for t in _notices(app))
        await submit_and_wait(pilot, app, "hello")
        await submit_and_wait(pilot, app, "/copy")
        assert [chunk for chunk in written if "\x1b]52;" in chunk] == [
            osc52("copy me")
        ]  # tmux keeps one buffer
        assert app.clipboard == "copy me"


async def test_copy_uses_the_desktops_clipboard_tool_and_says_when_there_is_none(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("copy me")))
    written: list[str] = []
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        app._driver.write = written.append  # type: ignore[union-attr,method-assign]
        await submit_and_wait(pilot, app, "hello")
        await submit_and_wait(pilot, app, "/copy")  # an X11 desktop with no xclip or xsel installed
        await until(pilot, lambda: any("install xclip or xsel" in t for t in _notices(app)))
        xclip = bin_dir / "xclip"
        xclip.write_text(f'#!/bin/sh\ncat > "{tmp_path / "copied"}"\n')
        xclip.chmod(0o755)
        await submit_and_wait(pilot, app, "/copy")
        await until(pilot, lambda: any("Copied the last answer" in t for t in _notices(app)))
        assert (tmp_path / "copied").read_text() == "copy me"
        assert not [chunk for chunk in written if "\x1b]52;" in chunk]  # the local terminal is not raced
        assert app.clipboard == "copy me"


async def test_quit_closes_the_session_and_prints_how_to_resume(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("a")))
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "hello")
        session_id = app.session.session_manager.id
        await submit(pilot, app, "/quit")
        await until(pilot, lambda: not app.is_running)
    assert app.exit_message == f"To resume this session: pi-tui --session {session_id}"


async def test_keybindings_json_rebinds_an_app_action(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "keybindings.json").write_text(
        json.dumps({"app.tools.expand": "ctrl+e", "toggleThinking": []})
    )
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        app.editor.blur()
        await pilot.press("ctrl+e")
        await until(pilot, lambda: any("Tool output: expanded" in t for t in _notices(app)))
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not any("Thinking blocks" in t for t in _notices(app))


async def test_app_keys_are_textual_bindings_with_pi_ids_keyed_by_the_keymap(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "keybindings.json").write_text(
        json.dumps({"app.tools.expand": "ctrl+e", "toggleThinking": [], "app.session.new": "f5"})
    )
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "abc")
        await pilot.press("left", "left")
        keys: dict[str, set[str]] = {}
        for key, active in app.screen.active_bindings.items():
            if active.binding.id is not None and key != UNBOUND_KEY:  # never pressed: unbound
                keys.setdefault(active.binding.id, set()).add(key)
        assert keys["app.tools.expand"] == {"ctrl+e"} and keys["app.session.new"] == {"f5"}
        assert keys["app.interrupt"] == {"escape"} and keys["tui.altScreen.pageUp"] == {
            "pageup",
            "shift+pageup",
        }
        assert "app.thinking.toggle" not in keys and "app.session.tree" not in keys
        await pilot.press("ctrl+e")  # the editor's end-of-line key, but the app's binding comes first
        await until(pilot, lambda: any("Tool output: expanded" in t for t in _notices(app)))
        await pilot.press("ctrl+o", "ctrl+t", "x")  # the old keys are no app keys any more
        await pilot.pause()
        assert app.editor.text == "axbc"
        assert not any("Thinking blocks" in t for t in _notices(app))
        assert sum("Tool output" in t for t in _notices(app)) == 1


async def test_a_printable_key_bound_to_an_app_action_runs_it_instead_of_typing_as_in_pi(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.tools.expand": "x"}))
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "ab")
        await pilot.press("x")
        await until(pilot, lambda: any("Tool output: expanded" in t for t in _notices(app)))
        assert app.editor.text == "ab"


async def test_shift_tab_cycles_thinking_and_ctrl_t_hides_thinking(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        before = app.session.thinking
        await pilot.press("shift+tab")
        assert app.session.thinking != before
        assert any(t.startswith("Thinking level:") for t in _notices(app))
        await pilot.press("ctrl+t")
        assert app.hide_thinking
        await pilot.press("ctrl+p")
        assert any(t == "Only one model available" for t in _notices(app))


async def test_input_typed_during_startup_is_sent_once_ready(tmp_path: Path, agent_dir: Path) -> None:
    import threading

    release = threading.Event()
    script = FauxScript(faux_reply("late"))
    inner = make_app(tmp_path, agent_dir, script)._create_startup

    def slow(trust: bool | None):  # type: ignore[no-untyped-def]
        release.wait(10)
        return inner(trust)

    from pi_tui.modes.interactive.app import PiApp

    app = PiApp(slow, cwd=tmp_path, agent_dir=agent_dir)
    async with app.run_test() as pilot:
        await type_text(pilot, "early bird")
        await pilot.press("enter")
        await until(pilot, lambda: any("Startup is still in progress" in t for t in _notices(app)))
        release.set()
        await until(pilot, lambda: script.call_count == 1 and not app._busy)
        assert last_user_text(script) == "early bird"


async def test_keybindings_json_rebinds_submit_and_new_line(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "keybindings.json").write_text(
        json.dumps({"tui.input.submit": "ctrl+s", "tui.input.newLine": ["enter"], "followUp": []})
    )
    script = FauxScript(faux_reply("ok"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "one")
        await pilot.press("enter")
        await type_text(pilot, "two")
        assert app.editor.text == "one\ntwo"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: script.call_count == 1 and not app._busy)
        assert last_user_text(script) == "one\ntwo"
        assert "alt+enter" not in app.editor.key_actions


async def test_ctrl_p_cycles_only_the_scoped_models_when_enabled_models_is_set(
    tmp_path: Path, agent_dir: Path
) -> None:
    model = {"contextWindow": 100_000, "maxTokens": 4096}
    providers = {
        name: {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": api,
            "apiKey": "k",
            "models": [{"id": mid, **model}],
        }
        for name, api, mid in (
            ("p-one", "openai-completions", "one"),
            ("p-two", "openai-completions", "two"),
            ("p-three", "openai-completions", "three"),
        )
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    (agent_dir / "settings.json").write_text(json.dumps({"enabledModels": ["p-three/three", "p-one/*"]}))
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        seen = []
        for _ in range(3):
            await pilot.press("ctrl+p")
            seen.append(app.session.model.label)
        # as pi: a model outside the scope counts as its first, so the first step lands on the second
        assert seen == ["p-one/one", "p-three/three", "p-one/one"]


async def test_ctrl_p_without_a_scope_never_lands_on_the_scripted_faux_model(
    tmp_path: Path, agent_dir: Path
) -> None:
    """Ctrl+P walks the models the user has keys for, as pi's; pi-tui's offline faux model is offered in
    /model but is no model of theirs to cycle through (it answered prompts with canned text)."""
    model = {"contextWindow": 100_000, "maxTokens": 4096}
    providers = {
        name: {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
               "models": [{"id": mid, **model}]}
        for name, mid in (("p-one", "one"), ("p-two", "two"))
    }  # fmt: skip
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    app = make_app(tmp_path, agent_dir, FauxScript(), ["--model", "p-one/one"])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        seen = []
        for _ in range(4):
            await pilot.press("ctrl+p")
            seen.append(app.session.model.label)
        assert seen == ["p-two/two", "p-one/one", "p-two/two", "p-one/one"]


async def test_ctrl_p_cycles_the_models_scope_given_on_the_command_line(
    tmp_path: Path, agent_dir: Path
) -> None:
    model = {"contextWindow": 100_000, "maxTokens": 4096}
    providers = {
        name: {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
               "models": [{"id": mid, **model}]}
        for name, mid in (("p-one", "one"), ("p-two", "two"), ("p-three", "three"))
    }  # fmt: skip
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    (agent_dir / "settings.json").write_text(json.dumps({"enabledModels": ["p-two/two"]}))  # --models wins
    app = make_app(tmp_path, agent_dir, FauxScript(), ["--models", "p-three/three,p-one/*"])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        seen = []
        for _ in range(3):
            await pilot.press("ctrl+p")
            seen.append(app.session.model.label)
        # as pi: a model outside the scope counts as its first, so the first step lands on the second
        assert seen == ["p-one/one", "p-three/three", "p-one/one"]


async def test_ctrl_p_says_switched_to_the_models_name_and_its_thinking_level_as_pi_does(
    tmp_path: Path, agent_dir: Path
) -> None:
    model = {"contextWindow": 100_000, "maxTokens": 4096}
    providers = {
        "p-one": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
                  "models": [{"id": "one", "name": "One Model", **model}]},
        "p-two": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
                  "models": [{"id": "two", "reasoning": True, **model}]},
        "p-three": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
                    "models": [{"id": "three", "reasoning": True, **model}]},
    }  # fmt: skip
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    scope = ["p-one/one", "p-two/two:medium", "p-three/three:off"]
    (agent_dir / "settings.json").write_text(json.dumps({"enabledModels": scope}))
    app = make_app(tmp_path, agent_dir, FauxScript(), ["--model", "p-one/one"])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        said = []
        for label in ("p-two/two", "p-three/three", "p-one/one"):
            await pilot.press("ctrl+p")
            await until(pilot, lambda label=label: app.session.model.label == label)  # type: ignore[misc]
            said.append(_notices(app)[-1])
        # the model's name (else its id); the level only for a reasoning model thinking at all
        assert said == ["Switched to two (thinking: medium)", "Switched to three", "Switched to One Model"]
        await submit_and_wait(pilot, app, "/model p-two/two")
        await until(pilot, lambda: _notices(app)[-1] == "Model: two")  # /model names the id alone


async def test_saving_a_default_in_the_model_picker_says_so_in_the_chat_as_pi_does(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.modes.interactive.screens.model_screen import ModelScreen

    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/model faux")
        await until(pilot, lambda: isinstance(app.screen, ModelScreen))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, ModelScreen))
        await until(pilot, lambda: bool(_notices(app)) and _notices(app)[-1] == "Default model: faux/faux-1")
        assert not any(t.startswith("Model: ") for t in _notices(app))  # one line says it all


def _fake_xclip(bin_dir: Path, image: bytes | None) -> None:
    bin_dir.mkdir()
    payload = bin_dir / "image.bin"
    if image is not None:
        payload.write_bytes(image)
    script = bin_dir / "xclip"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        f"  *TARGETS*) {'echo TEXT; echo image/png' if image is not None else 'echo TEXT'} ;;\n"
        f'  *image/png*) cat "{payload}" ;;\n'
        "  *) exit 1 ;;\n"
        "esac\n"
    )
    script.chmod(0o755)


async def test_ctrl_v_pastes_a_clipboard_image_as_a_temp_file_path(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"fake image body"
    _fake_xclip(tmp_path / "bin", png)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "look")
        await pilot.press("ctrl+v")
        await until(pilot, lambda: "pi-clipboard-" in app.editor.text)
        text = app.editor.text
        assert text.startswith("look /")  # a space between the word and the path, as pi
        path = Path(text.removeprefix("look "))
        assert path.name.endswith(".png") and path.read_bytes() == png
        path.unlink()


async def test_ctrl_v_without_an_image_says_so_and_changes_nothing(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_xclip(tmp_path / "bin", None)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "look")
        await pilot.press("ctrl+v")
        await until(pilot, lambda: any("No image in the clipboard" in n for n in _notices(app)))
        assert app.editor.text == "look"


async def test_trust_saves_the_chosen_decision_in_trust_json(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive.dialogs import SelectDialog

    project = tmp_path / "proj"
    project.mkdir()
    script = FauxScript(faux_reply("ok"))
    app = make_app(project, agent_dir, script)
    trust_file = agent_dir / "trust.json"
    real = os.path.realpath(project)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit(pilot, app, "/trust")
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        dialog = app.screen
        assert "Saved decision: none" in dialog.message  # type: ignore[attr-defined]
        # nothing here loads only once trusted, so pi reports the session as trusted
        assert "Current session: trusted" in dialog.message  # type: ignore[attr-defined]
        assert [o.strip() for o in dialog.options] == [  # type: ignore[attr-defined]
            "Trust",
            f"Trust parent folder ({os.path.dirname(real)})",
            "Do not trust",
        ]
        await pilot.press("enter")  # Trust
        await until(pilot, lambda: not isinstance(app.screen, SelectDialog))
        assert json.loads(trust_file.read_text()) == {real: True}
        await until(pilot, lambda: any("Saved trust decision: trusted" in t for t in _notices(app)))
        # again: the saved answer is marked and highlighted; the parent folder replaces it
        await submit(pilot, app, "/trust")
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        assert f"Saved decision: trusted ({real})" in app.screen.message  # type: ignore[attr-defined]
        assert app.screen.options[0].startswith("✓")  # type: ignore[attr-defined]
        assert app.screen.chosen() == 0  # type: ignore[attr-defined]
        await pilot.press("down", "enter")
        await until(pilot, lambda: not isinstance(app.screen, SelectDialog))
        assert json.loads(trust_file.read_text()) == {os.path.dirname(real): True}
        await submit(pilot, app, "/trust")
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        assert "(inherited from" in app.screen.message  # type: ignore[attr-defined]
        await pilot.press("escape")  # cancel: nothing changes
        await until(pilot, lambda: not isinstance(app.screen, SelectDialog))
        assert json.loads(trust_file.read_text()) == {os.path.dirname(real): True}
        assert script.call_count == 0  # /trust never reached the model


async def test_import_copies_the_session_file_and_resumes_it(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive.dialogs import ConfirmDialog

    project = tmp_path / "proj"
    project.mkdir()
    script = FauxScript(faux_reply("first answer"))
    app = make_app(project, agent_dir, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "remember the walrus")
        original = app.session.session_manager.path
        assert original is not None and original.exists()
        elsewhere = tmp_path / "outside" / original.name
        elsewhere.parent.mkdir()
        elsewhere.write_bytes(original.read_bytes())
        (tmp_path / "notes.txt").write_text("not a session\n")
        await submit_and_wait(pilot, app, "/new")
        assert not any("remember the walrus" in b.text for b in app.chat.query(UserBlock))
        for bad, why in [
            (tmp_path / "missing.jsonl", "File not found"),
            (tmp_path / "outside", "is a folder"),
            (tmp_path / "notes.txt", "not a pi session file"),
        ]:
            await _type_import(pilot, app, bad)
            app.menu.hide()
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.press("y")
            await until(pilot, lambda w=why: any(w in t for t in _notices(app)))
        before = sorted(p.name for p in original.parent.iterdir())
        await _type_import(pilot, app, elsewhere)
        app.menu.hide()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("n")  # no: nothing copied
        await until(pilot, lambda: any(t == "Import cancelled" for t in _notices(app)))
        assert sorted(p.name for p in original.parent.iterdir()) == before
        await _type_import(pilot, app, elsewhere)
        app.menu.hide()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        copy = original.with_name(original.stem + "-1.jsonl")  # the name is taken by the original
        await until(pilot, lambda: app.session.session_manager.path == copy)
        assert copy.read_bytes() == elsewhere.read_bytes()
        assert original.exists() and elsewhere.exists()
        assert any(
            "remember the walrus" in b.text for b in app.chat.query(UserBlock)
        )  # the imported conversation is on screen
        assert any(f"Session imported from: {elsewhere}" in t for t in _notices(app))
        assert script.call_count == 1  # no /import reached the model


async def test_import_of_a_session_whose_folder_is_gone_asks_to_use_this_one(
    tmp_path: Path, agent_dir: Path
) -> None:
    """As pi 0.87.1: when the imported session's recorded working directory no longer exists, /import asks
    whether to continue in the current one; no cancels, yes resumes the session here."""
    from pi_tui.modes.interactive.dialogs import ConfirmDialog

    project = tmp_path / "proj"
    project.mkdir()
    script = FauxScript(faux_reply("first answer"))
    app = make_app(project, agent_dir, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "remember the walrus")
        original = app.session.session_manager.path
        assert original is not None
        gone = tmp_path / "deleted-project"
        lines = original.read_text().splitlines(keepends=True)
        header = json.loads(lines[0])
        header["cwd"] = str(gone)
        elsewhere = tmp_path / "outside" / "moved.jsonl"
        elsewhere.parent.mkdir()
        elsewhere.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
        await submit_and_wait(pilot, app, "/new")
        new_session = app.session.session_manager.path

        async def import_and_answer(second: str) -> ConfirmDialog:
            await _type_import(pilot, app, elsewhere)
            app.menu.hide()
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.press("y")  # replace the current session: yes
            await until(
                pilot,
                lambda: isinstance(app.screen, ConfirmDialog) and app.screen.title_text != "Import session",
            )
            asked = app.screen
            assert isinstance(asked, ConfirmDialog)
            await pilot.press(second)
            return asked

        asked = await import_and_answer("n")
        assert asked.title_text == "Session cwd not found"
        assert str(gone) in asked.message and str(project) in asked.message
        await until(pilot, lambda: any(t == "Import cancelled" for t in _notices(app)))
        assert app.session.session_manager.path == new_session  # still where we were

        await import_and_answer("y")
        await until(pilot, lambda: any(f"Session imported from: {elsewhere}" in t for t in _notices(app)))
        assert app.session.cwd == project.resolve()
        assert any("remember the walrus" in b.text for b in app.chat.query(UserBlock))
        assert script.call_count == 1


async def test_a_status_replaces_the_one_before_it_while_nothing_came_between(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi's status lines (Ctrl+O, Ctrl+T, Shift+Tab, model switches) update the last one in place
    rather than pile up: pressing Ctrl+O four times leaves one line saying how things are now. A status
    after other output is a new line (the old one stays where it was)."""
    script = FauxScript(faux_reply("hi"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("ctrl+o", "ctrl+o", "ctrl+o")
        await until(pilot, lambda: _notices(app)[-1:] == ["Tool output: expanded"])
        await pilot.press("ctrl+t")
        await until(pilot, lambda: _notices(app)[-1:] == ["Thinking blocks: hidden"])
        assert _notices(app)[1:] == ["Thinking blocks: hidden"]  # after the header
        await submit_and_wait(pilot, app, "hello")
        await pilot.press("ctrl+o")
        await until(pilot, lambda: _notices(app)[-1:] == ["Tool output: collapsed"])
        assert _notices(app)[1:] == ["Thinking blocks: hidden", "Tool output: collapsed"]
        assert [n.text for n in app.chat.items if isinstance(n, Notice)][-2:] == _notices(app)[1:]


async def test_the_start_up_header_stays_at_the_top_after_new_and_a_tree_jump(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi keeps its header (version and keys) above the chat whatever the chat shows; here /new,
    /resume and /tree redrew the chat without it, so the top of the screen was bare."""
    script = FauxScript(faux_reply("hi"), faux_reply("again"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        header = _notices(app)[0]
        assert header.startswith("pi-tui v")
        await submit_and_wait(pilot, app, "hello")
        await submit_and_wait(pilot, app, "/new")
        await until(pilot, lambda: "✓ New session started" in _notices(app))
        assert _notices(app)[0] == header
        await submit_and_wait(pilot, app, "second")
        await app.session.navigate(app.session.session_manager.get_branch()[0].id)
        await until(pilot, lambda: not any(b.text == "second" for b in app.chat.query(UserBlock)))
        assert _notices(app)[0] == header
