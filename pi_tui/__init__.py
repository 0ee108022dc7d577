"""pi-tui: a full-screen terminal coding agent built around context engineering."""

__version__ = "0.1.0"
