"""The macOS profile is generated from the policy (sandbox-exec itself cannot run here)."""

from __future__ import annotations

from pathlib import Path

from pi_tui.sandbox.policy import SandboxPolicy
from pi_tui.sandbox.seatbelt import seatbelt_argv


def test_profile_denies_writes_outside_hides_secrets_and_keeps_paths_out_of_the_text(tmp_path: Path) -> None:
    evil = tmp_path / 'proj")(allow file-write* (subpath "/'
    policy = SandboxPolicy(
        mode="workspace-write",
        project=evil,
        writable=(evil,),
        protected=(evil / ".git" / "hooks",),
        hidden=(tmp_path / ".ssh",),
    )
    argv, env = seatbelt_argv(policy, ["/bin/sh", "-c", "true"], temp_dir=tmp_path / "t", env={"A": "1"})
    profile = argv[argv.index("-p") + 1]
    assert argv[0] == "/usr/bin/sandbox-exec" and argv[-3:] == ["/bin/sh", "-c", "true"]
    assert "(deny file-write*)" in profile and "(deny network*)" in profile
    assert str(evil) not in profile  # paths are parameters, so a path cannot add rules
    assert f"W0={evil}" in argv and f"H0={tmp_path / '.ssh'}" in argv
    assert env["TMPDIR"] == str(tmp_path / "t") and env["A"] == "1"
