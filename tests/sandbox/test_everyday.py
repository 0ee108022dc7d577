"""Everyday work runs unchanged in the sandbox: git, pytest, a venv with a local package, a compiler."""

from __future__ import annotations

import asyncio
import sys
import time
import zipfile
from pathlib import Path

from .helpers import Box


async def test_git_init_add_commit(box: Box) -> None:
    result = await box.run(
        "git init -q . && echo hi > a.txt && git add a.txt && "
        "git -c user.name=me -c user.email=me@example.com commit -qm first && git log --oneline | wc -l"
    )
    assert result.ok, result.text
    assert result.text.strip().endswith("1")


async def test_pytest_runs(box: Box) -> None:
    (box.project / "test_one.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    result = await box.run(f"{sys.executable} -m pytest -q -p no:cacheprovider test_one.py")
    assert result.ok, result.text
    assert "1 passed" in result.text


async def test_venv_and_pip_install_of_a_local_package(box: Box) -> None:
    wheel = box.project / "hello_sbx-1.0-py3-none-any.whl"
    info = "hello_sbx-1.0.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("hello_sbx/__init__.py", "WORD = 'installed'\n")
        archive.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: hello-sbx\nVersion: 1.0\n")
        archive.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{info}/RECORD", "")
    result = await box.run(
        "python3 -m venv .venv && .venv/bin/pip install -q --no-index ./hello_sbx-1.0-py3-none-any.whl && "
        ".venv/bin/python -c 'import hello_sbx; print(hello_sbx.WORD)'",
        timeout=120,
    )
    assert result.ok, result.text
    assert "installed" in result.text
    assert (box.project / ".venv" / "bin" / "python").exists()


async def test_gcc_writes_to_build(box: Box) -> None:
    (box.project / "main.c").write_text('#include <stdio.h>\nint main(void){puts("built");return 0;}\n')
    result = await box.run("mkdir -p build && gcc -o build/main main.c && ./build/main")
    assert result.ok, result.text
    assert "built" in result.text
    assert (box.project / "build" / "main").exists()


async def test_a_git_worktree_commits(box: Box) -> None:
    main = box.outside / "repo"
    main.mkdir()
    setup = Box(main, box.outside, override="off")
    made = await setup.run(
        "git init -q . && git -c user.name=me -c user.email=m@e commit -q --allow-empty -m root && "
        f"git worktree add -q {box.project / 'wt'} -b side"
    )
    assert made.ok, made.text
    inner = Box(box.project / "wt", box.outside)
    result = await inner.run(
        "echo x > f && git add f && git -c user.name=me -c user.email=m@e commit -qm in-wt"
    )
    inner.sandbox.close()
    assert result.ok, result.text


def _running(marker: str) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().replace(b"\0", b" ").strip() == marker.encode():
                    return True
            except OSError:
                continue
    return False


async def test_background_jobs_end_with_the_command(box: Box) -> None:
    # Own PID namespace: when the shell exits, whatever it left running goes with it (documented).
    result = await box.run("sleep 31.7 & echo started")
    assert result.ok and "started" in result.text
    deadline = time.monotonic() + 10
    while _running("sleep 31.7") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not _running("sleep 31.7")
