"""`BrowserLogin`: the browser step of an extension's OAuth login (pi's callback server underneath)."""

from __future__ import annotations

import asyncio
import urllib.request

import pytest

from pi_tui.extensions.api import BrowserLogin, BrowserLoginError, NullUIBridge


async def test_in_a_print_run_the_url_goes_to_stderr_and_the_redirect_completes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with BrowserLogin(NullUIBridge(), "print", "Example") as browser:
        assert browser.redirect_uri.startswith("http://127.0.0.1:") and browser.redirect_uri.endswith(
            "/callback"
        )
        waiting = asyncio.ensure_future(browser.authorize("https://auth.example/authorize?x=1", timeout=30))
        redirect = f"{browser.redirect_uri}?code=abc&state=s1&iss=https%3A%2F%2Fauth.example"
        page = await asyncio.to_thread(lambda: urllib.request.urlopen(redirect, timeout=10).read().decode())
        got = await waiting
    assert (got.code, got.state, got.iss) == ("abc", "s1", "https://auth.example")
    assert "Example login completed" in page
    err = capsys.readouterr()
    assert "Example: open this URL in your browser to log in:\nhttps://auth.example/authorize?x=1" in err.err
    assert err.out == ""  # stdout belongs to the answer or the JSON stream


async def test_nobody_answering_ends_with_a_timeout_message() -> None:
    async with BrowserLogin(NullUIBridge(), "print", "Example") as browser:
        with pytest.raises(BrowserLoginError, match=r"^Example: no answer from the browser within 0.3s$"):
            await browser.authorize("https://auth.example/authorize", timeout=0.3)
