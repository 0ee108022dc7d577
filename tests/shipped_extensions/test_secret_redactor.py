from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import MODEL, ext, model_requests, module, open_session, write_settings

ENV = """# local secrets
export API_TOKEN="tok_live_51HqLyjWDarjtT1zdp7dc"
DB_PASSWORD='c0rrect horse!'
NODE_ENV=production
PORT=8080
DATABASE_URL=postgres://app:s3cr3t-pw@db.internal/app  # prod
"""
ANTHROPIC = "sk-ant-api03-Zx8Qm2Lk9Vb7Nc4Hd6Jf1Gs3Ka5Pw0Ty"
AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
KEY_BODY = "MIIEowIBAAKCAQEAuP1n7e6Q3x4Z8rJ5kqLmN0pQrStUvWxYz"
PRIVATE_KEY = (
    f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\nAbCdEfGhIjKlMnOp==\n-----END RSA PRIVATE KEY-----"
)
SECRETS = [
    "tok_live_51HqLyjWDarjtT1zdp7dc",
    "c0rrect horse!",
    "s3cr3t-pw",
    ANTHROPIC,
    AWS,
    GITHUB,
    JWT,
    KEY_BODY,
]


def make_project(project: Path) -> None:
    (project / ".env").write_text(ENV)
    (project / ".env.example").write_text("API_TOKEN=your-token-here\n")
    (project / "config.txt").write_text(
        f"mode: production on port 8080\nanthropic: {ANTHROPIC}\naws: {AWS}\ngithub: {GITHUB}\n"
        f"session: {JWT}\n{PRIVATE_KEY}\nthe end\n"
    )
    (project / "settings.py").write_text('TOKEN = "tok_live_51HqLyjWDarjtT1zdp7dc"\nDEBUG = True\n')


def assert_no_secret(where: str, data: str) -> None:
    for secret in SECRETS:
        assert secret not in data, f"{secret!r} leaked into {where}"


async def test_secrets_never_reach_the_model_or_the_session_file(fake: FakeLLM, project: Path) -> None:
    make_project(project)
    fake.script(
        [
            Reply(
                [
                    tool_call("read", {"path": ".env"}),
                    tool_call("bash", {"command": "cat config.txt"}),
                    tool_call(
                        "edit", {"path": "settings.py", "edits": [{"oldText": "True", "newText": "False"}]}
                    ),
                    tool_call("bash", {"command": "grep -rn tok_live ."}),
                ]
            ),
            Reply([text("all read")]),
        ]
    )
    async with open_session(ext("secret_redactor"), project, model=MODEL) as session:
        await session.prompt("look at the config")
        session_file = Path(str(session.session_manager.path))

    stored = session_file.read_text()
    assert_no_secret("the session file", stored)
    for request in model_requests(fake):
        assert_no_secret("a request", json.dumps(request.body))
    read, cat, edit, grep = (r.content for r in model_requests(fake)[1].tool_results())
    assert read.splitlines()[:6] == [
        "# local secrets",
        'export API_TOKEN="[REDACTED:env:API_TOKEN]"',
        "DB_PASSWORD='[REDACTED:env:DB_PASSWORD]'",
        "NODE_ENV=production",
        "PORT=8080",
        "DATABASE_URL=[REDACTED:env:DATABASE_URL]  # prod",
    ]
    assert cat == (
        "mode: production on port 8080\nanthropic: [REDACTED:anthropic_key]\naws: [REDACTED:aws_access_key]\n"
        "github: [REDACTED:github_token]\nsession: [REDACTED:jwt]\n[REDACTED:private_key]\nthe end\n"
    )
    assert "[REDACTED:env:API_TOKEN]" in grep
    edit_entry = next(
        json.loads(line)["message"]
        for line in stored.splitlines()
        if '"toolResult"' in line and '"edit"' in line
    )
    assert "[REDACTED:env:API_TOKEN]" in json.dumps(edit_entry["details"])  # the diff was masked too
    assert (project / "settings.py").read_text().startswith('TOKEN = "tok_live_51HqLyjWDarjtT1zdp7dc"')


async def test_a_value_added_to_env_during_the_session_is_masked_at_once(
    fake: FakeLLM, project: Path
) -> None:
    make_project(project)
    command = "echo 'NEW_KEY=fresh-value-123' >> .env && echo the key is fresh-value-123"
    fake.script([Reply([tool_call("bash", {"command": command})]), Reply([text("ok")])])
    async with open_session(ext("secret_redactor"), project, model=MODEL) as session:
        await session.prompt("rotate")

    (result,) = model_requests(fake)[1].tool_results()
    assert result.content == "the key is [REDACTED:env:NEW_KEY]\n"


async def test_configured_patterns_and_error_results_are_masked(
    fake: FakeLLM, project: Path, agent_dir: Path
) -> None:
    write_settings(
        agent_dir, {"secretRedactor": {"patterns": [{"kind": "internal", "pattern": r"itk_[0-9a-f]{16}"}]}}
    )
    fake.script(
        [
            Reply(
                [
                    tool_call("bash", {"command": "echo itk_0123456789abcdef; exit 3"}),
                    tool_call("read", {"path": f"keys/{ANTHROPIC}.txt"}),
                ]
            ),
            Reply([text("ok")]),
        ]
    )
    async with open_session(ext("secret_redactor"), project, model=MODEL) as session:
        await session.prompt("go")

    failed, missing = model_requests(fake)[1].tool_results()
    assert failed.is_error and failed.content.startswith("[REDACTED:internal]\n")
    assert missing.is_error and "keys/[REDACTED:anthropic_key].txt" in missing.content


async def test_ordinary_text_is_never_changed(project: Path) -> None:
    make_project(project)
    async with open_session(ext("secret_redactor"), project) as session:
        await session.start()
        redactor = module(session, "secret_redactor")
        masker = redactor.Redactor(redactor.EnvSecrets().current, [])
        env = redactor.EnvSecrets()
        env.cwd = project
        with_env = redactor.Redactor(env.current, [])

    ordinary = (
        "NODE_ENV is production on port 8080; a task-list, disk-usage and sk-short stay; "
        "eyJ alone, AKIA, ghp_short, BEGIN PRIVATE KEY without dashes, your-token-here.\n"
    )
    assert masker.redact(ordinary) == ordinary
    assert with_env.redact(ordinary) == ordinary
    assert with_env.redact("a=tok_live_51HqLyjWDarjtT1zdp7dc;b") == "a=[REDACTED:env:API_TOKEN];b"


BLOCKER = f"""
def register(pi):
    @pi.on("tool_call")
    def block(event):
        return {{"block": True, "reason": "refused: the command mentions {ANTHROPIC}"}}
"""


async def test_results_of_blocked_calls_are_masked_too(fake: FakeLLM, project: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker.py"
    blocker.write_text(BLOCKER)
    fake.script([Reply([tool_call("bash", {"command": "true"})]), Reply([text("ok")])])
    async with open_session([*ext("secret_redactor"), "-e", str(blocker)], project, model=MODEL) as session:
        await session.prompt("go")
        stored = Path(str(session.session_manager.path)).read_text()

    (result,) = model_requests(fake)[1].tool_results()
    assert result.is_error and result.content == "refused: the command mentions [REDACTED:anthropic_key]"
    assert ANTHROPIC not in stored


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
CREDENTIALS = f"[default]\naws_access_key_id = {AWS}\naws_secret_access_key = {AWS_SECRET}\n"
INJECTOR = f"""
def register(pi):
    @pi.on("before_agent_start")
    def add(event):
        return {{"message": {{"customType": "ops", "content": "deploy with {GITHUB}", "display": False}}}}
"""


async def test_prompts_attachments_extension_messages_and_tool_results_are_masked_everywhere(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    (project / "credentials").write_text(CREDENTIALS)
    injector = tmp_path / "injector.py"
    injector.write_text(INJECTOR)
    fake.script(
        [
            Reply([tool_call("read", {"path": "credentials"})]),
            Reply([text("read it")]),
            Reply([text("again")]),
        ]
    )
    attached = f'<file name="{project / "credentials"}">\n{CREDENTIALS}\n</file>\nwhat is in here?'
    async with open_session([*ext("secret_redactor"), "-e", str(injector)], project, model=MODEL) as session:
        await session.prompt(attached)
        await session.prompt("and now?")
        stored = Path(str(session.session_manager.path)).read_text()

    for where, data in [
        ("the session file", stored),
        *(("a request", json.dumps(r.body)) for r in fake.requests),
    ]:
        for secret in (AWS_SECRET, AWS, GITHUB):
            assert secret not in data, f"{secret} leaked into {where}"
    (result,) = model_requests(fake)[1].tool_results()
    assert "aws_secret_access_key = [REDACTED:secret]" in result.content
    # The same secrets mask the same way in every request, so the cached prefix stays byte-identical.
    first, later = (without_cache_marks(fake.requests[i].body["messages"]) for i in (1, 2))
    assert later[: len(first)] == first


def without_cache_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_marks(v) for v in value]
    return value


async def test_user_bash_output_and_idle_extension_messages_are_masked_in_the_session_file(
    fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    from pi_tui.ai.types import BashExecutionMessage

    (project / "credentials").write_text(CREDENTIALS)
    announcer = tmp_path / "announcer.py"
    announcer.write_text(
        "def register(pi):\n"
        "    pi.register_command('note', handler=lambda args, ctx: pi.send_message(\n"
        f"        {{'customType': 'ops', 'content': 'deploy with {GITHUB}', 'display': True}}))\n"
    )
    fake.script([Reply([text("hello")])])
    async with open_session([*ext("secret_redactor"), "-e", str(announcer)], project, model=MODEL) as session:
        await session.prompt("hi")  # (the session file is created with the first answer, as in pi)
        assert session.extensions.has_handlers("user_bash") is False  # !cmd runs (and streams) as usual
        session.record_bash_execution(
            BashExecutionMessage(command="cat credentials", output=CREDENTIALS, exit_code=0)
        )
        await session.prompt("/note")  # the extension's message is saved while the agent is idle
        stored = Path(str(session.session_manager.path)).read_text()
        in_memory = json.dumps([m.model_dump() for m in session.agent.messages])

    for where, data in [("the session file", stored), ("the conversation", in_memory)]:
        for secret in (AWS_SECRET, AWS, GITHUB):
            assert secret not in data, f"{secret} leaked into {where}"
    entries = [json.loads(line) for line in stored.splitlines()]
    (bash,) = [e["message"] for e in entries if e.get("message", {}).get("role") == "bashExecution"]
    assert bash["output"] == (
        "[default]\naws_access_key_id = [REDACTED:aws_access_key]\naws_secret_access_key = [REDACTED:secret]\n"
    )
    (note,) = [e for e in entries if e["type"] == "custom_message"]
    assert note["content"] == "deploy with [REDACTED:github_token]"
