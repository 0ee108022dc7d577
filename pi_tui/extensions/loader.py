"""Importing an extension from its path, fresh every time.

Each load gets a unique module name (``_pi_ext_<name>_<n>``), so ``/reload`` re-executes the code
rather than returning a cached module. Sources are compiled from the file each time and no ``.pyc`` is
read or written next to the user's code: a cached bytecode file keyed on a one-second mtime could
otherwise bring back an edit's previous version. A package extension's own submodules
(``from . import helpers``) are loaded the same way.

Dependencies: a ``vendor/`` or ``.deps/`` folder next to the extension (inside a package extension, or
beside a single-file one) is appended to ``sys.path`` before the import, e.g. after
``pip install --target vendor somepackage``. It is appended, not prepended: pi-tui's own dependencies
keep their installed versions.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import itertools
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from .discovery import ExtensionSource, bundled_extensions_dir

__all__ = ["MODULE_PREFIX", "ExtensionLoadError", "import_extension", "forget_module", "vendor_paths"]

MODULE_PREFIX = "_pi_ext_"
_counter = itertools.count(1)
_VENDOR_DIRS = ("vendor", ".deps")


class ExtensionLoadError(Exception):
    """An extension could not be imported or has no ``register(pi)``."""


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles from source on every import and never touches ``__pycache__``."""

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        source = self.get_data(path)
        return compile(source, path, "exec", dont_inherit=True)


class _ExtensionFinder(importlib.abc.MetaPathFinder):
    """Finds the submodules of package extensions (names under `MODULE_PREFIX`) with the fresh loader."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not fullname.startswith(MODULE_PREFIX) or "." not in fullname or not path:
            return None
        leaf = fullname.rpartition(".")[2]
        for folder in path:
            package = Path(folder) / leaf / "__init__.py"
            if package.is_file():
                return _spec(fullname, package, package=True)
            module = Path(folder) / f"{leaf}.py"
            if module.is_file():
                return _spec(fullname, module, package=False)
        return None


_FINDER = _ExtensionFinder()


def _spec(name: str, file: Path, *, package: bool) -> importlib.machinery.ModuleSpec:
    loader = _FreshSourceLoader(name, str(file))
    locations = [str(file.parent)] if package else None
    spec = importlib.util.spec_from_file_location(
        name, str(file), loader=loader, submodule_search_locations=locations
    )
    if spec is None:  # pragma: no cover - only for paths importlib cannot describe
        raise ExtensionLoadError(f"cannot build an import spec for {file}")
    return spec


def vendor_paths(source: ExtensionSource) -> list[Path]:
    """The dependency folders of ``source`` that exist."""
    base = source.path if source.path.is_dir() else source.path.parent
    return [base / name for name in _VENDOR_DIRS if (base / name).is_dir()]


def _module_name(source: ExtensionSource) -> str:
    safe = re.sub(r"\W", "_", source.name) or "ext"
    return f"{MODULE_PREFIX}{safe}_{next(_counter)}"


def import_extension(source: ExtensionSource) -> ModuleType:
    """Import ``source`` under a new unique module name and return the module.

    Raises:
        ExtensionLoadError: The file is missing, or importing it raised (the cause is chained).
    """
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    for folder in vendor_paths(source):
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
    entry = source.entry_file
    if not entry.is_file():
        raise ExtensionLoadError(f"{entry} does not exist")
    name = _module_name(source)
    spec = _spec(name, entry, package=source.path.is_dir())
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before exec: dataclasses and relative imports look it up
    try:
        assert spec.loader is not None
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        forget_module(name)
        raise
    except BaseException as exc:  # SystemExit too: an extension must never end the app
        forget_module(name)
        raise ExtensionLoadError(f"{type(exc).__name__}: {exc}{failure_place(exc, source)}") from exc
    return module


def failure_place(exc: BaseException, source: ExtensionSource) -> str:
    """`` (at file:line)`` for an extension that failed to load or register, or nothing.

    pi-tui's own bundled extensions fail only on purpose, with a message written for the user (the MCP
    SDK not installed: how to install it), so the place in their code would be noise there.
    """
    return "" if is_bundled(source) else error_location(exc, source_root(source))


def is_bundled(source: ExtensionSource) -> bool:
    """Whether the extension is one pi-tui ships (``-e mcp``), not the user's own code."""
    folder = bundled_extensions_dir()
    return folder is not None and source.path.resolve().is_relative_to(folder.resolve())


def source_root(source: ExtensionSource) -> Path:
    """The folder an extension's own code lives in."""
    return source.path if source.path.is_dir() else source.path.parent


def error_location(exc: BaseException, root: Path) -> str:
    """`` (at file:line)``: the innermost frame under ``root`` (the extension's own code) the error passed
    through (a syntax error names its own place), or nothing (for an import error, which names what is
    missing)."""
    if isinstance(exc, ImportError):  # names what is missing, often with how to install it: enough
        return ""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return "" if f"line {exc.lineno}" in str(exc) else f" (at {exc.filename}:{exc.lineno})"
    import traceback

    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if Path(frame.filename).is_relative_to(root)
    ]
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def forget_module(name: str) -> None:
    """Drop a loaded extension module and its submodules from ``sys.modules``."""
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]
