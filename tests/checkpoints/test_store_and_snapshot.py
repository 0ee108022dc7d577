from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pi_tui.checkpoints import (
    BlobMissingError,
    BlobStore,
    Checkpointer,
    CheckpointLimits,
    collect_garbage,
    content_hash,
)
from pi_tui.checkpoints.snapshot import diff_snapshots


def test_blobs_are_deduplicated_and_compressed(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "store")
    data = b"print('hello')\n" * 1000
    first, second = store.put(data), store.put(data)
    assert first == second == content_hash(data)
    assert len(list(store.iter_blobs())) == 1
    assert store.size_bytes() < len(data) / 10
    assert store.get(first) == data


def test_a_damaged_blob_is_reported_not_returned(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "store")
    digest = store.put(b"content")
    store.path_for(digest).write_bytes(b"garbage")
    with pytest.raises(BlobMissingError, match="damaged"):
        store.get(digest)
    with pytest.raises(BlobMissingError, match="no longer"):
        store.get("0" * 64)


def _checkpointer(project: Path, tmp_path: Path, **limits: int) -> Checkpointer:
    return Checkpointer(project, tmp_path / "store", CheckpointLimits(**limits))  # type: ignore[arg-type]


def test_snapshot_sees_created_modified_deleted_and_skips_ignored(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "src").mkdir(parents=True)
    (project / ".gitignore").write_text("build/\n*.log\n")
    (project / "src" / "a.py").write_text("a = 1\n")
    (project / "gone.txt").write_text("x\n")
    cp = _checkpointer(project, tmp_path)
    before = cp.command_snapshot()
    (project / "src" / "a.py").write_text("a = 2\n")
    (project / "gone.txt").unlink()
    (project / "new.txt").write_text("n\n")
    (project / "build").mkdir()
    (project / "build" / "out.o").write_text("ignored\n")
    (project / "debug.log").write_text("ignored\n")
    data = cp.command_changes(before, "bash")
    assert [(f["path"], f["before"] is None, f["after"] is None) for f in data["files"]] == [
        ("gone.txt", False, True),
        ("new.txt", True, False),
        ("src/a.py", False, False),
    ]
    assert not data.get("partial")
    assert cp.store.get(data["files"][2]["before"]) == b"a = 1\n"


def test_binary_and_large_files_are_noted_not_stored(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "img.bin").write_bytes(b"\x00\x01\x02")
    (project / "big.txt").write_text("y" * 2000)
    cp = _checkpointer(project, tmp_path, max_file_bytes=1000)
    before = cp.command_snapshot()
    (project / "img.bin").write_bytes(b"\x00\x09\x09\x09")
    (project / "big.txt").write_text("z" * 3000)
    data = cp.command_changes(before, "bash")
    assert {f["path"]: f.get("skipped") for f in data["files"]} == {"big.txt": "large", "img.bin": "binary"}
    assert all(f["before"] is None and f["after"] is None for f in data["files"])
    assert len(list(cp.store.iter_blobs())) == 0


def test_a_snapshot_past_its_time_bound_is_partial_and_reports_no_phantom_changes(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    for i in range(50):
        (project / f"f{i}.txt").write_text(str(i))
    cp = _checkpointer(project, tmp_path, snapshot_ms=0)
    before = cp.command_snapshot()
    after = cp.snapshotter.take(save=False)
    changes, partial = diff_snapshots(before, after)
    assert partial and changes == []


def test_the_manifest_lets_a_later_process_hash_only_what_changed(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    for i in range(20):
        (project / f"f{i}.txt").write_text(str(i))
    cp = _checkpointer(project, tmp_path)
    cp.command_changes(cp.command_snapshot(), "bash")
    cp.flush()  # saves the baseline (as closing the session does)
    (project / "f3.txt").write_text("changed")
    later = _checkpointer(project, tmp_path)  # a new process: reads the manifest
    data = later.command_changes(None, "user_bash")
    assert [f["path"] for f in data["files"]] == ["f3.txt"]
    assert later.store.get(data["files"][0]["before"]) == b"3"


def test_gc_keeps_cited_and_young_blobs_and_honours_the_budget(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = BlobStore(root)
    cited, orphan, young = store.put(b"cited"), store.put(b"orphan"), store.put(b"young")
    old = time.time() - 7200
    for digest in (cited, orphan):
        os.utime(store.path_for(digest), (old, old))
    sessions = tmp_path / "sessions" / "--p--"
    sessions.mkdir(parents=True)
    line = {"type": "custom", "customType": "pi-tui.checkpoint", "data": {"files": [{"after": cited}]}}
    (sessions / "s.jsonl").write_text(json.dumps(line) + "\n")
    report = collect_garbage(root, [tmp_path / "sessions"], budget_bytes=10**9)
    assert report.blobs_deleted == 1
    assert store.has(cited) and store.has(young) and not store.has(orphan)

    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("baseline content " * 100)
    cp = Checkpointer(project, root)
    cp.command_changes(cp.command_snapshot(), "bash")
    cp.flush()
    baseline = [d for d, _ in store.iter_blobs() if d not in (cited, young)]
    assert len(baseline) == 1
    for digest in baseline:
        os.utime(store.path_for(digest), (old, old))
    collect_garbage(root, [tmp_path / "sessions"], budget_bytes=10**9)
    assert store.has(baseline[0])  # a snapshot baseline is a root
    report = collect_garbage(root, [tmp_path / "sessions"], budget_bytes=0)
    assert report.manifests_dropped == 1 and not store.has(baseline[0]) and store.has(cited)


def test_automatic_gc_runs_at_most_daily_and_only_over_budget(tmp_path: Path) -> None:
    from pi_tui.checkpoints import maybe_collect_garbage

    root = tmp_path / "store"
    store = BlobStore(root)
    orphan = store.put(b"orphan" * 100)
    old = time.time() - 7200
    os.utime(store.path_for(orphan), (old, old))
    assert maybe_collect_garbage(root, [], budget_bytes=10**9) is None  # under budget
    assert store.has(orphan)
    assert maybe_collect_garbage(root, [], budget_bytes=0) is None  # checked less than a day ago
    yesterday = time.time() - 25 * 3600
    os.utime(root / "last-gc", (yesterday, yesterday))
    report = maybe_collect_garbage(root, [], budget_bytes=0)
    assert report is not None and report.blobs_deleted == 1 and not store.has(orphan)


def test_the_cached_listing_matches_the_tools_walk_and_follows_changes(tmp_path: Path) -> None:
    from pi_tui.checkpoints.listing import DirectoryCache, list_files
    from pi_tui.tools.walk import walk

    project = tmp_path / "p"
    for rel in ["a.py", ".hidden", "src/b.py", "src/gen/c.py", "build/out.o", "logs/x.log", "keep/k.log"]:
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(rel)
    (project / ".gitignore").write_text("build/\n*.log\n")
    (project / "keep" / ".gitignore").write_text("!k.log\n")
    (project / "src" / ".ignore").write_text("gen/\n")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref")

    def walked() -> list[str]:
        return sorted(e.rel for e in walk(project) if not e.is_dir and not e.is_symlink)

    cache = DirectoryCache()
    listed, complete = list_files(project, cache, time.monotonic() + 10)
    assert complete and sorted(rel for rel, _ in listed) == walked()
    (project / "src" / "new.py").write_text("n")
    (project / "a.py").unlink()
    listed, _ = list_files(project, cache, time.monotonic() + 10)
    assert sorted(rel for rel, _ in listed) == walked()


def test_an_ignore_file_edited_in_place_is_obeyed_and_nothing_is_reported_deleted(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "x.tmp").write_text("t")
    (project / ".gitignore").write_text("# nothing yet\n")
    cp = _checkpointer(project, tmp_path)
    before = cp.command_snapshot()
    with (project / ".gitignore").open("a") as handle:  # same directory, same mtime for sub/
        handle.write("*.tmp\n")
    data = cp.command_changes(before, "bash")
    assert [f["path"] for f in data["files"]] == [".gitignore"]
    assert "sub/x.tmp" not in cp.snapshotter.last().files  # type: ignore[union-attr]


def test_gc_removes_the_temporary_files_of_killed_blob_writes_once_old(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = BlobStore(root)
    digest = store.put(b"kept")
    folder = store.path_for(digest).parent
    stale, young = folder / ".tmp-k1ll3d", folder / ".tmp-writing"  # what a killed put leaves, and a live one
    stale.write_bytes(b"half a blob")
    young.write_bytes(b"being written")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    os.utime(store.path_for(digest), (old, old))
    report = collect_garbage(root, [], budget_bytes=10**9)
    assert report.leftovers_removed == 1
    assert not stale.exists() and young.exists()
    assert report.blobs_deleted == 1  # the blob itself went the usual way: nothing cites it
