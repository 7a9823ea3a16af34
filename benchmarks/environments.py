"""What dated environments cost: the environments of N dated tasks, cold and warm, against
one plain `uv pip install` of the same sets.

The benchmark serves its own package index on 127.0.0.1 (JSON simple API with upload
times), publishing `--packages` small packages, each with a version every half year from
2019 to 2024, and pytest repacked from this interpreter. It builds a history of `--tasks`
fixes, one a month from 2019 on, each declaring those packages in its requirements.txt
(a lower bound moves up now and then, as projects do), and asks bugbout for every task's
environment:

- cold: a fresh bugbout home and a fresh uv cache;
- warm: the same again, as a second bout does (resolutions kept, environments built);
- rebuilt: a fresh bugbout home with uv's cache warm (environments deleted, say);

against the floor: for each distinct resolved set, one plain `uv venv` + `uv pip
install` of its pins, with a fresh uv cache (cold) and with uv's cache warm. It prints
the times, the environments built for the tasks, and the ratios.

    python benchmarks/environments.py [--tasks 24] [--packages 6] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from benchkit.gitrepo import commit, init
from benchkit.options import parse_args
from benchkit.package_index import PackageIndex, build_wheel

from bugbout_tui.core.config import ProjectConfig
from bugbout_tui.core.models import IssueRef, Task
from bugbout_tui.engine.environments import Environments
from bugbout_tui.infra.env import find_uv


def publish(index: PackageIndex, wheels: Path, packages: int) -> list[str]:
    """`packages` packages with a version every half year, 2019-2024; their names."""
    names = [f"benchdep{n}" for n in range(packages)]
    for name in names:
        for step in range(12):
            year, month = 2019 + step // 2, 1 + 6 * (step % 2)
            wheel = build_wheel(
                wheels, name, f"{step + 1}.0", {f"{name}/__init__.py": f"VERSION = {step + 1}\n"}
            )
            index.publish(wheel, uploaded=datetime(year, month, 1, tzinfo=UTC))
    index.publish_runner(wheels)
    return names


def history(repo: Path, tasks: int, names: list[str]) -> list[Task]:
    """A fix a month from 2019, each base declaring `names` (bounds moving now and then)."""
    init(repo)
    base = commit(repo, "Initial version", {"pkg/__init__.py": "X = 0\n"})
    found: list[Task] = []
    for number in range(1, tasks + 1):
        floor = 1 + number // 6
        requirements = "".join(f"{name}>={floor}.0\n" for name in names[: 1 + number % 3])
        requirements += "".join(f"{name}\n" for name in names[1 + number % 3 :])
        requirements += f"# revision {number}\n"  # a new commit, perhaps the same resolution
        base = commit(repo, f"Declare requirements {number}", {"requirements.txt": requirements})
        fix = commit(
            repo,
            f"Fix bug {number} (#{number})",
            {f"pkg/mod{number}.py": "Y = 1\n", f"tests/test_{number}.py": "def test_y(): pass\n"},
        )
        found.append(
            Task(
                id=f"pkg-{number}",
                issue=number,
                reference=IssueRef(number=number),
                title=f"Fix bug {number}",
                fix_commit=fix,
                base_commit=base,
                date=datetime(2019 + (number - 1) // 12, 1 + (number - 1) % 12, 15, tzinfo=UTC),
                source_files=[f"pkg/mod{number}.py"],
                test_files=[f"tests/test_{number}.py"],
                added_tests=["test_y"],
            )
        )
    return found


async def environments_for(repo: Path, tasks: list[Task], home: Path) -> tuple[float, Environments]:
    service = Environments(repo, ProjectConfig(source="pkg"), home=home)
    started = time.monotonic()
    await asyncio.gather(*(service.for_task(task) for task in tasks))
    return time.monotonic() - started, service


def plain_installs(sets: list[list[str]], python: str, scratch: Path) -> float:
    """One `uv venv` + `uv pip install` of each set, the floor a dated build stands on."""
    uv_bin = str(find_uv())
    scratch.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    for number, pins in enumerate(sets):
        venv = scratch / f"plain-{number}"
        pinned = scratch / f"plain-{number}.txt"
        pinned.write_text("\n".join(pins) + "\n")
        for args in (
            ["venv", "--no-project", "--quiet", "--python", python, str(venv)],
            ["pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
             "--no-deps", "-r", str(pinned)],
        ):  # fmt: skip
            subprocess.run([uv_bin, *args], check=True, stdin=subprocess.DEVNULL)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--packages", type=int, default=6)
    parser.add_argument("--workdir", type=Path, default=None)
    options = parse_args(parser, has_target=False, tasks=4, packages=2)
    scratch = Path(options.workdir or tempfile.mkdtemp(prefix="bench-envs-"))
    os.environ["UV_PYTHON_DOWNLOADS"] = "never"
    os.environ["BUGBOUT_HOME"] = str(scratch / "trees")  # pristine trees, not the user's
    for name in ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_FIND_LINKS"):
        os.environ.pop(name, None)
    with PackageIndex() as index:
        names = publish(index, scratch / "wheels", options.packages)
        os.environ["UV_DEFAULT_INDEX"] = index.url
        tasks = history(scratch / "repo", options.tasks, names)
        repo = scratch / "repo"

        os.environ["UV_CACHE_DIR"] = str(scratch / "uv-cache-1")
        cold, service = asyncio.run(environments_for(repo, tasks, scratch / "home-1"))
        warm, _ = asyncio.run(environments_for(repo, tasks, scratch / "home-1"))
        rebuilt, _ = asyncio.run(environments_for(repo, tasks, scratch / "home-2"))
        records = [service.record(task.id) for task in tasks]
        sets = {tuple(r.packages): r.key for r in records if r is not None and r.key}
        # The interpreter bugbout chose (an environment's python links to it): a version
        # alone could name a shim that cannot run it.
        built = next(iter(sets.values()), None)
        chosen = (service.envs / built / "bin" / "python").resolve() if built else None
        python = str(chosen or sys.executable)

        os.environ["UV_CACHE_DIR"] = str(scratch / "uv-cache-2")
        plain_cold = plain_installs([list(s) for s in sets], python, scratch / "plain-cold")
        shutil.rmtree(scratch / "plain-cold")
        plain_warm = plain_installs([list(s) for s in sets], python, scratch / "plain-warm")
    rungs = sorted({r.rung for r in records if r is not None})
    print(f"{len(tasks)} dated tasks, {options.packages} packages each")
    print(f"  environments: {len(service.built.keys)} distinct, {service.built.builds} built; "
          f"rungs: {', '.join(rungs)}")  # fmt: skip
    print(f"  bugbout cold (no home, no uv cache):   {cold:7.2f} s")
    print(f"  bugbout warm (a second bout):          {warm:7.2f} s")
    print(f"  bugbout rebuilt (no home, uv cache):   {rebuilt:7.2f} s")
    print(f"  plain uv, {len(sets)} sets, cold cache:       {plain_cold:7.2f} s")
    print(f"  plain uv, {len(sets)} sets, warm cache:       {plain_warm:7.2f} s")
    print(f"  ratio cold / plain cold:    {cold / plain_cold:6.2f}")
    print(f"  ratio rebuilt / plain warm: {rebuilt / plain_warm:6.2f}")
    print(f"  ratio warm / plain warm:    {warm / plain_warm:6.2f}")
    if options.workdir is None:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
