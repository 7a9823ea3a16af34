"""How much a working copy costs next to copying the tree by hand.

Builds a 2,000-file repository once (Python modules of realistic, skewed sizes, tests, a
few data and binary files), then times, several times over and interleaved:

- `prepare_working_copy` + `harvest` after a small edit (one source line changed, one test
  file added): the whole price of an attempt's checkout;
- `cp -r` of the same pristine tree: the floor any checkout is measured against;
- the copy methods `prepare_working_copy` could use (GNU `cp --reflink=auto`,
  `shutil.copytree`, a walk with `os.copy_file_range`), to show which one wins here.

The pristine tree and its manifest are built once before timing, as they are for every
attempt but the first on a commit; that first, cold checkout is reported apart.

    python benchmarks/checkout.py [--files 2000] [--repetitions 7] [--workdir DIR] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchkit.gitrepo import commit, git, init
from benchkit.options import parse_args

from bugbout_tui.infra.trees import pristine_tree
from bugbout_tui.infra.workcopy import harvest, prepare_working_copy
from bugbout_tui.infra.workcopy.prepare import copy_argv

_WORDS = (
    "def",
    "class",
    "return",
    "import",
    "self",
    "value",
    "None",
    "True",
    "False",
    "for",
    "in",
    "if",
    "else",
    "elif",
    "while",
    "try",
    "except",
    "raise",
    "with",
    "as",
    "yield",
    "lambda",
    "not",
    "and",
    "or",
    "is",
    "assert",
    "result",
    "items",
    "config",
    "path",
)


def _module_text(rng: random.Random, size: int) -> str:
    lines = ['"""Generated module."""', ""]
    total = 0
    while total < size:
        indent = "    " * rng.randint(0, 3)
        line = indent + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 10)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


def build_repository(root: Path, files: int) -> Path:
    """A repository of `files` files, committed once; reused when it already exists."""
    repo = root / f"repo-{files}"
    if (repo / ".git").is_dir():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    rng = random.Random(20240601)
    for index in range(files):
        roll = rng.random()
        if roll < 0.70:
            folder = f"src/pkg/sub{index % 45}" + (f"/inner{index % 4}" if index % 3 else "")
            path = repo / folder / f"module_{index}.py"
            size = min(int(rng.lognormvariate(8.0, 1.1)), 150_000)  # median ~3 KB
            content: str | bytes = _module_text(rng, size)
        elif roll < 0.93:
            path = repo / f"tests/group{index % 25}/test_case_{index}.py"
            content = _module_text(rng, min(int(rng.lognormvariate(7.6, 0.9)), 60_000))
        elif roll < 0.98:
            path = repo / f"docs/page_{index}.rst"
            content = _module_text(rng, int(rng.lognormvariate(7.0, 1.0)))
        else:
            path = repo / f"src/pkg/data/blob_{index}.bin"
            content = rng.randbytes(int(rng.lognormvariate(9.0, 1.2)))
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    init(repo)
    commit(repo, "Tree")
    return repo


def _copy_file_range_tree(source: Path, destination: Path) -> None:
    for folder, directories, names in os.walk(source):
        relative = os.path.relpath(folder, source)
        target = destination if relative == "." else destination / relative
        target.mkdir()
        for name in directories:
            if os.path.islink(os.path.join(folder, name)):
                os.symlink(os.readlink(os.path.join(folder, name)), target / name)
        for name in names:
            origin = os.path.join(folder, name)
            st = os.lstat(origin)
            if os.path.islink(origin):
                os.symlink(os.readlink(origin), target / name)
                continue
            with open(origin, "rb") as src, open(target / name, "wb") as dst:
                remaining = st.st_size
                while remaining > 0:
                    copied = os.copy_file_range(src.fileno(), dst.fileno(), remaining)
                    if copied == 0:
                        break
                    remaining -= copied
            os.chmod(target / name, st.st_mode & 0o7777)
            os.utime(target / name, ns=(st.st_atime_ns, st.st_mtime_ns))


def _timed(action: Callable[[], object], cleanup: Callable[[], None]) -> float:
    cleanup()
    start = time.perf_counter()
    action()
    elapsed = time.perf_counter() - start
    cleanup()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repetitions", type=int, default=7)
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where to build (default: a temporary directory; use one on the disk under test)",
    )
    options = parse_args(parser, has_target=True, files=50, repetitions=1)
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="bugbout-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    home = workdir / "home"
    shutil.rmtree(home, ignore_errors=True)  # so that the first checkout is a cold one
    repo = build_repository(workdir, options.files)
    commit = git(repo, "rev-parse", "HEAD")
    hidden = ["tests/group0/test_case_25.py"]
    edited = next(p for p in sorted((repo / "src/pkg").rglob("*.py")))
    relative_edit = edited.relative_to(repo)

    scratch = workdir / "scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    dest = scratch / "copy"

    def clean() -> None:
        shutil.rmtree(dest, ignore_errors=True)
        shutil.rmtree(scratch / "copy.git", ignore_errors=True)

    phases: dict[str, list[float]] = {"prepare": [], "harvest": []}

    def checkout() -> None:
        start = time.perf_counter()
        wc = prepare_working_copy(repo, commit, dest, hidden=hidden, home=home)
        prepared = time.perf_counter()
        target = wc.path / relative_edit
        target.write_text(target.read_text() + "value = 1\n")
        (wc.path / "tests" / "test_regression.py").write_text("def test_it():\n    pass\n")
        edited = time.perf_counter()
        patch = harvest(wc, source_dir="src/pkg")
        phases["prepare"].append(prepared - start)
        phases["harvest"].append(time.perf_counter() - edited)
        assert patch.has_source_change and len(patch.files) == 2, patch.files

    cold = _timed(checkout, clean)
    pristine = pristine_tree(repo, commit, home=home)
    file_count = sum(len(names) for _, _, names in os.walk(pristine))
    size = sum(f.stat().st_size for f in pristine.rglob("*") if f.is_file())

    methods: dict[str, Callable[[], object]] = {
        "prepare + harvest": checkout,
        "cp -r": lambda: subprocess.run(["cp", "-r", str(pristine), str(dest)], check=True),
        "cp --reflink=auto": lambda: subprocess.run(copy_argv(pristine, dest), check=True),
        "shutil.copytree": lambda: shutil.copytree(pristine, dest, symlinks=True),
        "os.copy_file_range": lambda: _copy_file_range_tree(pristine, dest),
    }
    if not sys.platform.startswith("linux"):
        del methods["cp --reflink=auto"], methods["os.copy_file_range"]
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(options.repetitions):
        for name, action in methods.items():
            times[name].append(_timed(action, clean))
    medians = {name: statistics.median(values) for name, values in times.items()}

    print(f"tree: {file_count} files, {size / 1e6:.1f} MB, in {workdir}")
    print(f"cold first checkout (pristine tree + manifest built): {cold * 1000:.0f} ms")
    print(f"median of {options.repetitions} runs, interleaved:")
    for name, value in medians.items():
        spread = f"{min(times[name]) * 1000:.0f}–{max(times[name]) * 1000:.0f}"
        print(f"  {name:22s} {value * 1000:7.1f} ms   (range {spread} ms)")
    for name, values in phases.items():
        median, fastest = statistics.median(values[1:]) * 1000, min(values[1:]) * 1000
        print(f"    of which {name:12s} {median:7.1f} ms   (fastest {fastest:.1f} ms)")
    copiers = {k: v for k, v in medians.items() if k not in ("prepare + harvest", "cp -r")}
    print(f"fastest copy method here: {min(copiers, key=lambda k: copiers[k])}")
    ratio = medians["prepare + harvest"] / medians["cp -r"]
    print(f"prepare + harvest / cp -r = {ratio:.2f} (target ≤ 1.5)")
    if options.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
