"""``/share``, ``/bug`` and ``/changelog``: pi 0.87.1's commands, in pi-tui's words."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.modes.interactive.blocks import NoticeBlock

from .helpers import make_app, submit, submit_and_wait, until


def _notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.text for b in app.chat.query(NoticeBlock)]


def _fake_gh(bin_dir: Path, record: Path, *, logged_in: bool = True, fail: str | None = None) -> None:
    """A ``gh`` that writes its arguments to ``record/args`` and the uploaded page to ``record/uploaded``."""
    bin_dir.mkdir(exist_ok=True)
    record.mkdir(exist_ok=True)
    gist = f'echo "{fail}" >&2; exit 1' if fail else 'echo "https://gist.github.com/someone/0a1b2c3d"'
    gh = bin_dir / "gh"
    gh.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{record}/args"\n'
        f'if [ "$1" = auth ]; then exit {0 if logged_in else 1}; fi\n'
        "for last; do :; done\n"
        f'cp "$last" "{record}/uploaded"\n'
        f"{gist}\n"
    )
    gh.chmod(0o755)


async def test_share_uploads_the_html_page_as_a_secret_gist_and_shows_its_address(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir, record = tmp_path / "bin", tmp_path / "record"
    _fake_gh(bin_dir, record)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.delenv("PI_SHARE_VIEWER_URL", raising=False)
    script = FauxScript(faux_reply("the answer to share"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "what is shared?")
        await submit_and_wait(pilot, app, "/share")
        await until(
            pilot, lambda: any("Gist: https://gist.github.com/someone/0a1b2c3d" in t for t in _notices(app))
        )
        assert script.call_count == 1  # /share never reached the model
    calls = (record / "args").read_text().splitlines()
    assert calls[0] == "auth status"
    assert calls[1].startswith("gist create --public=false ") and calls[1].endswith("session.html")
    page = (record / "uploaded").read_text()
    assert "<html" in page.lower() and "the answer to share" in page
    assert not Path(calls[1].split(" ", 3)[3]).exists()  # the temporary page is cleaned up


async def test_share_says_clearly_when_gh_is_missing_not_logged_in_or_failing(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir, record = tmp_path / "bin", tmp_path / "record"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("hi")))
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "/share")
        await until(pilot, lambda: any("Nothing to share yet" in t for t in _notices(app)))
        await submit_and_wait(pilot, app, "hello")
        await submit_and_wait(pilot, app, "/share")
        await until(pilot, lambda: any("GitHub CLI (gh) is not installed" in t for t in _notices(app)))
        _fake_gh(bin_dir, record, logged_in=False)
        await submit_and_wait(pilot, app, "/share")
        await until(pilot, lambda: any("Run 'gh auth login' first" in t for t in _notices(app)))
        _fake_gh(bin_dir, record, fail="HTTP 422: Validation Failed")
        await submit_and_wait(pilot, app, "/share")
        await until(
            pilot,
            lambda: any("Failed to create gist: HTTP 422: Validation Failed" in t for t in _notices(app)),
        )
        assert app.working_message == "Working"  # the "Creating gist…" line is gone after a failure


async def test_escape_cancels_a_share_kills_gh_and_says_so(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As pi: Escape while the gist is being created stops it: ``gh`` is killed, the page's temporary
    folder removed, and the chat says "Share cancelled". Escape did nothing: the upload went on and its
    address came whenever ``gh`` was done."""
    bin_dir, record = tmp_path / "bin", tmp_path / "record"
    bin_dir.mkdir()
    record.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = auth ]; then exit 0; fi\n'
        "for last; do :; done\n"
        f'echo "$$ $last" > "{record}/uploading"\n'
        "exec sleep 60\n"
    )
    gh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply("hi")))
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "hello")
        await submit(pilot, app, "/share")
        uploading = record / "uploading"
        await until(pilot, lambda: uploading.exists() and uploading.read_text().endswith("\n"))
        pid, page = uploading.read_text().split()
        assert app.working_message == "Creating gist… (escape to cancel)"
        await pilot.press("escape")
        await until(pilot, lambda: "Share cancelled" in _notices(app))
        assert not app._busy and app.working_message == "Working"
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)  # gh is gone (and reaped), not left uploading
        assert not Path(page).parent.exists()
        assert not any("Gist:" in t or "Failed" in t for t in _notices(app))


async def test_share_gives_up_on_a_gh_that_hangs(tmp_path: Path, agent_dir: Path) -> None:
    from pi_tui.session import SessionManager
    from pi_tui.session.share_gist import ShareError, share_session_gist

    gh = tmp_path / "gh"
    gh.write_text("#!/bin/sh\nexec sleep 30\n")
    gh.chmod(0o755)
    manager = SessionManager.in_memory(cwd=str(tmp_path))
    from pi_tui.ai.types import UserMessage

    manager.append_message(UserMessage(content="hi"))
    with pytest.raises(ShareError, match="did not finish within 0.5 s"):
        await share_session_gist(manager, gh=str(gh), auth_timeout=0.5)


def _info_text(app) -> str:  # type: ignore[no-untyped-def]
    body = app.screen.query_one("#info-body")
    return "\n".join(line.text for line in body.render_lines(body.region.reset_offset))


async def test_changelog_shows_pi_tuis_changelog_on_a_page_and_is_in_the_slash_menu(
    tmp_path: Path, agent_dir: Path
) -> None:
    from pi_tui.modes.interactive.screens.info_screens import CHANGELOG_PATH, InfoScreen

    newest = next(line for line in CHANGELOG_PATH.read_text().splitlines() if line.startswith("## "))
    script = FauxScript(faux_reply("hi"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(120, 50)) as pilot:
        await until(pilot, app.ready.is_set)
        menu = [(c.value, c.description) for c in app.router.candidates()]
        names = [name for name, _ in menu]
        assert names.index("share") == names.index("import") + 1  # where pi lists them
        assert names.index("changelog") < names.index("hotkeys")
        await submit_and_wait(pilot, app, "/changelog")
        await until(pilot, lambda: isinstance(app.screen, InfoScreen))
        await until(pilot, lambda: newest[3:] in _info_text(app) and "/share" in _info_text(app))
        assert "What's New" in str(app.screen.query_one("#info-title").render())
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, InfoScreen))
        assert script.call_count == 0  # /changelog never reached the model


async def test_bug_writes_a_report_zip_with_the_description_and_optionally_the_transcript(
    tmp_path: Path, agent_dir: Path
) -> None:
    import json
    import zipfile

    from pi_tui.modes.interactive.dialogs import InputDialog, SelectDialog

    (agent_dir / "settings.json").write_text(json.dumps({"theme": "dark", "githubToken": "ghp_secret"}))
    script = FauxScript(faux_reply("an answer"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "remember the word zebra")
        await submit_and_wait(pilot, app, "/bug the footer flickers")
        await until(pilot, lambda: isinstance(app.screen, InputDialog))
        await pilot.press("enter")  # the description typed after /bug is already in the field
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        await pilot.press("enter")  # yes, include the transcript
        await until(pilot, lambda: any("Bug report exported to:" in t for t in _notices(app)))
        await submit_and_wait(pilot, app, "/bug")
        await until(pilot, lambda: isinstance(app.screen, InputDialog))
        await pilot.press("escape")
        await until(pilot, lambda: any("Bug report cancelled" in t for t in _notices(app)))
        await submit_and_wait(pilot, app, "/bug")
        await until(pilot, lambda: isinstance(app.screen, InputDialog))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SelectDialog))
        await pilot.press("down", "enter")  # no transcript
        # a status line replaces the status before it, as pi's does: count the archives
        await until(pilot, lambda: len(list(tmp_path.glob("pi-tui-bug-report-*.zip"))) == 2)
        assert any("no upload service" in t for t in _notices(app))
        assert script.call_count == 1  # no /bug reached the model
    archives = sorted(tmp_path.glob("pi-tui-bug-report-*.zip"), key=lambda p: p.stat().st_mtime_ns)
    assert len(archives) == 2
    with zipfile.ZipFile(archives[0]) as first:
        report = json.loads(first.read("report.json"))
        assert report["hint"] == "the footer flickers"
        assert report["environment"]["app"] == "pi-tui" and report["environment"]["version"]
        assert report["session"]["included"] is True
        assert report["settings"]["global"]["theme"] == "dark"
        assert "ghp_secret" not in first.read("report.json").decode()
        assert "zebra" in first.read("session.jsonl").decode()
        assert json.loads(first.read("diagnostics.json"))["assistantMessageCount"] == 1
    with zipfile.ZipFile(archives[1]) as second:
        assert "session.jsonl" not in second.namelist()
        assert json.loads(second.read("report.json"))["hint"] is None
