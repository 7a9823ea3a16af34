"""Hand-built records of environment tasks, for the env judge's and the report's tests.

Each builder takes only what a test sets; the rest is a plausible default: a task dated
2024-01-01 whose command is `python -m pytest -q`, a declared package pinned at 1.0 that
exists and is not removed, a repair that installed and ran.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bugbout_tui.core.env_models import (
    Advisory,
    AuditFinding,
    Declared,
    EnvDefect,
    EnvSpec,
    Newest,
    Repair,
    RepairStatus,
)
from bugbout_tui.core.models import Attempt, IssueRef, Task, TaskSet

WHEN = datetime(2024, 1, 1, tzinfo=UTC)


def finding(
    name: str,
    pinned: str | None = "1.0",
    *,
    advisories: tuple[str, ...] = (),
    removed: bool = False,
    yanked: bool = False,
    typo_of: str | None = None,
    install_code: bool = False,
    unchecked: str | None = None,
) -> AuditFinding:
    return AuditFinding(
        name=name,
        requirement=name if pinned is None else f"{name}=={pinned}",
        pinned=pinned,
        exists=True,
        removed=removed,
        yanked=yanked,
        advisories=[Advisory(id=each) for each in advisories],
        typo_of=typo_of,
        install_code=install_code,
        unchecked=unchecked,
    )


def declared(name: str, pinned: str | None = "1.0") -> Declared:
    return Declared(
        name=name,
        requirement=name if pinned is None else f"{name}=={pinned}",
        pinned=pinned,
        source="requirements.txt",
    )


def repair(
    task: str,
    contestant: str,
    status: RepairStatus = "resolved",
    *,
    names: dict[str, str | None] | None = None,
    safe: float | None = None,
    f1: float | None = None,
    size: int = 1,
    audit: list[AuditFinding] | None = None,
    newest: list[Newest] | None = None,
    rejected: list[str] | None = None,
) -> Repair:
    """A repair declaring `names` (name → pinned version or None), each audited as
    clean unless `audit` says otherwise."""
    names = {"requests": "2.31.0"} if names is None else names
    return Repair(
        task=task,
        contestant=contestant,
        status=status,
        declared=[declared(name, pin) for name, pin in names.items()],
        audit=audit if audit is not None else [finding(n, p) for n, p in names.items()],
        safe_install=safe,
        f1=f1,
        size=size,
        newest=newest or [],
        rejected_files=rejected or [],
    )


def env_task(
    task_id: str,
    *,
    lite: bool = False,
    security: bool = False,
    defect: EnvDefect = "mined",
) -> Task:
    return Task(
        id=task_id,
        issue=0,
        reference=IssueRef(number=0),
        title=f"Environment of {task_id} | repaired",
        fix_commit="f" * 40,
        base_commit="b" * 40,
        date=WHEN,
        source_files=[],
        test_files=[],
        added_tests=[],
        kind="env",
        env=EnvSpec(
            command=["python", "-m", "pytest", "-q"],
            python="3.11",
            date=WHEN,
            env_files=["requirements.txt"],
            defect=defect,
            security=security,
            lite=lite,
        ),
    )


def taskset(*tasks: Task) -> TaskSet:
    return TaskSet(
        mined_at=WHEN,
        head="h" * 40,
        fingerprint="f",
        issue_source="none",
        examined=0,
        tasks=list(tasks),
    )


def controls(
    task: str,
    *,
    base: RepairStatus = "install-failed",
    gold: RepairStatus = "resolved",
    base_audit: list[AuditFinding] | None = None,
    gold_names: dict[str, str | None] | None = None,
    gold_safe: float | None = 1.0,
    base_newest: list[Newest] | None = None,
) -> dict[str, Repair]:
    """A task's two controls: the files as written (failing) and the known repair."""
    return {
        "base": repair(task, "base", base, names={}, audit=base_audit or [], newest=base_newest),
        "gold": repair(task, "gold", gold, names=gold_names, safe=gold_safe, f1=1.0),
    }


def env_attempt(
    task: str, contestant: str, *, cost: float | None = None, status: str = "finished"
) -> Attempt:
    return Attempt.model_validate(
        {
            "task": task,
            "contestant": contestant,
            "status": status,
            "started_at": WHEN,
            "ended_at": WHEN,
            "seconds": 10.0,
            "cost_usd": cost,
            "logdir": f"/logs/{task}/{contestant}",
        }
    )
