"""`SessionManager`: the runtime API over one session (new, open, continue, append, navigate, fork).

Writing policy (pi's, plus the safety rules of docs/session-format.md):
- A new session writes nothing until its first assistant message; then the header and every buffered
  entry are written at once and later entries are appended one line each.
- An existing file is appended to directly. Its first append ends a torn tail with a newline (its
  bytes stay, as pi keeps them) or, for a file that needs rewriting (a v1/v2 file migrated in memory,
  or a file without a valid header), rewrites it atomically after keeping the original as ``.bak``.
  So a file is never of mixed versions and never rewritten without a backup.
- While open for writing, the session holds an advisory lock; a second writer gets `SessionLockedError`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Callable, Container, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from pi_tui.ai.types import (
    BranchSummaryMessage,
    CompactionSummaryMessage,
    Message,
    Usage,
    UserContent,
    UserMessage,
    load_message,
    message_text,
)
from pi_tui.session.context import (
    LAST_ENTRY,
    LastEntry,
    RestoreState,
    SessionContext,
    build_session_context,
    restore_state,
)
from pi_tui.session.entries import (
    CURRENT_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    ContextTransformEntry,
    CustomEntry,
    CustomMessageEntry,
    EphemeralEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    PiSystemMessage,
    RawEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    SystemMessageEntry,
    ThinkingLevelChangeEntry,
    UsageEntry,
    entry_to_line,
    header_to_line,
    new_entry_id,
    parse_entry,
)
from pi_tui.session.errors import EntryNotFoundError, SessionError, SessionNotConfirmed
from pi_tui.session.loader import LoadedFile, load_session_file
from pi_tui.session.lock import SessionLock
from pi_tui.session.paths import (
    default_session_dir,
    encode_cwd,
    iso_now,
    new_session_filename,
    new_session_id,
    sessions_root,
)
from pi_tui.session.report import LoadReport, TornTail
from pi_tui.session.store import SessionFile
from pi_tui.session.tree import SessionTree, TreeNode
from pi_tui.util import json_safe
from pi_tui.util.collector import FREEZE_BUILT_HISTORY_ABOVE, collector_paused
from pi_tui.util.json_types import JsonObject, JsonValue

if TYPE_CHECKING:
    from pi_tui.session.fast_context import DeferredHistory

__all__ = ["SessionManager"]

log = logging.getLogger(__name__)

_Entry = TypeVar("_Entry", bound=SessionEntry)

# Entries worth an fsync of their own; the rest are made durable by the next one (or by close()).
_DURABLE = (MessageEntry, CompactionEntry, BranchSummaryEntry, ContextTransformEntry)
_UUID_IN_NAME = re.compile(r"_([0-9a-fA-F-]{36})\.jsonl$")


def _copy_context(ctx: SessionContext) -> SessionContext:
    """A copy whose lists, dicts and system state the caller may change (the entries are shared)."""
    return dataclasses.replace(
        ctx,
        messages=list(ctx.messages),
        message_entry_ids=list(ctx.message_entry_ids),
        context_transforms=list(ctx.context_transforms),
        path=list(ctx.path),
        system=dataclasses.replace(
            ctx.system,
            content=list(ctx.system.content),
            sections=dict(ctx.system.sections),
            tools=dict(ctx.system.tools),
        ),
        context_edits=dict(ctx.context_edits),
    )


def _copy_entry(entry: SessionEntry) -> SessionEntry:
    if isinstance(entry, RawEntry):
        return dataclasses.replace(entry, data=dict(entry.data))
    return entry.model_copy()


def _readable_line(entry: SessionEntry) -> str:
    """The line of ``entry``, checked to nest no deeper than a load accepts (so it reads back).

    Raises:
        SessionError: the entry (an extension's data, typically) nests too deeply.
    """
    try:
        line = entry_to_line(entry)
        json_safe.check_depth(line, limit=json_safe.MAX_RECORD_DEPTH)
    except (RecursionError, json_safe.JsonTooDeepError):
        raise SessionError(
            f"Not saved: this {entry.type} entry nests arrays and objects deeper than "
            f"{json_safe.MAX_RECORD_DEPTH} levels, so it could not be read back"
        ) from None
    return line


class SessionManager:
    """One session: its header, its entry tree, and (unless in memory) its file."""

    def __init__(
        self,
        *,
        cwd: str,
        header: SessionHeader,
        path: Path | None,
        session_dir: Path | None,
        tree: SessionTree | None = None,
        report: LoadReport | None = None,
        flushed: bool = False,
        read_only: bool = False,
    ) -> None:
        """Use the class methods (`create`, `open`, `continue_recent`, `in_memory`) instead."""
        self._cwd = cwd
        self._header = header
        self._path = path
        self._session_dir = session_dir
        self._tree_now = tree if tree is not None else SessionTree()
        # The old part of the history still as decoded lines (`open(..., defer_history=True)`): the
        # tree holds only the rest until `complete_history` (which any use of `_tree` runs first).
        self._deferred: DeferredHistory | None = None
        self._report = report if report is not None else LoadReport(path=path)
        self._flushed = flushed
        self._read_only = read_only
        self._file: SessionFile | None = None
        self._lock: SessionLock | None = SessionLock(path) if path is not None and not read_only else None
        # (entry lines, backup tag, what it did); the lines are produced only when the rewrite happens
        self._pending_rewrite: tuple[Callable[[], Sequence[str | bytes]], str, str] | None = None
        self._pending_tail: tuple[int, TornTail | None, bool] | None = None
        # Lines of entries in the tree whose write failed (disk full, quota), oldest first, with whether
        # each is durable: the next append writes them first, so the file catches up once it can grow.
        self._unsaved: list[tuple[str, bool]] = []
        self._rewrite_backup: Path | None = None  # made by a rewrite that then failed
        self._closed = False
        self._context_memo: tuple[tuple[str, int], SessionContext] | None = None
        self._restore_memo: tuple[tuple[str | None, int], RestoreState] | None = None

    @property
    def _tree(self) -> SessionTree:
        """The entry tree, complete (building the deferred history first, see `complete_history`)."""
        if self._deferred is not None:
            self.complete_history()
        return self._tree_now

    # --- constructors -----------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        cwd: str | Path,
        *,
        session_dir: Path | None = None,
        parent_session: str | Path | None = None,
        session_id: str | None = None,
    ) -> SessionManager:
        """A new session for ``cwd``, stored under ``session_dir`` (default: pi's per-project folder)."""
        directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
        header = _new_header(str(cwd), parent_session, session_id)
        path = directory / new_session_filename(header.id, header.timestamp)
        return cls(cwd=str(cwd), header=header, path=path, session_dir=directory)

    @classmethod
    def in_memory(
        cls,
        cwd: str | Path | None = None,
        *,
        parent_session: str | Path | None = None,
        session_id: str | None = None,
    ) -> SessionManager:
        """A session that is never written (``--no-session``)."""
        cwd_text = str(cwd) if cwd is not None else os.getcwd()
        return cls(
            cwd=cwd_text,
            header=_new_header(cwd_text, parent_session, session_id),
            path=None,
            session_dir=None,
        )

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        cwd: str | Path | None = None,
        session_dir: Path | None = None,
        read_only: bool = False,
        defer_history: bool = False,
    ) -> SessionManager:
        """Load a session file (any version, damaged or not) and, unless ``read_only``, lock it for writing.

        A path that does not exist yet becomes a new session stored there. Problems found while loading
        are in `load_report`; loading never fails because of the content.

        ``defer_history``: for a big file of plain conversation (`pi_tui.session.fast_context`), build
        only the end of the active path as typed entries and keep the rest as decoded lines
        (`deferred_history`) until `complete_history`, which any call needing the whole tree runs first.

        Raises:
            SessionLockedError: another process (or another open here) is writing this session.
            OSError: the file exists but cannot be read.
        """
        file_path = Path(path).absolute()
        directory = Path(session_dir) if session_dir is not None else file_path.parent
        lock = None if read_only else SessionLock(file_path)
        if lock is not None:
            lock.acquire()
        try:
            manager = None
            decoded: list[object] = []  # lines a deferred reading decoded before it gave up
            if defer_history:
                manager = cls._deferred_from_file(file_path, cwd, directory, read_only, decoded)
            if manager is None:
                manager = cls._from_file(file_path, cwd, directory, read_only, decoded)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        manager._lock = lock
        return manager

    @classmethod
    def _deferred_from_file(
        cls, path: Path, cwd: str | Path | None, directory: Path, read_only: bool, decoded: list[object]
    ) -> SessionManager | None:
        """`_from_file` for a big plain file, its history deferred; None for any other file (``decoded``
        then holds the values of the lines read, for `_from_file`)."""
        from pi_tui.session.loader import FAST_DECODE_BYTES

        try:
            if path.stat().st_size < FAST_DECODE_BYTES:
                return None  # a small file: read as usual, without importing the deferred reading
        except OSError:
            return None
        from pi_tui.session.fast_context import read_deferred

        opened = read_deferred(path, FAST_DECODE_BYTES, decoded)
        if opened is None:
            return None
        report = opened.report
        if report.has_problems:
            log.warning("%s", report.summary())  # as the usual loading says it
        manager = cls(
            cwd=opened.header.cwd or (str(cwd) if cwd is not None else os.getcwd()),
            header=opened.header,
            path=path,
            session_dir=directory,
            tree=SessionTree.from_entries(opened.entries),
            report=report,
            flushed=True,
            read_only=read_only,
        )
        manager._pending_tail = (opened.size, report.torn_tail, report.unterminated_tail)
        manager._deferred = opened.deferred
        return manager

    @property
    def deferred_history(self) -> DeferredHistory | None:
        """The part of the history not built yet (see `open`'s ``defer_history``), or None."""
        return self._deferred

    def complete_history(self) -> None:
        """Build the deferred history into the tree (entries and ids as a plain `open` gives them, and
        the entries appended since after them), so the session is what `open` would have made."""
        deferred = self._deferred
        if deferred is None:
            return
        self._deferred = None
        kept = len(deferred.split.tail)
        appended = self._tree_now.entries[kept:]
        leaf = self._tree_now.leaf_id
        records = deferred.release()
        records.reverse()  # popped from the end, each decoded line is freed once typed (peak memory)
        entries: list[SessionEntry] = []
        # They live as long as the session: frozen, no collection walks them again (as start-up's are).
        with collector_paused(freeze_above=FREEZE_BUILT_HISTORY_ABOVE):
            while records:
                entries.append(parse_entry(records.pop(), ""))
            entries.extend(appended)
            # (the reading reported the entries it found reattached: the report is not given again)
            tree = SessionTree.from_entries(entries)
        raw = sum(isinstance(entry, RawEntry) for entry in entries)
        if raw:  # the plain reading promised typed entries only
            log.warning("%d deferred entries of %s were kept raw", raw, self._path)
        tree.leaf_id = leaf
        self._tree_now = tree
        self._context_memo = None
        self._restore_memo = None

    def has_entries(self) -> bool:
        """Whether the session has any entry (without building a deferred history)."""
        return bool(self._tree_now.entries)

    @classmethod
    def _from_file(
        cls,
        path: Path,
        cwd: str | Path | None,
        directory: Path,
        read_only: bool,
        decoded: list[object] | None = None,
    ) -> SessionManager:
        fallback_cwd = str(cwd) if cwd is not None else os.getcwd()
        if not path.exists():
            return cls(
                cwd=fallback_cwd,
                header=_new_header(fallback_cwd, None, None),
                path=path,
                session_dir=directory,
                read_only=read_only,
            )
        loaded = load_session_file(path, decoded)
        report = loaded.report
        tree = SessionTree.from_entries(loaded.entries, report)
        if not loaded.has_content:  # empty or blank: start it as a new session, written lazily
            header = _new_header(fallback_cwd, None, _id_from_name(path))
            return cls(
                cwd=fallback_cwd,
                header=header,
                path=path,
                session_dir=directory,
                report=report,
                read_only=read_only,
            )
        header = loaded.header if loaded.header is not None else _substitute_header(path, fallback_cwd)
        manager = cls(
            cwd=header.cwd or fallback_cwd,
            header=header,
            path=path,
            session_dir=directory,
            tree=tree,
            report=report,
            flushed=True,
            read_only=read_only,
        )
        manager._plan_repairs(loaded)
        return manager

    @classmethod
    def continue_recent(
        cls, cwd: str | Path, *, session_dir: Path | None = None, defer_history: bool = False
    ) -> SessionManager:
        """The most recently modified session of ``cwd`` (``-c``), or a new one when there is none
        (``defer_history``: see `open`)."""
        from pi_tui.session.listing import most_recent_session

        directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
        recent = most_recent_session(cwd, session_dir=directory)
        if recent is None:
            return cls.create(cwd, session_dir=directory)
        return cls.open(recent, cwd=cwd, session_dir=directory, defer_history=defer_history)

    def _plan_repairs(self, loaded: LoadedFile) -> None:
        report = loaded.report
        if loaded.header is None:
            self._pending_rewrite = (loaded.rewrite_lines, "noheader", "added a session header")
        elif loaded.needs_rewrite:
            self._pending_rewrite = (
                loaded.rewrite_lines,
                f"v{report.migrated_from}",
                f"rewrote the file as format v{CURRENT_VERSION}",
            )
        else:
            self._pending_tail = (loaded.size, report.torn_tail, report.unterminated_tail)

    # --- properties -------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self._header.id

    @property
    def path(self) -> Path | None:
        """The session file (it may not exist yet); None for an in-memory session."""
        return self._path

    @property
    def cwd(self) -> str:
        """The working directory the session runs in: the one its header records, for a file opened."""
        return self._cwd

    def work_in(self, cwd: str | Path) -> None:
        """Run the session in ``cwd`` instead of the directory its file records (when that one is gone and
        the user chose to continue where they are). The file's header is left as it is."""
        self._cwd = str(cwd)

    @property
    def session_dir(self) -> Path | None:
        return self._session_dir

    def session_dir_for(self, cwd: str | Path) -> Path | None:
        """Where a new session started in ``cwd`` after this one (``/new``) is filed; None: in memory.

        Sessions kept per folder (``<agent dir>/sessions/--<folder>--``) file it under ``cwd``'s own
        folder, so a session resumed from another project does not take the new one into that project's
        list with a header naming this one. Any other folder (``--session-dir``, a file opened by path)
        keeps its new sessions too.
        """
        directory = self._session_dir
        if directory is None:
            return None
        per_folder = directory.name == encode_cwd(self._cwd) or _same_dir(directory.parent, sessions_root())
        if per_folder and directory.name.startswith("--") and directory.name.endswith("--"):
            return directory.parent / encode_cwd(cwd)
        return directory

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def name(self) -> str | None:
        """The latest non-empty name given with `append_session_info`."""
        return self._tree.name

    @property
    def parent_session(self) -> str | None:
        return self._header.parent_session

    @property
    def is_persisted(self) -> bool:
        return self._path is not None

    @property
    def is_flushed(self) -> bool:
        """True once the file on disk holds this session's header."""
        return self._flushed

    @property
    def load_report(self) -> LoadReport:
        """What loading found and what the first write repaired (`LoadReport.summary` for the UI)."""
        return self._report

    # --- appending --------------------------------------------------------------------------------

    def _new_id(self) -> str:
        deferred = self._deferred
        if deferred is not None:  # no id of the file, built or not, may come again
            taken = self._tree_now.by_id
            return new_entry_id(_Either(taken, deferred.ids))
        return new_entry_id(self._tree.by_id)

    def _append(self, entry: _Entry) -> _Entry:
        """Add an entry to the tree and write it to the file.

        A write that fails (disk full, quota, no permission) raises `SessionError`, but the entry stays
        in the tree, so the conversation goes on whole in memory; its line waits and is written, in
        order, before the next entry's, once the file can grow again. (While a new session is still
        buffered, a failed first write likewise keeps the entries buffered for the next append.)
        """
        if self._closed:
            raise SessionError("This session has been closed; open it again to add to it")
        if self._read_only:
            raise SessionError(f"Session {self._path} was opened read-only")
        line = _readable_line(entry)
        try:
            if self._path is not None and self._flushed:
                self._tree_now.add(entry)  # a deferred history stays deferred: appends go after it
                self._unsaved.append((line, isinstance(entry, _DURABLE)))
                self._write_unsaved()
            else:
                self._tree.add(entry)
                if self._path is not None and self._tree.has_assistant:
                    self._write_initial()
        except OSError as exc:
            waiting = len(self._unsaved)
            kept = (
                f" ({waiting} {'entry waits' if waiting == 1 else 'entries wait'} in memory, to be written"
                " with the next one once the file can grow)"
                if waiting
                else ""
            )
            raise SessionError(f"Could not write to session file {self._path}: {exc}{kept}") from exc
        failed = self._file.take_sync_error() if self._file is not None else None
        if failed is not None:
            # The entry is written; the disk refused to confirm earlier lines, which were written again.
            raise SessionNotConfirmed(self._path, failed)
        return entry

    def _write_unsaved(self) -> None:
        """Append the lines whose write failed before, oldest first; raises OSError if one fails again."""
        file = self._ensure_file()
        if self._unsaved and not file.follow():
            # Removed while open: write everything held in memory again rather than lose it.
            file.close()
            self._file = None
            self._ensure_file()
            return
        while self._unsaved:
            line, durable = self._unsaved[0]
            file.append(line, durable=durable)
            del self._unsaved[0]

    @property
    def unsaved_entries(self) -> int:
        """How many entries are in memory only, because writing them failed (see `_append`)."""
        return len(self._unsaved)

    def _base(self) -> JsonObject:
        return {"id": self._new_id(), "parent_id": self._tree_now.leaf_id, "timestamp": iso_now()}

    def append_message(self, message: Message | JsonObject) -> MessageEntry:
        """Append a user/assistant/toolResult/bashExecution/custom message (a model or its JSON dict)."""
        if isinstance(message, dict):
            message = load_message(message)
        if isinstance(message, BranchSummaryMessage | CompactionSummaryMessage):
            raise ValueError(
                "Summaries are stored with append_branch_summary / append_compaction, not as messages"
            )
        return self._append(MessageEntry(message=message, **self._base()))

    def append_system_message(self, message: Mapping[str, object]) -> SystemMessageEntry:
        """Append a system message (pi 0.86+'s persisted prompt and tools, or a patch of them; pi's JSON
        shape, see `pi_tui.session.system.system_update`)."""
        if message.get("role") != "system":
            raise ValueError("append_system_message takes a message with role 'system'")
        system = PiSystemMessage.model_validate(message)
        return self._append(SystemMessageEntry(message=system, **self._base()))

    def append_model_change(self, provider: str, model_id: str) -> ModelChangeEntry:
        return self._append(ModelChangeEntry(provider=provider, model_id=model_id, **self._base()))

    def append_thinking_level_change(self, thinking_level: str) -> ThinkingLevelChangeEntry:
        return self._append(ThinkingLevelChangeEntry(thinking_level=thinking_level, **self._base()))

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: JsonValue = None,
        from_hook: bool | None = None,
    ) -> CompactionEntry:
        return self._append(
            CompactionEntry(
                summary=summary,
                first_kept_entry_id=first_kept_entry_id,
                tokens_before=tokens_before,
                details=details,
                from_hook=from_hook,
                **self._base(),
            )
        )

    def append_branch_summary(
        self, from_id: str, summary: str, details: JsonValue = None, from_hook: bool | None = None
    ) -> BranchSummaryEntry:
        """A branch summary as a child of the leaf (see `branch_with_summary` to move the leaf first)."""
        return self._append(
            BranchSummaryEntry(
                from_id=from_id, summary=summary, details=details, from_hook=from_hook, **self._base()
            )
        )

    def append_usage(
        self, kind: str, provider: str, model: str, usage: Usage, note: str | None = None
    ) -> UsageEntry:
        """Model usage outside the conversation (``kind`` ``"cache_warm"``: a cache refresh): counted in the
        totals, never part of the context."""
        return self._append(
            UsageEntry(
                kind=kind,
                provider=provider,
                model=model,
                usage=usage.to_json_dict(),
                note=note,
                **self._base(),
            )
        )

    def append_custom(self, custom_type: str, data: JsonValue = None) -> CustomEntry:
        """Extension state; never sent to the model."""
        return self._append(CustomEntry(custom_type=custom_type, data=data, **self._base()))

    def append_custom_message(
        self,
        custom_type: str,
        content: str | Sequence[UserContent | JsonObject],
        display: bool = True,
        details: JsonValue = None,
    ) -> CustomMessageEntry:
        """An extension message that is part of the model's context (as a user message)."""
        body = content if isinstance(content, str) else list(content)
        # model_validate: plain dict blocks are validated into content models, as the constructor would.
        fields = dict(custom_type=custom_type, content=body, display=display, details=details, **self._base())
        return self._append(CustomMessageEntry.model_validate(fields))

    def append_label(self, target_id: str, label: str | None) -> LabelEntry:
        """Label an entry; an empty or None label clears it. Raises `EntryNotFoundError` for an unknown id."""
        if target_id not in self._tree.by_id:
            raise EntryNotFoundError(target_id)
        return self._append(LabelEntry(target_id=target_id, label=label or None, **self._base()))

    def append_session_info(self, name: str) -> SessionInfoEntry:
        """Name the session (the latest name wins); line breaks become spaces, as pi stores names."""
        cleaned = re.sub(r"[\r\n]+", " ", name).strip()
        if not cleaned:
            raise ValueError("A session name cannot be empty")
        return self._append(SessionInfoEntry(name=cleaned, **self._base()))

    def append_context_transform(
        self,
        transformer_name: str,
        patch: Sequence[JsonObject],
        display: JsonObject | None = None,
        schema_version: int = 1,
    ) -> ContextTransformEntry:
        """Persist a context transform's patch ops, replayed by the context engine."""
        return self._append(
            ContextTransformEntry(
                transformer_name=transformer_name,
                patch=list(patch),
                display=display,
                schema_version=schema_version,
                **self._base(),
            )
        )

    def append_ephemeral(self, messages: Sequence[Message | JsonObject]) -> EphemeralEntry:
        """Log request-only messages. They are never part of a rebuilt context."""
        parsed = [load_message(m) if isinstance(m, dict) else m for m in messages]
        return self._append(EphemeralEntry(messages=parsed, **self._base()))

    # --- tree ---------------------------------------------------------------------------------------

    def get_entries(self) -> list[SessionEntry]:
        """Every entry in file order (the header excluded); a copy of the list."""
        return list(self._tree.entries)

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        return self._tree.get(entry_id)

    def get_leaf_id(self) -> str | None:
        return self._tree_now.leaf_id  # the same with the history deferred: the leaf is always kept

    def get_leaf_entry(self) -> SessionEntry | None:
        leaf = self._tree.leaf_id
        return self._tree.get(leaf) if leaf is not None else None

    def get_branch(self, leaf_id: str | None = None) -> list[SessionEntry]:
        """Entries from the root to ``leaf_id`` (default: the current leaf)."""
        return self._tree.path_to(leaf_id if leaf_id is not None else self._tree.leaf_id)

    def get_kept_branch(self) -> list[SessionEntry]:
        """`get_branch` of the current leaf, but with the history deferred only the part built (see
        `open`'s ``defer_history``): what a first request's context is replayed from."""
        return self._tree_now.path_to(self._tree_now.leaf_id)

    def get_tree(self) -> list[TreeNode]:
        return self._tree.tree()

    def get_children(self, entry_id: str) -> list[SessionEntry]:
        return self._tree.children(entry_id)

    def get_label(self, entry_id: str) -> str | None:
        return self._tree.labels.get(entry_id)

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id`` without writing; the next append starts a branch there."""
        self._tree.branch(entry_id)

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append makes a new root."""
        self._tree.reset_leaf()

    def branch_with_summary(
        self, entry_id: str | None, summary: str, details: JsonValue = None, from_hook: bool | None = None
    ) -> BranchSummaryEntry:
        """Move the leaf to ``entry_id`` (None: before the first entry) and append a branch summary there."""
        if entry_id is None:
            self._tree.reset_leaf()
        else:
            self._tree.branch(entry_id)
        return self.append_branch_summary(entry_id or "root", summary, details, from_hook)

    def build_context(self, leaf_id: str | None | LastEntry = LAST_ENTRY) -> SessionContext:
        """The context of the active path (or of the path to ``leaf_id``).

        Start-up asks for the same context more than once (the model to restore, then the agent's
        history): the last one is kept while no entry is added, and each caller gets its own lists.
        """
        leaf = self._tree.leaf_id if leaf_id is LAST_ENTRY else leaf_id
        if leaf is None:
            return SessionContext()
        key = (leaf, len(self._tree.entries))
        if self._context_memo is None or self._context_memo[0] != key:
            # The tree's path: kept by the tree, so the engine's replay of the same leaf reuses it.
            path = self._tree.path_to(leaf) if self._tree.get(leaf) is not None else None
            self._context_memo = (key, build_session_context(self._tree.entries, leaf, path=path))
        return _copy_context(self._context_memo[1])

    def restore_state(self) -> RestoreState:
        """The model, thinking level and whether there are messages on the active path, as
        `build_context` gives them, without building the context (what resuming needs first; start-up
        asks twice, so the last answer is kept while no entry is added and the leaf stays)."""
        # With the history deferred, the kept part of the path gives the same state (`SplitPath`).
        tree = self._tree_now
        key = (tree.leaf_id, len(tree.entries))
        if self._restore_memo is None or self._restore_memo[0] != key:
            self._restore_memo = (key, restore_state(tree.path_to(tree.leaf_id)))
        return self._restore_memo[1]

    def get_user_messages_for_forking(self) -> list[tuple[str, str]]:
        """``(entry id, text)`` of every user message, in file order (for ``/fork``)."""
        return [
            (e.id, message_text(e.message))
            for e in self._tree.entries
            if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)
        ]

    def create_branched_session(self, leaf_id: str | None) -> SessionManager:
        """A new session holding the path from the root to ``leaf_id`` (``/fork``, ``--fork``).

        Its header's ``parentSession`` names this session's file. Label entries on the path are not
        copied; the labels of path entries are re-created at the end instead. The new file is written at
        once when the path holds an assistant message, otherwise lazily. This session stays open.
        ``leaf_id`` None gives an empty session linked to this one.
        """
        parent = str(self._path) if self._path is not None else None
        if self._path is None:
            new = SessionManager.in_memory(self._cwd, parent_session=parent)
        else:
            new = SessionManager.create(self._cwd, session_dir=self._session_dir, parent_session=parent)
        if leaf_id is None:
            return new
        path = [e for e in self._tree.path_to(leaf_id) if not isinstance(e, LabelEntry)]
        on_path = {e.id for e in path}
        copied = [_copy_entry(e) for e in path]
        for entry in copied:
            new._tree.add(entry)
        for target_id, label in self._tree.labels.items():
            if target_id in on_path:
                new._tree.add(
                    LabelEntry(
                        id=new._new_id(),
                        parent_id=new._tree.leaf_id,
                        timestamp=iso_now(),
                        target_id=target_id,
                        label=label,
                    )
                )
        if new._path is not None and new._tree.has_assistant:
            new._write_initial()
        return new

    @classmethod
    def fork_from(
        cls,
        source: str | Path,
        cwd: str | Path,
        *,
        session_dir: Path | None = None,
        session_id: str | None = None,
    ) -> SessionManager:
        """A copy of the whole session at ``source`` (every branch) as a new session of ``cwd``
        (``--fork``, and ``--session`` naming another project's session), as pi's ``forkFrom``.

        The copy is filed with ``cwd``'s sessions (or under ``session_dir``), its header records ``cwd``
        and names ``source`` as its parent, and it is written at once. ``source`` is not changed.
        """
        original = cls.open(source, read_only=True)
        try:
            fork = cls.create(
                cwd, session_dir=session_dir, parent_session=original.path, session_id=session_id
            )
            for entry in original._tree.entries:
                fork._tree.add(_copy_entry(entry))
        finally:
            original.close()
        if fork._tree.entries:
            fork._write_initial()
        return fork

    # --- persistence --------------------------------------------------------------------------------

    def _write_initial(self) -> None:
        assert self._path is not None
        if self._lock is not None:
            self._lock.acquire()
        file = SessionFile(self._path)
        file.create([header_to_line(self._header)] + [entry_to_line(e) for e in self._tree.entries])
        self._file = file
        self._flushed = True

    def _ensure_file(self) -> SessionFile:
        if self._file is not None:
            return self._file
        assert self._path is not None
        if self._lock is not None:
            self._lock.acquire()
        file = SessionFile(self._path)
        if not self._path.exists():
            # Deleted while we had it open: write everything we hold, rather than lose it.
            self._report.repairs.append("the file had disappeared and was written again from memory")
            file.create([header_to_line(self._header)] + [entry_to_line(e) for e in self._tree.entries])
            self._unsaved.clear()  # every entry of the tree is in the new file
        elif self._pending_rewrite is not None:
            lines, tag, what = self._pending_rewrite
            try:
                backup = file.rewrite([header_to_line(self._header), *lines()], tag, self._rewrite_backup)
            except OSError:
                self._rewrite_backup = file.made_backup  # a retry keeps it rather than make another
                raise
            self._report.repairs.append(f"{what}; the original is kept as {backup.name}")
        else:
            size, torn, unterminated = self._pending_tail or (-1, None, False)
            self._report.repairs.extend(file.open_existing(size, torn, unterminated))
        self._pending_rewrite = None
        self._pending_tail = None
        self._file = file
        return file

    def close(self) -> None:
        """Flush, fsync and release the lock. Entries of a session that never got an assistant message
        are not written (pi's rule)."""
        if self._closed:
            return
        self._closed = True
        if self._unsaved:
            try:
                self._write_unsaved()  # the last chance for entries whose write failed
            except (OSError, SessionError) as exc:
                log.warning(
                    "%d entries of %s could not be written and are lost: %s",
                    len(self._unsaved),
                    self._path,
                    exc,
                )
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> SessionManager:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        where = str(self._path) if self._path is not None else "in memory"
        return f"SessionManager({self.id}, {where}, {len(self._tree.entries)} entries)"


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def _new_header(cwd: str, parent_session: str | Path | None, session_id: str | None) -> SessionHeader:
    return SessionHeader(
        version=CURRENT_VERSION,
        id=session_id or new_session_id(),
        timestamp=iso_now(),
        cwd=cwd,
        parent_session=str(parent_session) if parent_session is not None else None,
    )


def _id_from_name(path: Path) -> str | None:
    match = _UUID_IN_NAME.search(path.name)
    return match.group(1) if match else None


def _substitute_header(path: Path, cwd: str) -> SessionHeader:
    """A header for a file that lost its own: the id from the file name, the time from its mtime."""
    try:
        mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        timestamp = mtime.strftime("%Y-%m-%dT%H:%M:%S.") + f"{mtime.microsecond // 1000:03d}Z"
    except OSError:
        timestamp = iso_now()
    return _new_header(cwd, None, _id_from_name(path)).model_copy(update={"timestamp": timestamp})


class _Either:
    """Membership in either of two containers (ids taken, built or deferred)."""

    def __init__(self, first: Container[str], second: Container[str]) -> None:
        self._first, self._second = first, second

    def __contains__(self, item: object) -> bool:
        return item in self._first or item in self._second
