"""Lazy package exports (PEP 562): a package names what it offers, each name is imported on first use.

A package whose ``__init__`` imported all of its submodules would make every importer pay for all of
them at start-up; with `lazy_exports` a one-turn run loads only the submodules it actually touches.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``name`` from its submodule on first use.

    Args:
        package: the package's ``__name__``.
        exports: public name → module: relative to ``package`` (``"store"`` or ``".store"``) or, when it
            is dotted (``"pi_tui.agent.serialize"``), absolute.

    Returns:
        The function to assign to the package's ``__getattr__``; it caches each value in the package
        namespace (so the next access is a plain attribute) and raises ``AttributeError`` for other names.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if not module.startswith(".") and "." not in module:
            module = f".{module}"  # a bare submodule name
        value = getattr(importlib.import_module(module, package), name)  # the export, named in the table
        namespace[name] = value
        return value

    return __getattr__
