"""The git index, written and patched by hand.

Preparing writes it from the manifest and the copy's own `lstat`, so nothing is hashed;
harvesting zeroes the times of the entries it cannot trust, so git must read those.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.infra import handover

Entry = tuple[bytes, int, bytes]
"""A manifest line: path, mode, raw object id."""
_INDEX_STAT = struct.Struct(">10I")


def write_index(index: Path, root: Path, entries: Sequence[Entry], hash_name: str) -> list[bytes]:
    """Write a version 2 git index (gitformat-index) whose stat data is the copy's own,
    and return the same `lstat`s at full precision, as lines of the handover record.

    Each entry: ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size, all
    32-bit; the object id; 16 bits of flags holding the name length; the name,
    NUL-padded to a multiple of 8 bytes. A checksum of everything closes the file.
    """
    mask = 0xFFFFFFFF
    pack = _INDEX_STAT.pack
    chunks = [b"DIRC", struct.pack(">II", 2, len(entries))]
    handed = []
    base = os.fsencode(root) + b"/"
    for path, mode, oid in entries:
        try:
            st = os.lstat(base + path)
        except FileNotFoundError:
            raise BugboutError(
                f"The working copy {root} is incomplete: {os.fsdecode(path)} is missing."
            ) from None
        ctime, ctime_ns = divmod(st.st_ctime_ns, 1_000_000_000)
        mtime, mtime_ns = divmod(st.st_mtime_ns, 1_000_000_000)
        chunks.append(
            pack(
                ctime & mask,
                ctime_ns,
                mtime & mask,
                mtime_ns,
                st.st_dev & mask,
                st.st_ino & mask,
                mode,
                st.st_uid & mask,
                st.st_gid & mask,
                st.st_size & mask,
            )
        )
        padding = 8 - (42 + len(oid) + len(path)) % 8
        chunks.append(oid + min(len(path), 0xFFF).to_bytes(2, "big") + path + b"\0" * padding)
        handed.append(handover.pack(path, st, mode, oid))
    data = b"".join(chunks)
    index.write_bytes(data + hashlib.new(hash_name, data).digest())
    return handed


def smudge(index: Path, paths: Iterable[bytes], hash_name: str) -> None:
    """Zero the times of these entries of the index, keeping the rest of their stat data.

    Git then cannot take such a file as unchanged from its `lstat`: one whose size still
    matches is read and compared, one whose size differs is changed without a read (so a
    file grown past the size limit is still never read). The index may be git's own by
    now (version 2 or 3, extensions after the entries); only entry bytes change, so the
    extensions stay valid, and the closing checksum is computed again.
    """
    wanted = set(paths)
    if not wanted:
        return
    data = bytearray(index.read_bytes())
    version, count = struct.unpack_from(">II", data, 4)
    if data[:4] != b"DIRC" or version not in (2, 3):
        raise BugboutError(f"Cannot read the index {index}: version {version} is not expected.")
    digest = hashlib.new(hash_name).digest_size
    offset = 12
    for _ in range(count):
        flags_at = offset + 40 + digest
        flags = int.from_bytes(data[flags_at : flags_at + 2], "big")
        name_at = flags_at + (4 if flags & 0x4000 else 2)  # extended flags follow, in v3
        length = flags & 0xFFF
        if length == 0xFFF:
            length = data.index(0, name_at) - name_at
        if bytes(data[name_at : name_at + length]) in wanted:
            data[offset : offset + 16] = bytes(16)  # ctime, mtime: seconds, nanoseconds
        offset += (name_at - offset + length + 8) & ~7
    data[-digest:] = hashlib.new(hash_name, data[:-digest]).digest()
    index.write_bytes(data)


def hash_name_of(object_id: str) -> str:
    return "sha1" if len(object_id) == 40 else "sha256"
