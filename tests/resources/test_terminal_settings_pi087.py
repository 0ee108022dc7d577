"""pi 0.87.1's terminal and transcript settings read by `SettingsManager`, with pi's defaults and rules."""

from __future__ import annotations

import pytest

from pi_tui.resources.settings import SettingsManager


def test_defaults_are_pis() -> None:
    settings = SettingsManager.in_memory()
    assert settings.fullscreen_scrollbar == "auto"
    assert settings.fullscreen_copy_on_select is True
    assert settings.output_pad == 1
    assert settings.terminal.show_terminal_progress is False
    assert settings.terminal.hyperlinks is None and settings.terminal.true_color is None  # detect
    assert settings.markdown.mermaid == "streaming"


def test_values_are_read_and_unknown_ones_fall_back() -> None:
    settings = SettingsManager.in_memory(
        {
            "fullscreenScrollbar": "hidden",
            "fullscreenCopyOnSelect": False,
            "outputPad": 0,
            "terminal": {"showTerminalProgress": True, "hyperlinks": False, "trueColor": True},
            "markdown": {"mermaid": "final"},
        }
    )
    assert settings.fullscreen_scrollbar == "hidden"
    assert settings.fullscreen_copy_on_select is False
    assert settings.output_pad == 0
    assert settings.terminal.show_terminal_progress is True
    assert (settings.terminal.hyperlinks, settings.terminal.true_color) == (False, True)
    assert settings.markdown.mermaid == "final"
    odd = SettingsManager.in_memory(
        {"fullscreenScrollbar": "sometimes", "outputPad": 3, "markdown": {"mermaid": "yes"}}
    )
    assert (odd.fullscreen_scrollbar, odd.output_pad, odd.markdown.mermaid) == ("auto", 1, "streaming")


@pytest.mark.parametrize(
    ("setting", "variable", "expected"),
    [
        (None, None, None),
        ("auto", "1", True),  # "auto" leaves it to the variable
        (None, "0", False),
        (None, "yes", None),  # only 1 and 0 count
        (True, "0", True),  # the setting wins over the variable, as in pi
        (False, "1", False),
    ],
)
def test_capability_overrides_setting_then_variable(
    monkeypatch: pytest.MonkeyPatch, setting: object, variable: str | None, expected: bool | None
) -> None:
    for name in ("PI_HYPERLINKS", "PI_TRUE_COLOR"):
        if variable is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, variable)
    terminal = {} if setting is None else {"hyperlinks": setting, "trueColor": setting}
    values = SettingsManager.in_memory({"terminal": terminal}).terminal
    assert (values.hyperlinks, values.true_color) == (expected, expected)
