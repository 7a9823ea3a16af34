"""What an agent was handed, to the nanosecond, and which of those files it may have written.

Git's index keeps a file's times in whole seconds (git compares the nanoseconds only when
built to) and its size and inode in 32 bits. A file edited in place, kept at its size, with
its old modification time put back, inside the second in which the copy was made, looks
untouched to git, which then never reads it. This record keeps what the index cannot:
every handed file's change time, modification time, size, inode and mode as `lstat` gave
them, at full precision. Any write sets the change time to the filesystem's clock, and no
process can set it back, so a file whose `lstat` is exactly as recorded was not written.

One case is left: a write within the same tick of the filesystem's clock (a whole second
on filesystems without sub-second times) as the copy leaves the change time as it was.
So the record also keeps a reading of that clock taken when the copy was complete, before
any agent ran: every later write is stamped at or after it, so a file whose recorded
change time is older than the reading cannot have been written without a trace, and one
whose change time is not older counts as touched whatever its `lstat` says.
"""

from __future__ import annotations

import os
import stat
import struct
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from bugbout_tui.core.errors import BugboutError

RECORD_NAME = "handed"
"""The record's file name inside the attempt's git directory."""

_MAGIC = b"bbhand01"
_HEAD = struct.Struct(">8sqB")
"""Magic, the clock reading in nanoseconds, the length of an object id."""
_FILE = struct.Struct(">qqQQII")
"""ctime and mtime (ns), size, inode, `st_mode`, the git mode; the object id and the
NUL-terminated path follow."""


class Handed(NamedTuple):
    """One file as the agent was handed it."""

    ctime_ns: int
    mtime_ns: int
    size: int
    ino: int
    st_mode: int
    mode: int
    """The git mode of its index entry (`0o100644`, `0o100755`, `0o120000`, …)."""
    oid: bytes
    """Its blob id, raw."""


def pack(path: bytes, st: os.stat_result, mode: int, oid: bytes) -> bytes:
    """One file's line of the record."""
    head = _FILE.pack(st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode, mode)
    return head + oid + path + b"\0"


def clock_reading(directory: Path) -> int:
    """The filesystem clock of `directory`, in nanoseconds at its own granularity.

    Read by changing the directory (a probe made and removed) and taking its new
    modification time: the same clock, with the same resolution, that stamps the
    change time of every file written below it.
    """
    os.rmdir(tempfile.mkdtemp(dir=directory, prefix=".bugbout-clock-"))
    return os.lstat(directory).st_mtime_ns


@dataclass(frozen=True)
class Handover:
    """The record: the clock reading and every handed file by path."""

    clock: int
    files: dict[bytes, Handed]

    @staticmethod
    def write(git_dir: Path, clock: int, oid_length: int, lines: Iterable[bytes]) -> None:
        data = b"".join([_HEAD.pack(_MAGIC, clock, oid_length), *lines])
        (git_dir / RECORD_NAME).write_bytes(data)

    @staticmethod
    def read(git_dir: Path) -> Handover:
        try:
            data = (git_dir / RECORD_NAME).read_bytes()
        except FileNotFoundError:
            raise BugboutError(
                f"{git_dir} holds no record of the files handed over; "
                "the working copy was not prepared by this version of bugbout."
            ) from None
        magic, clock, oid_length = _HEAD.unpack_from(data)
        if magic != _MAGIC:
            raise BugboutError(f"{git_dir / RECORD_NAME} is not a record of handed files.")
        files: dict[bytes, Handed] = {}
        unpack = _FILE.unpack_from
        size = _FILE.size
        offset = _HEAD.size
        while offset < len(data):
            ctime, mtime, length, ino, st_mode, mode = unpack(data, offset)
            start = offset + size + oid_length
            end = data.index(b"\0", start)
            files[data[start:end]] = Handed(
                ctime, mtime, length, ino, st_mode, mode, data[offset + size : start]
            )
            offset = end + 1
        return Handover(clock, files)

    def touched(self, root: Path) -> list[bytes]:
        """Handed files whose content git must read again: written since (their `lstat`
        differs in any way), or recorded too close to the clock reading to tell.

        Only files and links still on disk as files or links are listed: git sees a
        missing file, or one that became a directory or a pipe, without help.
        """
        base = os.fsencode(root) + b"/"
        clock = self.clock
        found = []
        for path, handed in self.files.items():
            try:
                st = os.lstat(base + path)
            except OSError:
                continue
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                continue
            if (
                handed.ctime_ns >= clock
                or st.st_ctime_ns != handed.ctime_ns
                or st.st_mtime_ns != handed.mtime_ns
                or st.st_size != handed.size
                or st.st_ino != handed.ino
                or st.st_mode != handed.st_mode
            ):
                found.append(path)
        return found
