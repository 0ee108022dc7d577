"""The Textual internals pi-tui relies on: these fail if Textual changes them (then adapt
`pi_tui.modes.interactive.terminal_driver` or `pi_tui.modes.interactive.textual_private`, the only modules
that touch them)."""

from __future__ import annotations

import asyncio
import gc
import inspect
import os
import re
import weakref
from typing import Any

import pytest
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual._compositor import Compositor
from textual._xterm_parser import XTermParser
from textual.app import App, ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.drivers._writer_thread import WriterThread
from textual.drivers.linux_driver import LinuxDriver
from textual.layouts.stream import StreamLayout
from textual.screen import Screen
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown, Static

from pi_tui.modes.interactive.terminal_driver import TerminalOutput, register_alt_enter
from pi_tui.modes.interactive.textual_private import (
    RedrawnScreen,
    app_is_exiting,
    free_layout_maps_promptly,
    full_map_kept_after_reflow,
    note_changed_children,
    own_vertical_scrollbar,
    release_removed,
    report_error,
    strips_never_cache_themselves,
    uncaught_exception,
    with_component_nodes,
)

_TEXTUAL_REFLOW = Compositor.reflow  # as Textual has it (collected before any app patches it)


def test_the_linux_driver_writes_the_screen_through_its_file_attribute() -> None:
    # GuardedDriver replaces `_file`; LinuxDriver must hand exactly that to its writer thread.
    assert "self._file = sys.__stderr__" in inspect.getsource(LinuxDriver.__init__)
    assert "WriterThread(self._file)" in inspect.getsource(LinuxDriver.start_application_mode)


def test_the_writer_thread_uses_only_write_and_flush_of_its_file() -> None:
    read_end, write_end = os.pipe()
    lost: list[bool] = []
    output = TerminalOutput(write_end, lambda: lost.append(True))
    writer = WriterThread(output)  # type: ignore[arg-type]  # the duck-typed file, as GuardedDriver gives it
    writer.start()
    writer.write("frame one ")
    writer.write("frame two")
    writer.stop()
    output.close()
    assert os.read(read_end, 100) == b"frame one frame two"
    os.close(read_end)
    assert lost == []


def test_esc_cr_is_alt_enter_and_cr_stays_enter() -> None:
    register_alt_enter()
    parser = XTermParser()
    keys = [token.key for token in parser.feed("\x1b\r") if isinstance(token, events.Key)]
    keys += [token.key for token in parser.feed("\r") if isinstance(token, events.Key)]
    assert keys == ["alt+enter", "enter"]


def test_the_screen_calls_only_pause_and_resume_on_its_update_timer() -> None:
    source = inspect.getsource(Screen)
    assert set(re.findall(r"self\._update_timer\.(\w+)", source)) == {"pause", "resume"}
    assert "def _update_timer(self)" in source and "def _on_timer_update(self)" in source


class _Counting:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def pause(self) -> None:
        self.calls.append("pause")

    def resume(self) -> None:
        self.calls.append("resume")


class _Redrawn(RedrawnScreen):
    def __init__(self) -> None:
        super().__init__()
        self.timer = _Counting()

    def make_update_timer(self) -> Any:
        return self.timer


async def test_a_redrawn_screen_gets_its_updates_through_its_own_timer() -> None:
    app: App[None] = App()
    async with app.run_test() as pilot:
        screen = _Redrawn()
        await app.push_screen(screen)
        screen.refresh()
        await pilot.pause()
        assert "resume" in screen.timer.calls  # Textual asked our timer for the redraw
        screen.update_now()  # and the update it would have run draws and pauses the timer
        assert screen.timer.calls[-1] == "pause"


async def test_exiting_and_the_exception_handler_are_where_the_pacer_looks() -> None:
    app: App[None] = App()
    with pytest.raises(ValueError, match="a frame failed"):  # run_test re-raises what ended the app
        async with app.run_test() as pilot:
            assert app_is_exiting(app) is False
            assert uncaught_exception(app) is None
            try:
                raise ValueError("a frame failed")
            except ValueError as error:  # as the pacer calls it: in the handler of the frame's failure
                report_error(app, error)
            assert app_is_exiting(app) is True  # the handler shows the error and exits, as for a timer
            await pilot.pause()
    assert app.return_code == 1
    crash = uncaught_exception(app)
    assert isinstance(crash, ValueError) and str(crash) == "a frame failed"


async def test_mutating_the_theme_reactive_applies_a_re_registered_theme() -> None:
    from textual.theme import Theme

    app: App[None] = App()
    async with app.run_test() as pilot:
        app.register_theme(Theme(name="mine", primary="#112233"))
        app.theme = "mine"
        await pilot.pause()
        assert app.get_css_variables()["primary"].lower() == "#112233"
        app.register_theme(Theme(name="mine", primary="#445566"))
        app.mutate_reactive(App.theme)
        await asyncio.sleep(0)
        await pilot.pause()
        assert app.get_css_variables()["primary"].lower() == "#445566"


def test_the_linux_driver_builds_its_key_parser_from_its_module_global() -> None:
    # install_input_filter replaces `textual.drivers.linux_driver.XTermParser`; the input loop must look
    # that name up when it starts, not hold its own reference.
    assert "XTermParser" in LinuxDriver.run_input_thread.__code__.co_names
    assert "parser = XTermParser(self._debug)" in inspect.getsource(LinuxDriver.run_input_thread)


def test_the_stream_layout_reads_the_screens_layout_requests_after_pre_layout() -> None:
    source = inspect.getsource(StreamLayout.arrange)
    hook = source.index("parent.pre_layout(self)")
    assert source.index("parent.screen._layout_widgets.get(parent") > hook


class _Stream(VerticalScroll):
    DEFAULT_CSS = "_Stream { layout: stream; } _Stream > Vertical { height: auto; }"

    def __init__(self, *, fix: bool) -> None:
        super().__init__()
        self.fix = fix
        self.counts: dict[Any, int] = {}
        self.asked: list[set[str]] = []

    def pre_layout(self, layout: Any) -> None:
        if self.fix:
            note_changed_children(self, self.counts)
        asked = self.screen._layout_widgets.get(self)
        self.asked.append({str(widget.id) for widget in asked or ()})


@pytest.mark.parametrize("fix", [False, True])
async def test_a_child_grown_from_inside_can_miss_the_layout_requests_unless_noted(fix: bool) -> None:
    class Host(App[None]):
        def compose(self) -> Any:
            with _Stream(fix=fix):
                with Vertical(id="grown"):
                    yield Static("one", id="text")
                yield Static("other", id="other")

    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        stream = app.query_one(_Stream)
        stream.pre_layout(StreamLayout())  # the counts as they are now
        with app.batch_update():  # two requests before one layout: something inside the first child,
            app.query_one("#text", Static).update("1\n2\n3")  # then the other child
            await pilot.pause()
            app.query_one("#other", Static).update("changed")
            await pilot.pause()
            stream.asked.clear()
        await pilot.pause()
        # Textual records only the child that asked itself; noted, the grown one is there too.
        assert stream.asked[0] == ({"other", "grown"} if fix else {"other"})
        assert app.query_one("#grown").size.height == 3


async def test_a_removed_and_released_widget_is_freed_without_the_cycle_collector() -> None:
    # `release_removed` unlinks a node's CSS and inline styles (which refer back to it; Textual's other
    # links back to a widget are weak), and `free_layout_maps_promptly` empties what the compositor's
    # recursive placing function (a cycle) keeps after each layout. Either missing keeps the widget.
    free_layout_maps_promptly()
    placed = inspect.signature(Compositor._arrange_root).parameters
    assert list(placed)[:4] == ["self", "root", "size", "visible_only"]

    class Host(App[None]):
        def compose(self) -> Any:
            yield VerticalScroll(Static("one"), Static("two"), id="host")

    gc.collect()
    gc.disable()
    try:
        async with Host().run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            widget = pilot.app.query_one("#host").children[0]
            assert widget._css_styles.node is widget and widget._inline_styles.node is widget
            gone = weakref.ref(widget)
            await widget.remove()
            release_removed([widget])
            del widget
            await pilot.app.query_one("#host").mount(Static("three"))  # the host's caches made again
            await pilot.pause()
            assert gone() is None
    finally:
        gc.enable()
        gc.collect()


async def test_component_class_nodes_are_found_before_removal_and_freed_once_released() -> None:
    # Textual styles a widget's component classes through one virtual node each, kept only by the
    # widget's ``_component_styles`` and by their own styles (a cycle), and empties that map on removal:
    # `with_component_nodes` must gather them before, and `release_removed` cut their cycles.
    class Host(App[None]):
        def compose(self) -> Any:
            yield VerticalScroll(Markdown("Some *em* and **strong**."), id="host")

    gc.collect()
    gc.disable()
    try:
        async with Host().run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            markdown = pilot.app.query_one(Markdown)
            nodes = with_component_nodes(markdown.walk_children(with_self=True))
            virtual = [node for node in nodes if not isinstance(node, Widget)]
            assert virtual and all(node._css_styles.node is node for node in virtual)
            gone = [weakref.ref(node) for node in virtual]
            await markdown.remove()
            assert not markdown._component_styles  # Textual forgot them: they had to be gathered before
            release_removed(nodes)
            del markdown, nodes, virtual
            assert [ref() for ref in gone if ref() is not None] == []
    finally:
        gc.enable()
        gc.collect()


def test_whole_line_crops_and_divisions_are_the_strip_itself_and_leave_no_cycle() -> None:
    # Textual's crop_extend and divide cache their result in the strip, the strip itself included (a
    # cycle per line drawn); patched, they return the same strips without caching the strip in itself.
    strips_never_cache_themselves()
    style = Style(bold=True)
    line = Strip([Segment("hello ", style), Segment("world")], 11)
    assert line.crop_extend(0, 11, None) is line
    assert list(line.divide([11])) == [line] and list(line.divide([11, 20])) == [line]
    padded = line.crop_extend(0, 14, style)
    assert padded.text == "hello world   " and padded.cell_length == 14
    assert line.crop_extend(6, 11, None).text == "world"
    assert [strip.text for strip in line.divide([5, 11])] == ["hello", " world"]
    # Strips take no weak references: a strip left to the collector shows in what it finds.
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for use in (lambda strip: strip.crop_extend(0, 11, None), lambda strip: strip.divide([11])):
            strip = Strip([Segment("hello ", style), Segment("world")], 11)
            use(strip)
            del strip
            gc.collect()
            # Only this test's strips count: a strip another test's app left behind may be collected too.
            mine = [found for found in gc.garbage if isinstance(found, Strip) and found.text == "hello world"]
            assert mine == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.mark.parametrize("fix", [False, True])
async def test_a_layout_leaves_the_map_of_every_widget_up_to_date(
    fix: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A frame with an off-screen widget repainted and a layout: Textual's reflow arranges every widget,
    # but the map stays flagged out of date, so asking where an off-screen widget is arranged them all
    # again; kept (`full_map_kept_after_reflow`), the question is answered from the layout's map.
    if fix:
        full_map_kept_after_reflow()
    else:
        monkeypatch.setattr(Compositor, "reflow", _TEXTUAL_REFLOW)
    arranged: list[bool] = []
    arrange = Compositor._arrange_root

    def counting(self: Compositor, root: Any, size: Any, visible_only: bool = True) -> Any:
        arranged.append(visible_only)
        return arrange(self, root, size, visible_only)

    monkeypatch.setattr(Compositor, "_arrange_root", counting)
    assert "_full_map_invalidated" in inspect.getsource(Compositor.update_widgets)

    class Host(App[None]):
        def compose(self) -> Any:
            yield VerticalScroll(*(Static(f"line {n}", id=f"s{n}") for n in range(40)), id="host")

    async with Host().run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        below = pilot.app.query_one("#s30", Static)
        assert below.region.y >= 10  # below the screen
        compositor = screen._compositor
        compositor.update_widgets({below})  # a frame with it repainted off screen flags the map
        assert compositor._full_map_invalidated
        compositor.reflow(screen, screen.size)  # and that frame's layout
        arranged.clear()
        assert compositor.find_widget(below).virtual_region.y == 30
        assert arranged == ([] if fix else [False])


def test_a_static_keeps_the_visual_of_a_rich_renderable_which_refers_back_to_it() -> None:
    # `release_removed` empties the visual a Static keeps (a name-mangled private attribute).
    from rich.markdown import Markdown as RichMarkdown
    from textual.visual import RichVisual

    static = Static("")
    static.update(RichMarkdown("*thought*"))
    visual = vars(static)["_Static__visual"]
    assert isinstance(visual, RichVisual) and visual._widget is static
    assert static._layout_cache is not None


class _OwnBar(ScrollBar):
    pass


class _Scrolled(VerticalScroll):
    @property
    def vertical_scrollbar(self) -> ScrollBar:
        return own_vertical_scrollbar(self, lambda: _OwnBar(vertical=True, name="vertical"))


async def test_a_scroll_views_own_vertical_scroll_bar_is_the_one_textual_places_and_draws() -> None:
    class Host(App[None]):
        def compose(self) -> ComposeResult:
            with _Scrolled():
                for n in range(60):
                    yield Static(f"line {n}")

    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        view = app.query_one(_Scrolled)
        bar = view.vertical_scrollbar
        assert type(bar) is _OwnBar and bar is view.vertical_scrollbar
        assert bar.display and bar.parent is view and bar.is_mounted
        assert bar in app.screen._compositor.visible_widgets  # placed by the layout like Textual's own
        view.scroll_end(animate=False)
        await pilot.pause()
        assert bar.position == view.scroll_y > 0
