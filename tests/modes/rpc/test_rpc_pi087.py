"""pi-tui answers the same RPC session as pi 0.87.1 did (``fixtures/pi087-rpc.jsonl``, recorded by
``pi087_scenario.py`` against the same fake-server script): the same records in the same order, each with
the same keys, and each response with the same command, outcome and data keys. Ids, texts, timestamps,
numbers and text chunking are not compared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM
from tests.e2e.helpers import write_models_json

from .pi087_scenario import FIXTURE, MODEL, drive, prepare
from .rpc_client import RpcProcess

pytestmark = pytest.mark.slow

_DELTAS = {"text_delta", "toolcall_delta", "thinking_delta"}
# pi's summary usage is not reported by pi-tui's compaction (it is optional in pi's CompactionResult too).
_NOT_COMPARED = {("compact", "usage")}


def _shape(records: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for record in records:
        kind = record["type"]
        if kind == "message_update":
            detail = record["assistantMessageEvent"]["type"]
        elif kind in ("message_start", "message_end"):
            detail = record["message"]["role"]
        elif kind == "response":
            data = record.get("data")
            keys = (
                sorted(k for k in data if (record["command"], k) not in _NOT_COMPARED)
                if isinstance(data, dict)
                else []
            )
            detail = f"{record['command']} {record['success']} {','.join(keys)}"
        else:
            detail = ""
        shape = (kind, detail, ",".join(sorted(record)))
        if out and out[-1] == shape and detail in _DELTAS:
            continue
        out.append(shape)
    return out


def test_an_rpc_session_matches_pi_0_87_1_record_for_record(tmp_path: Path) -> None:
    fake = FakeLLM()
    project, agent_dir = prepare(tmp_path, fake)
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(project, "--model", MODEL, env=_env(tmp_path, agent_dir))
        try:
            drive(rpc, project)
            assert rpc.close() == 0
        finally:
            rpc.kill()
    assert fake.violations == []
    pis = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    assert _shape(rpc.records) == _shape(pis)


def _env(home: Path, agent_dir: Path) -> dict[str, str]:
    import os

    return dict(os.environ, HOME=str(home), PI_CODING_AGENT_DIR=str(agent_dir))
