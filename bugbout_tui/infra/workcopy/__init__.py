"""Agents' working copies and the patch each one leaves behind.

A working copy is the pristine tree of the base commit (`trees.pristine_tree`) copied
without the fix's test files. It has no `.git`: the git directory that finds the patch lives
beside the copy, never inside it, so an agent sees neither history nor metadata of ours.
The patch is what changed on disk; what the agent says it did does not matter.

**The baseline git compares against is an index written by hand** (`index`), from a
manifest of the pristine tree (path, mode and blob id of every file, hashed once per
commit) and the copy's own `lstat`. Three properties decided it over the alternatives
(`git add -A` of the fresh copy, or `read-tree` of the commit and a refresh, both of
which hash every file on every checkout):

- every file of the commit is in the index, so it counts as tracked: a file the project's
  `.gitignore` would ignore is still seen when the agent edits it (ignore rules only ever
  hide untracked files);
- the manifest hashes the pristine *files*, not the commit's blobs, so content that
  `git archive` rewrote on export (`export-subst`, end-of-line attributes) is the baseline
  the agent was really handed, and no patch shows it as a change;
- the copy's own inode, times and size are recorded, so git knows an untouched file without
  reading it: preparing hashes nothing and harvesting hashes only what changed.

Git's stat data is not exact, though: it compares whole seconds and 32-bit sizes, so an
in-place edit that keeps the size and puts the old modification time back, within the
second the copy was made, would look untouched. Beside the index, `handover` records every
file's `lstat` to the nanosecond and a reading of the copy's clock. At harvest each handed
file is `lstat`ed once; those that differ in any way (the change time, which no process
can set, differs after any write), or that were copied too close to the clock reading to
tell, get their times zeroed in the index, so git must read them to call them unchanged.
Every content change is therefore in the patch, whatever the timestamps, and an untouched
file is still never read.

Git runs with `LC_ALL=C`, without user or system configuration or attributes, with exact
bytes (no end-of-line conversion, no filters) and with literal pathspecs, so nobody's
settings can change a patch. Junk (caches, virtualenvs, editor files, agents' state) is
left out through the git directory's own exclude file, and files over a size limit are
left out after an `lstat`, before git reads a byte of them. Symlinks are recorded as links:
git stores the target text and never follows them. Pipes, sockets and devices, which git's
own walk passes over in silence, are found by a walk of ours (never opened) and named in a
note. What the patch would hold is surveyed before anything is hashed, so a patch past the
caps on files or bytes is refused without git reading a file of it.

The jobs live apart: `prepare` makes a copy (with the per-commit `cache`, the `index`
and the `junk` patterns), `harvest` finds its patch (`survey` of what changed on disk,
then git's `diff` read into a `Patch`).
"""

from __future__ import annotations

from bugbout_tui.infra.workcopy.diff import commit_patch
from bugbout_tui.infra.workcopy.harvest import (
    DEFAULT_MAX_FILE_BYTES,
    LARGEST_LISTED,
    NOTES_LISTED,
    harvest,
)
from bugbout_tui.infra.workcopy.junk import JUNK_PATTERNS, is_junk
from bugbout_tui.infra.workcopy.model import WorkingCopy
from bugbout_tui.infra.workcopy.prepare import prepare_working_copy

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "JUNK_PATTERNS",
    "LARGEST_LISTED",
    "NOTES_LISTED",
    "WorkingCopy",
    "commit_patch",
    "harvest",
    "is_junk",
    "prepare_working_copy",
]
