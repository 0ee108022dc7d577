from __future__ import annotations

import pytest

from pi_tui.agent.validate import ToolArgumentsError, validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "offset": {"type": "integer", "minimum": 1},
        "ratio": {"type": "number"},
        "force": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "opts": {
            "type": "object",
            "properties": {"depth": {"type": "integer"}},
            "required": ["depth"],
            "additionalProperties": False,
        },
    },
    "required": ["path"],
}


def test_strings_numbers_and_booleans_are_coerced_like_ajv():
    args = {"path": 12, "offset": "3", "ratio": "0.5", "force": "true", "tags": [1, True]}
    assert validate_arguments("read", SCHEMA, args) == {
        "path": "12",
        "offset": 3,
        "ratio": 0.5,
        "force": True,
        "tags": ["1", "true"],
    }


def test_input_arguments_are_not_mutated():
    args = {"path": "a", "offset": "3"}
    validate_arguments("read", SCHEMA, args)
    assert args == {"path": "a", "offset": "3"}


def test_integral_float_is_accepted_as_integer_and_becomes_int():
    result = validate_arguments("read", SCHEMA, {"path": "a", "offset": 4.0})
    assert result["offset"] == 4 and isinstance(result["offset"], int)


def test_boolean_coercions_from_numbers_and_null():
    schema = {"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"type": "boolean"}}}
    assert validate_arguments("t", schema, {"a": 1, "b": None}) == {"a": True, "b": False}


def test_failure_message_lists_every_error_in_pis_format():
    args = {"offset": "abc", "mode": "medium"}
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments("read", SCHEMA, args)
    assert str(info.value) == (
        'Validation failed for tool "read":\n'
        "  - path: must have required property 'path'\n"
        "  - offset: must be integer\n"
        "  - mode: must be equal to one of the allowed values\n"
        "\n"
        "Received arguments:\n"
        '{\n  "offset": "abc",\n  "mode": "medium"\n}'
    )


def test_nested_errors_use_the_instance_path_and_additional_properties():
    args = {"path": "a", "opts": {"extra": 1}, "tags": ["x", {"no": 1}]}
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments("read", SCHEMA, args)
    assert info.value.errors == [
        ("tags/1", "must be string"),
        ("opts", "must have required property 'depth'"),
        ("opts", "must NOT have additional properties"),
    ]


def test_minimum_and_string_that_is_not_an_integer():
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments("read", SCHEMA, {"path": "a", "offset": 0})
    assert info.value.errors == [("offset", "must be >= 1")]
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments("read", SCHEMA, {"path": "a", "offset": "1.5"})
    assert info.value.errors == [("offset", "must be integer")]


def test_type_list_reports_all_types_and_coerces_to_the_first_possible():
    schema = {"type": "object", "properties": {"v": {"type": ["integer", "null"]}}}
    assert validate_arguments("t", schema, {"v": "7"}) == {"v": 7}
    assert validate_arguments("t", schema, {"v": None}) == {"v": None}
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments("t", schema, {"v": [1]})
    assert info.value.errors == [("v", "must be integer,null")]


def test_root_that_is_not_an_object_reports_root():
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments("t", {"type": "array"}, {"a": 1})
    assert info.value.errors == [("root", "must be array")]


def test_any_of_accepts_either_branch():
    schema = {
        "type": "object",
        "properties": {"v": {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 2}]}},
    }
    assert validate_arguments("t", schema, {"v": 3}) == {"v": 3}
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments("t", schema, {"v": []})
    assert info.value.errors[-1] == ("v", "must match a schema in anyOf")
