"""The ``httpProxy`` setting (global settings only) becomes ``HTTP_PROXY``/``HTTPS_PROXY`` unless set already."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pi_tui.runtime.run_settings import apply_http_proxy_setting


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Set, then removed: monkeypatch records a variable only when it touches one, so a bare delenv of an
    # unset variable would let what the code under test sets stay for every later test in this process
    # (a proxy that does not exist, for every HTTP request of the fake servers).
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def test_global_setting_fills_both_variables(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"httpProxy": " http://proxy.test:3128 "}))
    apply_http_proxy_setting(tmp_path)
    assert os.environ["HTTP_PROXY"] == "http://proxy.test:3128"
    assert os.environ["HTTPS_PROXY"] == "http://proxy.test:3128"


def test_an_existing_variable_wins(agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://mine.test:8080")
    (agent_dir / "settings.json").write_text(json.dumps({"httpProxy": "http://proxy.test:3128"}))
    apply_http_proxy_setting(tmp_path)
    assert os.environ["HTTPS_PROXY"] == "http://mine.test:8080"
    assert os.environ["HTTP_PROXY"] == "http://proxy.test:3128"


def test_a_project_file_cannot_set_it(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"trustedProjects": [str(tmp_path)]}))
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.json").write_text(json.dumps({"httpProxy": "http://evil.test:1"}))
    apply_http_proxy_setting(tmp_path)
    assert "HTTP_PROXY" not in os.environ and "HTTPS_PROXY" not in os.environ
