"""Which tools a run offers, from pi's tool options and the ``defaultTools`` setting.

Two things are decided at start-up. The *gate* says which tools may exist in this run at all: with an
allowlist (``--tools``) only the listed names, with ``--no-tools`` none, and never an excluded name
(``--exclude-tools``); it also holds for tools an extension registers later. The *start-up selection*
is what the model is offered first: the allowlist, else nothing for ``--no-tools`` or
``--no-builtin-tools``, else the ``defaultTools`` setting, else read, bash, edit and write, minus the
excluded names. Extension tools that pass the gate are offered as they register.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["ToolGate", "ToolSelection", "select_tools"]


@dataclass(frozen=True)
class ToolGate:
    """The tool names this run may load: ``allowed`` (None: any) minus ``excluded``."""

    allowed: frozenset[str] | None = None
    excluded: frozenset[str] = field(default_factory=frozenset)

    def allows(self, name: str) -> bool:
        """Whether a tool called ``name`` may be loaded and offered in this run."""
        return (self.allowed is None or name in self.allowed) and name not in self.excluded


@dataclass(frozen=True)
class ToolSelection:
    """The gate and the tools offered at start-up (in order)."""

    gate: ToolGate
    active: list[str]


def select_tools(
    *,
    tools: Sequence[str] | None,
    exclude: Sequence[str],
    no_tools: bool,
    no_builtin_tools: bool,
    default_tools: Sequence[str] | None,
    builtin_defaults: Sequence[str],
) -> ToolSelection:
    """Combine the command line's tool options with the ``defaultTools`` setting, as pi does.

    Args:
        tools: ``--tools`` names, or None when the option was not given.
        exclude: ``--exclude-tools`` names.
        no_tools: ``--no-tools``.
        no_builtin_tools: ``--no-builtin-tools``.
        default_tools: the ``defaultTools`` setting, or None when unset.
        builtin_defaults: the built-ins offered when nothing else says which.
    """
    allowed = frozenset(tools) if tools is not None else (frozenset() if no_tools else None)
    gate = ToolGate(allowed, frozenset(exclude))
    if tools is not None:
        first = list(tools)
    elif no_tools or no_builtin_tools:
        first = []
    else:
        first = list(default_tools if default_tools is not None else builtin_defaults)
    return ToolSelection(gate, [name for name in dict.fromkeys(first) if gate.allows(name)])
