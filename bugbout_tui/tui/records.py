"""What the results store holds, read in one go for the screens that show results.

Screens never read files while they draw: the app reads a `Records` in a thread and
hands it down. A file that cannot be read becomes a problem line instead of an error,
so one torn record does not hide everything else a run produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from bugbout_tui.core.config import Policy
from bugbout_tui.core.env_models import Repair, RepairSet
from bugbout_tui.core.errors import StoreError
from bugbout_tui.core.models import (
    Attempt,
    Ledger,
    Matrix,
    OracleSet,
    OutcomeTally,
    Resolution,
    ResolutionSet,
    Task,
    TaskSet,
)
from bugbout_tui.core.store import Store
from bugbout_tui.rules.env_judge import EnvVerdict, choose_repair
from bugbout_tui.rules.flakes import matrix_without, quarantined
from bugbout_tui.rules.judge import Verdict, judge_all

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Records:
    """One consistent reading of the store."""

    taskset: TaskSet | None = None
    oracles: OracleSet | None = None
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)
    """Task id → its stored attempts, by contestant name."""
    matrices: dict[str, Matrix] = field(default_factory=dict)
    verdicts: dict[str, dict[Policy, Verdict]] = field(default_factory=dict)
    """Task id → every policy's verdict, judged afresh from the matrix."""
    resolutions: ResolutionSet | None = None
    ledger: Ledger | None = None
    """The flake ledger: every test outcome of the bout, and so the quarantined tests."""
    repairs: RepairSet | None = None
    """Every environment task's repairs and controls, scored (`repairs.json`)."""
    env_verdicts: dict[str, EnvVerdict] = field(default_factory=dict)
    """Environment task id → the env judge's verdict on its repairs, judged afresh: an
    environment task has no matrix and no policy."""
    problems: list[str] = field(default_factory=list)
    """Files that could not be read, each as a sentence naming the file."""

    def task(self, task_id: str) -> Task | None:
        if self.taskset is None:
            return None
        return next((task for task in self.taskset.tasks if task.id == task_id), None)

    @property
    def env_tasks(self) -> list[str]:
        """The environment tasks' ids, in mining order."""
        if self.taskset is None:
            return []
        return [task.id for task in self.taskset.tasks if task.kind == "env"]

    def is_env(self, task_id: str) -> bool:
        """Whether the task is an environment task: its repairs are installed and traced,
        not tested, so screens show them instead of patches, tests and matrices."""
        task = self.task(task_id)
        if task is not None:
            return task.kind == "env"
        return self.repairs is not None and task_id in self.repairs.repairs

    def repair(self, task: str, contestant: str) -> Repair | None:
        """An attempt's repair of an environment task, once scored."""
        return self.task_repairs(task).get(contestant)

    def task_repairs(self, task: str) -> dict[str, Repair]:
        """The task's repairs, scored: contestant → repair."""
        return {} if self.repairs is None else self.repairs.repairs.get(task, {})

    def env_controls(self, task: str) -> dict[str, Repair]:
        """The task's `base` and `gold` controls, as far as they are made."""
        return {} if self.repairs is None else self.repairs.controls.get(task, {})

    def attempt(self, task: str, contestant: str) -> Attempt | None:
        for attempt in self.attempts.get(task, []):
            if attempt.contestant == contestant:
                return attempt
        return None

    def resolution(self, task: str, contestant: str) -> Resolution | None:
        if self.resolutions is None:
            return None
        return self.resolutions.patches.get(task, {}).get(contestant)

    def control(self, task: str) -> Resolution | None:
        """The task's gold control: the maintainers' fix, scored as a patch is."""
        return None if self.resolutions is None else self.resolutions.controls.get(task)

    def quarantined(self, task: str) -> dict[str, dict[str, OutcomeTally]]:
        """author → test → tally, of the task's tests the flake ledger quarantined."""
        return {} if self.ledger is None else self.ledger.quarantined(task)


def load_records(project_dir: Path) -> Records:
    """Read every record of the store beside `project_dir`'s bugbout.toml."""
    store = Store(project_dir)
    unreadable: list[StoreError] = []

    def read(path: Path, model: type[M]) -> M | None:
        try:
            return store.read(path, model)
        except StoreError as exc:
            unreadable.append(exc)
            return None

    attempts = store.attempts(unreadable)
    matrices = store.matrices(unreadable)
    ledger = read(store.ledger_path, Ledger)
    repairs = read(store.repairs_path, RepairSet)
    return Records(
        taskset=read(store.tasks_path, TaskSet),
        oracles=read(store.oracles_path, OracleSet),
        attempts=attempts,
        matrices=matrices,
        verdicts={
            task: dict(judge_all(matrix_without(matrix, quarantined(ledger, task))))
            for task, matrix in matrices.items()
        },
        resolutions=read(store.resolutions_path, ResolutionSet),
        ledger=ledger,
        repairs=repairs,
        env_verdicts={
            task: choose_repair(task, found)
            for task, found in (repairs.repairs.items() if repairs is not None else ())
        },
        problems=[exc.message for exc in unreadable],
    )
