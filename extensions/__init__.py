"""pi-tui's bundled extensions (installed as ``pi_tui.bundled_extensions``).

Each module here is an ordinary extension with a ``register(pi)`` function, written only against
``pi_tui.extensions.api``. Enable one by name: ``pi-tui -e todo`` or settings
``"extensions": ["bundled:todo"]``. Modules starting with ``_`` are shared helpers, not extensions.

| name | what |
|---|---|
| ``todo`` | a ``todo`` tool and a live "Todo" panel |
| ``pinned_files`` | ``/pin`` files into a live panel that follows their changes |
| ``git_status`` | a live panel with ``git status`` and recent commits |
| ``permission_gate`` | asks before destructive bash commands |
| ``secret_redactor`` | masks secrets in tool results |
| ``plan_mode`` | read-only tools until the user approves a plan |
| ``mcp`` | MCP servers through one ``mcp`` proxy tool (or direct), ``/mcp`` (a package: ``mcp/``) |
| ``protected_paths`` | blocks writes to ``.env*``, ``.git/``, ``node_modules/`` and configured paths |
"""
