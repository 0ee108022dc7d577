"""Packaging glue that pyproject.toml cannot express (everything else is in pyproject.toml).

The bundled extensions live in the top-level ``extensions/`` folder (they are written like any user's
extension) and ship inside the wheel as the package ``pi_tui.bundled_extensions``, where
``pi_tui.extensions.discovery.bundled_extensions_dir`` finds them for ``-e NAME`` and ``bundled:NAME``. The built-in themes (top-level ``themes/``) ship the same way, as
``pi_tui.bundled_themes``.
"""

from setuptools import find_namespace_packages, setup

BUNDLED = "pi_tui.bundled_extensions"
THEMES = "pi_tui.bundled_themes"

setup(
    packages=[
        *find_namespace_packages(include=["pi_tui*"]),
        BUNDLED,
        *(f"{BUNDLED}.{name}" for name in find_namespace_packages("extensions", exclude=["*__pycache__*"])),
        THEMES,
    ],
    package_dir={BUNDLED: "extensions", THEMES: "themes"},
)
