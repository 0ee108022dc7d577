"""After a refusal the user may run the command once outside, or widen the sandbox for the session."""

from __future__ import annotations

from pi_tui.sandbox.diagnose import Refusal
from pi_tui.sandbox.escalation import (
    ALLOW_FOR_SESSION,
    KEEP_REFUSED,
    RUN_ONCE,
    ask_about_refusal,
    choices_for,
)

from .helpers import Box


class Answer:
    """A user who picks ``choice`` and remembers what they were shown."""

    def __init__(self, choice: str | None) -> None:
        self.choice = choice
        self.asked: list[tuple[str, list[str]]] = []

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        self.asked.append((title, options))
        if self.choice is None:
            return None
        return next(o for o in options if o.startswith(self.choice))


def _escalate_with(user: Answer):  # type: ignore[no-untyped-def]
    async def escalate(refusal: Refusal, command: str, note: str) -> str | None:
        return await ask_about_refusal(user, refusal, command, note)

    return escalate


async def test_run_once_outside_reruns_unsandboxed(box: Box) -> None:
    user = Answer(RUN_ONCE)
    box.escalate = _escalate_with(user)
    result = await box.run(f"echo new > {box.outside}/added.txt")
    assert result.ok, result.text
    assert (box.outside / "added.txt").read_text() == "new\n"
    assert result.text.startswith("[sandbox] The user let this command run once outside the sandbox")
    title, options = user.asked[0]
    assert f"echo new > {box.outside}/added.txt" in title and "Refused write to" in title
    assert options == [RUN_ONCE, f"Allow writes to {box.outside} for this session", KEEP_REFUSED]
    # once means once: the next command is sandboxed again
    box.escalate = None
    again = await box.run(f"echo again > {box.outside}/added.txt")
    assert not again.ok
    assert (box.outside / "added.txt").read_text() == "new\n"


async def test_allow_for_the_session_widens_and_keeps_the_sandbox(box: Box) -> None:
    user = Answer("Allow ")
    box.escalate = _escalate_with(user)
    result = await box.run(f"echo new > {box.outside}/added.txt")
    assert result.ok, result.text
    assert "The user allowed writes to " + str(box.outside) in result.text
    box.escalate = None
    later = await box.run(f"echo later > {box.outside}/later.txt; cat ~/.ssh/x 2>&1; echo ${{PI_SANDBOX}}")
    assert (box.outside / "later.txt").read_text() == "later\n"
    assert "workspace-write" in later.text  # still sandboxed, just wider


async def test_keep_refused_or_no_answer_keeps_the_refusal(box: Box) -> None:
    for choice in (KEEP_REFUSED, None):
        box.escalate = _escalate_with(Answer(choice))
        result = await box.run(f"rm {box.outside}/keep.txt")
        assert not result.ok
        assert "[sandbox] Refused write to" in result.text
        assert (box.outside / "keep.txt").exists()


async def test_an_unrelated_failure_asks_nothing(box: Box) -> None:
    user = Answer(RUN_ONCE)
    box.escalate = _escalate_with(user)
    result = await box.run("ls /no/such/file")
    assert not result.ok
    assert user.asked == [] and "[sandbox]" not in result.text


def test_no_allow_choice_when_the_target_is_unknown_or_hidden() -> None:
    assert choices_for(Refusal("write", "")) == [RUN_ONCE, KEEP_REFUSED]
    assert choices_for(Refusal("read", "/home/me/.ssh/id_rsa")) == [RUN_ONCE, KEEP_REFUSED]
    assert choices_for(Refusal("network", "pypi.org"))[1] == ALLOW_FOR_SESSION.format(
        what="network access to pypi.org"
    )


async def test_a_refused_write_in_a_command_that_still_exits_0_is_named_and_asked_about(box: Box) -> None:
    # `cmd > file; other`: the shell reports the refused redirection and goes on, so the command exits 0
    box.escalate = None
    quiet = await box.run(f"echo new > {box.outside}/added.txt; echo went on")
    assert quiet.ok, quiet.text
    assert "went on" in quiet.text and f"[sandbox] Refused write to {box.outside}/added.txt" in quiet.text
    user = Answer(RUN_ONCE)
    box.escalate = _escalate_with(user)
    result = await box.run(f"echo new > {box.outside}/added.txt; echo went on")
    assert result.ok, result.text
    assert (box.outside / "added.txt").read_text() == "new\n"
    assert result.text.startswith("[sandbox] The user let this command run once outside the sandbox")
    assert "".join(result.parts).endswith("it ran again:\nwent on\n")  # as the tool card joins them
    assert len(user.asked) == 1


async def test_a_command_that_exits_0_and_was_refused_nothing_asks_nothing(box: Box) -> None:
    user = Answer(RUN_ONCE)
    box.escalate = _escalate_with(user)
    result = await box.run("echo fine > made.txt; echo 'a line about a Read-only file system'")
    assert result.ok and user.asked == [] and "[sandbox]" not in result.text
