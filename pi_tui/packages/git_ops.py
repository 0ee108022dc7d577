"""The git side of packages: clone, move to a ref, follow the remote's default branch.

Every command runs with ``GIT_TERMINAL_PROMPT=0`` so a private repository fails with a message instead of
waiting for a password on a terminal nobody is looking at. A clone is made in a temporary sibling folder
and renamed into place, so a failed clone never leaves a half-filled package behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import PackageInstallError

__all__ = ["clone", "current_commit", "run_git", "sync"]

# Variables a git hook or a surrounding repository may have set; they would point our commands elsewhere.
_GIT_LOCATION_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX")


def _tail(text: str, lines: int = 6) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return "\n".join(kept) or "no output"


def run_git(args: list[str], cwd: Path | None = None) -> str:
    """Run ``git args`` in ``cwd`` and return its stripped stdout.

    Raises:
        PackageInstallError: git is missing, or the command failed (its last error lines are included).
    """
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise PackageInstallError(
            "git is not installed or not on PATH; it is needed for git packages"
        ) from exc
    if done.returncode != 0:
        command = next((a for a in args if not a.startswith("-") and "=" not in a), "git")
        raise PackageInstallError(f"git {command} failed: {_tail(done.stderr or done.stdout)}")
    return done.stdout.strip()


def current_commit(repo: Path) -> str:
    """The commit checked out in ``repo``."""
    return run_git(["rev-parse", "HEAD"], cwd=repo)


def _checkout_ref(repo: Path, ref: str, url: str) -> None:
    """Check out a branch (following its remote copy), a tag or a commit."""
    try:
        run_git(["rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{ref}"], cwd=repo)
        remote_branch = True
    except PackageInstallError:
        remote_branch = False
    try:
        if remote_branch:
            run_git(["checkout", "--quiet", "--force", "-B", ref, f"origin/{ref}"], cwd=repo)
        else:
            run_git(
                ["-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", ref, "--"], cwd=repo
            )
    except PackageInstallError as exc:
        raise PackageInstallError(f'Ref "{ref}" was not found in {url}: {exc}') from exc


def _default_branch(repo: Path, url: str) -> str:
    for attempt in range(2):
        try:
            head = run_git(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], cwd=repo)
            return head.removeprefix("origin/")
        except PackageInstallError:
            if attempt == 0:
                # origin/HEAD is set by clone but may be missing (an old clone, a remote renamed its branch)
                try:
                    run_git(["remote", "set-head", "origin", "--auto"], cwd=repo)
                except PackageInstallError:
                    break
    raise PackageInstallError(f"Cannot tell the default branch of {url}: the remote has no HEAD")


def clone(url: str, dest: Path, ref: str | None) -> None:
    """Clone ``url`` into ``dest`` (which must not exist) and check out ``ref`` when given."""
    from .leftovers import tidy

    dest.parent.mkdir(parents=True, exist_ok=True)
    tidy(dest)  # what a clone killed part way left behind
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.clone-", dir=dest.parent))
    try:
        run_git(["clone", "--quiet", "--", url, str(work)])
        if ref is not None:
            _checkout_ref(work, ref, url)
        work.rename(dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def sync(repo: Path, url: str, ref: str | None) -> tuple[str, str]:
    """Fetch and move an existing clone to ``ref``, or to the tip of the remote's default branch.

    The move is a forced checkout, not a merge: it also recovers from a force-pushed (rewritten) remote,
    and local edits inside the managed clone are discarded. Untracked files (such as ``.deps/``) stay.

    Returns:
        The commit before and after.
    """
    before = current_commit(repo)
    if run_git(["remote", "get-url", "origin"], cwd=repo) != url:
        run_git(["remote", "set-url", "origin", url], cwd=repo)
    run_git(["fetch", "--quiet", "--prune", "--tags", "--force", "origin"], cwd=repo)
    if ref is not None:
        _checkout_ref(repo, ref, url)
    else:
        branch = _default_branch(repo, url)
        run_git(["checkout", "--quiet", "--force", "-B", branch, f"origin/{branch}"], cwd=repo)
    return before, current_commit(repo)
