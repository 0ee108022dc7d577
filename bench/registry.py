"""The scenario registry: every benchmark module registers its scenarios here, under a doc section.

    from bench.registry import register
    register("my_scenario", run_it, section="tui")   # run_it() -> bench.scenarios.Result

`python -m bench` imports the modules in `MODULES` (a missing optional one is skipped), runs what was
asked for and renders docs/performance.md section by section. Comparisons against pi (`bench.compare`)
have their own table and registry there.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .scenarios import Result

__all__ = ["MODULES", "SECTIONS", "Scenario", "load_all", "register", "scenarios"]

# Doc sections, in order: (key, heading, what it measures).
SECTIONS: dict[str, tuple[str, str]] = {
    "print": ("Print mode", "`pi-tui -p` and friends as subprocesses against the fake LLM server."),
    "tui": ("TUI", "The full-screen interface in a pseudo-terminal."),
    "screens": ("Screens", "Individual screens and dialogs."),
    "checkpoints": (
        "Checkpoints",
        "Checkpoint overhead per tool call on a 1,000-file repository (`bench/checkpoints.py`).",
    ),
    "sandbox": ("Sandbox", "What the OS sandbox adds to starting a command (`bench/sandbox.py`)."),
}

# Modules that register scenarios; ``(module, function)``. Optional ones may not exist yet.
MODULES: list[tuple[str, str, bool]] = [
    ("bench.scenarios", "register_all", True),
    ("bench.tui", "register_all", False),
    ("bench.screens", "register_all", False),
    ("bench.screens_terminal", "register_all", False),
    ("bench.checkpoints", "register_all", False),
    ("bench.sandbox", "register_all", False),
    ("bench.big_sessions", "register_all", False),
    ("bench.tui_big", "register_all", False),
    ("bench.tui_scroll", "register_all", False),
    ("bench.tui_search", "register_all", False),
    ("bench.wire_apis", "register_all", False),
    ("bench.mcp_first_call", "register_all", False),
    ("bench.compact_big", "register_all", False),
]


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[], Result]
    section: str = "print"


_SCENARIOS: dict[str, Scenario] = {}


def register(name: str, run: Callable[[], Result], section: str = "print") -> None:
    """Add (or replace) a scenario. ``section`` is a key of `SECTIONS`."""
    if section not in SECTIONS:
        raise ValueError(f"unknown bench section {section!r}; use one of {', '.join(SECTIONS)}")
    _SCENARIOS[name] = Scenario(name, run, section)


def load_all() -> None:
    for module_name, function, required in MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if required or exc.name != module_name:
                raise
            continue
        getattr(module, function)()


def scenarios() -> dict[str, Scenario]:
    return dict(_SCENARIOS)
