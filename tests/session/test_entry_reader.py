from __future__ import annotations

import json
from typing import Any

from pi_tui.context.engine import replay_entries
from pi_tui.context.envelope import ContextEnvelope
from pi_tui.context.report import transform_records
from pi_tui.session.entries import RawEntry, SessionEntry, entry_to_line, parse_entry
from pi_tui.session.entry_reader import (
    branch_summary_message,
    custom_message,
    message_role,
    read_compaction,
    read_transform,
)

USER = {
    "type": "message",
    "id": "u1",
    "parentId": None,
    "timestamp": "2026-11-24T17:00:00.000Z",
    "message": {"role": "user", "content": "hello", "timestamp": 1},
}
POLICY = {"op": "system_part_set", "scope": "cached", "partName": "policy", "text": "be brief"}


def _entry(data: dict[str, Any]) -> SessionEntry:
    return parse_entry(data, json.dumps(data))


def _transform(patch: list[Any]) -> dict[str, Any]:
    return {
        "type": "context_transform",
        "id": "t1",
        "parentId": "u1",
        "timestamp": "2026-11-24T17:00:01.000Z",
        "transformerName": "policy",
        "patch": patch,
        "display": {"title": "Policy"},
    }


def test_a_damaged_transform_is_listed_with_what_it_says_and_never_applied() -> None:
    damaged = _entry(_transform([{**POLICY, "invalidateCacheReason": "policy"}, 7]))
    assert isinstance(damaged, RawEntry)
    path = [_entry(USER), damaged]
    [record] = transform_records(path)
    assert (record.entry_id, record.transformer, record.title) == ("t1", "policy", "Policy")
    assert [op["partName"] for op in record.ops] == ["policy"]
    fields = read_transform(damaged)
    assert fields is not None and fields.damaged
    env = replay_entries(ContextEnvelope(), path)
    assert [m.role for m in env.cached] == ["user"]
    assert "be brief" not in env.system_compiled


def test_a_record_and_its_json_read_the_same() -> None:
    transform = _entry(_transform([{**POLICY, "invalidateCacheReason": "policy"}]))
    assert not isinstance(transform, RawEntry)
    as_json = json.loads(entry_to_line(transform))
    assert read_transform(transform) == read_transform(as_json)
    compaction = _entry(
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "u1",
            "timestamp": "2026-11-24T17:00:02.000Z",
            "summary": "so far",
            "firstKeptEntryId": "u1",
            "tokensBefore": 1234,
        }
    )
    assert read_compaction(compaction) == read_compaction(json.loads(entry_to_line(compaction)))
    assert read_compaction(transform) is None and read_transform(compaction) is None
    user = _entry(USER)
    assert message_role(user) == message_role(USER) == "user"
    note = {"type": "custom_message", "id": "n1", "customType": "note", "content": "hi", "display": False}
    assert custom_message(_entry(note)) == custom_message(note)


def test_what_a_damaged_line_says_wrongly_reads_as_absent_instead_of_raising() -> None:
    note = _entry({"type": "custom_message", "id": "n1", "customType": 5, "content": 7})
    summary = _entry({"type": "branch_summary", "id": "b1", "summary": ["not", "text"], "fromId": 3})
    compaction = _entry({"type": "compaction", "id": "c1", "summary": "s", "firstKeptEntryId": 9})
    assert all(isinstance(e, RawEntry) for e in (note, summary, compaction))
    assert custom_message(note) is None
    assert branch_summary_message(summary) is None
    fields = read_compaction(compaction)
    assert fields is not None and fields.first_kept_entry_id is None and fields.summary == "s"
