"""RPC ``cycle_model`` walks the model scope (``--models``), as pi 0.87.1 and the TUI's Ctrl+P do."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM

from .rpc_client import RpcProcess

pytestmark = pytest.mark.slow


def test_cycle_model_stays_in_the_scope_with_its_levels(tmp_path: Path, fake: FakeLLM) -> None:
    rpc = RpcProcess(tmp_path, "--no-session", "--models", "fake-openai/gpt-fake,faux/faux-1:low")
    try:
        state = rpc.call({"type": "get_state"})["data"]
        assert state["model"]["id"] == "gpt-fake"  # the scope's first model starts a new session
        first = rpc.call({"type": "cycle_model"})["data"]
        assert (first["model"]["id"], first["thinkingLevel"], first["isScoped"]) == ("faux-1", "low", True)
        second = rpc.call({"type": "cycle_model"})["data"]
        # back to the scope's start; never the models outside it (claude-fake, gpt-fake-r)
        assert (second["model"]["id"], second["isScoped"]) == ("gpt-fake", True)
        assert rpc.call({"type": "get_state"})["data"]["model"]["id"] == "gpt-fake"
        assert rpc.close() == 0
    finally:
        rpc.kill()


def test_cycle_model_without_a_scope_is_not_scoped(tmp_path: Path, fake: FakeLLM) -> None:
    rpc = RpcProcess(tmp_path, "--no-session", "--model", "fake-openai/gpt-fake")
    try:
        cycled = rpc.call({"type": "cycle_model"})["data"]
        assert cycled["isScoped"] is False and cycled["model"]["id"] != "gpt-fake"
        assert rpc.close() == 0
    finally:
        rpc.kill()


def test_cycle_model_with_one_model_in_scope_answers_null(tmp_path: Path, fake: FakeLLM) -> None:
    rpc = RpcProcess(tmp_path, "--no-session", "--models", "fake-openai/gpt-fake")
    try:
        response = rpc.call({"type": "cycle_model"})
        assert response["data"] is None
        assert rpc.call({"type": "get_state"})["data"]["model"]["id"] == "gpt-fake"
        assert rpc.close() == 0
    finally:
        rpc.kill()
