"""The shipped catalog file is what pi 0.87.1's own package says (regenerate with
``python -m pi_tui.ai.catalog_gen``)."""

from __future__ import annotations

import json

import pytest

from pi_tui.ai.catalog import CATALOG_FILE, builtin_providers, provider_models
from pi_tui.ai.catalog_gen import extract, render
from tests.pi087 import require_pi

pytestmark = pytest.mark.slow


def test_the_catalog_file_is_what_pis_package_generates() -> None:
    pi = require_pi()
    agent_dist = pi.pi_ai_dist.parent.parent / "pi-coding-agent" / "dist"
    header, models = extract(pi.node, pi.pi_ai_dist, agent_dist)
    expected = render(header, models)
    shipped = CATALOG_FILE.read_text(encoding="utf-8")
    if shipped != expected:
        # name the first provider that differs, so the failure says what to look at
        ours = shipped.splitlines()
        theirs = expected.splitlines()
        ids = [p["id"] for p in header["providers"]]
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)
        where = "the header" if first == 0 else f"provider {ids[first - 1]}" if first else "the line count"
        pytest.fail(
            f"catalog.jsonl differs from pi {header['piVersion']} at {where}; run python -m pi_tui.ai.catalog_gen"
        )
    assert len(header["providers"]) == 41
    assert sum(len(group) for group in models) == sum(p["models"] for p in header["providers"])


def test_every_model_pi_lists_loads_with_its_fields_intact() -> None:
    pi = require_pi()
    for path in sorted((pi.pi_ai_dist / "providers" / "data").glob("[!.]*.json")):
        provider = path.stem
        assert provider in builtin_providers(), provider
        raw = {m["id"]: m for group in json.loads(path.read_text()).values() for m in group.values()}
        loaded = {m.id: m.to_json_dict() for m in provider_models(provider)}
        assert loaded.keys() == raw.keys(), provider
        for model_id, pis in raw.items():
            ours = loaded[model_id]
            for key, value in pis.items():
                assert ours.get(key) == value, f"{provider}/{model_id}: {key}"
