"""Base utilities any layer may import: small, dependency-light helpers with one job each."""
