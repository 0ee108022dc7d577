"""Writes outside the project are refused by the kernel, whatever program makes them."""

from __future__ import annotations

import os
import textwrap

from .helpers import Box


def _intact(box: Box) -> bool:
    return (box.outside / "keep.txt").read_text() == "precious\n"


async def test_python_script_rmtree_outside_is_refused_and_named(box: Box) -> None:
    (box.project / "tidy.py").write_text(f"import shutil\nshutil.rmtree({str(box.outside)!r})\n")
    result = await box.run("python3 tidy.py")
    assert not result.ok
    assert _intact(box)
    # rmtree deletes relative to a directory descriptor, so Python's message names only "keep.txt"
    assert "[sandbox] Refused a write: the sandbox (workspace-write)" in result.text


async def test_python_write_outside_names_the_path(box: Box) -> None:
    (box.project / "w.py").write_text(f"open({str(box.outside / 'keep.txt')!r}, 'w').write('gone')\n")
    result = await box.run("python3 w.py")
    assert not result.ok
    assert _intact(box)
    assert f"[sandbox] Refused write to {box.outside / 'keep.txt'}" in result.text


async def test_writes_inside_the_project_and_tmpdir_work(box: Box) -> None:
    result = await box.run('echo made > inside.txt && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"')
    assert result.ok, result.text
    assert (box.project / "inside.txt").read_text() == "made\n"


async def test_make_writing_outside_is_refused(box: Box) -> None:
    (box.project / "Makefile").write_text(f"all:\n\techo x > {box.outside}/keep.txt\n")
    result = await box.run("make")
    assert not result.ok
    assert _intact(box)
    assert "Refused write to" in result.text


async def test_npm_style_install_script_is_refused(box: Box) -> None:
    script = box.project / "node_modules" / "evil" / "install.sh"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!/bin/sh\nrm -rf {box.outside}\necho pwned >> ~/.bashrc\n")
    script.chmod(0o755)
    result = await box.run("./node_modules/evil/install.sh")
    assert not result.ok
    assert _intact(box)
    assert not (box.outside.parent / ".bashrc").exists()
    assert not (os.path.expanduser("~/.bashrc") and os.path.exists(os.path.expanduser("~/.bashrc")))


async def test_compiled_binary_writing_outside_is_refused(box: Box) -> None:
    source = box.project / "w.c"
    source.write_text(
        textwrap.dedent(
            f"""
            #include <stdio.h>
            #include <unistd.h>
            int main(void) {{
                if (unlink("{box.outside}/keep.txt") != 0) {{ perror("{box.outside}/keep.txt"); return 1; }}
                return 0;
            }}
            """
        )
    )
    result = await box.run("gcc -o w w.c && ./w")
    assert not result.ok
    assert _intact(box)
    assert f"Refused write to {box.outside}/keep.txt" in result.text


async def test_symlink_out_of_the_project_is_refused(box: Box) -> None:
    (box.project / "link").symlink_to(box.outside)
    result = await box.run("echo gone > link/keep.txt")
    assert not result.ok
    assert _intact(box)
    made_inside = await box.run(f"ln -s {box.outside} link2 && rm link2/keep.txt")
    assert not made_inside.ok
    assert _intact(box)


async def test_dotdot_paths_are_refused(box: Box) -> None:
    result = await box.run("rm ../outside/keep.txt")
    assert not result.ok
    assert _intact(box)
    assert "Refused write" in result.text


async def test_hard_link_to_an_outside_file_is_refused(box: Box) -> None:
    result = await box.run(f"ln {box.outside}/keep.txt hard && echo gone > hard")
    assert not result.ok
    assert _intact(box)
    assert not (box.project / "hard").exists()


async def test_protected_paths_inside_the_project_stay_read_only(box: Box) -> None:
    hooks = box.project / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (box.project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    result = await box.run("echo 'curl evil' > .git/hooks/pre-commit")
    assert not result.ok
    assert not (hooks / "pre-commit").exists()
    assert "Refused write to" in result.text


async def test_read_only_mode_refuses_project_writes(box: Box) -> None:
    box.override = "read-only"
    result = await box.run("cat /etc/hostname >/dev/null; echo x > new.txt")
    assert not result.ok
    assert not (box.project / "new.txt").exists()
    assert "read-only" in result.text


async def test_allow_write_setting_widens_the_sandbox(box: Box) -> None:
    from pi_tui.sandbox.policy import SandboxSettings

    box.settings = SandboxSettings(allow_write=(str(box.outside),))
    result = await box.run("echo new > ../outside/added.txt")
    assert result.ok, result.text
    assert (box.outside / "added.txt").read_text() == "new\n"


async def test_off_mode_runs_unsandboxed(box: Box) -> None:
    box.override = "off"
    result = await box.run("echo x > ../outside/added.txt && echo ${PI_SANDBOX:-none}")
    assert result.ok
    assert "none" in result.text


async def test_relative_paths_and_git_config_refusals_are_named(box: Box) -> None:
    init = await box.run("git init -q .")  # a .git made inside is not protected yet: made after the start
    assert init.ok
    hook = await box.run("echo 'curl evil' > .git/hooks/pre-commit")  # protected from this command on
    assert not hook.ok
    assert f"[sandbox] Refused write to {box.project.resolve()}/.git/hooks/pre-commit" in hook.text
    config = await box.run("git config user.name someone")
    assert not config.ok
    assert f"[sandbox] Refused write to {box.project.resolve()}/.git/config" in config.text
    assert "protected path" in config.text
