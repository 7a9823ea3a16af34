"""`bugbout tasks`: the bugs (and environment repairs) the history can replay, and why
every other change was left out.

Titles come from commit messages, issue text from issues, file and test names from the
repository: all are shown as `Text` made inert, never as markup or as controls. `--json`
needs nothing more: `json.dumps` spells every control as an escape.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bugbout_tui.cli.output import stderr, stdout
from bugbout_tui.core import look
from bugbout_tui.core.config import Config
from bugbout_tui.core.env_models import Repair, RepairSet
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.models import (
    Ledger,
    Oracle,
    OracleSet,
    OutcomeTally,
    Reason,
    Resolution,
    ResolutionSet,
    Task,
    TaskSet,
)
from bugbout_tui.core.text import inert, inert_line
from bugbout_tui.engine.agent_run import test_command
from bugbout_tui.engine.env_runs import base_paths
from bugbout_tui.engine.env_sources import EnvSources, is_env
from bugbout_tui.engine.environments import Environments, settled_pythons
from bugbout_tui.engine.ground_truth import log_names
from bugbout_tui.engine.mine import mine_tasks
from bugbout_tui.engine.project import Project
from bugbout_tui.engine.testing import tests_dir_at
from bugbout_tui.infra.git import open_repository
from bugbout_tui.infra.trees import pristine_tree
from bugbout_tui.report.fitting import Column, FittedTable, PathText
from bugbout_tui.rules.env_repairs import (
    CONTROLS,
    control_problem,
    failing_log,
    failure_tail,
)
from bugbout_tui.rules.prompts import Role, render_env_prompt, render_prompt
from bugbout_tui.rules.score import unreliable_grader
from bugbout_tui.rules.task_facts import (
    control_words,
    env_task_rows,
    environment_rows,
    issue_words,
    quarantined_lines,
)

REASON_TEXT = {
    Reason.NOT_A_FIX: "the title does not read like a bug fix",
    Reason.NOT_A_BUG: "its title names only the issue it closes, and that issue is no bug",
    Reason.ISSUE_UNREADABLE: "being a fix rests on an issue that could not be read",
    Reason.NO_ISSUE: "names no issue or pull request",
    Reason.TOO_MANY_SOURCE_FILES: "touches more source files than max-source-files",
    Reason.NO_SOURCE_CHANGE: "changes no Python file in the package",
    Reason.NO_TEST_ADDED: "adds no test function",
    Reason.NO_PROBLEM_TEXT: "its text describes only the change made",
    Reason.NOT_ENV_ONLY: "changes files besides the environment files",
    Reason.ENV_MERGE: "environment files alone, merged from a branch rather than one change",
    Reason.ENV_REVERT: "environment files alone, undoing an earlier change",
    Reason.ENV_VERSION_ONLY: "environment files alone, only the project's own version",
    Reason.ENV_LOCK_ONLY: "environment files alone, only lock files, which no install reads",
    Reason.ENV_NOT_DEPENDENCIES: "environment files alone, none of what they install",
    Reason.DUPLICATE_ISSUE: "a newer change fixed the same issue",
    Reason.BEFORE_SINCE: "older than [tasks] since",
    Reason.OVER_LIMIT: "beyond [tasks] limit",
}


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "tasks",
        help="list the bugs mined from history",
        description="Mine the history (or reuse the stored result) and list the tasks, "
        "with the issue text each will be given and the funnel of changes left out.",
    )
    parser.add_argument("task", nargs="?", metavar="ID", help="show one task in full")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--refresh", action="store_true", help="mine again even if nothing changed")
    parser.add_argument(
        "--show-prompt",
        action="store_true",
        help="print the prompt the agents get for task ID (builds the test environment once)",
    )
    parser.add_argument(
        "--role",
        choices=("contestant", "reproduce", "specify"),
        default="contestant",
        help="with --show-prompt: a contestant's prompt, or an examiner's by assignment",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    project = Project.load(args.project)
    with project.store.lock():
        if args.json:
            taskset = mine_tasks(project, refresh=args.refresh)
        else:
            with stderr.status(Text("mining history…")) as status:
                taskset = mine_tasks(
                    project,
                    refresh=args.refresh,
                    on_lookup=lambda done, total: status.update(
                        Text(f"reading issues… {done}/{total}")
                    ),
                )
    for line in retry_lines(taskset):
        stderr.print(Text(line, style="yellow"), soft_wrap=True)
    oracles = project.store.read(project.store.oracles_path, OracleSet) or OracleSet()
    repairs = project.store.read(project.store.repairs_path, RepairSet) or RepairSet()
    if args.show_prompt:
        if not args.task:
            raise UsageError("--show-prompt needs a task id: bugbout tasks ID --show-prompt")
        print(inert(asyncio.run(prompt_for(project, _find(taskset, args.task), args.role))))
        return 0
    if args.task:
        task = _find(taskset, args.task)
        oracle = oracles.oracles.get(task.id)
        scores = project.store.read(project.store.resolutions_path, ResolutionSet)
        control = None if scores is None else scores.controls.get(task.id)
        ledger = project.store.read(project.store.ledger_path, Ledger)
        flaky = {} if ledger is None else ledger.quarantined(task.id)
        controls = repairs.controls.get(task.id)
        shown = task_json(
            task, oracle, store=project.store.root, control=control, controls=controls
        )
        shown["quarantined"] = quarantined_json(flaky)
        if args.json:
            print(json.dumps(shown, indent=2))
        else:
            panel = task_panel(
                task,
                project.config,
                oracle,
                store=project.store.root,
                control=control,
                quarantined=flaky,
                controls=controls,
                failure=base_failure(project, task, controls),
            )
            stdout.print(panel)
        return 0
    if args.json:
        shown = taskset_json(taskset, oracles, store=project.store.root, repairs=repairs)
        print(json.dumps(shown, indent=2))
    else:
        stdout.print(tasks_table(taskset, project.config, oracles, repairs))
        stdout.print(funnel_table(taskset))
        decided = decided_table(taskset)
        if decided is not None:
            stdout.print(decided)
    return 0


def retry_lines(taskset: TaskSet) -> list[str]:
    """What the user should know about lookups asked again, or still to ask again."""
    lines = []
    unread = taskset.unread()
    if taskset.retried:
        lines.append(
            f"asked again for {taskset.retried} issue lookups the last mining could not "
            f"read; {unread} still unread"
        )
    if unread:
        lines.append(
            f"{unread} issue lookups failed for a reason that may pass (network, rate limit, "
            "server error); the next `bugbout tasks` or `bugbout run` asks again"
        )
    return lines


async def prompt_for(project: Project, task: Task, role: Role) -> str:
    """The prompt exactly as an attempt at `task` would get it."""
    if is_env(task):
        return await env_prompt_for(project, task)
    if not task.statement:
        raise UsageError(
            f"{task.id} has no issue text ({task.statement_missing}), so it is never raced."
        )
    cfg = project.config.project
    repo = open_repository(cfg.repository, project.dir)
    oracles = project.store.read(project.store.oracles_path, OracleSet)
    settled = settled_pythons(oracles)
    environment = await Environments(repo, cfg, settled=settled).for_task(task)
    base = await asyncio.to_thread(pristine_tree, repo, task.base_commit)
    tests_dir = tests_dir_at(base, cfg.tests, task.test_files) or cfg.tests
    return render_prompt(
        role,
        statement=task.statement,
        test_command=test_command(environment, cfg, tests_dir),
        tests_dir=tests_dir,
    )


async def env_prompt_for(project: Project, task: Task) -> str:
    """An environment task's prompt, as a contestant would get it: it needs the base
    control's failing output, so ground truth must have made it."""
    assert task.env is not None
    store = project.store
    repairs = store.read(store.repairs_path, RepairSet) or RepairSet()
    base = repairs.controls.get(task.id, {}).get(CONTROLS[0])
    log = failing_log(base) if base is not None else None
    if log is None:
        raise UsageError(
            f"{task.id} has no ground truth yet, and its prompt holds the failing output "
            "the ground truth records.",
            hint="`bugbout run --until ground-truth` makes it.",
        )
    cfg = project.config.project
    repo = open_repository(cfg.repository, project.dir)
    text = (store.root / log).read_text(encoding="utf-8", errors="replace")
    failure = failure_tail(text, paths=base_paths(repo, task))
    sources = EnvSources(project, repo)
    try:
        python = await Environments(repo, cfg).interpreter(task.env.python)
        index = await sources.index_for(task)
    finally:
        sources.close()
    return render_env_prompt(
        statement=task.statement,
        failure=failure,
        command=task.env.command,
        python=task.env.python,
        interpreter=str(python),
        index=index.simple,
        date=task.env.date,
    )


def _find(taskset: TaskSet, task_id: str) -> Task:
    for task in taskset.tasks:
        if task.id == task_id:
            return task
    known = ", ".join(task.id for task in taskset.tasks) or "none"
    raise UsageError(f"no task '{task_id}'; the tasks are: {known}")


def task_json(
    task: Task,
    oracle: Oracle | None = None,
    *,
    store: Path,
    control: Resolution | None = None,
    controls: Mapping[str, Repair] | None = None,
) -> dict[str, Any]:
    """The documented shape; `oracle` is added once ground truth has been stored, with
    its `logs` folder as a path under `store` (the store's root), and `control` (the
    gold control) once scoring has made it. An environment task has its `env` spec, and
    once ground truth has made them its `controls` (logs as paths under `store`) and
    whether they make it `scored`."""
    shown: dict[str, Any] = {
        "id": task.id,
        "kind": task.kind,
        "issue": task.issue,
        "title": task.title,
        "fix_commit": task.fix_commit,
        "base_commit": task.base_commit,
        "date": task.date.isoformat(),
        "source_files": task.source_files,
        "test_files": task.test_files,
        "added_tests": task.added_tests,
        "statement": task.statement,
        "statement_source": (
            task.statement_source.model_dump() if task.statement_source is not None else None
        ),
        "statement_note": task.statement_note,
        "statement_missing": task.statement_missing,
    }
    if task.env is not None:
        shown["env"] = task.env.model_dump(mode="json")
    if is_env(task) and controls:
        shown["controls"] = {
            name: _control_json(repair, store) for name, repair in controls.items()
        }
        problem = control_problem(controls)
        shown["scored"] = problem is None
        shown["reason"] = problem
    if oracle is not None:
        shown["oracle"] = oracle.model_dump(mode="json")
        shown["oracle"]["logs"] = _logs(oracle, store)
    if control is not None:
        shown["control"] = {
            "status": control.status,
            "fail_to_pass": control.fail_to_pass,
            "broken": control.broken,
            "detail": control.detail,
            "unreliable": unreliable_grader(control),
        }
    return shown


def _control_json(repair: Repair, store: Path) -> dict[str, Any]:
    """One control of an environment task, its logs as paths a person can open."""
    shown = repair.model_dump(mode="json")
    for step in ("install", "trace"):
        if shown.get(step) and shown[step].get("log"):
            shown[step]["log"] = str(store / shown[step]["log"])
    return shown


def _logs(oracle: Oracle, store: Path) -> str | None:
    """Where an oracle's pytest logs are, as a path a person can open."""
    return str(store / oracle.logs) if oracle.logs is not None else None


def taskset_json(
    taskset: TaskSet, oracles: OracleSet, *, store: Path, repairs: RepairSet | None = None
) -> dict[str, Any]:
    controls = repairs.controls if repairs is not None else {}
    return {
        "examined": taskset.examined,
        "tasks": [
            task_json(
                task, oracles.oracles.get(task.id), store=store, controls=controls.get(task.id)
            )
            for task in taskset.tasks
        ],
        "excluded": [
            {
                "commit": item.commit,
                "title": item.title,
                "reason": item.reason.value,
                "detail": item.detail,
            }
            for item in taskset.excluded
        ],
    }


def status_of(task: Task, config: Config) -> Text:
    decision = config.tasks.decision(task.id)
    if decision == "excluded":
        return Text("excluded", style="red")
    if decision == "accepted":
        return Text("accepted", style="green")
    if config.tasks.require_review:
        return Text("awaiting review", style="yellow")
    return Text("included", style="dim")


def oracle_text(oracle: Oracle | None) -> Text:
    if oracle is None:
        return Text("not run", style="dim")
    if not oracle.scored:
        return Text(inert_line(f"not scored: {oracle.reason}"), style="yellow")
    shown = f"{len(oracle.fail_to_pass)} fail→pass, {len(oracle.pass_to_pass)} pass→pass"
    if oracle.unstable:
        shown += f", {len(oracle.unstable)} unstable"
    return Text(shown, style="green")


def controls_text(controls: Mapping[str, Repair] | None) -> Text:
    """An environment task's ground truth: how its two controls ended, or why they
    keep it from being scored."""
    if not controls:
        return Text("not run", style="dim")
    problem = control_problem(controls)
    if problem is not None:
        return Text(inert_line(f"not scored: {problem}"), style="yellow")
    said = ", ".join(f"{name} {controls[name].status}" for name in CONTROLS)
    return Text(said, style="green")


def tasks_table(
    taskset: TaskSet, config: Config, oracles: OracleSet, repairs: RepairSet | None = None
) -> FittedTable:
    """One row per task. Narrower than it wants, it wraps the title, the issue text and
    the ground truth, then leaves out the issue number (the id carries it), the tests
    added, the files and the fix commit, in that order. A task set that holds
    environment tasks has a column for each task's kind."""
    kinds = {task.kind for task in taskset.tasks} != {"bug"} and bool(taskset.tasks)
    table = FittedTable(
        Column("id", style="bold"),
        *([Column("kind")] if kinds else []),
        Column("issue", "right", drop=4),
        Column("title", wrap=True, floor=16),
        Column("fix", style="cyan", drop=1),
        Column("files", drop=2),
        Column("tests added", "right", drop=3),
        Column("issue text", wrap=True, floor=12),
        Column("ground truth", wrap=True, floor=12),
        Column("status"),
        title=Text(f"{len(taskset.tasks)} tasks from {taskset.examined} changes examined"),
        caption=_caption(taskset),
    )
    controls = repairs.controls if repairs is not None else {}
    for task in taskset.tasks:
        env = task.env if is_env(task) else None
        files = f"{len(task.source_files)} src, {len(task.test_files)} test"
        if task.env is not None:
            files = look.plural(len(task.env.env_files), "env file")
        table.add_row(
            Text(inert_line(task.id)),
            *([kind_text(task)] if kinds else []),
            Text(issue_words(task)),
            Text(inert_line(task.title)),
            Text(task.fix_commit[:9]),
            Text(files),
            Text(str(len(task.added_tests)) if task.kind == "bug" else "–"),
            statement_text(task),
            oracle_text(oracles.oracles.get(task.id))
            if env is None
            else controls_text(controls.get(task.id)),
            status_of(task, config),
        )
    return table


def kind_text(task: Task) -> Text:
    """The kind cell: a bug to fix, or an environment to repair."""
    return Text(task.kind, style="magenta" if task.kind == "env" else "dim")


def statement_text(task: Task) -> Text:
    """The issue-text cell: where the text came from, or that there is none (the reasons
    are listed once under the table: one reason usually holds for many tasks). An
    environment task without one still races: its problem is its failing log."""
    if task.statement_source is not None:
        cut = " (cut)" if task.statement_source.cut else ""
        return Text(f"{task.statement_source.describe()}{cut}", style="green")
    if task.statement:
        return Text("ok", style="green")
    if is_env(task):
        return Text("failing log only", style="dim")
    return Text("missing", style="yellow")


def _caption(taskset: TaskSet) -> Group:
    """Where the issue text came from, and why each task without it has none."""
    missing: dict[str, list[str]] = {}
    for task in taskset.tasks:
        if not task.statement and not is_env(task):
            missing.setdefault(task.statement_missing or "unknown", []).append(task.id)
    lines = [PathText(Text(inert_line(f"issue text from {taskset.issue_source}"), "dim"))]
    for why, ids in missing.items():
        which = ", ".join(ids) if len(ids) <= 3 else f"{len(ids)} tasks"
        line = f"issue text missing ({which}), so never raced: {why}"
        lines.append(PathText(Text(inert_line(line), "yellow")))
    return Group(*lines)


def funnel_table(taskset: TaskSet) -> FittedTable:
    table = FittedTable(
        Column("reason", style="bold"),
        Column("changes", "right"),
        Column("meaning", wrap=True, style="dim"),
        title=Text("left out"),
    )
    for reason, count in taskset.funnel().items():
        if count:
            table.add_row(Text(reason), Text(str(count)), Text(REASON_TEXT[Reason(reason)]))
    kept = Text("kept as tasks", style="green")
    table.add_row(kept, Text(str(len(taskset.tasks)), style="green"), Text(""))
    return table


def decided_table(taskset: TaskSet) -> FittedTable | None:
    """The changes whose reason an issue or pull request gave, each with its particulars."""
    rows = [item for item in taskset.excluded if item.detail is not None]
    if not rows:
        return None
    table = FittedTable(
        Column("fix", style="cyan", drop=1),
        Column("title", wrap=True, floor=16),
        Column("reason", style="bold"),
        Column("why", wrap=True, floor=16),
        title=Text("left out, and why in particular"),
    )
    for item in rows:
        why = item.detail or ""
        if item.retry:
            why += " (asked again next run)"
        table.add_row(
            Text(item.commit[:9]),
            Text(inert_line(item.title)),
            Text(item.reason.value),
            Text(inert_line(why)),
        )
    return table


def task_panel(
    task: Task,
    config: Config,
    oracle: Oracle | None,
    *,
    store: Path,
    control: Resolution | None = None,
    quarantined: Mapping[str, Mapping[str, OutcomeTally]] | None = None,
    controls: Mapping[str, Repair] | None = None,
    failure: Text | None = None,
) -> Panel:
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    named = f" (named as #{task.reference.number})" if task.reference.number != task.issue else ""
    facts.add_row(Text("title"), Text(inert_line(task.title)))
    facts.add_row(Text("kind"), kind_text(task))
    facts.add_row(Text("issue"), Text(issue_words(task) + named))
    if task.statement_source is not None:
        facts.add_row(Text("text from"), Text(inert_line(task.statement_source.describe())))
        cut = task.statement_source.cut
        facts.add_row(Text("cut"), Text(inert_line(", ".join(cut)) if cut else "nothing"))
    if task.statement_note:
        facts.add_row(Text("note"), Text(inert_line(task.statement_note)))
    facts.add_row(Text("fix"), Text(f"{task.fix_commit}  {task.date:%Y-%m-%d}"))
    facts.add_row(Text("base"), Text(task.base_commit))
    if task.env is None:
        facts.add_row(Text("source files"), Text(inert_line(", ".join(task.source_files))))
        facts.add_row(Text("test files"), Text(inert_line(", ".join(task.test_files))))
        facts.add_row(Text("tests added"), Text(inert_line(", ".join(task.added_tests))))
    for label, words in env_task_rows(task):
        facts.add_row(Text(label), Text(inert(words)))
    if is_env(task):
        _control_rows(facts, controls, store)
    facts.add_row(Text("status"), status_of(task, config))
    if is_env(task):
        facts.add_row(Text("ground truth"), controls_text(controls))
    else:
        facts.add_row(Text("ground truth"), oracle_text(oracle))
    if oracle is not None and (logs := _logs(oracle, store)) is not None:
        facts.add_row(
            Text("test logs"),
            Text(inert_line(f"{logs}/ ({', '.join(log_names(config.tasks.reruns))})")),
        )
    if oracle is not None:
        for label, text in environment_rows(oracle):
            facts.add_row(Text(label), Text(inert(text)))
    if oracle is not None:
        for label, tests in (
            ("fail→pass", oracle.fail_to_pass),
            ("pass→pass", oracle.pass_to_pass),
            ("unstable", oracle.unstable),
        ):
            if tests:
                facts.add_row(Text(label), Text("\n".join(map(inert_line, tests))))
    if control is not None:
        facts.add_row(Text("gold control"), control_text(control))
    if quarantined:
        lines = quarantined_lines(quarantined)
        facts.add_row(Text("quarantined"), Text("\n".join(map(inert_line, lines)), "yellow"))
    if task.statement:
        statement = Text(inert(task.statement))
    elif is_env(task):
        statement = Text("No issue text: the base's failing output and the command.")
    else:
        statement = Text(inert(f"No issue text: {task.statement_missing}"), style="yellow")
    parts: list[Text | Table] = [
        facts,
        Text(""),
        Text("What the agents are told", style="bold underline"),
        statement,
    ]
    if failure is not None:
        parts += [Text(""), Text("The failing output they are given", style="bold"), failure]
    body = Group(*parts)
    # The title goes inside, where it wraps: a panel's own title is cut to one line.
    return Panel(body, title=Text(inert_line(task.id)), title_align="left")


def base_failure(
    project: Project, task: Task, controls: Mapping[str, Repair] | None
) -> Text | None:
    """The tail of an environment task's base control's failing output, as the agents
    get it; None for a bug, or before ground truth."""
    base = (controls or {}).get(CONTROLS[0])
    log = failing_log(base) if base is not None and is_env(task) else None
    if log is None:
        return None
    path = project.store.root / log
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return Text(f"(its log {path} cannot be read)", style="yellow")
    repo = open_repository(project.config.project.repository, project.dir)
    return Text(inert(failure_tail(text, paths=base_paths(repo, task))), style="dim")


def _control_rows(facts: Table, controls: Mapping[str, Repair] | None, store: Path) -> None:
    """How each control of an environment task ended, and where its logs are."""
    for name, repair in (controls or {}).items():
        logs = [step.log for step in (repair.install, repair.trace) if step and step.log]
        words = repair.status + (f": {repair.detail}" if repair.detail else "")
        facts.add_row(Text(f"{name} control"), Text(inert_line(words)))
        if logs:
            shown = ", ".join(str(store / log) for log in logs)
            facts.add_row(Text(f"{name} logs"), Text(inert_line(shown)))


def control_text(control: Resolution) -> Text:
    """The gold control's outcome: the maintainers' fix, scored as a patch is."""
    style = "yellow" if unreliable_grader(control) is not None else "green"
    return Text(inert_line(control_words(control)), style=style)


def quarantined_json(
    quarantined: Mapping[str, Mapping[str, OutcomeTally]],
) -> list[dict[str, Any]]:
    """The task's quarantined tests with their evidence, tree by tree."""
    return [
        {
            "author": author,
            "test": test,
            "runs": tally.runs,
            "passes": tally.passes,
            "fails": tally.fails,
            "trees": [on.model_dump() for on in tally.trees.values()],
        }
        for author, tests in quarantined.items()
        for test, tally in sorted(tests.items())
    ]
