from __future__ import annotations

import os
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import MODEL, ext, model_requests, module, open_session, write_settings


def make_project(project: Path) -> None:
    (project / ".env").write_text("TOKEN=abc\n")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "node_modules" / "lib").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")


def snapshot(project: Path) -> dict[str, str]:
    return {
        str(p.relative_to(project)): p.read_text()
        for p in sorted(project.rglob("*"))
        if p.is_file() and "victim" not in p.name
    }


def results(fake: FakeLLM) -> list[tuple[str, bool]]:
    return [(r.content, r.is_error) for r in model_requests(fake)[1].tool_results()]


async def test_write_and_edit_of_protected_paths_are_blocked_with_path_and_reason(
    fake: FakeLLM, project: Path
) -> None:
    make_project(project)
    os.symlink(project / ".env", project / "settings.link")
    fake.script(
        [
            Reply(
                [
                    tool_call("write", {"path": ".env", "content": "TOKEN=stolen\n"}),
                    tool_call("edit", {"path": ".git/HEAD", "edits": [{"oldText": "main", "newText": "x"}]}),
                    tool_call("write", {"path": "node_modules/lib/index.js", "content": "evil()"}),
                    tool_call("write", {"path": "settings.link", "content": "via a link"}),
                    tool_call("write", {"path": "src/.env.production", "content": "X=1"}),
                    tool_call("write", {"path": "src/app.py", "content": "x = 2\n"}),
                ]
            ),
            Reply([text("ok")]),
        ]
    )
    async with open_session(ext("protected_paths"), project, model=MODEL) as session:
        await session.prompt("edit things")

    env, head, modules, link, nested, allowed = results(fake)
    assert env == (
        'Blocked by protected_paths: writing to ".env" is not allowed because environment files hold secrets. '
        "The user protects this path; do not try to change it another way. If the task needs it, tell the user "
        "what to change there.",
        True,
    )
    assert head[1] and 'editing ".git/HEAD" is not allowed because it is git\'s own data' in head[0]
    assert modules[1] and '"node_modules/lib/index.js"' in modules[0] and "package manager" in modules[0]
    assert link[1] and '"settings.link"' in link[0] and "environment files" in link[0]
    assert nested[1] and '"src/.env.production"' in nested[0]
    assert not allowed[1]
    assert (project / ".env").read_text() == "TOKEN=abc\n"
    assert (project / "src" / "app.py").read_text() == "x = 2\n"
    assert not (project / "src" / ".env.production").exists()


BASH_WRITES = [
    ("echo TOKEN=x > .env", "writing to", ".env"),
    ("echo more >> .env", "writing to", ".env"),
    ("date | tee -a .git/HEAD", "writing to", ".git/HEAD"),
    ("mv .env env.bak", "moving", ".env"),
    ("cp /dev/null .env", "writing to", ".env"),
    ("cp src/app.py .git/", "writing to", ".git"),
    ("rm -f .env", "deleting", ".env"),
    ("rm .env*", "deleting", ".env*"),
    ("rm .e?v", "deleting", ".env"),  # a glob is expanded against the disk
    ("rm -rf .", "deleting", "."),
    ("rm -rf node_modules", "deleting", "node_modules"),
    ("sed -i 's/abc/x/' .env", "editing", ".env"),
    ("sed -i.bak -e 's/a/b/' src/app.py .env", "editing", ".env"),
    ("true && bash -c 'echo x > .env'", "writing to", ".env"),
    ("echo $(echo x > .env)", "writing to", ".env"),
    ("env X=1 /usr/bin/tee .env < /dev/null", "writing to", ".env"),
    ("truncate -s 0 .env", "truncating", ".env"),
    ("touch node_modules/lib/new.js", "touching", "node_modules/lib/new.js"),
    ("ln -sf /tmp/x .env", "writing to", ".env"),
    ("dd if=/dev/zero of=.git/HEAD count=1", "writing to", ".git/HEAD"),
]


async def test_bash_writes_to_protected_paths_are_blocked_in_every_form(fake: FakeLLM, project: Path) -> None:
    make_project(project)
    before = snapshot(project)
    fake.script([Reply([tool_call("bash", {"command": c}) for c, _, _ in BASH_WRITES]), Reply([text("ok")])])
    async with open_session(ext("protected_paths"), project, model=MODEL) as session:
        await session.prompt("go")

    for (command, verb, path), (content, is_error) in zip(BASH_WRITES, results(fake), strict=True):
        assert is_error and content.startswith(f'Blocked by protected_paths: {verb} "{path}"'), (
            command,
            content,
        )
    assert snapshot(project) == before


async def test_reading_and_unrelated_writes_pass(fake: FakeLLM, project: Path) -> None:
    make_project(project)
    commands = [
        "cat .env",
        "grep -r TOKEN .",
        "cp .env src/env.copy",
        "echo x > src/out.txt 2>/dev/null",
        "sed -n p .env",
        "rm -rf src/build",
    ]
    fake.script([Reply([tool_call("bash", {"command": c}) for c in commands]), Reply([text("ok")])])
    async with open_session(ext("protected_paths"), project, model=MODEL) as session:
        await session.prompt("go")

    assert all(not is_error for _, is_error in results(fake))
    assert (project / "src" / "env.copy").read_text() == "TOKEN=abc\n"


async def test_settings_add_globs_and_exemptions(fake: FakeLLM, project: Path, agent_dir: Path) -> None:
    make_project(project)
    write_settings(agent_dir, {"protectedPaths": ["*.pem", "config/prod/**", "!.env.example"]})
    fake.script(
        [
            Reply(
                [
                    tool_call("write", {"path": "certs/server.pem", "content": "k"}),
                    tool_call("write", {"path": "config/prod/db.yml", "content": "k"}),
                    tool_call("bash", {"command": "echo x > config/prod/deep/er.yml"}),
                    tool_call("write", {"path": "config/dev/db.yml", "content": "k"}),
                    tool_call("write", {"path": ".env.example", "content": "TOKEN="}),
                ]
            ),
            Reply([text("ok")]),
        ]
    )
    async with open_session(ext("protected_paths"), project, model=MODEL) as session:
        await session.prompt("go")

    pem, prod, deep, dev, example = results(fake)
    assert pem[1] and 'because it matches "*.pem" in the protectedPaths setting' in pem[0]
    assert prod[1] and '"config/prod/**"' in prod[0]
    assert deep[1] and '"config/prod/deep/er.yml"' in deep[0]
    assert not dev[1] and not example[1]


async def test_an_unparseable_line_is_blocked_only_when_it_mentions_a_protected_name(project: Path) -> None:
    make_project(project)
    async with open_session(ext("protected_paths"), project) as session:
        ext_module = module(session, "protected_paths")
        guard = ext_module.Guard(str(project), [])
        mentions = ext_module.bash_violation(guard, "echo 'oops > .env")
        unrelated = ext_module.bash_violation(guard, "echo 'oops > out.txt")

    assert mentions is not None and mentions[1] == ".env" and "could not be checked" in mentions[2]
    assert unrelated is None


async def test_a_computed_program_name_is_blocked_when_the_line_mentions_a_protected_name(
    project: Path,
) -> None:
    make_project(project)
    async with open_session(ext("protected_paths"), project) as session:
        ext_module = module(session, "protected_paths")
        guard = ext_module.Guard(str(project), [])
        hidden = ext_module.bash_violation(guard, "w=tee; w=cat; echo x | $w .env")
        followed = ext_module.bash_violation(guard, "w=tee; echo x | $w .env")
        unrelated = ext_module.bash_violation(guard, "$EDITOR notes.txt")

    assert hidden is not None and hidden[1] == ".env" and "cannot be checked" in hidden[2]
    assert followed is not None and followed[:2] == ("writing to", ".env")
    assert unrelated is None
