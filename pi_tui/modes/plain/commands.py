"""Commands the line mode answers itself: ``/model``, ``/thinking``, ``/hotkeys``, ``/quit``.

The shared ones (``/session``, ``/compact``, …) are `pi_tui.modes.commands.BuiltinCommands`; extension
commands and unknown ``/words`` go through ``session.prompt`` as everywhere else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession


from .bridge import PlainUIBridge
from .render import EventPrinter

__all__ = ["PLAIN_COMMANDS", "HOTKEYS", "QUIT", "run_plain_command"]

PLAIN_COMMANDS: dict[str, str] = {
    "hotkeys": "Show the keys of the line mode",
    "model": "Switch model: /model <provider/id[:thinking]> (no argument: pick one)",
    "thinking": "Set the thinking level: /thinking <level> (no argument: pick one)",
    "quit": "Quit pi-tui",
}
"""Commands the line mode answers itself, besides the shared `BUILTIN_COMMANDS`."""

HOTKEYS = """\
Keys in line mode:
  Enter              send the prompt
  Alt+Enter          new line in the prompt
  Up / Down          earlier / later prompts (remembered per project)
  Tab                complete /commands and @files
  Escape or Ctrl+C   abort the answer while the agent works
  Ctrl+C             clear the line; twice on an empty line quits
  Ctrl+D             quit (on an empty line)
  Ctrl+X Ctrl+E      edit the prompt in $EDITOR
  !cmd / !!cmd       run a shell command; its output goes to the model with the next prompt (!! keeps it out)"""

QUIT = object()
"""Returned by `run_plain_command` when the user asked to quit."""


async def run_plain_command(
    text: str, session: AgentSession, bridge: PlainUIBridge, printer: EventPrinter
) -> object:
    """Run ``text`` when it is one of `PLAIN_COMMANDS`: True when handled, `QUIT` to quit, else False."""
    if not text.startswith("/"):
        return False
    name, _, args = text[1:].partition(" ")
    args = args.strip()
    if name in ("quit", "exit"):
        return QUIT
    if name == "hotkeys":
        printer.line(HOTKEYS)
    elif name == "model":
        await _model(args, session, bridge, printer)
    elif name == "thinking":
        await _thinking(args, session, bridge, printer)
    else:
        return False
    return True


async def _model(args: str, session: AgentSession, bridge: PlainUIBridge, printer: EventPrinter) -> None:
    from pi_tui.ai.model_resolver import model_command_target, search_models_for_picker
    from pi_tui.ai.thinking import clamp_thinking_level

    models = session.registry.available_models() if session.registry is not None else []
    # The full-screen app's rule (pi's): an exact name switches at once, anything else is a search.
    target = model_command_target(args, models) if args else None
    chosen, level = target if target is not None else (None, None)
    if chosen is None:
        shown = search_models_for_picker(args, models)
        if not shown:
            printer.line(f"No model matches {args!r}")
            return
        picked = await bridge.select("Select model", [m.label for m in shown])
        if picked is None:
            return
        chosen = next(m for m in shown if m.label == picked)
    if session.is_streaming:
        printer.line("Wait for the answer to finish (or abort it) before switching models.")
        return
    session.set_model(chosen, source="set")
    session.set_thinking_level(clamp_thinking_level(chosen, level if level is not None else session.thinking))
    thinking = f" (thinking: {session.thinking})" if chosen.reasoning else ""
    printer.line(f"Model: {chosen.label}{thinking}")


async def _thinking(args: str, session: AgentSession, bridge: PlainUIBridge, printer: EventPrinter) -> None:
    from pi_tui.ai.thinking import available_thinking_levels, parse_thinking_level

    levels = list(available_thinking_levels(session.model))
    level = parse_thinking_level(args) if args else None
    if level is None:
        if args:
            printer.line(f"Unknown thinking level {args!r}; levels: {', '.join(levels)}")
            return
        picked = await bridge.select("Thinking level", levels)
        if picked is None:
            return
        level = parse_thinking_level(picked)
        if level is None:  # the picker offers only levels
            return
    session.set_thinking_level(level)
    printer.line(f"Thinking level: {session.thinking}")
