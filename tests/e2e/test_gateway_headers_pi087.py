"""Side by side with pi 0.87.1 on the gateway providers whose requests carry headers of their own:
Cloudflare AI Gateway (its token in ``cf-aig-authorization``, no ``Authorization``/``x-api-key``, the
account and gateway ids filled into the path) and OpenCode Zen / Go (``x-opencode-session`` and
``x-opencode-client``), on every wire API each uses, in print mode against the fake server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, ModelLimits, Reply, text

from ..pi087 import Pi087

pytestmark = pytest.mark.slow

KEY = "gateway-side-by-side"
ACCOUNT, GATEWAY = "acct0123", "gw-4567"
ANSWER = "Gateway says hi."


def _run(
    argv: list[str], root: Path, base_url: str, provider: str, model: str, env_extra: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    home = root / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    project = root / "project"
    project.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": {provider: {"baseUrl": base_url}}}))
    env = {
        k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST" and not k.lower().endswith("_proxy")
    }
    env |= {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", **env_extra}
    args = ["--provider", provider, "--model", model, "-p", "hi"]
    return subprocess.run([*argv, *args], cwd=project, env=env, capture_output=True, text=True, timeout=50)


CLOUDFLARE_ENV = {
    "CLOUDFLARE_API_KEY": KEY,
    "CLOUDFLARE_ACCOUNT_ID": ACCOUNT,
    "CLOUDFLARE_GATEWAY_ID": GATEWAY,
}
OPENCODE_ENV = {"OPENCODE_API_KEY": KEY}
_IDS = "/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}"

CASES = [
    # (provider, model, base URL path under the fake, request path the fake must see)
    (
        "cloudflare-ai-gateway",
        "workers-ai/@cf/moonshotai/kimi-k2.6",
        f"{_IDS}/compat",
        f"/v1/{ACCOUNT}/{GATEWAY}/compat/chat/completions",
    ),
    ("cloudflare-ai-gateway", "gpt-5.4", f"{_IDS}/openai", f"/v1/{ACCOUNT}/{GATEWAY}/openai/responses"),
    (
        "cloudflare-ai-gateway",
        "claude-sonnet-4.6",
        f"{_IDS}/anthropic",
        f"/v1/{ACCOUNT}/{GATEWAY}/anthropic/v1/messages",
    ),
    ("opencode", "kimi-k2.6", "/v1", "/v1/chat/completions"),
    ("opencode", "gpt-5.4", "/v1", "/v1/responses"),
    ("opencode", "claude-sonnet-4-6", "", "/v1/messages"),
    ("opencode", "gemini-3-flash", "/v1beta", "/v1beta/models/gemini-3-flash:streamGenerateContent"),
    ("opencode-go", "kimi-k2.6", "/v1", "/v1/chat/completions"),
    ("opencode-go", "gpt-5.6-luna", "/v1", "/v1/responses"),
    ("opencode-go", "qwen3.8-flash", "", "/v1/messages"),
]


@pytest.mark.parametrize(
    ("provider", "model", "prefix", "path"), CASES, ids=[f"{c[0]}/{c[1]}" for c in CASES]
)
def test_gateway_headers_are_sent_as_pi_sends_them(
    tmp_path: Path, pi087: Pi087, provider: str, model: str, prefix: str, path: str
) -> None:
    env = CLOUDFLARE_ENV if provider.startswith("cloudflare") else OPENCODE_ENV
    # the fake's default output cap is Claude's; Qwen 3.8 Flash takes its catalog maximum (131,072)
    limits = {"qwen3.8-flash": ModelLimits(max_output_tokens=131_072)}
    pi_fake, tui_fake = FakeLLM(api_key=KEY, model_limits=limits), FakeLLM(api_key=KEY, model_limits=limits)
    pi_fake.script([Reply([text(ANSWER)])])
    tui_fake.script([Reply([text(ANSWER)])])
    with pi_fake.serve() as pi_server, tui_fake.serve() as tui_server:
        pi_run = _run(pi087.argv(), tmp_path / "pi", pi_server.url + prefix, provider, model, env)
        tui_run = _run(
            [sys.executable, "-m", "pi_tui"], tmp_path / "tui", tui_server.url + prefix, provider, model, env
        )
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert ANSWER in pi_run.stdout and ANSWER in tui_run.stdout
    assert pi_fake.violations == [] and tui_fake.violations == []
    (theirs,), (ours,) = pi_fake.requests, tui_fake.requests
    assert ours.path.split("?")[0] == theirs.path.split("?")[0] == path
    if provider.startswith("cloudflare"):
        for request in (theirs, ours):
            # the fake took the key from cf-aig-authorization (it answered); nothing the gateway would
            # pass on upstream as the provider's own key
            assert "cf-aig-authorization" in request.headers
            assert "authorization" not in request.headers and "x-api-key" not in request.headers
    else:
        assert theirs.headers["x-opencode-client"] == "pi"
        assert ours.headers["x-opencode-client"] == "pi-tui"
        for request in (theirs, ours):
            session = request.headers["x-opencode-session"]
            assert session and len(session) >= 8
