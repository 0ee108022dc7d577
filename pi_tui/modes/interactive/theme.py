"""pi's theme JSON turned into a Textual `Theme` whose CSS variables the widgets use.

A pi theme names 51 colour tokens (``accent``, ``userMessageBg``, ``toolDiffAdded`` …). Each becomes a CSS
variable ``$pi-<kebab-name>`` (``$pi-user-message-bg``), and the Textual base colours (primary, background,
…) are derived from them, so widgets use only theme variables. Built-in themes live in the repository's
``themes/`` folder; user themes in ``~/.pi/agent/themes/*.json`` and the project's ``.pi/themes``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.theme import Theme

from pi_tui.util import json_safe

if TYPE_CHECKING:
    from pi_tui.packages.resolve import ResolvedPackages
    from pi_tui.runtime.agent_session import AgentSession

__all__ = [
    "PiTheme",
    "ThemeError",
    "TOKENS",
    "builtin_theme_dir",
    "find_theme_file",
    "load_theme",
    "session_theme_paths",
    "theme_names",
    "to_textual",
    "variable_defaults",
]

TOKENS: tuple[str, ...] = tuple(
    "accent border borderAccent borderMuted success error warning muted dim text thinkingText "
    "selectedBg userMessageBg userMessageText customMessageBg customMessageText customMessageLabel "
    "toolPendingBg toolSuccessBg toolErrorBg toolTitle toolOutput "
    "mdHeading mdLink mdLinkUrl mdCode mdCodeBlock mdCodeBlockBorder mdQuote mdQuoteBorder mdHr mdListBullet "
    "toolDiffAdded toolDiffRemoved toolDiffContext "
    "syntaxComment syntaxKeyword syntaxFunction syntaxVariable syntaxString syntaxNumber syntaxType "
    "syntaxOperator syntaxPunctuation "
    "thinkingOff thinkingMinimal thinkingLow thinkingMedium thinkingHigh thinkingXhigh bashMode".split()
)
"""The 51 colour tokens every pi theme must define."""

_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")


class ThemeError(ValueError):
    """A theme file is missing, unreadable or incomplete; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class PiTheme:
    """A resolved pi theme: every token as ``#rrggbb`` (or ``""`` for the terminal default)."""

    name: str
    colors: dict[str, str]
    page_bg: str | None
    path: Path | None = None


def builtin_theme_dir() -> Path:
    """The folder of the built-in ``dark`` and ``light`` themes.

    In a checkout (and an editable install) that is the repository's ``themes/`` folder; a wheel ships
    the same files as the package ``pi_tui.bundled_themes`` (see setup.py).
    """
    here = Path(__file__).resolve()
    checkout = here.parents[3] / "themes"
    if (checkout / "dark.json").is_file():
        return checkout
    return here.parents[2] / "bundled_themes"


def _user_dirs(agent_dir: Path | None, cwd: Path | None) -> list[Path]:
    dirs: list[Path] = []
    if agent_dir is not None:
        dirs.append(agent_dir / "themes")
    if cwd is not None:
        dirs.append(cwd / ".pi" / "themes")
    return dirs


def find_theme_file(
    name: str, agent_dir: Path | None = None, cwd: Path | None = None, extra: list[Path] | None = None
) -> Path | None:
    """Where theme ``name`` lives: built-in first (as pi: the first of a name wins), then user, project."""
    for directory in [builtin_theme_dir(), *_user_dirs(agent_dir, cwd)]:
        candidate = directory / f"{name}.json"
        if candidate.is_file():
            return candidate
    for path in extra or []:
        if path.is_file() and path.stem == name:
            return path
        if path.is_dir() and (path / f"{name}.json").is_file():
            return path / f"{name}.json"
    return None


def theme_names(
    agent_dir: Path | None = None, cwd: Path | None = None, extra: list[Path] | None = None
) -> list[str]:
    """Every theme name on offer, built-ins first, then ``extra`` files and folders (`session_theme_paths`)."""
    names: list[str] = []
    for directory in [builtin_theme_dir(), *_user_dirs(agent_dir, cwd)]:
        if directory.is_dir():
            names += sorted(p.stem for p in directory.glob("*.json") if p.stem not in names)
    for path in extra or []:
        found = [path] if path.is_file() and path.suffix == ".json" else sorted(path.glob("*.json"))
        names += [p.stem for p in found if p.stem not in names]
    return names


def session_theme_paths(session: AgentSession | None, packages: ResolvedPackages | None = None) -> list[Path]:
    """Theme files and folders a session adds to the built-in and user ones, as pi collects them: the
    ``themes`` setting (relative entries from the folder of the settings file that lists them;
    project entries only when the project is trusted), installed packages' themes, and the paths
    extensions return from ``resources_discover``."""
    paths: list[Path] = []
    settings = session.settings if session is not None else None
    if settings is not None:
        for entry in settings.resource_entries("themes"):
            value = entry.value.removeprefix("+")
            if not value or value[0] in "!-":  # exclusion patterns filter files pi-tui does not list
                continue
            path = Path(value).expanduser()
            paths.append(path if path.is_absolute() else entry.base_dir / path)
    if packages is not None:
        paths += list(packages.theme_paths)
    runner = session.extensions if session is not None else None
    if runner is not None:
        paths += [Path(item) for item in runner.theme_paths]
    return paths


def _ansi256(index: int) -> str:
    from rich.color import Color

    triplet = Color.from_ansi(index).get_truecolor()
    return triplet.hex


def _resolve(value: object, variables: dict[str, object], token: str, path: Path, depth: int = 0) -> str:
    if depth > 8:
        raise ThemeError(f"{path}: colour {token!r} refers to itself through vars")
    if isinstance(value, bool):
        raise ThemeError(f"{path}: colour {token!r} must be a #rrggbb string, a 0-255 index or a var name")
    if isinstance(value, int):
        if not 0 <= value <= 255:
            raise ThemeError(f"{path}: colour {token!r}: {value} is not a 256-colour index (0-255)")
        return _ansi256(value)
    if not isinstance(value, str):
        raise ThemeError(f"{path}: colour {token!r} must be a #rrggbb string, a 0-255 index or a var name")
    if value == "" or _HEX.match(value):
        return value.lower()
    if value in variables:
        return _resolve(variables[value], variables, token, path, depth + 1)
    raise ThemeError(f"{path}: colour {token!r}: {value!r} is neither #rrggbb nor a name in vars")


def load_theme(path: Path) -> PiTheme:
    """Read and check one theme file.

    Raises:
        ThemeError: unreadable JSON, a missing token or a colour that does not resolve.
    """
    try:
        data = json_safe.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ThemeError(f"Cannot read theme {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("colors"), dict):
        raise ThemeError(f"{path}: a theme needs a 'colors' object")
    variables = data.get("vars") or {}
    colors_in = data["colors"]
    missing = [t for t in TOKENS if t not in colors_in]
    if missing:
        raise ThemeError(f"{path}: missing colour token(s): {', '.join(missing)}")
    colors = {t: _resolve(v, variables, t, path) for t, v in colors_in.items()}
    export = data.get("export") or {}
    page_bg = export.get("pageBg") if isinstance(export, dict) else None
    page = _resolve(page_bg, variables, "export.pageBg", path) if page_bg else None
    return PiTheme(str(data.get("name") or path.stem), colors, page or None, path)


def _kebab(token: str) -> str:
    return "pi-" + re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", token).lower()


def _luminance(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def to_textual(theme: PiTheme) -> Theme:
    """The Textual theme: base colours derived from the pi tokens plus one ``pi-*`` variable per token."""
    c = theme.colors
    text = c.get("text") or ""
    dark = _luminance(text) > 0.5 if text else True
    background = theme.page_bg or ("#16181c" if dark else "#fbfbfa")
    fallback = {"": text or ("#d0d3d8" if dark else "#24292f")}
    variables = {_kebab(t): (v or fallback[""]) for t, v in c.items()}
    variables["pi-background"] = background
    return Theme(
        name=f"pi-{theme.name}",
        primary=c.get("accent") or fallback[""],
        secondary=c.get("borderAccent") or None,
        warning=c.get("warning") or None,
        error=c.get("error") or None,
        success=c.get("success") or None,
        accent=c.get("border") or None,
        foreground=text or None,
        background=background,
        dark=dark,
        variables=variables,
    )


def variable_defaults() -> dict[str, str]:
    """Every ``pi-*`` variable with a neutral value, so widget CSS parses under any Textual theme."""
    out = {_kebab(t): "#888888" for t in TOKENS}
    out["pi-background"] = "#16181c"
    return out
