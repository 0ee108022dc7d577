from __future__ import annotations

import copy
import pickle
from typing import Any, Literal

import pytest

from pi_tui.ai.types import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    load_message,
)
from pi_tui.session.entries import MessageEntry, SessionHeader, SystemMessageEntry, parse_entry
from pi_tui.util.record import MISSING, Record, ValidationError, Validator, field
from pi_tui.util.record_annotations import resolve_annotation


class Strict(Record):
    camel_case = True
    populate_by_name = False
    strict = True

    max_tokens: int | None = field(default=None, gt=0)
    name: str | None = field(default=None, min_length=1)
    price: float | None = field(default=None, ge=0)
    flag: bool | None = None


class Node(Record):
    kind: Literal["node"] = "node"
    label: str
    children: list[Node] = field(default_factory=list)


def test_construction_takes_python_names_and_json_keys() -> None:
    by_name = ToolResultMessage(tool_call_id="c1", tool_name="read", timestamp=5)
    by_key = ToolResultMessage(**{"toolCallId": "c1", "toolName": "read", "timestamp": 5})
    assert by_name == by_key
    assert by_key.tool_call_id == "c1"
    assert by_key.to_json_dict() == {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [],
        "isError": False,
        "timestamp": 5,
    }


def test_defaults_and_factories_give_each_record_its_own_value() -> None:
    first, second = AssistantMessage(), AssistantMessage()
    first.content.append(TextContent(text="x"))
    assert second.content == []
    assert first.usage is not second.usage
    assert isinstance(first.timestamp, int) and first.timestamp > 0


def test_nested_dicts_become_records_and_tagged_unions_dispatch_on_their_tag() -> None:
    message = AssistantMessage(
        content=[
            {"type": "text", "text": "hi"},
            {"type": "toolCall", "id": "c1", "name": "ls", "arguments": {"path": "."}},
        ],
        usage={"input": 3, "cacheRead": 2, "cost": {"total": 0.5}},
    )
    assert [type(block) for block in message.content] == [TextContent, ToolCall]
    assert message.usage.cache_read == 2 and message.usage.cost.total == 0.5
    assert isinstance(load_message({"role": "user", "content": "hi"}), UserMessage)


def test_a_record_may_contain_records_of_its_own_class() -> None:
    tree = Node.model_validate({"label": "a", "children": [{"label": "b", "children": [{"label": "c"}]}]})
    assert tree.children[0].children[0].label == "c"


@pytest.mark.parametrize(
    ("build", "where", "what"),
    [
        (lambda: AssistantMessage(usage={"input": 3.5}), "usage.input", "integer"),
        (lambda: ToolCall(id=1, name="x"), "id", "string"),
        (lambda: ToolCall(name="x"), "id", "field required"),
        (lambda: load_message({"role": "user", "content": [{"type": "text"}]}), "content.0.text", "required"),
        (lambda: load_message({"role": "user", "content": [{"type": "video"}]}), "content.0", "'video'"),
        (lambda: load_message({"role": "robot"}), "", "'robot'"),
        (lambda: load_message({"content": "x"}), "", "missing 'role'"),
        (lambda: UserMessage(content=5), "content", "expected a string or list"),
        (lambda: AssistantMessage(stop_reason="done"), "stop_reason", "'done'"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_field(build: Any, where: str, what: str) -> None:
    with pytest.raises(ValidationError) as caught:
        build()
    assert isinstance(caught.value, ValueError)
    assert caught.value.errors()[0]["loc"] == tuple(
        int(part) if part.isdigit() else part for part in where.split(".") if part
    )
    assert what in str(caught.value)
    if where:
        assert f": {where}: " in str(caught.value)


def test_lax_coercions_match_pydantic() -> None:
    usage = Usage(input=3.0, output="4", cache_read=True)  # type: ignore[arg-type]
    assert (usage.input, usage.output, usage.cache_read) == (3, 4, 1)
    assert type(usage.input) is int
    assert TextContent(text="x").model_copy().text == "x"
    assert AssistantMessage(content=({"type": "text", "text": "t"},)).content[0].text == "t"  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="boolean"):
        ToolResultMessage(tool_call_id="c", tool_name="t", is_error=2)  # type: ignore[arg-type]


def test_strict_records_refuse_coercions_and_check_bounds() -> None:
    assert Strict.model_validate({"maxTokens": 5, "price": 0}).price == 0.0
    for data, message in [
        ({"maxTokens": 5.0}, "maxTokens: expected an integer, got 5.0"),
        ({"maxTokens": True}, "maxTokens: expected an integer"),
        ({"maxTokens": 0}, "maxTokens: must be > 0"),
        ({"price": -1}, "price: must be >= 0"),
        ({"name": ""}, "name: must not be empty"),
        ({"flag": "true"}, "flag: expected a boolean"),
    ]:
        with pytest.raises(ValidationError, match=message):
            Strict.model_validate(data)
    # without populate_by_name a Python name is just an unknown key
    assert Strict.model_validate({"max_tokens": 5}).model_extra == {"max_tokens": 5}


def test_unknown_keys_survive_a_round_trip_under_their_own_names() -> None:
    data = {
        "role": "user",
        "content": [{"type": "text", "text": "hi", "future_flag": None, "nested": {"a": None}}],
        "timestamp": 1,
        "newField": None,
        "snake_case_key": [1, {"b": None}],
    }
    message = load_message(data)
    assert message.to_json_dict() == data
    assert message.model_extra == {"newField": None, "snake_case_key": [1, {"b": None}]}
    assert message.newField is None  # readable as an attribute, as in pydantic
    with pytest.raises(AttributeError):
        _ = message.other_field


def test_dump_options() -> None:
    message = AssistantMessage(content=[{"type": "text", "text": "x"}], timestamp=1)
    python = message.model_dump()
    assert python["stopReason"] == "stop" and python["errorMessage"] is None  # WireModel dumps by alias
    assert message.model_dump(by_alias=False)["stop_reason"] == "stop"
    assert "errorMessage" not in message.model_dump(exclude_none=True)
    assert message.to_json_dict()["content"] == [{"type": "text", "text": "x"}]
    details = ToolResultMessage(tool_call_id="c", tool_name="t", details={"pair": (1, 2)}, timestamp=1)
    assert details.model_dump(mode="json")["details"] == {"pair": [1, 2]}
    assert details.model_dump()["details"] == {"pair": (1, 2)}


def test_model_copy_updates_without_validating_and_deep_copies_when_asked() -> None:
    message = AssistantMessage(content=[{"type": "text", "text": "x"}], timestamp=1)
    shallow = message.model_copy(update={"stop_reason": "error", "extra_key": 1})
    assert shallow.stop_reason == "error" and shallow.model_extra == {"extra_key": 1}
    assert shallow.content is message.content
    deep = message.model_copy(deep=True)
    assert deep == message and deep.content[0] is not message.content[0]
    assert copy.deepcopy(message) == message and copy.copy(message) == message
    assert pickle.loads(pickle.dumps(message)) == message


def test_model_validate_keeps_an_instance_and_validates_a_dict() -> None:
    header = SessionHeader(id="s1")
    assert SessionHeader.model_validate(header) is header
    with pytest.raises(ValidationError, match="expected an object"):
        SessionHeader.model_validate("s1")


def test_fields_set_defaults_and_equality_follow_pydantic() -> None:
    assert UserMessage.model_fields["role"].default == "user"
    assert UserMessage.model_fields["content"].default is MISSING
    assert ToolResultMessage.model_fields["tool_call_id"].alias == "toolCallId"
    entry = parse_entry({"type": "message", "id": "a", "message": {"role": "user", "content": "x"}}, "")
    assert isinstance(entry, MessageEntry)
    assert "parent_id" not in entry.model_fields_set and "id" in entry.model_fields_set
    assert not entry.field_is_set("parent_id") and entry.field_is_set("id")
    entry.parent_id = "p"
    assert "parent_id" in entry.model_fields_set and entry.field_is_set("parent_id")
    defaulted = ToolCall(id="t", name="read")  # ``arguments`` comes from its default factory
    assert "arguments" not in defaulted.model_fields_set and not defaulted.field_is_set("arguments")
    same = UserMessage(content="x", timestamp=1)
    assert same == UserMessage(content="x", timestamp=1)
    assert same != UserMessage(content="x", timestamp=1, note="extra")  # type: ignore[call-arg]
    assert TextContent(text="x") != ToolCall(id="x", name="x")
    with pytest.raises(TypeError):
        hash(same)


def test_assignment_sets_fields_and_unknown_names_become_extra_keys() -> None:
    message = UserMessage(content="x", timestamp=1)
    message.content = "y"
    message.label = "kept"  # type: ignore[attr-defined]
    assert message.to_json_dict() == {"role": "user", "content": "y", "timestamp": 1, "label": "kept"}


def test_an_explicit_alias_is_the_json_key() -> None:
    data = {"type": "message", "id": "a", "parentId": None, "message": {"role": "system", "content": "p"}}
    entry = SystemMessageEntry.model_validate(data)
    assert entry.system.content == "p"
    assert entry.model_dump(exclude_none=True)["message"]["role"] == "system"


def test_a_validator_checks_any_field_type() -> None:
    blocks: Validator[list[TextContent]] = Validator(list[TextContent], "blocks")
    assert blocks.validate([{"text": "a"}])[0].text == "a"
    with pytest.raises(ValidationError, match=r"^blocks: 0\.text: expected a string"):
        blocks.validate([{"text": 1}])


def test_annotations_are_read_by_the_parser_or_else_evaluated() -> None:
    namespace: dict[str, Any] = {"Literal": Literal, "Any": Any, "Node": Node}
    assert resolve_annotation("dict[str, Any] | None", namespace) == dict[str, Any] | None
    assert resolve_annotation('list[Node] | Literal["a", 2]', namespace) == list[Node] | Literal["a", 2]
    assert resolve_annotation("Literal['it\\'s']", namespace) == Literal["it's"]  # an escape: evaluated
    with pytest.raises(NameError, match="Nowhere"):
        resolve_annotation("Nowhere | None", namespace)


def test_a_literal_keeps_the_declared_string_and_the_given_value_of_another_type() -> None:
    declared = "toolUse"  # identifier-like constants are interned: the same object as in the Literals
    mixed: Validator[Any] = Validator(Literal[1, True, "toolUse"])
    assert type(mixed.validate(1)) is int and mixed.validate(True) is True  # 1 and True stay apart
    decoded = "".join(["tool", "Use"])  # equal to the declared string, another object (as from JSON)
    assert decoded == declared and decoded is not declared
    assert mixed.validate(decoded) is declared
    with pytest.raises(ValidationError):
        mixed.validate(2)
    data = {"role": "assistant", "content": [], "stopReason": decoded}
    entry = parse_entry({"type": "message", "id": "a", "message": data}, "")
    assert isinstance(entry, MessageEntry) and entry.message.stop_reason is declared  # type: ignore[union-attr]
