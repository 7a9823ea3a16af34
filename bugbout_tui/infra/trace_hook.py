"""The tracer that runs inside a traced program: what it imported and what it opened.

`env_trace.py` copies this file into the scored environment's site-packages (as
`_bugbout_trace.py`, with a `.pth` file that starts it), so it runs in the program's own
interpreter, any CPython from 3.8 on, with the standard library only. It does nothing
unless `TRACE_VARIABLE` names a directory; then it registers an audit hook that writes
every file the process opens (`f <path>`) and every module it imports (`m <name>`), each
once, to `<directory>/<pid>.txt`.

Each new entry is written at once with `os.write` on a file opened before the hook is
registered: nothing is buffered, so a process that leaves through `os._exit` or is
killed has lost nothing, and the hook's own write raises no audit event of its own. A
child Python of the same environment inherits the variable and traces itself into its
own file; a forked child keeps writing into its parent's. A Python that reads no `.pth`
files (`-S`), or that is started with an environment of its own making, is not traced.

The hook must not change what the program does: it prints nothing, swallows every
exception (an audit hook that raises aborts the operation it audits), and costs a set
lookup for each event it has seen before.
"""

from __future__ import annotations

import os
import sys

TRACE_VARIABLE = "BUGBOUT_TRACE_DIR"
"""The environment variable naming the directory the traces go to."""

_started: list[int] = []
"""The trace file, once started: the `.pth` line runs again when a program calls
`site.main()` itself, and one hook is enough."""


def start(directory: str) -> None:
    """Trace this process, from now on, into `directory`."""
    if _started:
        return
    try:
        handle = os.open(
            os.path.join(directory, f"{os.getpid()}.txt"),
            os.O_WRONLY | os.O_CREAT | os.O_APPEND,
            0o600,
        )
    except Exception:
        return
    _started.append(handle)
    opened: set[object] = set()
    imported: set[object] = set()
    write = os.write
    fspath = os.fspath
    fsdecode = os.fsdecode
    fsencode = os.fsencode
    isabs = os.path.isabs
    join = os.path.join
    getcwd = os.getcwd

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "open":
            try:
                target = args[0]
                if target in opened or isinstance(target, int):
                    return
                path = fsdecode(fspath(target))  # type: ignore[call-overload]
                if isabs(path):
                    opened.add(target)
                else:  # the same relative name in another directory is another file
                    path = join(getcwd(), path)
                    if path in opened:
                        return
                    opened.add(path)
                encoded = fsencode(path)
                if b"\n" not in encoded:
                    write(handle, b"f " + encoded + b"\n")
            except Exception:
                pass
        elif event == "import":
            try:
                name = args[0]
                if name in imported:
                    return
                imported.add(name)
                if isinstance(name, str):
                    write(handle, b"m " + name.encode("utf-8", "replace") + b"\n")
            except Exception:
                pass

    sys.addaudithook(hook)
