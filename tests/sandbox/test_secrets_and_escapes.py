"""Credentials are unreadable; namespace, /proc, chroot and setuid tricks do not get out."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

from pi_tui.sandbox.policy import SandboxSettings

from .helpers import Box


def _plant_credentials(home: Path) -> list[Path]:
    files = [
        home / ".ssh" / "id_rsa",
        home / ".aws" / "credentials",
        home / ".gnupg" / "private-keys-v1.d" / "k.key",
        home / ".config" / "gcloud" / "credentials.db",
        home / ".kube" / "config",
        home / ".docker" / "config.json",
        home / ".netrc",
        Path(os.environ["PI_CODING_AGENT_DIR"]) / "auth.json",
    ]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("SECRET-TOKEN\n")
    return files


async def test_credential_paths_are_not_readable(box: Box) -> None:
    files = _plant_credentials(Path.home())
    (Path.home() / ".gitconfig").write_text("[user]\n\tname = visible\n")
    result = await box.run(" ; ".join(f"cat {p} 2>&1" for p in files) + " ; cat ~/.gitconfig; ls -a ~/.ssh")
    assert "SECRET-TOKEN" not in result.text
    assert "visible" in result.text  # the rest of HOME stays readable


async def test_deny_read_setting_hides_more(box: Box) -> None:
    secret = box.outside / "private"
    secret.mkdir()
    (secret / "notes").write_text("SECRET-TOKEN\n")
    box.settings = SandboxSettings(deny_read=(str(secret),))
    result = await box.run(f"cat {secret}/notes")
    assert not result.ok
    assert "SECRET-TOKEN" not in result.text


async def test_credentials_reached_through_a_symlink_stay_hidden(box: Box) -> None:
    real = box.outside / "real-ssh"
    real.mkdir()
    (real / "id_ed25519").write_text("SECRET-TOKEN\n")
    (Path.home() / ".ssh").symlink_to(real)
    result = await box.run(f"cat ~/.ssh/id_ed25519 {real}/id_ed25519")
    assert "SECRET-TOKEN" not in result.text


async def test_proc_1_root_does_not_reach_the_host(box: Box) -> None:
    result = await box.run(
        f"ls /proc | grep -c '^[0-9]' ; echo x > /proc/1/root{box.outside}/keep.txt; "
        f"rm -f /proc/self/root{box.outside}/keep.txt"
    )
    assert (box.outside / "keep.txt").read_text() == "precious\n"
    visible = int(result.text.split()[0])
    assert visible < 10  # own PID namespace: the host's processes are invisible


async def test_unshare_nsenter_chroot_and_remount_fail(box: Box) -> None:
    result = await box.run(
        "unshare -r true && echo UNSHARED; "
        "unshare -m true && echo UNSHARED-M; "
        "nsenter -t 1 -m true && echo ENTERED; "
        "chroot / true && echo CHROOTED; "
        f"mount -o remount,bind,rw {box.outside} && echo REMOUNTED; "
        f"bwrap --bind / / true && echo NESTED; "
        f"cat {box.outside}/keep.txt"
    )
    for word in ("UNSHARED", "ENTERED", "CHROOTED", "REMOUNTED", "NESTED"):
        assert word not in result.text, result.text
    assert "precious" in result.text


async def test_setuid_helper_gains_nothing(box: Box) -> None:
    assert shutil.which("gcc")
    source = box.project / "su.c"
    source.write_text(
        textwrap.dedent(
            f"""
            #include <stdio.h>
            #include <unistd.h>
            int main(void) {{
                setuid(0); setgid(0);
                FILE *f = fopen("{box.outside}/keep.txt", "w");
                if (!f) {{ perror("{box.outside}/keep.txt"); return 1; }}
                fputs("gone", f); fclose(f); return 0;
            }}
            """
        )
    )
    subprocess.run(["gcc", "-o", str(box.project / "su"), str(source)], check=True)
    os.chmod(box.project / "su", 0o4755)
    result = await box.run("./su; grep -i '^CapEff' /proc/self/status")
    assert (box.outside / "keep.txt").read_text() == "precious\n"
    assert "CapEff:\t0000000000000000" in result.text


async def test_agent_sockets_are_hidden(box: Box) -> None:
    result = await box.run("echo ${SSH_AUTH_SOCK:-unset}; ls /run/user | wc -l")
    assert result.text.split()[:2] == ["unset", "0"]


async def test_a_failed_read_of_a_hidden_path_is_named(box: Box) -> None:
    _plant_credentials(Path.home())
    result = await box.run("cat ~/.aws/credentials")
    assert not result.ok
    assert f"[sandbox] Refused read of {Path.home().resolve() / '.aws' / 'credentials'}" in result.text
