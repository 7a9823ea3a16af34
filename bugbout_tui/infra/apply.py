"""Applying a patch to a tree: all or nothing, naming the files that do not apply."""

from __future__ import annotations

import os
import re
from pathlib import Path

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.infra.git import GitError, hermetic_env, run_hermetic_git

_APPLY_FAILURE = re.compile(
    r"^error: (?:patch failed: (?P<a>.+):\d+"
    r"|(?P<b>.+?): (?:patch does not apply|already exists in working directory"
    r"|No such file or directory|wrong type)"
    r"|binary patch does not apply to '(?P<c>.+)'"
    r"|the patch applies to '(?P<d>.+)' \("
    r"|affected file '(?P<e>.+)' is beyond a symbolic link)",
    re.MULTILINE,
)


def apply_patch(tree: Path, diff: str) -> None:
    """Apply one part of a patch to `tree` (a scratch copy, not a repository).

    All or nothing: when any file does not apply, nothing is changed and the error names
    the files. Git is kept from looking for a repository above `tree`, which would
    otherwise make it skip every path outside the directory it runs in.
    """
    if not diff.strip():
        return
    tree = Path(os.path.abspath(tree))
    if not tree.is_dir():
        raise BugboutError(f"Cannot apply a patch to {tree}: it is not a directory.")
    env = hermetic_env()
    env["GIT_CEILING_DIRECTORIES"] = str(tree.parent)
    try:
        run_hermetic_git(
            "apply", "--whitespace=nowarn", "-", env=env, cwd=tree, input=diff.encode()
        )
    except GitError as exc:
        failed = []
        for match in _APPLY_FAILURE.finditer(exc.stderr):
            name = next(group for group in match.groups() if group)
            if name not in failed:
                failed.append(name)
        what = ", ".join(failed) if failed else "the patch is malformed"
        raise BugboutError(
            f"The patch does not apply to {tree}: {what}.", hint=f"git said: {exc.stderr}"
        ) from exc
