"""``pi-tui install | remove (uninstall) | update | list``: the package sub-commands.

The CLI hands these over before its normal argument parsing. Results go to stdout, problems to stderr;
the exit code is 0 on success and 1 on any failure (a bad option, a missing source, no matching package,
a failed git or pip run).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the real imports wait until a command runs, so --help stays instant
    from pi_tui.resources.settings import SettingsManager

    from .manager import PackageManager, Scope

__all__ = ["COMMANDS", "run_package_command"]

COMMANDS = ("install", "remove", "uninstall", "update", "list")

_USAGE = {
    "install": "pi-tui install <source> [-l]",
    "remove": "pi-tui remove <source> [-l]",
    "update": "pi-tui update [source]",
    "list": "pi-tui list",
}

_SOURCES_HELP = """\
Sources:
  pypi:<name>[==<version>]      a PyPI package (pip: works too); ==version pins it
  git:<host>/<path>[@<ref>]     a git repository (also git:user@host:path, git:/a/local/repo)
  https://…[@<ref>], ssh://…    git URLs (http://, git:// and file:// too); a ref pins it
  ./path, /path, ~/path         a local folder, used in place
"""

_HELP = {
    "install": f"""\
Usage:
  {_USAGE["install"]}

Install a package and add it to the "packages" setting.

Options:
  -l, --local    Install for this project (.pi/settings.json, files under .pi/) instead of the user
  --offline      Refuse network operations
  -h, --help     Show this help

{_SOURCES_HELP}
Examples:
  pi-tui install pypi:pi-tui-guard
  pi-tui install git:github.com/user/repo@v1
  pi-tui install https://github.com/user/repo
  pi-tui install ./my-package -l
""",
    "remove": f"""\
Usage:
  {_USAGE["remove"]}

Remove a package from the "packages" setting and delete its installed copy (a local folder is kept).
"uninstall" is the same command.

Options:
  -l, --local    Remove it from this project's settings (.pi/settings.json)
  -h, --help     Show this help
""",
    "update": f"""\
Usage:
  {_USAGE["update"]}

Update installed packages: git packages move to the newest commit of their default branch, PyPI
packages are reinstalled at their newest version. Pinned packages (==version, @ref) and local folders
are skipped. With <source> (or --extension <source>), only that package is updated.
pi-tui does not update itself or model catalogs here (pi's "update self", --all, --models): upgrade
pi-tui with the tool that installed it.

Options:
  --extensions   Every package (the default; pi's spelling)
  --extension <source>  Only that package
  --offline      Refuse network operations
  -h, --help     Show this help
""",
    "list": f"""\
Usage:
  {_USAGE["list"]}

List the packages of the user and project settings with where they are installed.

Options:
  -h, --help     Show this help
""",
}


@dataclass
class _Options:
    command: str
    source: str | None = None
    local: bool = False
    offline: bool = False
    help: bool = False
    invalid: str | None = None
    extra: str | None = None
    # pi's ``update`` targets that pi-tui does not act on: itself (pip installs it) and model catalogs
    # (they ship inside the package); named so the refusal can say what to do instead
    unsupported: str | None = None


def _parse(argv: list[str]) -> _Options:
    command = "remove" if argv[0] == "uninstall" else argv[0]
    options = _Options(command)
    rest = iter(argv[1:])
    for arg in rest:
        if arg in ("-h", "--help"):
            options.help = True
        elif command == "update" and arg == "--extensions":
            pass  # pi's spelling of "every package": what a bare ``update`` does here
        elif command == "update" and arg == "--extension":
            options.source = next(rest, None)
            if options.source is None:
                options.invalid = options.invalid or arg
        elif command == "update" and arg in ("--self", "--all", "--force", "--models") or (
            command == "update" and arg in ("self", "pi") and options.source is None
        ):
            options.unsupported = options.unsupported or arg
        elif arg in ("-l", "--local") and command in ("install", "remove"):
            options.local = True
        elif arg == "--offline" and command in ("install", "update"):
            options.offline = True
        elif arg.startswith("-") and len(arg) > 1:
            options.invalid = options.invalid or arg
        elif command == "list" or options.source is not None:
            options.extra = options.extra or arg
        else:
            options.source = arg
    return options


def _err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def run_package_command(argv: list[str]) -> int:
    """Run a package sub-command; ``argv[0]`` is the command name. Returns the exit code."""
    options = _parse(argv)
    usage = _USAGE[options.command]
    if options.help:
        sys.stdout.write(_HELP[options.command])
        return 0
    if options.invalid:
        _err(f'Unknown option {options.invalid} for "{argv[0]}"')
        _err(f'Usage: {usage}  (see "pi-tui {options.command} --help")')
        return 1
    if options.extra:
        _err(f'Unexpected argument {options.extra} for "{argv[0]}"')
        _err(f"Usage: {usage}")
        return 1
    if options.unsupported:
        what = "model catalogs" if options.unsupported == "--models" else "itself"
        _err(f'pi-tui update does not update {what} ("{options.unsupported}"): it updates packages only')
        if what == "itself":
            _err("Upgrade pi-tui with the tool that installed it (for example: pip install --upgrade pi-tui).")
        else:
            _err("The model catalog ships with pi-tui; upgrading pi-tui brings a newer one.")
        _err('Update every package with "pi-tui update" (or "pi-tui update --extensions").')
        return 1
    if options.command in ("install", "remove") and not options.source:
        _err(f'Missing source for "{argv[0]}"')
        _err(f"Usage: {usage}")
        return 1

    from pi_tui.resources.paths import agent_dir
    from pi_tui.resources.settings import SettingsManager

    from .errors import PackageError
    from .manager import PackageManager, is_offline

    settings = SettingsManager(agent_dir(), Path(os.getcwd()))
    for problem in settings.drain_errors():
        _err(f"Warning: {problem}")
    manager = PackageManager(settings, offline=options.offline or is_offline())
    try:
        if options.command == "install":
            return _install(manager, settings, options)
        if options.command == "remove":
            return _remove(manager, options)
        if options.command == "update":
            return _update(manager, settings, options)
        return _list(manager, settings)
    except PackageError as exc:
        _err(f"Error: {exc}")
        return 1


def _install(manager: PackageManager, settings: SettingsManager, options: _Options) -> int:
    assert options.source is not None
    scope: Scope = "project" if options.local else "global"
    _, notes = manager.install(options.source, scope)
    for note in notes:
        _err(f"Warning: {note}")
    print(f"Installed {options.source}")
    if scope == "project" and not settings.is_project_trusted(manager.cwd):
        print(
            "Note: this project is not trusted, so its packages load only once it is "
            "(use /trust in pi-tui, or run pi-tui once with --trust-project)."
        )
    return 0


def _remove(manager: PackageManager, options: _Options) -> int:
    assert options.source is not None
    removed = manager.remove(options.source, "project" if options.local else "global")
    if removed is None:
        _err(f"No matching package found for {options.source}")
        return 1
    print(f"Removed {options.source}")
    return 0


def _update(manager: PackageManager, settings: SettingsManager, options: _Options) -> int:
    results = manager.update(options.source, project_trusted=settings.is_project_trusted(manager.cwd))
    if not results:
        print("No packages to update.")
    for result in results:
        if result.ok:
            print(result.message)
        else:
            _err(result.message)
    for problem in manager.problems:
        _err(f"Warning: {problem}")
    return 0 if all(result.ok for result in results) else 1


def _list(manager: PackageManager, settings: SettingsManager) -> int:
    from .manager import scope_label

    scopes: tuple[Scope, ...] = ("global", "project")
    sections = [(scope, manager.entries(scope)) for scope in scopes]
    for problem in manager.problems:
        _err(f"Warning: {problem}")
    if not any(entries for _, entries in sections):
        print("No packages installed.")
        return 0
    first = True
    for scope, entries in sections:
        if not entries:
            continue
        if not first:
            print()
        first = False
        print(f"{scope_label(scope).capitalize()} packages:")
        if scope == "project" and not settings.is_project_trusted(manager.cwd):
            print("  (this project is not trusted: these packages are not loaded)")
        for entry in entries:
            filtered = " (filtered)" if entry.filters is not None else ""
            print(f"  {entry.source.raw}{filtered}")
            print(
                f"    {entry.install_dir}" if entry.installed else f"    {entry.install_dir} (not installed)"
            )
    return 0
