"""Packaging glue that pyproject.toml cannot express (everything else is in pyproject.toml).

The bundled extensions live in the top-level ``extensions/`` folder (they are written like any user's
extension) and ship inside the wheel as the package ``pi_tui.bundled_extensions``, where
``pi_tui.extensions.discovery.bundled_extensions_dir`` finds them for ``-e NAME`` and ``bundled:NAME``.
"""

from setuptools import find_namespace_packages, setup

BUNDLED = "pi_tui.bundled_extensions"

setup(
    packages=[
        *find_namespace_packages(include=["pi_tui*"]),
        BUNDLED,
        *(f"{BUNDLED}.{name}" for name in find_namespace_packages("extensions", exclude=["*__pycache__*"])),
    ],
    package_dir={BUNDLED: "extensions"},
)
