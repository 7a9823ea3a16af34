"""A store that cannot be written: read-only, on a full disk, or deleted during a run.

Every time: one message naming the file and what to do, exit 1, no traceback, no
temporary file left behind, every record written before exactly as it was, and the
next run (once the cause is gone) carries on from there.

The failures are real. Root ignores file modes, so a read-only store is a read-only
bind mount; a full disk is a tmpfs of a few pages, filled up. Both are made with
bubblewrap around the real `bugbout` command (the store's contents are copied into the
tmpfs first, and out again afterwards, since the mount goes with the sandbox). A full
journal is `/dev/full`, which fails every write with ENOSPC.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from racekit import (
    alive,
    attempt,
    contestant,
    copy_project,
    edit_agent,
    lock_is_free,
    race,
    script,
    starts,
)

from bugbout_tui.core.errors import StoreError
from bugbout_tui.core.events import (
    AttemptFinished,
    AttemptStarted,
    BaseEvent,
    BoutFinished,
    parse_event,
)
from bugbout_tui.core.store import store_error
from bugbout_tui.demo.project import prepare_demo
from bugbout_tui.engine.bout import Bout
from bugbout_tui.engine.project import Project

pytestmark = pytest.mark.slow

PAGE = 4096


@pytest.fixture(scope="session")
def mounts(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Skip, saying why, where bubblewrap cannot make the mounts these tests need."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed")
    probe = tmp_path_factory.mktemp("probe")
    mount = ["--size", str(PAGE), "--tmpfs", str(probe), "--ro-bind", str(probe), str(probe)]
    tried = subprocess.run(
        [bwrap, "--bind", "/", "/", "--dev", "/dev", *mount, "true"],
        capture_output=True,
        text=True,
    )
    if tried.returncode != 0:
        pytest.skip(f"bubblewrap cannot mount a tmpfs here: {tried.stderr.strip()}")


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str


def environment(home: Path) -> dict[str, str]:
    return {"BUGBOUT_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home)}


def bugbout(project: Path, home: Path, *args: str, mounts: tuple[str, ...] = ()) -> Ran:
    """The real command in `project`, in a sandbox with `mounts` when any are given."""
    command = [sys.executable, "-m", "bugbout_tui", *args]
    if mounts:
        command = ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *mounts]
        command += ["--", sys.executable, "-m", "bugbout_tui", *args]
    done = subprocess.run(
        command, cwd=project, capture_output=True, text=True, env=environment(home), timeout=300
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def on_small_disk(
    project: Path, home: Path, *args: str, contents: Path, out: Path, free_pages: int | None
) -> Ran:
    """`bugbout` with the store on a tmpfs holding `contents`, then `free_pages` pages
    left free (None: plenty); the store as the run left it is copied to `out`."""
    store = project / ".bugbout"
    shutil.rmtree(store, ignore_errors=True)
    store.mkdir()
    out.mkdir(parents=True)
    used = sum(p.stat().st_size // PAGE + 1 for p in contents.rglob("*") if p.is_file())
    size = (used + 64) * PAGE if free_pages is not None else 64 * 1024 * 1024
    fill = ""
    if free_pages is not None:  # keep `free_pages` aside, fill the rest, give them back
        fill = (
            f"head -c {free_pages * PAGE} /dev/zero > .bugbout/.reserve && "
            "{ cat /dev/zero > .bugbout/.fill 2>/dev/null; rm .bugbout/.reserve; } && "
        )
    q = shlex.quote
    line = (
        f"cp -a {q(str(contents))}/. .bugbout/ && {fill}"
        f"{q(sys.executable)} -m bugbout_tui {' '.join(map(q, args))} "
        f"> {q(str(out / 'stdout'))} 2> {q(str(out / 'stderr'))}; "
        f"echo $? > {q(str(out / 'code'))}; rm -f .bugbout/.fill; "
        f"cp -a .bugbout/. {q(str(out / 'store'))}/"
    )
    sandbox = ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    sandbox += ["--size", str(size), "--tmpfs", str(store), "--", "sh", "-c", line]
    done = subprocess.run(
        sandbox, cwd=project, capture_output=True, text=True, env=environment(home), timeout=300
    )
    assert done.returncode == 0, done.stderr
    return Ran(
        int((out / "code").read_text()), (out / "stdout").read_text(), (out / "stderr").read_text()
    )


def files(root: Path) -> dict[str, bytes]:
    """Every file under `root`, by relative path."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def temporary_files(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*.tmp")]


def assert_one_clean_message(ran: Ran, *expected: str) -> None:
    assert ran.code == 1, (ran.stdout, ran.stderr)
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.stderr.count("error:") == 1, ran.stderr
    for text in expected:
        assert text in ran.stderr, ran.stderr


def journal(store: Path) -> list[BaseEvent]:
    lines = (store / "events.jsonl").read_text().splitlines()
    return [parse_event(line) for line in lines if line]


def small_agent(state: Path) -> str:
    """A contestant that makes a one-line fix, noting each start in `state`."""
    return edit_agent("small", state, quota="one")


def bulky_agent() -> str:
    """A contestant whose patch (300 KB of new source) makes a record larger than the
    room left on the small disk; it runs after `small`, in the same lane."""
    write = "head -c 300000 /dev/zero | tr '\\0' x > {workdir}/src/calc/bulk.py"
    return contestant("bulky", ["/bin/sh", "-c", write], quota="one")


def test_a_read_only_store_stops_every_command_with_one_message(
    mounts: None, project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = copy_project(
        project_template, tmp_path / "proj", tasks=["calc-1"], extra=small_agent(state)
    )
    home = tmp_path / "home"
    store = project / ".bugbout"
    assert bugbout(project, home, "report").code == 0  # a report, verdicts: every kind of file
    before = files(store)
    read_only = ("--ro-bind", str(store), str(store))
    for args in (
        ["run"],
        ["run", "--until", "race"],
        ["report"],
        ["report", "--format", "markdown"],
        ["report", "--format", "json"],
        ["tasks"],
    ):
        ran = bugbout(project, home, *args, mounts=read_only)
        assert_one_clean_message(ran, "cannot write .bugbout/", "read-only", "make it writable")
        assert ran.stdout == "", args
        assert files(store) == before, args
    assert not starts(state / "count")


def test_a_read_only_project_cannot_get_a_store_and_says_so(
    mounts: None, project_template: Path, tmp_path: Path
) -> None:
    project = copy_project(project_template, tmp_path / "proj", tasks=["calc-1"])
    shutil.rmtree(project / ".bugbout")
    ran = bugbout(
        project,
        tmp_path / "home",
        "run",
        "--until",
        "ground-truth",
        mounts=("--ro-bind", str(project), str(project)),
    )
    assert_one_clean_message(
        ran, "cannot write .bugbout: its file system is read-only.", f"needs {project} to be"
    )
    assert not (project / ".bugbout").exists()


def test_the_demo_says_when_it_cannot_be_written_and_leaves_nothing_half_built(
    mounts: None, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    target = tmp_path / "demo"
    target.mkdir()
    read_only = ("--ro-bind", str(target), str(target))
    ran = bugbout(tmp_path, home, "demo", str(target), mounts=read_only)
    assert_one_clean_message(ran, f"cannot write the demo in {target}: Read-only file system")
    assert list(target.iterdir()) == []

    demo, _ = prepare_demo(target)  # a demo, built: now only its store is read-only
    store = demo.root / ".bugbout"
    store.mkdir()
    ran = bugbout(tmp_path, home, "demo", str(target), mounts=("--ro-bind", str(store), str(store)))
    assert_one_clean_message(ran, "cannot write demo/.bugbout/.gitignore: its file system is")
    assert list(store.iterdir()) == []


def test_a_full_disk_at_the_lock_stops_before_anything_and_the_next_run_carries_on(
    mounts: None, project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = copy_project(
        project_template, tmp_path / "proj", tasks=["calc-1"], extra=small_agent(state)
    )
    home = tmp_path / "home"
    earlier = tmp_path / "earlier"
    shutil.copytree(project / ".bugbout", earlier)
    first = tmp_path / "first"
    ran = on_small_disk(
        project, home, "run", "--until", "race", contents=earlier, out=first, free_pages=0
    )
    assert_one_clean_message(
        ran, "cannot write .bugbout/lock: no space is left on its device.", "Free some space"
    )
    after = files(first / "store")
    assert {name: after[name] for name in files(earlier)} == files(earlier)
    assert set(after) - set(files(earlier)) == {"lock"}
    assert not starts(state / "count")

    again = on_small_disk(
        project, home, "run", "--until", "race", contents=first / "store",
        out=tmp_path / "again", free_pages=None,
    )  # fmt: skip
    assert again.code == 0, again.stderr
    assert (
        json.loads(files(tmp_path / "again" / "store")["attempts/calc-1/small.json"])["status"]
        == "finished"
    )


def test_a_full_disk_mid_race_keeps_the_finished_records_and_the_next_run_does_the_rest(
    mounts: None, project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1"],
        extra=small_agent(state) + bulky_agent(),
    )
    home = tmp_path / "home"
    earlier = tmp_path / "earlier"
    shutil.copytree(project / ".bugbout", earlier)
    first = tmp_path / "first"
    ran = on_small_disk(
        project, home, "run", "--until", "race", contents=earlier, out=first, free_pages=48
    )
    assert_one_clean_message(
        ran, "cannot write .bugbout/attempts/calc-1/bulky.json: no space is left on its device."
    )
    stored = first / "store"
    assert not temporary_files(stored)
    after = files(stored)
    assert {name: after[name] for name in files(earlier)} == files(earlier)
    assert json.loads(after["attempts/calc-1/small.json"])["status"] == "finished"
    assert "attempts/calc-1/bulky.json" not in after
    ending = journal(stored)[-1]
    assert isinstance(ending, BoutFinished) and ending.outcome == "failed"
    assert "bulky.json" in (ending.message or "")

    again = tmp_path / "again"
    rerun = on_small_disk(
        project, home, "run", "--until", "race", contents=stored, out=again, free_pages=None
    )
    assert rerun.code == 0, rerun.stderr
    done = files(again / "store")
    assert done["attempts/calc-1/small.json"] == after["attempts/calc-1/small.json"]
    assert json.loads(done["attempts/calc-1/bulky.json"])["status"] == "finished"
    assert starts(state / "count") == [("calc-1", "small")]  # finished work is not redone


def test_a_full_disk_at_the_report_keeps_the_last_report_whole(
    mounts: None, project_template: Path, tmp_path: Path
) -> None:
    project = copy_project(project_template, tmp_path / "proj", tasks=["calc-1"])
    home = tmp_path / "home"
    assert bugbout(project, home, "report").code == 0
    earlier = tmp_path / "earlier"
    shutil.copytree(project / ".bugbout", earlier)
    # room for the verdicts the report command stores first, and not a page more
    verdicts = earlier / "verdicts.json"
    pages = -(-verdicts.stat().st_size // PAGE)
    verdicts.unlink()
    first = tmp_path / "first"
    ran = on_small_disk(
        project, home, "report", "--format", "markdown",
        contents=earlier, out=first, free_pages=pages,
    )  # fmt: skip
    assert_one_clean_message(ran, "cannot write .bugbout/report.md: no space is left")
    assert ran.stdout == ""
    stored = first / "store"
    assert not temporary_files(stored)
    after = files(stored)
    assert {name: after[name] for name in files(earlier)} == files(earlier)

    again = tmp_path / "again"
    rerun = on_small_disk(
        project, home, "report", "--format", "markdown",
        contents=stored, out=again, free_pages=None,
    )  # fmt: skip
    assert rerun.code == 0, rerun.stderr
    assert files(again / "store")["report.md"].decode() == rerun.stdout


def test_a_journal_that_cannot_be_written_stops_the_run_with_its_name(
    project_template: Path, tmp_path: Path, state: Path
) -> None:
    project = copy_project(
        project_template, tmp_path / "proj", tasks=["calc-1"], extra=small_agent(state)
    )
    store = project / ".bugbout"
    before = files(store)
    (store / "events.jsonl").symlink_to("/dev/full")  # every write: ENOSPC
    ran = bugbout(project, tmp_path / "home", "run", "--until", "race")
    assert_one_clean_message(
        ran, "cannot write .bugbout/events.jsonl: no space is left on its device."
    )
    assert {name: data for name, data in files(store).items() if name in before} == before
    assert not starts(state / "count")
    assert lock_is_free(store)


def test_a_store_deleted_during_the_race_is_made_again_and_kept_locked(
    project_template: Path, tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1", "calc-2"],
        extra=small_agent(state),
    )
    store = project / ".bugbout"
    bout = Bout(Project.load(project))
    finished: list[str] = []
    locked_after_the_deletion: list[bool] = []

    def on_event(event: BaseEvent) -> None:
        if not isinstance(event, AttemptFinished):
            return
        finished.append(event.attempt.split("/")[0])
        if len(finished) == 1:
            shutil.rmtree(store)  # a user cleaning up, mid-run
        else:
            locked_after_the_deletion.append(not lock_is_free(store))

    bout.subscribe(on_event)
    bout.run(until="race")

    lost, kept = finished
    assert locked_after_the_deletion == [True]  # no second run could have started meanwhile
    assert (store / ".gitignore").is_file()
    assert attempt(project, kept, "small").status == "finished"
    assert not (store / "attempts" / lost).exists()
    # the next run mines again and races only what the deletion lost
    race(project)
    assert attempt(project, lost, "small").status == "finished"
    assert sorted(starts(state / "count")) == sorted(
        [(lost, "small"), (lost, "small"), (kept, "small")]
    )


def test_the_python_api_raises_the_store_error_and_ends_the_agents_in_flight(
    project_template: Path, tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    token = f"bugbout-store-failure-{tmp_path.name}"
    held = script(
        "edit", "--count", str(state / "count"), "--hold", str(state / "never"),
        "--token", token, "{workdir}",
    )  # fmt: skip
    project = copy_project(
        project_template,
        tmp_path / "proj",
        tasks=["calc-1"],
        extra=small_agent(state) + contestant("held", held, quota="other", state_dirs=[str(state)]),
    )
    store = project / ".bugbout"
    record = store / "attempts" / "calc-1" / "small.json"
    bout = Bout(Project.load(project))
    started: list[str] = []

    def on_event(event: BaseEvent) -> None:
        if isinstance(event, AttemptStarted):
            started.append(event.attempt)
            if event.attempt == "calc-1/small":
                record.mkdir(parents=True)  # something in the way of its record

    bout.subscribe(on_event)
    with pytest.raises(StoreError) as raised:
        bout.run(until="race")

    assert str(record) in raised.value.message and "Is a directory" in raised.value.message
    assert sorted(started) == ["calc-1/held", "calc-1/small"]
    assert not alive(token)  # the agent still at work when the store failed was ended
    assert not (store / "attempts" / "calc-1" / "held.json").exists()
    assert not temporary_files(store)
    assert lock_is_free(store)
    ending = journal(store)[-1]
    assert isinstance(ending, BoutFinished) and ending.outcome == "failed"


@pytest.mark.parametrize(
    ("code", "why", "advice"),
    [
        (errno.ENOSPC, "no space is left on its device", "Free some space"),
        (errno.EDQUOT, "the disk quota is used up", "Free some space"),
        (errno.EROFS, "its file system is read-only", "make it writable"),
        (errno.EACCES, "permission denied", "make it writable"),
        (errno.EIO, "Input/output error", "fix the cause and run again"),
    ],
)
def test_each_cause_says_why_and_what_to_do(
    code: int, why: str, advice: str, tmp_path: Path
) -> None:
    path = tmp_path / ".bugbout" / "matrices" / "calc-1.json"
    error = store_error(OSError(code, os.strerror(code)), path)
    assert error.message == f"cannot write {path}: {why}."
    assert error.hint is not None and advice in error.hint
    if "writable" in advice:
        assert f"results in {tmp_path / '.bugbout'}:" in error.hint
