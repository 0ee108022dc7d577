"""Our frontmatter YAML against YAML 1.2: the spec's chapter-2 examples and the core schema's tag resolution.

``yaml_1_2_cases.json`` holds each document with what pi 0.87.1's own YAML parser (the ``yaml`` npm
package, YAML 1.2 core schema) returned for it, recorded once with node. Our parser must give the same
value, or also fail. Spec examples whose top level is not a mapping are nested under a key, since
frontmatter is a mapping.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pi_tui.resources.yaml_subset import YamlSubsetError, parse_yaml_mapping

CASES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).with_name("yaml_1_2_cases.json")).read_text(encoding="utf-8")
)


def _as_recorded(value: Any) -> Any:
    """Our value in the recording's JSON shape (non-finite floats were recorded as ``{"float": ...}``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, dict):
        return {key: _as_recorded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_recorded(item) for item in value]
    return value


@pytest.mark.parametrize("name", sorted(CASES))
def test_parses_like_pis_yaml_1_2_parser(name: str) -> None:
    case = CASES[name]
    if "err" in case["pi"]:
        with pytest.raises(YamlSubsetError):
            parse_yaml_mapping(case["yaml"])
    else:
        assert _as_recorded(parse_yaml_mapping(case["yaml"])) == case["pi"]["ok"]


@pytest.mark.parametrize("text", ["a: yes", "a: no", "a: on", "a: off", "a: y", "a: N"])
def test_yaml_1_1_booleans_stay_strings(text: str) -> None:
    """The reason PyYAML (YAML 1.1) is not used: ``description: no`` must not become False."""
    assert parse_yaml_mapping(text) == {"a": text.split(": ")[1]}


@pytest.mark.parametrize("text", ["a: 2002-12-14", "a: 1_000", "a: 0b101", "a: 2001-12-14 21:59:43.10 -5"])
def test_values_other_loaders_convert_stay_strings(text: str) -> None:
    """ruamel's safe loader turns these into a date, 1000 and 5; YAML 1.2 core (and pi) keep strings."""
    assert parse_yaml_mapping(text) == {"a": text.split(": ", 1)[1]}


@pytest.mark.parametrize("text", ["a: &x 1\nb: *x", "a: !!str 12", "a: !custom x"])
def test_anchors_and_tags_are_refused_with_a_clear_error(text: str) -> None:
    """pi accepts these; frontmatter never needs them, so we refuse rather than half-support them."""
    with pytest.raises(YamlSubsetError, match="not supported"):
        parse_yaml_mapping(text)
