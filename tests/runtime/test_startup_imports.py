from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY_AT_STARTUP = {"textual", "anthropic", "openai", "httpx2", "pydantic", "tiktoken", "rich"}
UI_ONLY = {"textual", "rich", "prompt_toolkit"}


def _modules_after(code: str, cwd: Path) -> tuple[set[str], str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    *output, modules = proc.stdout.splitlines()
    return {name.split(".")[0] for name in json.loads(modules)}, "\n".join(output)


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_load_no_sdk_ui_or_validation_library(flag: str, tmp_path: Path) -> None:
    loaded, output = _modules_after(f"from pi_tui.cli import main\nmain([{flag!r}])", tmp_path)
    assert output.strip()  # it did answer
    assert loaded & HEAVY_AT_STARTUP == set()


def test_the_runtime_does_not_load_a_user_interface(tmp_path: Path) -> None:
    loaded, _ = _modules_after("import pi_tui.runtime.agent_session", tmp_path)
    assert "pi_tui" in loaded
    assert loaded & UI_ONLY == set()


# Every pi_tui module a one-turn ``pi-tui -p`` answer may import (issue #12). Start-up is most of a
# one-turn answer's cost, so a new import on this path should be a decision: load what only some runs
# need (compaction's summariser, rewinds, the tools' machinery, extension loading, the UI) on first use.
# Adding a module here is a one-line change; say in the commit why a one-turn run needs it.
ONE_TURN_MAY_IMPORT = frozenset(
    {
        # pi_tui
        "pi_tui",
        # pi_tui.agent
        "pi_tui.agent",
        "pi_tui.agent.convert",
        "pi_tui.agent.events",
        "pi_tui.agent.hooks",
        "pi_tui.agent.loop",
        "pi_tui.agent.run",
        "pi_tui.agent.tool",
        "pi_tui.agent.tool_exec",
        "pi_tui.agent.validate",
        # pi_tui.ai
        "pi_tui.ai",
        "pi_tui.ai.auth",
        "pi_tui.ai.catalog",
        "pi_tui.ai.cost",
        "pi_tui.ai.errors",
        "pi_tui.ai.http",
        "pi_tui.ai.http_env",
        "pi_tui.ai.jsonc",
        "pi_tui.ai.model_registry",
        "pi_tui.ai.no_model",
        # a Codex run reads the ChatGPT account from its token with the login's own claim reader
        "pi_tui.ai.oauth",
        "pi_tui.ai.oauth.openai_codex",
        "pi_tui.ai.oauth.types",
        "pi_tui.ai.model_resolver",
        "pi_tui.ai.models_json",
        "pi_tui.ai.paths",
        "pi_tui.ai.providers",
        "pi_tui.ai.providers._aws_credentials",
        "pi_tui.ai.providers._aws_eventstream",
        "pi_tui.ai.providers._aws_files",
        "pi_tui.ai.providers._bedrock_request",
        "pi_tui.ai.providers._common",
        "pi_tui.ai.providers._error_hints",
        "pi_tui.ai.providers._history",
        "pi_tui.ai.providers._sigv4",
        "pi_tui.ai.providers._openai_compat",
        "pi_tui.ai.providers._partial_json",
        "pi_tui.ai.providers._wire_cache",
        "pi_tui.ai.providers._google_adc",
        "pi_tui.ai.providers._google_request",
        "pi_tui.ai.providers._google_stream",
        "pi_tui.ai.providers._strict_schema",
        "pi_tui.ai.providers.anthropic",
        "pi_tui.ai.providers.azure_openai_responses",
        "pi_tui.ai.providers.bedrock",
        "pi_tui.ai.providers.google",
        "pi_tui.ai.providers.google_vertex",
        "pi_tui.ai.providers.mistral",
        "pi_tui.ai.providers.openai_codex_responses",
        "pi_tui.ai.providers.openai_completions",
        "pi_tui.ai.providers.openai_responses",
        "pi_tui.ai.providers.pi_messages",
        "pi_tui.ai.registry",
        "pi_tui.ai.stream",
        "pi_tui.ai.thinking",
        "pi_tui.ai.tokens",
        "pi_tui.ai.types",
        "pi_tui.ai.wire",
        # pi_tui.args
        "pi_tui.args",
        # pi_tui.checkpoints
        "pi_tui.checkpoints",
        "pi_tui.checkpoints.limits",
        "pi_tui.checkpoints.recorder",
        "pi_tui.checkpoints.store",
        # pi_tui.cli
        "pi_tui.cli",
        # pi_tui.compaction
        "pi_tui.compaction",
        "pi_tui.compaction.controller",
        "pi_tui.compaction.errors",
        "pi_tui.compaction.path",
        "pi_tui.compaction.tokens",
        # pi_tui.context
        "pi_tui.context",
        "pi_tui.context.engine",
        "pi_tui.context.envelope",
        "pi_tui.context.hooks",
        "pi_tui.context.layouts",
        "pi_tui.context.ledger",
        "pi_tui.context.panels",
        "pi_tui.context.patches",
        "pi_tui.context.render",
        "pi_tui.context.request",
        # pi_tui.extensions
        "pi_tui.extensions",
        "pi_tui.extensions.discovery",
        "pi_tui.extensions.setup",
        "pi_tui.extensions.ui",
        # pi_tui.modes
        "pi_tui.modes",
        "pi_tui.modes.commands",
        "pi_tui.modes.json_events",
        "pi_tui.modes.print_mode",
        "pi_tui.modes.rpc",
        "pi_tui.modes.rpc.events",
        "pi_tui.modes.termination",
        # pi_tui.packages
        "pi_tui.packages",
        "pi_tui.packages.resolve",
        # pi_tui.resources
        "pi_tui.resources",
        "pi_tui.resources.context_files",
        "pi_tui.resources.diagnostics",
        "pi_tui.resources.frontmatter",
        "pi_tui.resources.loader",
        "pi_tui.resources.paths",
        "pi_tui.resources.settings",
        "pi_tui.resources.settings_io",
        "pi_tui.resources.settings_schema",
        "pi_tui.resources.settings_check",
        "pi_tui.resources.settings_store",
        "pi_tui.resources.skills",
        "pi_tui.resources.system_prompt",
        "pi_tui.resources.templates",
        "pi_tui.resources.trust_hint",  # the words an untrusted project's notices end with (small)
        "pi_tui.resources.trust_store",
        "pi_tui.resources.yaml_subset",
        # pi_tui.runtime
        "pi_tui.runtime",
        "pi_tui.runtime._host",
        "pi_tui.runtime.agent_session",
        "pi_tui.runtime.compaction_ops",
        "pi_tui.runtime.cache_warmer",  # every session request may start cache warming (small, no imports of its own)
        "pi_tui.runtime.cwd_services",  # what start-up builds for its directory (switching builds it again)
        "pi_tui.runtime.events",
        "pi_tui.runtime.factory",
        "pi_tui.runtime.rewind_ops",
        "pi_tui.runtime.run_settings",  # settings read before the session: sessionDir, httpProxy, defaultTools
        "pi_tui.runtime.tool_selection",  # which tools the command line and defaultTools allow (small)
        "pi_tui.runtime.tree_ops",
        # pi_tui.sandbox: the session's sandbox object (the bash tool holds it); start-up reads the setting
        # and looks for bwrap to say once when commands will not be sandboxed (no process is started);
        # refusal reading, the proxy and the tool glue load with the first command
        "pi_tui.sandbox",
        "pi_tui.sandbox.bwrap",
        "pi_tui.sandbox.policy",
        "pi_tui.sandbox.runner",
        "pi_tui.sandbox.session",
        # pi_tui.session
        "pi_tui.session",
        "pi_tui.session.appended_lines",  # the listing reads a file from where it last ended (small)
        "pi_tui.session.context",
        "pi_tui.session.edits",
        "pi_tui.session.entries",
        "pi_tui.session.entry_reader",
        "pi_tui.session.errors",
        "pi_tui.session.listing",
        "pi_tui.session.loader",
        "pi_tui.session.lock",
        "pi_tui.session.manager",
        "pi_tui.session.migrate",
        "pi_tui.session.paths",
        "pi_tui.session.report",
        "pi_tui.session.search",
        "pi_tui.session.store",
        "pi_tui.session.system",
        "pi_tui.session.tree",
        # pi_tui.tools
        "pi_tui.tools",
        "pi_tui.tools._common",
        "pi_tui.tools.bash",
        "pi_tui.tools.edit",
        "pi_tui.tools.find",
        "pi_tui.tools.grep",
        "pi_tui.tools.images",
        "pi_tui.tools.ls",
        "pi_tui.tools.mutation_queue",
        "pi_tui.tools.paths",
        "pi_tui.tools.line_scan",
        "pi_tui.tools.read",
        "pi_tui.tools.truncate",
        "pi_tui.tools.write",
        # pi_tui.util
        "pi_tui.util",
        # the cyclic collector is held off while a request's body is built (pi_tui.ai.providers._common)
        "pi_tui.util.collector",
        # the session store writes its lines with the loop the file-writing tools share
        "pi_tui.util.fd_write",
        "pi_tui.util.format",
        "pi_tui.util.fuzzy",
        "pi_tui.util.ignore",
        "pi_tui.util.json_safe",
        "pi_tui.util.json_types",
        "pi_tui.util.large_buffers",
        "pi_tui.util.lazy",
        # the request's fingerprint lets a thread beside the UI pause for keys (pi_tui.context.request)
        "pi_tui.util.pause_points",
        # a finished print run ends without the interpreter's teardown (after the answer)
        "pi_tui.util.quick_exit",
        "pi_tui.util.record",
        "pi_tui.util.record_annotations",
        "pi_tui.util.record_checks",
        "pi_tui.util.tasks",
    }
)
# What the deferrals above keep out: named so a regression says what came back.
ONE_TURN_MUST_NOT_IMPORT = (
    "pi_tui.compaction.summarize",
    "pi_tui.compaction.branch_summary",
    "pi_tui.compaction.prepare",
    "pi_tui.checkpoints.rewind",
    "pi_tui.checkpoints.snapshot",
    "pi_tui.checkpoints.gc",
    "pi_tui.tools.edit_diff",
    "pi_tui.tools.process",
    "pi_tui.tools.output",
    "pi_tui.tools.walk",
    "pi_tui.modes.interactive",
    "decimal",
    "botocore",  # Bedrock signs and decodes with pi-tui's own code; botocore is only the tests' oracle
)

# The provider modules each API's one-turn run may load: only its own (and the modules they share).
_SHARED_PROVIDER_MODULES = {
    "pi_tui.ai.providers",
    "pi_tui.ai.providers._common",
    "pi_tui.ai.providers._history",
    "pi_tui.ai.providers._partial_json",
    "pi_tui.ai.providers._wire_cache",
}
_GEMINI = {
    "pi_tui.ai.providers._openai_compat",  # pi's output-cap estimate, shared with the OpenAI APIs
    "pi_tui.ai.providers._google_request",
    "pi_tui.ai.providers._google_stream",
    "pi_tui.ai.providers._strict_schema",
}
# Chat Completions shapes requests by pi's compat flags and sends strict tool schemas where supported.
_CHAT = {
    "pi_tui.ai.providers.openai_completions",
    "pi_tui.ai.providers._openai_compat",
    "pi_tui.ai.providers._strict_schema",
    "pi_tui.ai.providers._error_hints",  # what to check after an HTTP error, shared with Messages
}
PROVIDER_MODULES = {
    # Messages shares pi's output-cap estimate, the strict tool schemas and the error hints.
    "anthropic-messages": {
        "pi_tui.ai.providers.anthropic",
        "pi_tui.ai.providers._openai_compat",
        "pi_tui.ai.providers._strict_schema",
        "pi_tui.ai.providers._error_hints",
    },
    "openai-completions": _CHAT,
    # Responses reuses the Chat Completions client and event decoder.
    "openai-responses": {"pi_tui.ai.providers.openai_responses", *_CHAT},
    "google-generative-ai": {"pi_tui.ai.providers.google", *_GEMINI},
    "google-vertex": {"pi_tui.ai.providers.google_vertex", "pi_tui.ai.providers._google_adc", *_GEMINI},
    # Azure reuses the Responses conversion and reader (and through them the Chat Completions decoder).
    "azure-openai-responses": {
        "pi_tui.ai.providers.azure_openai_responses",
        "pi_tui.ai.providers.openai_responses",
        *_CHAT,
    },
    # Bedrock: its own request, credentials, SigV4 and event-stream modules; strict tool schemas shared.
    "bedrock-converse-stream": {
        "pi_tui.ai.providers.bedrock",
        "pi_tui.ai.providers._bedrock_request",
        "pi_tui.ai.providers._aws_credentials",
        "pi_tui.ai.providers._aws_eventstream",
        "pi_tui.ai.providers._aws_files",
        "pi_tui.ai.providers._sigv4",
        "pi_tui.ai.providers._strict_schema",
    },
    # Codex reuses the Responses conversion and reader too.
    "openai-codex-responses": {
        "pi_tui.ai.providers.openai_codex_responses",
        "pi_tui.ai.providers.openai_responses",
        *_CHAT,
    },
    # Mistral shares the output-cap estimate and the strict tool schemas.
    "mistral-conversations": {
        "pi_tui.ai.providers.mistral",
        "pi_tui.ai.providers._openai_compat",
        "pi_tui.ai.providers._strict_schema",
    },
    # pi's own protocol (Radius) sends pi's transcript as it is; it shares only the error hints.
    "pi-messages": {"pi_tui.ai.providers.pi_messages", "pi_tui.ai.providers._error_hints"},
}

_CODEX_TOKEN = "e30.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYnVkZ2V0In19.c2ln"

_DUMP_MODULES = """
import atexit, json, runpy, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv[0] = "pi-tui"
runpy.run_module("pi_tui", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("api", list(PROVIDER_MODULES))
def test_a_one_turn_answer_imports_only_the_listed_pi_tui_modules(
    tmp_path: Path, agent_dir: Path, api: str
) -> None:
    from pi_tui.testing import FakeLLM, Reply, text

    fake = FakeLLM()
    fake.script([Reply([text("The answer is 42.")])])
    repo = tmp_path / "repo"
    repo.mkdir()
    dump = tmp_path / "modules.json"
    env = {
        k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST" and not k.lower().endswith("_proxy")
    }
    with fake.serve() as server:
        base = {
            "anthropic-messages": server.anthropic_base_url,
            "google-generative-ai": server.gemini_base_url,
            "google-vertex": server.url,
            "mistral-conversations": server.mistral_base_url,
            "azure-openai-responses": server.azure_base_url,
            "bedrock-converse-stream": server.bedrock_base_url,
            "openai-codex-responses": server.url,
            "pi-messages": server.pi_messages_base_url,
        }.get(api, server.openai_base_url)
        config = {
            "providers": {
                "budget": {
                    "baseUrl": base,
                    "api": api,
                    # Codex takes a ChatGPT login's access token: a JWT naming the account
                    "apiKey": _CODEX_TOKEN if api == "openai-codex-responses" else "budget-key",
                    "models": [{"id": "m", "contextWindow": 200_000, "maxTokens": 8192}],
                }
            }
        }
        (agent_dir / "models.json").write_text(json.dumps(config))
        run = subprocess.run(
            [sys.executable, "-c", _DUMP_MODULES, str(dump), "--model", "budget/m", "-p", "What is it?"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=50,
        )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "The answer is 42."
    loaded = set(json.loads(dump.read_text()))
    ours = {name for name in loaded if name == "pi_tui" or name.startswith("pi_tui.")}
    assert ours - ONE_TURN_MAY_IMPORT == set(), sorted(ours - ONE_TURN_MAY_IMPORT)
    assert [name for name in ONE_TURN_MUST_NOT_IMPORT if name in loaded] == []
    providers = {name for name in ours if name.startswith("pi_tui.ai.providers")}
    assert providers - _SHARED_PROVIDER_MODULES - PROVIDER_MODULES[api] == set()
    assert PROVIDER_MODULES[api] <= providers


@pytest.mark.parametrize(
    "provider",
    ["openai-codex", "anthropic", "openrouter", "github-copilot", "kimi-coding", "xai", "meta", "radius"],
)
def test_using_a_stored_login_loads_no_login_flow(tmp_path: Path, provider: str) -> None:
    # A run with an unexpired stored login only turns it into request auth: the callback server, the
    # HTTP client and the TLS stack belong to logging in and refreshing, and load when those run.
    code = (
        "from pi_tui.ai.oauth import get_oauth_provider\n"
        f"flow = get_oauth_provider({provider!r})\n"
        "assert flow is not None\n"
        "auth = flow.to_auth({'type': 'oauth', 'access': 'token', 'refresh': 'r', 'expires': 0})\n"
        "print(auth.api_key or (auth.headers or {}).get('Authorization'))"
    )
    loaded, output = _modules_after(code, tmp_path)
    assert output.strip() in ("token", "Bearer token")  # Kimi sends its token as a header
    assert loaded & {"http", "socketserver", "ssl", "email"} == set()
    flow_modules = {
        f"pi_tui.ai.oauth.{name}" for name in ("_http", "callback", "pkce", "device", "_device_common")
    }
    assert loaded & flow_modules == set()
