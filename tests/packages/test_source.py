from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_tui.packages import PackageSourceError, install_location, parse_source, settings_value

BASE = Path("/work/base")


@pytest.mark.parametrize(
    ("raw", "url", "host", "repo_path", "ref"),
    [
        ("git:github.com/user/repo", "https://github.com/user/repo", "github.com", "user/repo", None),
        ("git:github.com/user/repo@v1", "https://github.com/user/repo", "github.com", "user/repo", "v1"),
        (
            "git:git@github.com:user/repo.git@main",
            "git@github.com:user/repo.git",
            "github.com",
            "user/repo",
            "main",
        ),
        (
            "https://github.com/user/repo.git",
            "https://github.com/user/repo.git",
            "github.com",
            "user/repo",
            None,
        ),
        (
            "https://GitHub.com/user/repo@abc123",
            "https://GitHub.com/user/repo",
            "github.com",
            "user/repo",
            "abc123",
        ),
        (
            "ssh://git@example.org:2222/team/repo@release/1.0",
            "ssh://git@example.org:2222/team/repo",
            "example.org",
            "team/repo",
            "release/1.0",
        ),
        ("git:https://gitlab.com/a/b/c", "https://gitlab.com/a/b/c", "gitlab.com", "a/b/c", None),
    ],
)
def test_git_sources_split_into_clone_url_host_path_and_ref(
    raw: str, url: str, host: str, repo_path: str, ref: str | None
) -> None:
    source = parse_source(raw, BASE)
    assert (source.kind, source.url, source.host, source.repo_path, source.ref) == (
        "git",
        url,
        host,
        repo_path,
        ref,
    )
    assert source.pinned is (ref is not None)
    assert source.needs_network


def test_the_same_repository_has_one_identity_whatever_the_form_or_ref() -> None:
    forms = [
        "git:github.com/user/repo",
        "git:github.com/user/repo@v2",
        "https://github.com/user/repo.git",
        "git:git@github.com:user/repo",
        "ssh://git@github.com/user/repo@main",
    ]
    assert {parse_source(raw, BASE).identity for raw in forms} == {"git:github.com/user/repo"}


def test_shorthand_and_scp_forms_are_local_paths_without_the_git_prefix() -> None:
    assert parse_source("github.com/user/repo", BASE).kind == "local"
    assert parse_source("git@github.com:user/repo", BASE).kind == "local"
    assert parse_source("github.com/user/repo", BASE).path == BASE / "github.com/user/repo"


def test_a_local_repository_with_the_git_prefix_is_cloned_from_its_real_path(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    link = tmp_path / "link"
    link.symlink_to(repo)
    by_path = parse_source("git:./link@v1", tmp_path)
    by_url = parse_source(f"file://{repo}", tmp_path)
    assert (by_path.kind, by_path.host, by_path.url, by_path.ref) == ("git", "local", str(repo), "v1")
    assert by_path.identity == by_url.identity
    assert not by_path.needs_network
    assert install_location(by_path, tmp_path / "agent") == tmp_path / "agent" / "git" / "local" / str(
        repo
    ).lstrip("/")


@pytest.mark.parametrize(
    ("raw", "name", "requirement", "pinned"),
    [
        ("pypi:Pi_Tui.Guard", "pi-tui-guard", "Pi_Tui.Guard", False),
        ("pip:pi-guard==1.2.0", "pi-guard", "pi-guard==1.2.0", True),
        ("pypi:pi-guard@1.2", "pi-guard", "pi-guard==1.2", True),
        ("pypi:pi-guard >= 1.0, <2", "pi-guard", "pi-guard>=1.0,<2", False),
        ("pypi:pi-guard[extra]==2", "pi-guard", "pi-guard[extra]==2", True),
    ],
)
def test_pypi_sources_normalise_the_name_and_pin_only_an_exact_version(
    raw: str, name: str, requirement: str, pinned: bool
) -> None:
    source = parse_source(raw, BASE)
    assert (source.kind, source.name, source.requirement, source.pinned) == (
        "pypi",
        name,
        requirement,
        pinned,
    )
    assert source.identity == f"pypi:{name}"
    assert install_location(source, Path("/agent")) == Path("/agent/pypi") / name


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "pypi:",
        "pypi:bad name!",
        "pypi:x ~ 1",
        "git:",
        "git:nohost",
        "git:github.com/u/r@",
        "git:github.com/../x",
        "git:ftp://host/repo",
        "https://host/repo#v1",
        "npm:@scope/pkg",
    ],
)
def test_malformed_sources_are_refused_with_a_message(raw: str) -> None:
    with pytest.raises(PackageSourceError) as caught:
        parse_source(raw, BASE)
    assert str(caught.value)


def test_local_identity_is_the_resolved_folder_and_a_trailing_slash_does_not_matter(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    assert parse_source("./pkg/", tmp_path).identity == parse_source(str(tmp_path / "pkg"), BASE).identity
    assert parse_source("./pkg/", tmp_path).path == tmp_path / "pkg"


def test_relative_local_paths_are_stored_relative_to_the_settings_folder(tmp_path: Path) -> None:
    cwd = tmp_path / "work" / "project"
    source = parse_source("../shared/pkg", cwd)
    assert settings_value(source, tmp_path / "agent") == os.path.join("..", "work", "shared", "pkg")
    assert settings_value(source, cwd / ".pi") == os.path.join("..", "..", "shared", "pkg")
    inside = parse_source("./tools/pkg", cwd)
    assert settings_value(inside, cwd) == "./tools/pkg"
    assert parse_source(settings_value(source, cwd / ".pi"), cwd / ".pi").path == source.path


def test_absolute_and_home_paths_are_stored_as_typed(tmp_path: Path) -> None:
    assert settings_value(parse_source(f"{tmp_path}/pkg/", BASE), BASE) == str(tmp_path / "pkg")
    assert settings_value(parse_source("~/pkgs/x", BASE), BASE) == "~/pkgs/x"


def test_a_local_repository_is_stored_with_its_absolute_path(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    source = parse_source("git:./repo@v1", tmp_path)
    assert settings_value(source, tmp_path / "agent") == f"git:{tmp_path / 'repo'}@v1"
