"""A scripted `Interaction` for login tests: it records what the flow showed and answers its questions."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from pi_tui.ai.oauth import AuthEvent, AuthPrompt, LoginCancelled


@dataclass
class ScriptedInteraction:
    """``on_event`` runs for each event (a test plays the browser there); ``answer`` answers prompts.

    With ``answer`` None a ``manual_code`` prompt waits until the flow withdraws it (nobody pastes).
    """

    on_event: Callable[[AuthEvent], None] | None = None
    answer: Callable[[AuthPrompt], str] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    events: list[AuthEvent] = field(default_factory=list)
    prompts: list[AuthPrompt] = field(default_factory=list)

    def notify(self, event: AuthEvent) -> None:
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def prompt(self, prompt: AuthPrompt) -> str:
        self.prompts.append(prompt)
        if self.answer is not None:
            return self.answer(prompt)
        while not prompt.withdrawn.wait(0.05):
            if self.cancel.is_set():
                raise LoginCancelled()
        return ""
