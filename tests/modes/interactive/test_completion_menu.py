"""The ``/`` menu: every command reachable by arrow keys, a position count, height from the settings."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.ai.providers.faux import FauxScript

from .helpers import make_app, until


async def test_down_walks_through_every_command_and_the_border_counts(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("slash")
        await until(pilot, lambda: app.menu.is_shown)
        every = [c.value for c in app.router.candidates()]
        assert [c.value for c in app.menu.candidates] == every
        assert len(every) > 15
        assert app.menu.border_subtitle == f"(1/{len(every)})"
        seen = [app.menu.chosen().value]
        for _ in range(len(every) - 1):
            await pilot.press("down")
            seen.append(app.menu.chosen().value)
        assert seen == every  # no wrap inside the first rows: the last command is reached
        assert app.menu.border_subtitle == f"({len(every)}/{len(every)})"
        assert app.menu.size.height == 5  # pi's autocompleteMaxVisible default
        await pilot.press("down")  # past the last: back to the first, as pi
        assert app.menu.chosen().value == every[0]
        await pilot.press("up")
        assert app.menu.chosen().value == every[-1]
        await pilot.press("tab")
        assert app.editor.text == f"/{every[-1]} "


def _marks(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(app.menu.get_option_at_index(i).prompt)[:2] for i in range(3)]


async def test_the_highlighted_completion_carries_pis_arrow(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("slash")
        await until(pilot, lambda: app.menu.is_shown)
        assert _marks(app) == ["→ ", "  ", "  "]
        await pilot.press("down")
        assert _marks(app) == ["  ", "→ ", "  "]
        await pilot.press("up", "up")  # round to the last
        assert _marks(app) == ["  ", "  ", "  "]
        count = app.menu.option_count
        assert str(app.menu.get_option_at_index(count - 1).prompt).startswith("→ ")


async def test_autocomplete_max_visible_sets_the_menu_height(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"autocompleteMaxVisible": 12}))
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("slash")
        await until(pilot, lambda: app.menu.is_shown)
        await pilot.pause()
        assert app.menu.size.height == 12


async def test_a_short_list_shows_no_count(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("slash", "h", "o", "t")
        await until(pilot, lambda: app.menu.is_shown and app.menu.candidates[0].value == "hotkeys")
        assert len(app.menu.candidates) <= 5
        assert app.menu.border_subtitle == ""


async def test_every_command_has_a_description(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        missing = [c.value for c in app.router.candidates() if not c.description.strip()]
        assert missing == []


async def test_each_command_takes_one_row_however_narrow_the_terminal(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(50, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("slash")
        await until(pilot, lambda: app.menu.is_shown)
        await pilot.pause()
        # a long description is cut with an ellipsis instead of wrapping, so five rows show five commands
        assert app.menu.virtual_size.height == len(app.menu.candidates)


async def test_descriptions_start_in_one_column_as_in_pi(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("slash")
        await until(pilot, lambda: app.menu.is_shown)
        columns = set()
        for index, candidate in enumerate(app.menu.candidates):
            prompt = str(app.menu.get_option_at_index(index).prompt)
            assert prompt[2:].startswith(candidate.value)  # after the marker's gutter
            columns.add(prompt.index(candidate.description))
        assert len(columns) == 1
        widest = max(len(c.value) for c in app.menu.candidates)
        assert columns == {2 + min(widest, 30) + 2}  # the gutter, the widest value, two spaces


async def test_enter_on_an_argument_completion_fills_it_in_and_the_next_enter_sends(
    tmp_path: Path, agent_dir: Path
) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press(*"/model fau")
        await until(pilot, lambda: app.menu.is_shown and app.menu.chosen().value == "faux/faux-1")
        await pilot.press("enter")
        await pilot.pause()
        assert app.editor.text == "/model faux/faux-1 "
        assert not app.menu.is_shown  # as pi: the completion is applied and the list closes
        await pilot.press("enter")  # it was stuck here: the list came back and Enter applied it again
        await until(pilot, lambda: app.editor.text == "")


async def test_tab_on_an_argument_completion_closes_the_list(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press(*"/thinking hi")
        await until(pilot, lambda: app.menu.is_shown)
        await pilot.press("tab")
        await pilot.pause()
        assert app.editor.text == "/thinking high " and not app.menu.is_shown


async def test_a_folder_completion_leaves_no_space_and_lists_the_folder(
    tmp_path: Path, agent_dir: Path
) -> None:
    (tmp_path / "srcdir").mkdir()
    (tmp_path / "srcdir" / "inner.py").write_text("x")
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, app.files.ready.is_set)
        await pilot.press(*"see @srcd")
        await until(pilot, lambda: app.menu.is_shown and app.menu.chosen().value == "@srcdir/")
        await pilot.press("tab")
        await pilot.pause()
        assert app.editor.text == "see @srcdir/"  # as pi: the path goes on, no space after a folder
        await until(pilot, lambda: app.menu.is_shown)
        assert [c.value for c in app.menu.candidates] == ["@srcdir/inner.py"]
        await pilot.press("tab")
        await pilot.pause()
        assert app.editor.text == "see @srcdir/inner.py "


async def test_the_menu_lists_the_commands_in_pis_order(tmp_path: Path, agent_dir: Path) -> None:
    """A user who knows pi finds its commands where pi puts them: /settings first, /quit last of the
    built-ins (the list began with /model, /thinking, /new)."""
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await pilot.press("slash")
        await until(pilot, lambda: app.menu.is_shown)
        shown = [c.value for c in app.menu.candidates]
    pis_order = [
        "settings", "model", "tree", "thinking", "export", "import", "copy", "name", "session", "hotkeys",
        "fork", "clone", "trust", "login", "logout", "new", "compact", "resume", "reload", "quit",
    ]  # fmt: skip
    assert [name for name in shown if name in pis_order] == pis_order
    assert shown[:4] == ["settings", "model", "tree", "thinking"] and shown[-1] == "quit"


async def test_a_file_mention_shows_the_name_then_its_path(tmp_path: Path, agent_dir: Path) -> None:
    """pi lists ``util.py  src/util.py`` (the name, then where it is); the menu showed ``@src/util.py``."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "util.py").write_text("x")
    (tmp_path / "calc.py").write_text("x")
    app = make_app(tmp_path, agent_dir, FauxScript())
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set)
        await until(pilot, app.files.ready.is_set)
        await pilot.press(*"see @")
        await until(pilot, lambda: app.menu.is_shown)
        rows = [" ".join(str(app.menu.get_option_at_index(i).prompt)[2:].split()) for i in range(3)]
        assert rows == ["src/ src", "calc.py calc.py", "util.py src/util.py"]
        await pilot.press("down", "down", "tab")
        await pilot.pause()
        assert app.editor.text == "see @src/util.py "
