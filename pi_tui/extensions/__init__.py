"""Python extensions: discovery, loading, the event runner and hot reload.

Extension authors import `pi_tui.extensions.api` only; the other modules here are the runtime's side.
This package module imports nothing, so start-up pays only for what is used.
"""
