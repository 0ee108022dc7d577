"""The pip side of packages: PyPI packages and a package's own Python dependencies.

Everything is installed with the running interpreter's pip into a folder of its own
(``python -m pip install --target <folder>``), never into pi-tui's environment: a PyPI package goes to
``<scope>/pypi/<name>/``, the dependencies of a git package to ``<clone>/.deps/``. pip reads its usual
configuration and ``PIP_*`` variables, so ``PIP_INDEX_URL``, ``PIP_NO_INDEX`` or ``PIP_FIND_LINKS`` work
as they do for pip itself.

pip installs into a fresh temporary folder that replaces the old one only when pip succeeded, so a
failed update leaves the previous install working.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from .errors import PackageInstallError

__all__ = [
    "DEPS_DIR",
    "declared_dependencies",
    "install_dependencies",
    "pip_command",
    "pip_install",
    "pypi_package_roots",
    "replace_dir",
]

DEPS_DIR = ".deps"
"""Where a git or local package's own dependencies go; the extension loader knows this name too."""


def pip_command(requirements: list[str], target: Path) -> list[str]:
    """The pip command line installing ``requirements`` (pip arguments) into ``target``."""
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--target",
        str(target),
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        *requirements,
    ]


def replace_dir(new: Path, target: Path) -> None:
    """Put the folder ``new`` at ``target``, removing what was there only once ``new`` is in place."""
    old: Path | None = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
    try:
        new.rename(target)
    except OSError:
        if old is not None:
            old.rename(target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def pip_install(requirements: list[str], target: Path, *, cwd: Path | None = None, what: str = "") -> None:
    """Install ``requirements`` into a fresh ``target`` folder (replacing it on success).

    Raises:
        PackageInstallError: pip failed; the message ends with pip's last error lines.
    """
    from .leftovers import tidy

    target.parent.mkdir(parents=True, exist_ok=True)
    tidy(target)  # what an install killed part way left behind
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.pip-", dir=target.parent))
    try:
        done = subprocess.run(
            pip_command(requirements, work),
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            lines = [line for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()]
            detail = "\n".join(lines[-8:]) or f"exit code {done.returncode}"
            raise PackageInstallError(f"pip could not install {what or ' '.join(requirements)}: {detail}")
        replace_dir(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def declared_dependencies(root: Path) -> list[str] | None:
    """pip arguments for a package's own dependencies, or ``None`` when it declares none.

    ``requirements.txt`` at the root wins; otherwise ``[project] dependencies`` of ``pyproject.toml``.
    """
    requirements = root / "requirements.txt"
    if requirements.is_file():
        return ["-r", str(requirements)]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        deps = project.get("dependencies") if isinstance(project, dict) else None
        if isinstance(deps, list) and deps and all(isinstance(d, str) for d in deps):
            return list(deps)
    return None


def install_dependencies(root: Path, what: str) -> bool:
    """pip-install the dependencies ``root`` declares into ``root/.deps``; ``False`` when there are none."""
    requirements = declared_dependencies(root)
    if requirements is None:
        return False
    # cwd=root: relative paths inside requirements.txt mean what the package author meant
    pip_install(requirements, root / DEPS_DIR, cwd=root, what=f"the dependencies of {what}")
    return True


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _dist_info(target: Path, name: str) -> Path | None:
    for info in sorted(target.glob("*.dist-info")):
        try:
            metadata = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in metadata.splitlines():
            if line.lower().startswith("name:"):
                if _normalize(line.partition(":")[2].strip()) == name:
                    return info
                break
    return None


def pypi_package_roots(target: Path, name: str) -> list[Path]:
    """The top-level folders the distribution ``name`` installed into ``target`` (its import packages).

    They come from the distribution's ``RECORD``; its dependencies, installed alongside, are left out.
    """
    info = _dist_info(target, name)
    if info is None:
        return []
    try:
        record = (info / "RECORD").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    tops: list[str] = []
    for line in record.splitlines():
        first = line.split(",", 1)[0].replace("\\", "/").split("/", 1)
        if len(first) < 2:
            continue  # a top-level module file, not a folder
        top = first[0]
        if top in ("..", "bin", "__pycache__") or top.endswith((".dist-info", ".data")) or top in tops:
            continue
        tops.append(top)
    return [target / top for top in sorted(tops) if (target / top).is_dir()]
