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
"""

from __future__ import annotations

import json
import os
import shutil
import socket
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
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print("REPORT " + json.dumps(report), flush=True)


main()
