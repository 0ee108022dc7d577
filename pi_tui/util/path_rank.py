"""Which project paths an ``@`` mention offers, and in what order: pi's file suggestions.

Shared by the full-screen editor's completion menu and the line mode's Tab completion, so both offer
the same paths in the same order for the same text.
"""

from __future__ import annotations

__all__ = ["PATH_SUGGESTIONS", "rank_paths"]

PATH_SUGGESTIONS = 20
"""The most paths one ``@`` mention offers (pi keeps its best twenty)."""


def rank_paths(query: str, paths: list[str], limit: int = PATH_SUGGESTIONS) -> list[str]:
    """The project paths an ``@query`` offers, best first, as pi ranks them.

    ``paths`` are relative to the project, a folder's ending in ``/``. The part of the query after its
    last ``/`` is looked for in each name (not the whole path, and not as scattered letters): a name
    equal to it first, then names starting with it, then names holding it, a folder ahead of a file of
    the same kind; ties go to shallower, then shorter paths. Case is ignored unless the query has a
    capital letter, which then must appear as typed (pi's file finder is "smart case"). The part up to
    that ``/`` is the folder to look in. Without a query every path counts, shallowest first.

    Args:
        query: What follows the ``@``, without quotes.
        paths: Every path that may be offered.
        limit: How many to return at most.
    """
    folder, slash, name = query.rpartition("/")
    within = folder + slash
    wanted = name.lower()
    exact_case = name != wanted
    scored: list[tuple[int, int, int, str, str]] = []
    for path in paths:
        if not path.startswith(within) or path == within:
            continue
        bare = path.rstrip("/")
        typed_base = bare.rsplit("/", 1)[-1]
        base = typed_base.lower()
        if exact_case and name not in typed_base:
            continue
        if not wanted:
            score = 1
        elif base == wanted:
            score = 100
        elif base.startswith(wanted):
            score = 80
        elif wanted in base:
            score = 50
        else:
            continue
        if wanted and path.endswith("/"):
            score += 10
        scored.append((-score, bare.count("/"), len(path), path.lower(), path))
    scored.sort()
    return [entry[-1] for entry in scored[:limit]]
