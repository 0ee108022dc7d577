"""Remote MCP servers behind OAuth: ``/mcp login``, tokens in ``mcp-oauth.json``, renewal, failures.

The server (``mcp_servers/oauth_demo.py``) is built on the SDK's own server classes and is its own
authorization server; its ``/authorize`` approves at once, so the test plays the user's browser by
fetching the authorization URL pi-tui shows (``Browser`` below). Token expiry is the server's to decide:
``/test/expire`` ends every access token now, so nothing waits on a clock.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import MODEL, ScriptedUI, ext, model_requests, open_session

SERVER = Path(__file__).parent / "mcp_servers" / "oauth_demo.py"
AUTHORIZE = re.compile(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def oauth_server() -> Iterator[str]:
    """A fresh OAuth-protected server per test (its clients and tokens live in memory); its base URL."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError("the OAuth demo server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()


def control(base: str, what: str) -> Any:
    """Drive the demo server: ``expire``, ``revoke``, ``close-registration``, ``deny`` or ``log``."""
    request = urllib.request.Request(f"{base}/test/{what}", method="GET" if what == "log" else "POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Browser(ScriptedUI):
    """The user: opens the authorization URL pi-tui shows, or pastes the redirect it leads to.

    Args:
        paste: Answer the paste question with the redirect URL (a browser on another machine) instead of
            letting the browser reach pi-tui's loopback callback.
        cancel: Answer the paste question with Esc and never open the URL.
    """

    def __init__(self, *, paste: bool = False, cancel: bool = False) -> None:
        super().__init__()
        self.paste = paste
        self.cancel = cancel
        self.urls: list[str] = []
        self.asked_paste: list[str] = []

    def notify(self, message: str, level: str = "info") -> None:
        super().notify(message, level)
        found = AUTHORIZE.search(message)
        if found:
            self.urls.append(found.group(1))
            if not (self.paste or self.cancel):
                threading.Thread(target=self._visit, args=(found.group(1),), daemon=True).start()

    @staticmethod
    def _visit(url: str) -> None:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:  # follows the redirect to the callback
                response.read()
        except urllib.error.HTTPError:
            pass  # an error page (the user declined): the browser shows it, pi-tui heard of it

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        self.asked_paste.append(title)
        if self.cancel:
            return None
        if not self.paste:
            await asyncio.Event().wait()  # nobody types: the browser's redirect answers first
        while not self.urls:
            await asyncio.sleep(0.01)
        return await asyncio.to_thread(self._redirect_of, self.urls[-1])

    @staticmethod
    def _redirect_of(url: str) -> str:
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            opener.open(url, timeout=10)
        except urllib.error.HTTPError as exc:
            return str(exc.headers["Location"])
        raise AssertionError("the authorization endpoint did not redirect")

    def texts(self) -> list[str]:
        return [message for message, _ in self.notices]


def write_mcp(agent_dir: Path, servers: dict[str, Any]) -> None:
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def store(agent_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((agent_dir / "mcp-oauth.json").read_text())
    return data


async def test_login_stores_tokens_0600_and_calls_work_and_renew_when_the_server_expires_them(
    fake: FakeLLM, agent_dir: Path, project: Path, oauth_server: str
) -> None:
    url = f"{oauth_server}/mcp"
    write_mcp(agent_dir, {"docs": {"type": "http", "url": url}})
    fake.script([
        Reply([tool_call("mcp", {"tool": "docs/whoami", "args": {}})]),
        Reply([text("before")]),
        Reply([tool_call("mcp", {"tool": "docs/whoami", "args": {}})]),
        Reply([text("after")]),
    ])  # fmt: skip
    ui = Browser()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp tools docs")  # no login yet: the server answers 401
        needs = ui.texts()[-1]
        assert needs == 'MCP server "docs" needs a login: log in with /mcp login docs'
        await session.prompt("/mcp")
        assert "docs: needs login" in ui.texts()[-1]

        await session.prompt("/mcp login docs")
        assert ui.texts()[-1].startswith("MCP server docs: logged in (saved in ")
        assert ui.texts()[-1].endswith("; connected, 1 tools")
        assert len(ui.urls) == 1 and "code_challenge_method=S256" in ui.urls[0]
        assert "resource=" in ui.urls[0]  # RFC 8707: the token is asked for this server
        await session.prompt("call it")

        saved = store(agent_dir)
        assert stat.S_IMODE(os.stat(agent_dir / "mcp-oauth.json").st_mode) == 0o600
        entry = saved[url]
        assert entry["server"] == "docs" and entry["access"] and entry["refresh"] and entry["clientId"]
        assert entry["tokenEndpoint"] == f"{oauth_server}/token"
        assert "access" not in (agent_dir / "mcp.json").read_text()
        first_access = entry["access"]

        control(oauth_server, "expire")  # the server's clock: every access token is now expired
        await session.prompt("call it again")

    results = [r.content for r in model_requests(fake)[-1].tool_results()]
    client = entry["clientId"]
    assert results == [f"client {client}", f"client {client}"]
    assert control(oauth_server, "log") == ["register", "authorize", "code", "call", "refresh", "call"]
    assert store(agent_dir)[url]["access"] != first_access  # the renewed token replaced the old one


async def test_a_stored_login_past_its_expiry_is_renewed_before_it_is_sent(
    fake: FakeLLM, agent_dir: Path, project: Path, oauth_server: str
) -> None:
    url = f"{oauth_server}/mcp"
    write_mcp(agent_dir, {"docs": {"url": url}})
    ui = Browser()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp login docs")
    saved = store(agent_dir)
    saved[url]["expires"] = (time.time() - 10) * 1000  # a new pi-tui reads a login that expired meanwhile
    (agent_dir / "mcp-oauth.json").write_text(json.dumps(saved))

    fake.script([Reply([tool_call("mcp", {"tool": "docs/whoami", "args": {}})]), Reply([text("ok")])])
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("call it")

    assert model_requests(fake)[-1].tool_results()[0].content.startswith("client ")
    # Renewed first, so the server never saw the stale token (no 401, no second authorization).
    assert control(oauth_server, "log") == ["register", "authorize", "code", "refresh", "call"]


async def test_a_refused_renewal_tells_the_user_to_log_in_again_and_the_session_goes_on(
    fake: FakeLLM, agent_dir: Path, project: Path, oauth_server: str
) -> None:
    url = f"{oauth_server}/mcp"
    write_mcp(agent_dir, {"docs": {"url": url}})
    fake.script([
        Reply([tool_call("mcp", {"tool": "docs/whoami", "args": {}})]),
        Reply([text("noted")]),
        Reply([text("still here")]),
    ])  # fmt: skip
    ui = Browser()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp login docs")
        control(oauth_server, "revoke")  # access and refresh tokens forgotten by the server
        await session.prompt("call it")
        await session.prompt("and then?")
        await session.prompt("/mcp")

    result = model_requests(fake)[1].tool_results()[0].content
    assert result.startswith('MCP server "docs" could not renew its login: the server answered 400')
    assert result.endswith("log in with /mcp login docs")
    assert "docs: needs login" in ui.texts()[-1]
    assert len(model_requests(fake)) == 3  # the session went on
    entry = store(agent_dir)[url]
    assert "access" not in entry and "refresh" not in entry and entry["clientId"]  # registration kept


async def test_logout_forgets_the_login(
    fake: FakeLLM, agent_dir: Path, project: Path, oauth_server: str
) -> None:
    url = f"{oauth_server}/mcp"
    write_mcp(agent_dir, {"docs": {"url": url}})
    ui = Browser()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp login docs")
        await session.prompt("/mcp logout docs")
        assert ui.texts()[-1].startswith("MCP server docs: logged out (its tokens are removed from ")
        await session.prompt("/mcp tools docs")
        assert ui.texts()[-1] == 'MCP server "docs" needs a login: log in with /mcp login docs'
        await session.prompt("/mcp logout docs")
        assert ui.texts()[-1] == "MCP server docs was not logged in"
    assert url not in store(agent_dir)


async def test_logging_in_again_reuses_the_stored_client_registration(
    fake: FakeLLM, agent_dir: Path, project: Path, oauth_server: str
) -> None:
    url = f"{oauth_server}/mcp"
    write_mcp(agent_dir, {"docs": {"url": url}})
    ui = Browser()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp login docs")
        first = store(agent_dir)[url]
        await session.prompt("/mcp login docs")
        assert ui.texts()[-1].endswith("connected, 1 tools")
    second = store(agent_dir)[url]
    assert second["clientId"] == first["clientId"] and second["redirectUri"] == first["redirectUri"]
    assert second["access"] != first["access"]
    assert control(oauth_server, "log") == ["register", "authorize", "code", "authorize", "code"]


async def test_a_stored_registration_the_login_fails_with_is_dropped_so_the_next_login_registers(
    fake: FakeLLM, agent_dir: Path, project: Path, oauth_server: str
) -> None:
    url = f"{oauth_server}/mcp"
    write_mcp(agent_dir, {"docs": {"url": url}})
    forgotten = {
        "server": "docs",
        "clientId": "gone",
        "redirectUri": f"http://127.0.0.1:{_free_port()}/callback",
    }
    (agent_dir / "mcp-oauth.json").write_text(json.dumps({url: forgotten}))
    cancelling = Browser(cancel=True)  # the server shows an error page for the unknown client; Esc
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(cancelling, "rpc")
        await session.prompt("/mcp login docs")
        assert cancelling.texts()[-1] == (
            "MCP server docs: login cancelled; try again with /mcp login docs "
            "(pi-tui registers with the server anew then: the client it had registered is forgotten)"
        )
        assert url not in store(agent_dir)
        ui = Browser()
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp login docs")
        assert ui.texts()[-1].endswith("connected, 1 tools")
    assert control(oauth_server, "log") == ["register", "authorize", "code"]
    assert store(agent_dir)[url]["clientId"] != "gone"


async def test_configured_scopes_are_asked_for_instead_of_the_servers_choice(
    fake: FakeLLM, agent_dir: Path, project: Path, oauth_server: str
) -> None:
    url = f"{oauth_server}/mcp"
    write_mcp(agent_dir, {"docs": {"url": url, "oauth": {"scopes": ["mcp", "read"]}}})
    ui = Browser()
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp login docs")
        assert ui.texts()[-1].endswith("connected, 1 tools")
        await session.prompt("/mcp login docs")  # and again with the reused registration
    assert all("scope=mcp+read" in found for found in ui.urls) and len(ui.urls) == 2
    assert store(agent_dir)[url]["scope"] == "mcp read"


async def test_a_redirect_url_pasted_from_another_machine_completes_the_login(
    fake: FakeLLM, agent_dir: Path, project: Path, oauth_server: str
) -> None:
    write_mcp(agent_dir, {"docs": {"url": f"{oauth_server}/mcp"}})
    ui = Browser(paste=True)
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(ui, "rpc")
        await session.prompt("/mcp login docs")
    assert ui.asked_paste and "paste the address it was sent to" in ui.asked_paste[0]
    assert ui.urls[0] in ui.asked_paste[0]  # the URL is in the question too: a dialog may cover the chat
    assert ui.texts()[-1].endswith("connected, 1 tools")


async def test_login_failures_say_why(
    fake: FakeLLM, agent_dir: Path, project: Path, oauth_server: str
) -> None:
    write_mcp(agent_dir, {"docs": {"url": f"{oauth_server}/mcp"}, "plain": {"url": f"{oauth_server}/mcp",
              "headers": {"Authorization": "Bearer static"}}})  # fmt: skip
    cancelling = Browser(cancel=True)
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        session.attach_ui(cancelling, "rpc")
        await session.prompt("/mcp login docs")  # the user presses Esc instead of finishing in the browser
        assert cancelling.texts()[-1] == "MCP server docs: login cancelled; try again with /mcp login docs"

        ui = Browser()
        session.attach_ui(ui, "rpc")
        control(oauth_server, "deny")
        await session.prompt("/mcp login docs")  # the user declines at the server
        assert ui.texts()[-1] == ("MCP server docs login did not complete: access_denied; "
                                  "try again with /mcp login docs")  # fmt: skip

        control(oauth_server, "close-registration")
        await session.prompt("/mcp login docs")
        assert ui.texts()[-1].startswith(
            'MCP server "docs": the server refused to register pi-tui as a client ('
        )
        assert "registration is closed on this server" in ui.texts()[-1]

        await session.prompt("/mcp login plain")
        assert "OAuth is off for it" in ui.texts()[-1]
    assert not (agent_dir / "mcp-oauth.json").exists()  # nothing half-stored


async def test_in_the_tui_the_question_shows_the_url_and_goes_away_when_the_browser_answers(
    tmp_path: Path, agent_dir: Path, oauth_server: str
) -> None:
    from pi_tui.ai.providers.faux import FauxScript
    from pi_tui.modes.interactive.blocks import NoticeBlock
    from tests.modes.interactive.helpers import make_app, type_text, until

    write_mcp(agent_dir, {"docs": {"url": f"{oauth_server}/mcp"}})
    app = make_app(tmp_path, agent_dir, FauxScript(), argv=["-e", "mcp"])
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "/mcp login docs")
        app.menu.hide()
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "InputDialog", timeout=30)
        question = str(getattr(app.screen, "title_text", ""))
        found = AUTHORIZE.search(question)
        assert found is not None, question  # the dialog covers the chat, so it carries the URL itself
        await asyncio.to_thread(Browser._visit, found.group(1))
        notices = lambda: [b.text for b in app.chat.query(NoticeBlock)]  # noqa: E731
        await until(pilot, lambda: any("logged in" in n for n in notices()), timeout=30)
        assert type(app.screen).__name__ != "InputDialog"  # the question was withdrawn with its dialog
        assert notices()[-1].endswith("connected, 1 tools")
