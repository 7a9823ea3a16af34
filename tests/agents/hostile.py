"""A contestant that misbehaves in one chosen way, and reports what it managed.

Usage: hostile.py MODE WORKDIR [ARG...]

The last line of standard output is `REPORT <json>`: what each try gave (the text read,
"ok", or the name of the error), so a test can tell a blocked try from a broken script.

Modes:
    write-outside PATH...   write a file at each PATH; also one inside the copy
    read-secrets PATH...    read each PATH; dump the environment into the copy
    read-fix FILE DIR REPO  read FILE (in the fix's tree), list DIR; `git log` in REPO and here
    network PORT TOKEN      send TOKEN to 127.0.0.1:PORT and read the answer
    flood MEGABYTES         print that much, line by line, as fast as it can
    delete-all              delete every file of the working copy
    symlink                 leave a link to /etc/passwd in the package
    sparse                  leave a 1 GB sparse file, and edit the source
    tamper-logs LOGDIR FILE replace its logs with a link to FILE and a FIFO
    path-hook               append to the package's __init__.py a hook that, when the
                            package is imported, looks through every bugbout home it
                            can guess for the pristine tree whose tests match the tree
                            being tested, and imports the package from there: no
                            knowledge of the bug, and the fix whenever a tree is in reach
    look PROMPT_FILE        read each path of $LOOK (a JSON list: files are read,
                            directories listed), run the prompt's test command, and
                            edit the source
    same-size FILE OLD NEW  write NEW over OLD in FILE in place (same length), then put
                            the file's old access and modification times back
    special DIR TRACKED     leave a FIFO, a socket and (root only) two devices in DIR,
                            and turn the file TRACKED into a FIFO
    swarm COUNT DIR         write COUNT small files in DIR
    hoard MEGABYTES DIR     write that many megabytes in DIR, in files of 1 MB
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

PATH_HOOK = """

def _borrow_the_fix():
    import glob, os, pwd

    here = os.getcwd()
    package = os.path.relpath(os.path.dirname(os.path.abspath(__file__)), here)

    def tests_of(tree):
        found = {}
        for path in glob.glob(os.path.join(tree, "tests", "*.py")):
            with open(path, "rb") as handle:
                found[os.path.basename(path)] = handle.read()
        return found

    mine = tests_of(here)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    user = os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".cache")
    homes = [os.environ.get("BUGBOUT_HOME", "")]
    homes += [os.path.join(root, "bugbout") for root in (cache, user)]
    for home in homes:
        for tree in sorted(glob.glob(os.path.join(home, "trees", "*", "*", ""))):
            theirs = tests_of(tree)
            same = all(theirs.get(name) == text for name, text in mine.items())
            if os.path.realpath(tree) != os.path.realpath(here) and mine and same:
                __path__.insert(0, os.path.join(tree, package))
                return


try:
    _borrow_the_fix()
except Exception:
    pass
"""


def attempt(action: Any) -> str:
    try:
        result = action()
    except OSError as error:
        return type(error).__name__
    return result if isinstance(result, str) else "ok"


def git(*args: str, cwd: Path) -> dict[str, Any]:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    return {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def edit_source(workdir: Path) -> None:
    target = workdir / "src" / "calc" / "ops.py"
    target.write_text(target.read_text() + "\n# touched\n")


def same_size(target: Path, old: bytes, new: bytes) -> dict[str, Any]:
    """An edit no size or modification time gives away: only the change time can."""
    assert len(old) == len(new)
    before = os.lstat(target)
    offset = target.read_bytes().index(old)
    with target.open("r+b") as handle:
        handle.seek(offset)
        handle.write(new)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.lstat(target)
    fields = ("st_ctime_ns", "st_mtime_ns", "st_size", "st_ino")
    return {
        "before": [getattr(before, f) for f in fields],
        "after": [getattr(after, f) for f in fields],
    }


def special(folder: Path, tracked: Path) -> dict[str, str]:
    """Files git's walk passes over in silence, and a reader of which would block."""
    made = {"pipe": attempt(lambda: os.mkfifo(folder / "pipe"))}

    def bind() -> None:
        here = os.getcwd()
        os.chdir(folder)  # a relative address: a socket's path has a short length limit
        try:
            with socket.socket(socket.AF_UNIX) as server:
                server.bind("socket")
        finally:
            os.chdir(here)

    made["socket"] = attempt(bind)
    devices = {"char-device": stat.S_IFCHR, "block-device": stat.S_IFBLK}
    for name, kind in devices.items():
        made[name] = attempt(
            lambda n=name, k=kind: os.mknod(folder / n, 0o600 | k, os.makedev(1, 3))
        )
    tracked.unlink()
    made["tracked"] = attempt(lambda: os.mkfifo(tracked))
    return made


def main() -> None:
    mode, workdir, rest = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    report: dict[str, Any] = {}
    if mode == "write-outside":
        for path in rest:
            report[path] = attempt(lambda p=path: Path(p).write_text("planted\n"))
        report["inside"] = attempt(lambda: (workdir / "inside.txt").write_text("mine\n"))
    elif mode == "read-secrets":
        for path in rest:
            report[path] = attempt(lambda p=path: Path(p).read_text())
        (workdir / "env.json").write_text(json.dumps(dict(os.environ), sort_keys=True) + "\n")
    elif mode == "read-fix":
        fix_file, trees, repo = Path(rest[0]), Path(rest[1]), Path(rest[2])
        report["fix_file"] = attempt(fix_file.read_text)
        report["trees"] = attempt(lambda: ",".join(os.listdir(trees)))
        report["git_log_repo"] = git("-C", str(repo), "log", "--oneline", cwd=workdir)
        report["git_log_here"] = git("log", "--oneline", cwd=workdir)
    elif mode == "network":
        port, token = int(rest[0]), rest[1]

        def talk() -> str:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
                conn.sendall(token.encode() + b"\n")
                return conn.recv(100).decode()

        report["answer"] = attempt(talk)
    elif mode == "flood":
        line = b"x" * 999 + b"\n"
        block = line * 1_000
        for _ in range(int(rest[0]) * 1024 * 1024 // len(block)):
            sys.stdout.buffer.write(block)
        sys.stdout.buffer.flush()
    elif mode == "delete-all":
        for entry in workdir.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        report["left"] = sorted(os.listdir(workdir))
    elif mode == "symlink":
        (workdir / "src" / "calc" / "passwd").symlink_to("/etc/passwd")
    elif mode == "sparse":
        with (workdir / "big.bin").open("wb") as handle:
            handle.truncate(1 << 30)
        edit_source(workdir)
    elif mode == "tamper-logs":
        logdir, target = Path(rest[0]), rest[1]
        for name in ("stdout.log", "prompt.md"):
            (logdir / name).unlink(missing_ok=True)
            (logdir / name).symlink_to(target)
        (logdir / "stderr.log").unlink()
        os.mkfifo(logdir / "stderr.log")
        (logdir / "deeper").mkdir()
        (logdir / "deeper" / "out").symlink_to(target)
    elif mode == "path-hook":
        init = workdir / "src" / "calc" / "__init__.py"
        init.write_text(init.read_text() + PATH_HOOK)
    elif mode == "look":
        for path in json.loads(os.environ["LOOK"]):
            target = Path(path)
            report[path] = attempt(
                lambda t=target: ",".join(sorted(os.listdir(t))) if t.is_dir() else t.read_text()
            )
        prompt = Path(rest[0]).read_text()
        after = prompt.split("Run the project's tests", 1)[1]
        command = next(line.strip() for line in after.splitlines() if line.startswith("    "))
        tests = subprocess.run(
            ["/bin/sh", "-c", command], cwd=workdir, capture_output=True, text=True, check=False
        )
        report["tests"] = {"returncode": tests.returncode, "tail": tests.stdout[-500:]}
        edit_source(workdir)
    elif mode == "same-size":
        report.update(same_size(workdir / rest[0], rest[1].encode(), rest[2].encode()))
    elif mode == "special":
        report.update(special(workdir / rest[0], workdir / rest[1]))
    elif mode == "swarm":
        folder = workdir / rest[1]
        folder.mkdir(parents=True, exist_ok=True)
        for index in range(int(rest[0])):
            (folder / f"file_{index:06d}.txt").write_text(f"line {index}\n")
    elif mode == "hoard":
        folder = workdir / rest[1]
        folder.mkdir(parents=True, exist_ok=True)
        for index in range(int(rest[0])):
            (folder / f"blob_{index}.bin").write_bytes(os.urandom(1024 * 1024))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print("REPORT " + json.dumps(report), flush=True)


main()
