"""models.json as JSONC (pi 0.73.1+): comments, trailing commas, BOM, pi 0.87 model fields."""

from __future__ import annotations

import json

import pytest

from pi_tui.ai.jsonc import JsoncError, strip_jsonc
from pi_tui.ai.models_json import ModelsJsonError, parse_models_json

BUILTINS = {"anthropic": "anthropic-messages"}

# pi 0.87.1 loads this very text too (checked with its --list-models).
JSONC = """\ufeff// my models
{
  // local server
  "providers": {
    "local": {
      "baseUrl": "http://127.0.0.1:1234/v1", // a URL keeps its slashes
      "api": "openai-completions",
      "apiKey": "none /* not a comment */", // trailing comment
      "models": [
        {
          "id": "m1",
          "thinkingLevelMap": {"off": null, "high": "high"},
          "inputLimits": {"maxRequestBytes": 1000000, "images": {"maxPerMessage": 4}},
          "promptCache": {"short": 300},
          "cost": {
            "input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 1.25,
            "tiers": [{"input": 2, "output": 4, "cacheRead": 0.2, "cacheWrite": 2.5, "inputTokensAbove": 200000}],
          },
        },
      ],
    },
  },
}
"""


def test_comments_trailing_commas_and_bom_are_accepted() -> None:
    loaded = parse_models_json(JSONC, "models.json", BUILTINS)
    local = loaded.config.providers["local"]
    assert local.base_url == "http://127.0.0.1:1234/v1"
    assert local.api_key == "none /* not a comment */"
    assert local.models is not None and local.models[0].thinking_level_map == {"off": None, "high": "high"}
    assert loaded.warnings == []  # the pi 0.87 fields are known, not "unknown key ignored"


def test_stripping_keeps_offsets_and_string_contents() -> None:
    text = '{"a": "x // y", /* c\n */ "b": [1, 2,],}'
    stripped = strip_jsonc(text)
    assert len(stripped) == len(text) and stripped.count("\n") == text.count("\n")
    assert json.loads(stripped) == {"a": "x // y", "b": [1, 2]}
    assert json.loads(strip_jsonc(r'{"q": "a\"//b"}')) == {"q": 'a"//b'}


def test_unterminated_block_comment_names_file_and_line() -> None:
    with pytest.raises(
        ModelsJsonError, match=r"^models.json error: /x/models.json:3: invalid JSONC: unterminated"
    ):
        parse_models_json('{\n"providers": {}\n/* open\n}', "/x/models.json", BUILTINS)
    with pytest.raises(JsoncError):
        strip_jsonc("/*")


def test_errors_after_a_comment_report_the_users_line() -> None:
    text = '// one\n/* two\nthree */\n{"providers": {"local": {"models": [{"id": 5}]}}}'
    with pytest.raises(ModelsJsonError, match=r"models.json:4: providers.local.models\[0\].id"):
        parse_models_json(text, "models.json", BUILTINS)
    with pytest.raises(ModelsJsonError, match=r"models.json:2: invalid JSON"):
        parse_models_json('// c\n{"providers": ,}', "models.json", BUILTINS)


def test_a_file_of_only_comments_is_empty() -> None:
    assert parse_models_json("// nothing yet\n", "models.json", BUILTINS).config.providers == {}


def test_block_comments_work_but_warn_that_pi_cannot_read_them() -> None:
    loaded = parse_models_json(
        '{\n  /* pi 0.87.1 strips only // */\n  "providers": {}\n}', "m.json", BUILTINS
    )
    assert loaded.config.providers == {}
    assert loaded.warnings == [
        "models.json warning: m.json:2: /* */ comment: pi 0.87.1 reads only // comments, so it will not load this file"
    ]


def test_a_cut_off_file_reads_as_an_unterminated_string_with_its_line_and_column() -> None:
    with pytest.raises(ModelsJsonError) as caught:
        parse_models_json('{\n  "providers": {\n    "local": {"baseUrl": "http://127.0', "m.json", BUILTINS)
    assert str(caught.value) == "models.json error: m.json:3: invalid JSON: Unterminated string (column 26)"
