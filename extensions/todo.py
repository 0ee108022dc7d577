"""A todo list the model keeps with the ``todo`` tool, shown to it as a live "Todo" panel.

Enable: ``pi-tui -e todo``, or ``"extensions": ["bundled:todo"]`` in settings.

- The ``todo`` tool: ``add`` (text, optional status), ``update`` (id, status and/or text), ``remove`` (id),
  ``set`` (replace the whole list), ``clear``, ``list``. Statuses: ``pending`` ``- [ ]``,
  ``in_progress`` ``- [~]``, ``done`` ``- [x]``.
- The "Todo" panel (a live context panel) shows the list before every request; it is empty (and not sent) while the
  list is.
- State: every change appends a ``todo`` custom entry holding the whole list (``pi.append_entry``). On
  ``session_start`` (start-up, ``/reload``, ``/new``, ``/resume``, ``/fork``) and after ``/tree``
  navigation the list is rebuilt from the last such entry on the *active branch*, so each branch keeps its
  own list.
- Placement: ``"tail"`` by default (after the conversation, uncached: a change never re-bills the
  cached conversation). ``--todo-placement prefix`` or settings ``{"todo": {"placement": "prefix"}}``
  put it in the cached prefix instead.
"""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext, ToolError, ToolResult, text_result

_settings = SimpleNamespace(**runpy.run_path(str(Path(__file__).with_name("_settings.py"))))

ENTRY_TYPE = "todo"
PANEL = "Todo"
STATUSES = ("pending", "in_progress", "done")
MARKS = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]"}
MAX_TEXT = 500

DESCRIPTION = """Keep a todo list for multi-step work; the current list is always shown to you in the "Todo" panel.
Actions:
- add: append an item (`text`, optional `status`).
- update: change item `id`'s `status` (pending, in_progress, done) and/or `text`.
- remove: delete item `id`.
- set: replace the whole list with `items` ([{text, status}]).
- clear: empty the list.
- list: return the list.
Returns the list after the change."""

GUIDELINES = (
    "Use the todo tool for tasks with three or more steps: write the steps first, then keep them current.",
    "Mark one item in_progress before starting it and done as soon as it is finished; do not batch updates.",
    "The Todo panel already shows the list; call todo with action list only if the panel is missing.",
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["add", "update", "remove", "set", "clear", "list"]},
        "id": {"type": "integer", "description": "The item's number (update, remove)"},
        "text": {"type": "string", "description": "The item's text (add, update)"},
        "status": {"type": "string", "enum": list(STATUSES), "description": "Default: pending"},
        "items": {
            "type": "array",
            "description": "The new list (set)",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "status": {"type": "string", "enum": list(STATUSES)},
                },
                "required": ["text"],
            },
        },
    },
    "required": ["action"],
}


class TodoList:
    """The items and the next id; a plain value rebuilt from session entries."""

    def __init__(self, items: list[dict[str, Any]] | None = None, next_id: int = 1) -> None:
        self.items: list[dict[str, Any]] = items or []
        self.next_id = next_id

    @classmethod
    def from_data(cls, data: Any) -> TodoList:
        if not isinstance(data, dict):
            return cls()
        items = [
            {"id": int(i["id"]), "text": str(i["text"]), "status": str(i.get("status", "pending"))}
            for i in data.get("items", [])
            if isinstance(i, dict) and "id" in i and "text" in i
        ]
        next_id = int(data.get("nextId", max((i["id"] for i in items), default=0) + 1))
        return cls(items, next_id)

    def to_data(self) -> dict[str, Any]:
        return {"items": [dict(i) for i in self.items], "nextId": self.next_id}

    def render(self) -> str:
        return "\n".join(f"- {MARKS.get(i['status'], '[ ]')} #{i['id']} {i['text']}" for i in self.items)

    def find(self, item_id: Any) -> dict[str, Any]:
        for item in self.items:
            if item["id"] == item_id:
                return item
        known = ", ".join(f"#{i['id']}" for i in self.items) or "none"
        raise ToolError(f"No todo item #{item_id} (items: {known})")

    def add(self, text: str, status: str) -> None:
        self.items.append({"id": self.next_id, "text": text, "status": status})
        self.next_id += 1


def _text(value: Any) -> str:
    text = " ".join(str(value or "").split())
    if not text:
        raise ToolError("An item needs a non-empty text")
    return text[:MAX_TEXT]


def _status(value: Any) -> str:
    status = str(value or "pending")
    if status not in STATUSES:
        raise ToolError(f"Unknown status {status!r}: use one of {', '.join(STATUSES)}")
    return status


def apply(todos: TodoList, params: dict[str, Any]) -> str:
    """Apply one tool call to ``todos``; returns what changed (raises `ToolError` on a bad call)."""
    action = params.get("action")
    if action == "list":
        return "Listed"
    if action == "add":
        todos.add(_text(params.get("text")), _status(params.get("status")))
        return f"Added #{todos.next_id - 1}"
    if action == "update":
        item = todos.find(params.get("id"))
        if params.get("status") is None and params.get("text") is None:
            raise ToolError("update needs a status or a text")
        if params.get("status") is not None:
            item["status"] = _status(params["status"])
        if params.get("text") is not None:
            item["text"] = _text(params["text"])
        return f"Updated #{item['id']}"
    if action == "remove":
        todos.items.remove(todos.find(params.get("id")))
        return f"Removed #{params['id']}"
    if action == "set":
        raw = params.get("items")
        if not isinstance(raw, list):
            raise ToolError("set needs items: [{text, status}]")
        todos.items = []
        for item in raw:
            if not isinstance(item, dict):
                raise ToolError("each item is an object {text, status}")
            todos.add(_text(item.get("text")), _status(item.get("status")))
        return f"Set {len(todos.items)} items"
    if action == "clear":
        todos.items = []
        return "Cleared"
    raise ToolError(f"Unknown action {action!r}: use add, update, remove, set, clear or list")


def placement(pi: ExtensionAPI, ctx: ExtensionContext, flag: str, section: str) -> str:
    """``--<flag>``, else settings ``<section>.placement``, else ``"tail"``."""
    value = pi.get_flag(flag) or _settings.section(ctx, section).get("placement") or "tail"
    return value if value in ("prefix", "tail") else "tail"


def register(pi: ExtensionAPI) -> None:
    state = {"todos": TodoList()}

    def render() -> str:
        return state["todos"].render()

    pi.register_flag(
        "todo-placement", type="string", default=None, description="Todo panel: prefix (cached) or tail"
    )
    pi.register_panel(PANEL, render, placement="tail")

    def rebuild(ctx: ExtensionContext) -> None:
        todos = TodoList()
        for data in ctx.session_manager.get_custom_data(ENTRY_TYPE):
            todos = TodoList.from_data(data)
        state["todos"] = todos

    @pi.on("session_start")
    def on_start(event: Event, ctx: ExtensionContext) -> None:
        rebuild(ctx)
        chosen = placement(pi, ctx, "todo-placement", "todo")
        pi.register_panel(PANEL, render, placement=chosen)

    @pi.on("session_tree")
    def on_tree(event: Event, ctx: ExtensionContext) -> None:
        rebuild(ctx)

    def execute(tool_call_id: str, params: dict[str, Any]) -> ToolResult:
        todos = TodoList.from_data(state["todos"].to_data())  # a failed call leaves the list as it was
        what = apply(todos, params)
        if params.get("action") != "list":
            state["todos"] = todos
            pi.append_entry(ENTRY_TYPE, todos.to_data())
        listing = todos.render() or "(the list is empty)"
        return text_result(f"{what}.\n{listing}", details=todos.to_data())

    pi.register_tool(
        name="todo",
        label="Todo",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute,
        prompt_snippet="Keep a todo list for multi-step tasks (shown in the Todo panel)",
        prompt_guidelines=GUIDELINES,
    )
