"""What a task's records say about how far its grading can be trusted, in words.

Three facts decide whether a task's score means anything: the environment its tests ran
in (and what its date limit could not govern), its gold control (the maintainers' fix,
scored as a patch is), and the tests the flake ledger quarantined. An environment task
adds what its repair is judged by: its command, its Python, its date and the files its
known repair changed. `bugbout tasks ID` and the TUI's Tasks screen both show them, so
they are worded once, here, as plain strings: each caller makes them inert and styles
them its own way.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from bugbout_tui.core.models import SUITE, Oracle, OutcomeTally, Resolution, Rung, Task
from bugbout_tui.infra.dated_env import RUNNER, RUNNER_CORE
from bugbout_tui.rules.ground_truth import PASSING
from bugbout_tui.rules.score import unreliable_grader

RUNG_TEXT: Mapping[Rung, str] = {
    "dated": "dated: resolved as of the fix's date",
    "relaxed": "relaxed: dated, but the date lifted for the packages that blocked it",
    "tip": "tip: the environment built from the tip's packaging files",
    "none": "none: no environment could be made",
}
"""What each rung of the ladder means."""

CONTROL_RESOLVED = "resolved: the fix passes its own tests here"


def issue_words(task: Task) -> str:
    """`#12`, or `–` for an environment task whose change names no issue."""
    return f"#{task.issue}" if task.issue else "–"


def env_task_rows(task: Task) -> list[tuple[str, str]]:
    """What an environment task is judged by, as (label, words) rows; none for a bug."""
    env = task.env
    if env is None:
        return []
    rows = [
        ("command", shlex.join(env.command)),
        ("python", f"{env.python} (`python` in the command)"),
        ("date", f"{env.date.isoformat()} (nothing uploaded later is installed)"),
        ("env files", ", ".join(env.env_files)),
        ("defect", env.defect),
    ]
    if env.security:
        rows.append(("security", "its issue carries a security label"))
    return rows


def environment_rows(oracle: Oracle, *, brief: bool = False) -> list[tuple[str, str]]:
    """The environment the task's ground truth ran in, as (label, words) rows: its key,
    its rung, what it holds, and what its date limit could not govern.

    `brief` names what it holds in two short rows (the project's own packages, then the
    test runner) instead of every pin, for a view that has a few lines to spare.
    """
    record = oracle.environment
    if record is None:
        if oracle.conditions is None:
            return []
        return [("environment", f"{oracle.conditions.environment} (the project's one)")]
    rows = [("environment", record.key or "none"), ("rung", RUNG_TEXT[record.rung])]
    if record.python:
        rows.append(("python", record.python))
    if record.date is not None:
        rows.append(("date limit", record.date.isoformat()))
    if record.packages:
        rows += holds_rows(record.packages) if brief else [("holds", ", ".join(record.packages))]
    if record.relaxed:
        rows.append(("date lifted for", ", ".join(record.relaxed)))
    if record.runner_later:
        rows.append(("runner from later", ", ".join(record.runner_later)))
    rows.append(("not dated", "; ".join(record.unenforced) if record.unenforced else "nothing"))
    if record.note:
        label = "interpreter" if record.rung in ("dated", "relaxed") else "why"
        rows.append((label, record.note))
    return rows


def holds_rows(packages: Sequence[str], *, shown: int = 6) -> list[tuple[str, str]]:
    """What an environment holds, short: the project's own pins (the first `shown` of
    them), then pytest's pin and how many more the runner brought. The runner is told
    apart by the names the ladder lifts with it (`infra.dated_env`)."""
    runner = [pin for pin in packages if _is_runner(pin)]
    own = [pin for pin in packages if pin not in runner]
    words = ", ".join(own[:shown]) if own else "nothing but the test runner"
    if len(own) > shown:
        words += f" and {len(own) - shown} more"
    rows = [("holds", words)]
    if runner:
        pytest = next((pin for pin in runner if _name(pin) == "pytest"), runner[0])
        others = len(runner) - 1
        rows.append(("test runner", pytest + (f" and {others} more" if others else "")))
    return rows


def _name(pin: str) -> str:
    return pin.split("==", 1)[0].strip().lower().replace("_", "-")


def _is_runner(pin: str) -> bool:
    name = _name(pin)
    return bool(RUNNER.match(name)) or name in RUNNER_CORE


def control_words(control: Resolution) -> str:
    """The gold control's outcome: `resolved`, or its status, that the grader is
    unreliable, and what went wrong (tests broken, tests not passed, the detail)."""
    unreliable = unreliable_grader(control)
    if unreliable is None:
        return CONTROL_RESOLVED
    shown = f"{control.status}; {unreliable}"
    if control.broken:
        shown += f" (breaks {', '.join(control.broken)})"
    failing = [test for test, outcome in control.fail_to_pass.items() if outcome not in PASSING]
    if failing:
        shown += f" (does not pass {', '.join(failing)})"
    if control.detail:
        shown += f": {control.detail}"
    return shown


def tally_words(tally: OutcomeTally) -> str:
    """`passed 1 and failed 1 of 2 runs on fix 1a2b3c4d5`: a flaky test's evidence."""
    trees = [
        f"passed {on.passes} and failed {on.fails} of {on.runs} runs on {on.label}"
        for on in tally.trees.values()
        if on.passes and on.fails
    ]
    return "; ".join(trees)


def quarantined_lines(quarantined: Mapping[str, Mapping[str, OutcomeTally]]) -> list[str]:
    """One line per quarantined test, with its author unless it is the repository's own
    and with its evidence: `tests/t.py::test_x: passed 1 and failed 1 of 2 runs on …`."""
    return [
        f"{test}{'' if author == SUITE else f' ({author})'}: {tally_words(tally)}"
        for author, tests in quarantined.items()
        for test, tally in sorted(tests.items())
    ]
