from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from pi_tui.ai.providers.faux import FauxScript, faux_reply, faux_thinking
from pi_tui.modes.interactive import app as app_module
from pi_tui.modes.interactive.blocks import NoticeBlock, ThinkingBlock
from pi_tui.modes.interactive.screens._dialogs import PromptScreen
from pi_tui.modes.interactive.screens.settings_screen import SettingsScreen
from pi_tui.modes.interactive.screens.tree_screen import ForkScreen, TreeScreen

from .helpers import make_app, submit_and_wait, type_text, until


def _notices(app: Any) -> list[str]:
    return [b.text for b in app.chat.query(NoticeBlock)]


def _settings(agent_dir: Path, values: dict[str, Any]) -> None:
    (agent_dir / "settings.json").write_text(json.dumps(values))


def _saved(agent_dir: Path) -> dict[str, Any]:
    return json.loads((agent_dir / "settings.json").read_text())


async def test_hide_thinking_setting_hides_live_and_loaded_thinking_and_ctrl_t_saves_it(
    tmp_path: Path, agent_dir: Path
) -> None:
    """Hidden thinking is pi's one italic "Thinking..." line (not nothing); Ctrl+T shows it whole again,
    says "Thinking blocks: visible" as pi does and saves ``hideThinkingBlock``; it also undoes a click
    that showed one block."""
    _settings(agent_dir, {"hideThinkingBlock": True})
    script = FauxScript(faux_reply(faux_thinking("DEEPTHOUGHT"), "the answer"))
    app = make_app(tmp_path, agent_dir, script)

    def rows(block: ThinkingBlock) -> list[str]:
        return [s.text.strip() for s in block.render_lines(block.region.reset_offset) if s.text.strip()]

    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "think")
        blocks = list(app.chat.query(ThinkingBlock))
        assert blocks and all(block.display and rows(block) == ["Thinking..."] for block in blocks)
        app.reload_chat()  # the same branch mounted again from the session, as on resume
        await pilot.pause()
        blocks = list(app.chat.query(ThinkingBlock))
        assert blocks and all(rows(block) == ["Thinking..."] for block in blocks)
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert all(rows(block) == ["DEEPTHOUGHT"] for block in app.chat.query(ThinkingBlock))
        assert "Thinking blocks: visible" in [b.text for b in app.chat.query(NoticeBlock)]
        block = app.chat.query_one(ThinkingBlock)
        block.toggle()  # a click hides this one
        await pilot.pause()
        assert rows(block) == ["Thinking..."]
        await pilot.press("ctrl+t", "ctrl+t")  # hidden, then every block visible again
        await pilot.pause()
        assert rows(block) == ["DEEPTHOUGHT"]
    assert _saved(agent_dir)["hideThinkingBlock"] is False


LABEL_EXTENSION = """
def register(pi):
    def label(args, ctx):
        ctx.ui.set_hidden_thinking_label(args.strip() or None)

    pi.register_command("label", handler=label)
"""


async def test_an_extension_sets_what_hidden_thinking_shows_until_reload(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi's ``ctx.ui.setHiddenThinkingLabel``: hidden blocks show the extension's label instead of
    "Thinking...", no label restores pi's, and ``/reload`` resets it (pi resets its extension UI)."""
    _settings(agent_dir, {"hideThinkingBlock": True})
    ext = tmp_path / "label.py"
    ext.write_text(LABEL_EXTENSION)
    script = FauxScript(faux_reply(faux_thinking("DEEPTHOUGHT"), "the answer"))
    app = make_app(tmp_path, agent_dir, script, argv=["-e", str(ext)])

    def rows() -> list[str]:
        block = app.chat.query_one(ThinkingBlock)
        return [s.text.strip() for s in block.render_lines(block.region.reset_offset) if s.text.strip()]

    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "think")
        assert rows() == ["Thinking..."]
        await submit_and_wait(pilot, app, "/label Pondering")
        await until(pilot, lambda: rows() == ["Pondering"])
        await submit_and_wait(pilot, app, "/label")
        await until(pilot, lambda: rows() == ["Thinking..."])
        await submit_and_wait(pilot, app, "/label Musing")
        await until(pilot, lambda: rows() == ["Musing"])
        await submit_and_wait(pilot, app, "/reload")
        await until(pilot, lambda: rows() == ["Thinking..."])


async def test_editor_padding_comes_from_the_setting_and_follows_settings_screen(
    tmp_path: Path, agent_dir: Path
) -> None:
    _settings(agent_dir, {"editorPaddingX": 2})
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        assert app.editor.styles.padding.left == 3 and app.editor.styles.padding.right == 3
        await app.push_screen(SettingsScreen(app.session))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        screen.query_one("#settings-search").value = "editor padding"  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one("#prompt-input").value = "0"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        assert app.editor.styles.padding.left == 1  # applied at once, no restart
    assert _saved(agent_dir)["editorPaddingX"] == 0


async def test_quiet_startup_leaves_out_the_header_unless_verbose(tmp_path: Path, agent_dir: Path) -> None:
    _settings(agent_dir, {"quietStartup": True})
    for verbose in (False, True):
        app = make_app(tmp_path, agent_dir, FauxScript())
        app.verbose_startup = verbose
        async with app.run_test() as pilot:
            await until(pilot, app.ready.is_set)
            await pilot.pause()
            shown = any(text.startswith("pi-tui v") for text in _notices(app))
        assert shown is verbose


async def test_the_header_is_shown_by_default(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.pause()
        assert any(text.startswith("pi-tui v") for text in _notices(app))


async def _double_escape(pilot: Any) -> None:
    await pilot.press("escape")
    await pilot.press("escape")
    await pilot.pause()
    await pilot.pause()


# one app per setting, each its own test: the two workers share them out
@pytest.mark.parametrize(("action", "expected"), [("tree", TreeScreen), ("fork", ForkScreen), ("none", None)])
async def test_double_escape_opens_what_the_setting_says(
    tmp_path: Path, agent_dir: Path, action: str, expected: type | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Which screen the setting opens, not how fast a person presses: on a loaded machine the second
    # Escape was handled more than the 0.5 s of a double press after the first, and nothing opened.
    monkeypatch.setattr(app_module, "DOUBLE_PRESS_SECONDS", 3600.0)
    _settings(agent_dir, {"doubleEscapeAction": action})
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("hi")))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "hello")
        await _double_escape(pilot)
        if expected is None:
            assert app.screen is app.screen_stack[0], action
        else:
            await until(pilot, lambda: type(app.screen) is expected)


async def test_double_escape_does_nothing_with_text_in_the_editor(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("hi")))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "hello")
        await type_text(pilot, "draft")
        app.menu.hide()
        await _double_escape(pilot)
        assert app.screen is app.screen_stack[0] and app.editor.text == "draft"


async def test_toasts_on_the_main_screen_do_not_cover_the_editor(tmp_path: Path, agent_dir: Path) -> None:
    from textual.widgets._toast import Toast

    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "a prompt being typed")
        app.notify("Something happened\non two lines", severity="warning", timeout=30)
        await until(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause()
        toast = app.screen.query_one(Toast)
        assert toast.region.height > 0
        for part in (app.editor, app.footer):
            assert not toast.region.overlaps(part.region), (toast.region, part, part.region)


async def test_themes_from_the_themes_setting_can_be_used_and_picked(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.modes.interactive.screens.settings_screen import ThemePicker
    from pi_tui.modes.interactive.theme import builtin_theme_dir

    data = json.loads((builtin_theme_dir() / "dark.json").read_text())
    data["name"] = "ocean"
    data["colors"]["accent"] = "#0077be"
    (agent_dir / "mine").mkdir()
    (agent_dir / "mine" / "ocean.json").write_text(json.dumps(data))
    _settings(agent_dir, {"themes": ["mine"]})  # relative to the folder of the settings file
    app = make_app(tmp_path, agent_dir, FauxScript(), theme_name="ocean")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        assert app.theme == "pi-ocean"
        await until(pilot, lambda: app.theme_variables.get("pi-accent") == "#0077be")
        await app.push_screen(SettingsScreen(app.session))
        await pilot.pause()
        app.screen.query_one("#settings-search").value = "theme"  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ThemePicker))
        assert "ocean" in app.screen.names  # type: ignore[attr-defined]
        shown = "\n".join(str(s.render()) for s in app.screen.query(Static))
        assert "↑/↓ preview · Enter keep · Esc back" in shown  # its keys, as every dialog says them


async def test_reload_applies_settings_edited_in_the_file(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert app.editor.styles.padding.left == 1 and not app.hide_thinking
        _settings(agent_dir, {"editorPaddingX": 2, "hideThinkingBlock": True})
        await submit_and_wait(pilot, app, "/reload")
        await until(pilot, lambda: app.editor.styles.padding.left == 3)
        assert app.hide_thinking


async def test_reload_applies_a_theme_changed_in_the_settings_file(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        assert app.theme == "pi-dark"
        _settings(agent_dir, {"theme": "light"})
        await submit_and_wait(pilot, app, "/reload")
        await until(pilot, lambda: app.theme == "pi-light")  # as pi's /reload: "… themes …"


async def test_reload_applies_keybindings_edited_in_the_file(tmp_path: Path, agent_dir: Path) -> None:
    """As pi's /reload ("Reloaded keybindings, …"): an app key and an editor key rebound in
    keybindings.json work without a restart, and the old keys stop."""
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        (agent_dir / "keybindings.json").write_text(
            json.dumps({"app.thinking.toggle": ["ctrl+y"], "tui.input.newLine": ["ctrl+k"]})
        )
        await submit_and_wait(pilot, app, "/reload")
        assert not app.hide_thinking
        await pilot.press("ctrl+t")
        assert not app.hide_thinking  # unbound now
        await pilot.press("ctrl+y")
        await until(pilot, lambda: app.hide_thinking)
        await type_text(pilot, "one")
        await pilot.press("ctrl+k")
        await type_text(pilot, "two")
        assert app.editor.text == "one\ntwo"
        assert any(
            isinstance(b, NoticeBlock) and b.text.startswith("Reloaded keybindings, extensions,")
            for b in app.chat.query(NoticeBlock)
        )


async def test_turning_auto_compact_off_in_settings_drops_the_footers_auto_mark_at_once(
    tmp_path: Path, agent_dir: Path
) -> None:
    """The footer followed one change behind (it was refreshed before the setting changed)."""
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        assert "0.0%/200k (auto)" in app.footer.plain(138)
        await app.push_screen(SettingsScreen(app.session))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        screen.query_one("#settings-search").value = "auto-compact"  # type: ignore[attr-defined]
        await pilot.pause()
        await pilot.press("enter")  # a switch: Enter flips it
        await pilot.pause()
        assert "(auto)" not in app.footer.plain(138)
    assert _saved(agent_dir)["compaction"]["enabled"] is False
