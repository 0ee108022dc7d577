"""Pause points: a long loop in a background thread lets the user's keys go first (`pausing`), and
costs nothing anywhere else."""

from __future__ import annotations

import threading

from pi_tui.ai.stream import LlmRequest
from pi_tui.ai.types import UserMessage
from pi_tui.context.request import fingerprint
from pi_tui.util.pause_points import pause_point, pausing, sleep_while


def test_fingerprinting_a_long_request_reaches_a_pause_point_every_128_messages() -> None:
    messages = [UserMessage(content=f"message {n}", timestamp=n) for n in range(1100)]
    calls: list[int] = []
    with pausing(lambda: calls.append(1)):
        blocks = fingerprint(LlmRequest(system_prompt="sys", messages=list(messages), tools=[]))
    assert len(calls) == 9  # messages 0, 128, …, 1024
    assert len(blocks) == 1101
    fingerprint(LlmRequest(system_prompt="other", messages=list(messages), tools=[]))
    assert len(calls) == 9  # outside `pausing`: no wait


def test_a_wait_applies_to_its_own_thread_only() -> None:
    calls: list[str] = []

    def other_thread() -> None:
        pause_point()

    with pausing(lambda: calls.append(threading.current_thread().name)):
        thread = threading.Thread(target=other_thread, name="other")
        thread.start()
        thread.join(10)
        pause_point()
    assert calls == [threading.current_thread().name]


def test_sleep_while_returns_once_the_keys_paused() -> None:
    reports = [0.001, 0.001, 0.0, 5.0]  # seconds left, as the clock of the keys says at each look

    def pending() -> float:
        return reports.pop(0)

    sleep_while(pending)()
    assert reports == [5.0]  # stopped looking at the first "paused"
