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
from bugbout_tui.core.errors import StoreError
from bugbout_tui.core.models import (
    Attempt,
    Ledger,
    Matrix,
    OracleSet,
    OutcomeTally,
    Resolution,
    ResolutionSet,
    TaskSet,
)
from bugbout_tui.core.store import Store
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
    problems: list[str] = field(default_factory=list)
    """Files that could not be read, each as a sentence naming the file."""

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
        problems=[exc.message for exc in unreadable],
    )
