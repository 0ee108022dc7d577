from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Input

from pi_tui.modes.interactive.keys import UNBOUND_KEY


class _Keyed(App[None]):
    BINDINGS = [
        Binding("ctrl+e", "mark('default')", priority=True, id="demo.default"),
        Binding(UNBOUND_KEY, "mark('declared')", priority=True, id="demo.declared"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.marks: list[str] = []

    def compose(self) -> ComposeResult:
        yield Input()

    def action_mark(self, name: str) -> None:
        self.marks.append(name)


async def test_textuals_keymap_cannot_unbind_a_binding_with_a_key_of_its_own() -> None:
    # Why keys.app_bindings declares every app action on UNBOUND_KEY: an id mapped to "" keeps its key.
    app = _Keyed()
    async with app.run_test() as pilot:
        app.set_keymap({"demo.default": ""})
        await pilot.press("ctrl+e")
        assert app.marks == ["default"]


async def test_a_binding_on_the_unbound_key_runs_only_on_the_keys_the_keymap_gives_it() -> None:
    app = _Keyed()
    async with app.run_test() as pilot:
        await pilot.press("ctrl+e", "f5", "p", "i", "full_stop", "u")
        app.set_keymap({"demo.declared": "f5"})
        await pilot.press("f5")
        assert app.marks == ["default", "declared"]
        assert app.query_one(Input).value == "pi.u"
