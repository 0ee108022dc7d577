"""One-turn CPU on each wire API: ``pi-tui -p`` against the fake server on every API it speaks.

Each API answers the same one-line prompt with the same one-line text (thinking off), through its
catalog provider pointed at the fake by a ``models.json`` ``baseUrl`` override. The CPU of the pi-tui
process (user + sys, from ``wait4``) is taken as the minimum of ``WIRE_APIS_RUNS`` runs (default 5),
since the shared machine adds noise only upwards. The result's CPU is the Anthropic one; ``extra`` holds
every API's minimum and its ratio to Anthropic's.

    python -m bench wire_apis --no-write
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.testing import FakeLLM, Reply, text

from .registry import register
from .scenarios import Result

KEY = "bench-wire-key"
AWS_KEY_ID, AWS_SECRET = "AKIDBENCHWIRE", "bench-wire-secret"
ACCOUNT = "acct-bench"
ANSWER = "Done."


def _codex_token() -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT}, "exp": int(time.time()) + 86400}
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


@dataclass
class Case:
    api: str
    provider: str
    model: str
    base: str  # attribute of the fake's server giving the base URL
    env: dict[str, str] = field(default_factory=dict)
    fake_args: dict[str, Any] = field(default_factory=dict)
    login: dict[str, Any] | None = None


def _cases() -> list[Case]:
    token = _codex_token()
    return [
        Case(
            "anthropic-messages",
            "anthropic",
            "claude-sonnet-4-5",
            "anthropic_base_url",
            {"ANTHROPIC_API_KEY": KEY},
        ),
        Case("openai-completions", "groq", "openai/gpt-oss-120b", "openai_base_url", {"GROQ_API_KEY": KEY}),
        Case("openai-responses", "openai", "gpt-5.5", "openai_base_url", {"OPENAI_API_KEY": KEY}),
        Case(
            "google-generative-ai",
            "google",
            "gemini-3.1-pro-preview",
            "gemini_base_url",
            {"GEMINI_API_KEY": KEY},
        ),
        Case(
            "google-vertex", "google-vertex", "gemini-3.1-pro-preview", "url", {"GOOGLE_CLOUD_API_KEY": KEY}
        ),
        Case(
            "bedrock-converse-stream",
            "amazon-bedrock",
            "us.anthropic.claude-opus-4-6-v1",
            "bedrock_base_url",
            {"AWS_ACCESS_KEY_ID": AWS_KEY_ID, "AWS_SECRET_ACCESS_KEY": AWS_SECRET, "AWS_REGION": "us-west-2"},
            {"aws_credentials": {AWS_KEY_ID: AWS_SECRET}},
        ),
        Case(
            "mistral-conversations",
            "mistral",
            "devstral-medium-latest",
            "mistral_base_url",
            {"MISTRAL_API_KEY": KEY},
        ),
        Case(
            "azure-openai-responses",
            "azure-openai-responses",
            "gpt-5.4",
            "azure_base_url",
            {"AZURE_OPENAI_API_KEY": KEY, "AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "gpt-5.4=bench-dep"},
            {"azure_deployments": {"bench-dep"}},
        ),
        Case(
            "openai-codex-responses",
            "openai-codex",
            "gpt-5.5",
            "url",
            {},
            {"api_key": token},
            {
                "type": "oauth",
                "access": token,
                "refresh": "r",
                "expires": int(time.time() * 1000) + 86_400_000,
                "accountId": ACCOUNT,
            },
        ),
    ]


def _clean_env() -> dict[str, str]:
    drop = ("AWS_", "AZURE_", "GOOGLE_", "GEMINI_", "ANTHROPIC_", "OPENAI_")
    return {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy") and not k.startswith(drop) and k != "PYTEST_CURRENT_TEST"
    }


def _one(case: Case, base_url: str, root: Path) -> tuple[float, float, int, str]:
    """(cpu seconds, wall seconds, exit code, stderr) of one run."""
    home = root / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    project = root / "project"
    project.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": {case.provider: {"baseUrl": base_url}}}))
    if case.login is not None:
        (agent / "auth.json").write_text(json.dumps({case.provider: case.login}))
        (agent / "auth.json").chmod(0o600)
    env = _clean_env() | {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", **case.env}
    argv = [sys.executable, "-m", "pi_tui", "--provider", case.provider, "--model", case.model]
    argv += ["--thinking", "off", "-p", "Say done."]
    started = time.perf_counter()
    with open(root / "stderr", "w+") as err:
        proc = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    wall = time.perf_counter() - started
    return usage.ru_utime + usage.ru_stime, wall, proc.returncode, stderr


def run_wire_apis() -> Result:
    runs = int(os.environ.get("WIRE_APIS_RUNS", "5"))
    mins: dict[str, float] = {}
    walls: dict[str, float] = {}
    exit_code = 0
    stderr = ""
    cases = _cases()
    cpus: dict[str, list[float]] = {case.api: [] for case in cases}
    with tempfile.TemporaryDirectory(prefix="bench-wire-") as tmp, contextlib.ExitStack() as stack:
        fakes: list[tuple[Case, FakeLLM, str]] = []
        for case in cases:
            fake = FakeLLM(**{"api_key": KEY, **case.fake_args})
            fake.script([Reply([text(ANSWER)]) for _ in range(runs)])
            server = stack.enter_context(fake.serve())
            fakes.append((case, fake, getattr(server, case.base)))
        # round robin, so that the shared machine's load changes weigh on every API alike
        for n in range(runs):
            for case, _, base_url in fakes:
                cpu, wall, code, err = _one(case, base_url, Path(tmp) / f"{case.api}-{n}")
                if code != 0:
                    exit_code, stderr = code, f"{case.api}: {err}"
                cpus[case.api].append(cpu)
                walls[case.api] = min(walls.get(case.api, wall), wall)
        violations = sum(len(fake.violations) for _, fake, _ in fakes)
    for api, values in cpus.items():
        mins[api] = min(values)
        print(f"  {api:26s} min cpu {mins[api] * 1000:6.0f} ms of {runs}", file=sys.stderr, flush=True)
    base = mins["anthropic-messages"]
    extra = {
        api: {"cpu_ms": round(cpu * 1000), "vs_anthropic": round(cpu / base, 3)} for api, cpu in mins.items()
    }
    return Result(
        name="wire_apis",
        description=f"one-turn -p on each wire API, min CPU (user+sys) of {runs}; cpu = Anthropic's",
        wall_s=walls["anthropic-messages"],
        cpu_s=base,
        peak_rss_mb=0.0,
        requests=runs * len(mins),
        violations=violations,
        cache_read_ratio=None,
        exit_code=exit_code,
        extra=extra,
        stderr=stderr,
    )


def register_all() -> None:
    register("wire_apis", run_wire_apis, section="print")
