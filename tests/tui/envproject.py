"""The calc project with two Lite environment tasks raced and scored beside its bugs.

No agent runs and nothing is installed: the tasks, the attempts, `repairs.json` and the
install and trace logs are written as the race and the repair scoring would write them,
so every screen has environment records to show.

- `lite-typo-name` declares `reqeusts`, a typo of `requests`: careful repairs it with
  every pin kept (the pick, approved), hasty keeps the typo (uv finds nothing to
  install), slow drops the pin (it installs, and loses its safe-install point), rationed
  also edits the source (rejected). careful ran three trials of it.
- `lite-pin-yanked` (with a security label) pins a yanked urllib3: careful's repair
  pins a version with a published advisory (the pick, refused by the merge gate),
  hasty's installs and its run fails, slow changed no environment file.

Text from agents and packages carries what would be markup or escapes if it were read
as such (`[security]`, `[bold]`, an OSC title sequence), to show it stays text.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from envrecords import WHEN, declared, env_task, finding
from tuiproject import START

from bugbout_tui.core.env_models import (
    AuditFinding,
    Declared,
    EnvInstall,
    EnvTrace,
    Newest,
    Repair,
    RepairSet,
)
from bugbout_tui.core.models import Attempt, TaskSet, Tokens
from bugbout_tui.core.patch import FileChange, Patch
from bugbout_tui.core.store import Store
from bugbout_tui.engine.race import attempt_path

TYPO = "lite-typo-name"
YANKED = "lite-pin-yanked"

UV_NOT_FOUND = (
    "No solution found when resolving dependencies: because reqeusts was not found in "
    "the package registry and you require reqeusts==2.32.0, your requirements are "
    "unsatisfiable."
)
RUN_FAILED = "ModuleNotFoundError: No module named 'urllib3.contrib.emscripten'"

INSTALL_LOG = (
    "Using CPython 3.11.9\n"
    "Resolved 5 packages in 12ms\n"
    "\x1b]0;a title the agent chose\x07Prepared 5 packages in 30ms\n"
    "Installed 5 packages in 4ms\n"
    " + certifi==2023.11.17\n"
    " + charset-normalizer==3.3.2\n"
    " + idna==3.6\n"
    " + requests==2.31.0\n"
    " + urllib3==2.1.0\n"
)
TRACE_LOG = (
    "============================= test session starts ==============================\n"
    "collected 2 items\n"
    "\n"
    "tests/test_fetch.py .. [bold]not markup[/bold]                            [100%]\n"
    "\n"
    "============================== 2 passed in 0.04s ===============================\n"
)
PROMPT = "Repair the environment files only: a clean install and `python -m pytest -q` fail.\n"
REQUESTS_SET = [
    "certifi==2023.11.17",
    "charset-normalizer==3.3.2",
    "idna==3.6",
    "requests==2.31.0",
    "urllib3==2.1.0",
]
USED = ["certifi", "charset-normalizer", "idna", "requests", "urllib3"]
BROUGHT = ["iniconfig", "packaging", "pluggy", "pytest"]
"""What bugbout installed for its test runner beside a resolved repair."""


def _requirements_diff(removed: str, added: str) -> str:
    return (
        "diff --git a/requirements.txt b/requirements.txt\n"
        "--- a/requirements.txt\n+++ b/requirements.txt\n"
        f"@@ -1 +1 @@\n-{removed}\n+{added}\n"
    )


def _attempt(
    task: str,
    contestant: str,
    minute: int,
    *,
    status: str = "finished",
    added: str | None = None,
    source: bool = False,
    cost: float | None = 0.02,
) -> Attempt:
    files: list[FileChange] = []
    other = ""
    source_diff = ""
    if added is not None:
        other = _requirements_diff("reqeusts==2.31.0", added)
        files.append(
            FileChange(
                path="requirements.txt",
                status="modified",
                part="other",
                added_lines=1,
                removed_lines=1,
            )
        )
    if source:
        source_diff = (
            "diff --git a/src/fetch.py b/src/fetch.py\n--- a/src/fetch.py\n+++ b/src/fetch.py\n"
            "@@ -1 +1 @@\n-import requests\n+import urllib.request as requests\n"
        )
        files.append(
            FileChange(
                path="src/fetch.py",
                status="modified",
                part="source",
                added_lines=1,
                removed_lines=1,
            )
        )
    started = START + timedelta(minutes=minute)
    return Attempt(
        task=task,
        contestant=contestant,
        status=status,  # type: ignore[arg-type]
        started_at=started,
        ended_at=started + timedelta(seconds=42),
        seconds=42.0,
        exit_code=0,
        tokens=Tokens(input=9_000, output=800),
        cost_usd=cost,
        summary=f"{contestant}: fixed the [bold]requirements[/bold] only."
        if status == "finished"
        else None,
        patch=Patch(source=source_diff, other=other, files=files),
        logdir="",
    )


def attempts() -> list[Attempt]:
    return [
        _attempt(TYPO, "careful", 20, added="requests[security]==2.31.0"),
        _attempt(TYPO, "hasty", 21, added="reqeusts==2.32.0"),
        _attempt(TYPO, "slow", 20, added="requests"),
        _attempt(TYPO, "rationed", 22, added="requests==2.31.0", source=True),
        _attempt(YANKED, "careful", 23, added="urllib3==1.26.4"),
        _attempt(YANKED, "hasty", 24, added="urllib3==2.1.0"),
        _attempt(YANKED, "slow", 25),
    ]


def _logs(store: Store, task: str, label: str, kind: str = "repairs") -> tuple[str, str]:
    """Write a repair's install and trace logs; their paths as records name them."""
    folder = store.root / "logs" / "env" / task / kind / label
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "install.log").write_text(INSTALL_LOG, encoding="utf-8")
    (folder / "trace.log").write_text(TRACE_LOG, encoding="utf-8")
    relative = folder.relative_to(store.root).as_posix()
    return f"{relative}/install.log", f"{relative}/trace.log"


def _resolved(
    store: Store,
    task: str,
    contestant: str,
    items: list[Declared],
    audit: list[AuditFinding],
    *,
    kind: str = "repairs",
    safe: float,
    newest: list[Newest] | None = None,
) -> Repair:
    install_log, trace_log = _logs(store, task, contestant, kind)
    return Repair(
        task=task,
        contestant=contestant,
        status="resolved",
        changed=["requirements.txt"],
        declared=items,
        install=EnvInstall(
            ok=True,
            exit_code=0,
            seconds=1.8,
            log=install_log,
            installed=REQUESTS_SET,
            brought=BROUGHT,
        ),
        trace=EnvTrace(ok=True, exit_code=0, seconds=0.9, log=trace_log, used=USED),
        audit=audit,
        newest=newest or [],
        precision=1.0,
        recall=round(len(items) / len(USED), 2),
        f1=round(2 * len(items) / (len(items) + len(USED)), 2),
        safe_install=safe,
        size=2,
        network="not confined: the agent's network use was not logged",
    )


def _requests_declared() -> Declared:
    return Declared(
        name="requests",
        requirement="requests[security]==2.31.0",
        pinned="2.31.0",
        source="requirements.txt",
    )


def repairs(store: Store) -> RepairSet:
    typo_base = AuditFinding(
        name="reqeusts",
        requirement="reqeusts==2.31.0",
        pinned="2.31.0",
        exists=False,
        removed=True,
        typo_of="requests",
    )
    careful = _resolved(
        store, TYPO, "careful", [_requests_declared()], [finding("requests", "2.31.0")], safe=1.0
    )
    vulnerable = finding("urllib3", "1.26.4", advisories=("PYSEC-2023-212",))
    newest = Newest(
        name="urllib3",
        declared="1.26.4",
        newest_today="2.2.1",
        newest_at_date="2.1.0",
        advisories={"1.26.4": ["PYSEC-2023-212"]},
    )
    hasty_install = EnvInstall(
        ok=False, exit_code=1, seconds=0.4, detail=UV_NOT_FOUND, log=_logs(store, TYPO, "hasty")[0]
    )
    install_log, trace_log = _logs(store, YANKED, "hasty")
    return RepairSet(
        repairs={
            TYPO: {
                "careful": careful,
                "careful#2": careful.model_copy(update={"contestant": "careful#2"}),
                "careful#3": careful.model_copy(update={"contestant": "careful#3"}),
                "hasty": Repair(
                    task=TYPO,
                    contestant="hasty",
                    status="install-failed",
                    changed=["requirements.txt"],
                    declared=[declared("reqeusts", "2.32.0")],
                    install=hasty_install,
                    audit=[
                        typo_base.model_copy(
                            update={"requirement": "reqeusts==2.32.0", "pinned": "2.32.0"}
                        )
                    ],
                    safe_install=0.0,
                    size=2,
                ),
                "slow": _resolved(
                    store,
                    TYPO,
                    "slow",
                    [declared("requests", None)],
                    [finding("requests", None)],
                    safe=0.0,
                ),
                "rationed": Repair(
                    task=TYPO,
                    contestant="rationed",
                    status="rejected",
                    rejected_files=["src/fetch.py"],
                    changed=["requirements.txt"],
                    size=2,
                ),
            },
            YANKED: {
                "careful": _resolved(
                    store,
                    YANKED,
                    "careful",
                    [declared("urllib3", "1.26.4")],
                    [vulnerable],
                    safe=0.0,
                    newest=[newest],
                ),
                "hasty": Repair(
                    task=YANKED,
                    contestant="hasty",
                    status="run-failed",
                    changed=["requirements.txt"],
                    declared=[declared("urllib3", "2.1.0")],
                    install=EnvInstall(
                        ok=True,
                        exit_code=0,
                        seconds=1.1,
                        log=install_log,
                        installed=["urllib3==2.1.0"],
                    ),
                    trace=EnvTrace(
                        ok=False,
                        exit_code=1,
                        seconds=0.7,
                        detail=RUN_FAILED,
                        log=trace_log,
                        used=["urllib3"],
                    ),
                    audit=[finding("urllib3", "2.1.0")],
                    precision=1.0,
                    recall=1.0,
                    f1=1.0,
                    safe_install=1.0,
                    size=2,
                ),
                "slow": Repair(task=YANKED, contestant="slow", status="no-repair"),
            },
        },
        controls={
            TYPO: {
                "base": Repair(
                    task=TYPO,
                    contestant="base",
                    status="install-failed",
                    declared=[declared("reqeusts", "2.31.0")],
                    audit=[typo_base],
                    install=EnvInstall(
                        ok=False,
                        exit_code=1,
                        seconds=0.3,
                        detail=UV_NOT_FOUND.replace("2.32.0", "2.31.0"),
                    ),
                ),
                "gold": _resolved(
                    store,
                    TYPO,
                    "gold",
                    [declared("requests", "2.31.0")],
                    [finding("requests", "2.31.0")],
                    kind="controls",
                    safe=1.0,
                ),
            },
            YANKED: {
                "base": Repair(
                    task=YANKED,
                    contestant="base",
                    status="install-failed",
                    declared=[declared("urllib3", "2.0.0")],
                    audit=[finding("urllib3", "2.0.0", removed=True, yanked=True)],
                    install=EnvInstall(
                        ok=False, exit_code=1, seconds=0.2, detail="urllib3==2.0.0 is yanked"
                    ),
                    newest=[newest.model_copy(update={"declared": "2.0.0", "advisories": {}})],
                ),
                "gold": _resolved(
                    store,
                    YANKED,
                    "gold",
                    [declared("urllib3", "2.1.0")],
                    [finding("urllib3", "2.1.0")],
                    kind="controls",
                    safe=1.0,
                ),
            },
        },
    )


def add_env_tasks(root: Path) -> Path:
    """Add the two Lite tasks, their attempts, repairs and logs to calc's store."""
    store = Store(root)
    taskset = store.read(store.tasks_path, TaskSet)
    assert taskset is not None
    typo = env_task(TYPO, lite=True, defect="typo-name").model_copy(
        update={"title": "A typo in a requirement's name", "date": WHEN}
    )
    yanked = env_task(YANKED, lite=True, security=True, defect="pin-yanked").model_copy(
        update={"title": "An exact pin of a yanked release"}
    )
    taskset.tasks += [typo, yanked]
    store.write(store.tasks_path, taskset)
    for attempt in attempts():
        logdir = root / "agent-logs" / attempt.task / attempt.contestant
        logdir.mkdir(parents=True)
        (logdir / "prompt.md").write_text(PROMPT, encoding="utf-8")
        (logdir / "stdout.log").write_text("reading requirements.txt\n", encoding="utf-8")
        attempt = attempt.model_copy(update={"logdir": str(logdir)})
        store.write(attempt_path(store.attempts_dir, attempt.task, attempt.contestant), attempt)
    store.write(store.repairs_path, repairs(store))
    return root
