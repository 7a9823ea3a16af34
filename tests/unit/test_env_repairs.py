"""Environment tasks' decisions that need no disk: which controls make a task scored, what
an agent is shown of the failure, what a repair is before anything is installed."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from bugbout_tui.core.env_models import EnvInstall, EnvTrace, Repair, RepairStatus
from bugbout_tui.core.events import AttemptStatus, EnvRunFinished, EnvRunStarted
from bugbout_tui.core.models import Attempt
from bugbout_tui.core.patch import FileChange, Patch
from bugbout_tui.engine.lite import lite_digest, lite_index_label
from bugbout_tui.engine.state import BoutState
from bugbout_tui.rules.env_repairs import (
    BASE_PASSES,
    GOLD_FAILS,
    NO_CONTROLS,
    control_problem,
    failing_log,
    failure_tail,
    network_note,
    repair_without_run,
)
from bugbout_tui.rules.prompts import render_env_prompt

WHEN = datetime(2024, 1, 1, tzinfo=UTC)


def repair(status: RepairStatus, detail: str | None = None, **steps: object) -> Repair:
    return Repair.model_validate(
        {"task": "t", "contestant": "c", "status": status, "detail": detail, **steps}
    )


def attempt(status: AttemptStatus, *paths: str, detail: str | None = None) -> Attempt:
    files = [FileChange(path=p, status="modified", part="other", added_lines=1) for p in paths]
    return Attempt(
        task="t",
        contestant="agent",
        status=status,
        detail=detail,
        started_at=WHEN,
        ended_at=WHEN,
        seconds=1.0,
        patch=Patch(files=files),
        logdir="",
    )


def test_a_task_is_scored_when_its_base_fails_and_its_known_repair_resolves() -> None:
    good = {"base": repair("install-failed"), "gold": repair("resolved")}
    assert control_problem(good) is None
    assert control_problem({**good, "base": repair("run-failed")}) is None


@pytest.mark.parametrize(
    ("base", "gold", "said"),
    [
        (None, None, NO_CONTROLS),
        (repair("install-failed"), None, NO_CONTROLS),
        (repair("not-run", "git archive failed"), repair("resolved"), NO_CONTROLS),
        (repair("resolved"), repair("resolved"), BASE_PASSES),
        (repair("install-failed"), repair("run-failed", "exited with 1"), GOLD_FAILS),
    ],
)
def test_why_a_task_is_not_scored(base: Repair | None, gold: Repair | None, said: str) -> None:
    controls = {name: r for name, r in (("base", base), ("gold", gold)) if r is not None}
    assert control_problem(controls) == said


def test_the_failing_log_is_the_step_that_failed() -> None:
    failed_install = repair(
        "install-failed", install=EnvInstall(ok=False, log="logs/env/t/controls/base/install.log")
    )
    failed_run = repair(
        "run-failed",
        install=EnvInstall(ok=True, log="install.log"),
        trace=EnvTrace(ok=False, log="trace.log"),
    )
    assert failing_log(failed_install) == "logs/env/t/controls/base/install.log"
    assert failing_log(failed_run) == "trace.log"
    assert failing_log(repair("not-run")) is None


def test_the_failure_shown_is_the_tail_with_scratch_paths_named_as_the_agent_knows_them() -> None:
    text = "\n".join(f"line {n}" for n in range(1, 301))
    text += "\n$ uv pip install -r /w/t/tree/requirements.txt --python /w/t/venv\n"

    shown = failure_tail(text, limit=200, paths={"/w/t/tree": ".", "/w/t/venv": "<environment>"})

    assert shown.splitlines()[-1] == "$ uv pip install -r ./requirements.txt --python <environment>"
    assert shown.splitlines()[0].startswith("[... ") and "earlier lines not shown]" in shown
    assert len(shown) <= 200 + len(shown.splitlines()[0]) + 1
    assert failure_tail("short\n") == "short"


@pytest.mark.parametrize(
    ("status", "paths", "expected", "detail"),
    [
        ("quota", ["requirements.txt"], "not-run", "limit reached"),
        ("budget", [], "not-run", "limit reached"),
        ("skipped", [], "not-run", "limit reached"),
        ("crashed", ["requirements.txt"], "no-repair", "the agent crashed (limit reached)"),
        ("timeout", [], "no-repair", "the agent ran out of time (limit reached)"),
        ("no-change", [], "no-repair", "no change to an environment file"),
        (
            "finished",
            ["requirements.txt", "src/pkg/core.py"],
            "rejected",
            "it changed 1 file that is not an environment file",
        ),
    ],
)
def test_a_repair_known_without_installing_it(
    status: AttemptStatus, paths: list[str], expected: RepairStatus, detail: str
) -> None:
    found = repair_without_run(attempt(status, *paths, detail="limit reached"), network="n")
    assert found is not None
    assert (found.status, found.detail, found.network) == (expected, detail, "n")
    if expected == "rejected":
        assert found.rejected_files == ["src/pkg/core.py"]
        assert found.changed == ["requirements.txt"]
        assert found.install is None and found.trace is None


def test_a_change_to_environment_files_alone_is_installed() -> None:
    changed = attempt("finished", "requirements.txt", "pyproject.toml")
    assert repair_without_run(changed, network="n") is None


def test_the_network_note_says_what_could_not_be_logged() -> None:
    confined = network_note("bubblewrap", confined=True)
    assert "bubblewrap sandbox with the network open" in confined
    assert "not known" in confined and "no history" in confined
    unconfined = network_note("none", confined=False)
    assert "ran unconfined" in unconfined and "builds ran on this machine" in unconfined
    assert "builds ran on this machine" not in confined


def test_the_prompt_of_an_environment_task() -> None:
    common = {
        "failure": "error: no version of shapes==9.9",
        "command": ["python", "-m", "pytest", "-q", "tests dir"],
        "python": "3.11",
        "interpreter": "/usr/bin/python3.11",
        "index": "https://index.example/simple",
        "date": WHEN,
    }
    with_issue = render_env_prompt(statement="It does not install.", **common)  # type: ignore[arg-type]
    without = render_env_prompt(statement=None, **common)  # type: ignore[arg-type]

    assert "<issue>\nIt does not install.\n</issue>" in with_issue
    assert "<issue>" not in without
    for prompt in (with_issue, without):
        assert "<failure>\nerror: no version of shapes==9.9\n</failure>" in prompt
        assert "    python -m pytest -q 'tests dir'\n" in prompt
        assert "https://index.example/simple" in prompt and "2024-01-01 00:00:00+00:00" in prompt
        assert "/usr/bin/python3.11" in prompt
        assert "rejects the whole repair" in prompt
        assert "pytest runs the command, and it is bugbout's" in prompt
        assert "taken as of Python 3.11's release" in prompt
    other = render_env_prompt(statement=None, **{**common, "command": ["python", "run.py"]})  # type: ignore[arg-type]
    assert "bugbout's" not in other


def test_environment_runs_on_the_board() -> None:
    state = BoutState()
    state.apply(EnvRunStarted(task="t", label="base"))
    state.apply(EnvRunStarted(task="t", label="codex"))
    assert state.env_runs_running == {"t/base": "base", "t/codex": "codex"}

    state.apply(EnvRunFinished(task="t", label="base", status="install-failed", seconds=2.0))

    assert state.env_runs_running == {"t/codex": "codex"}
    assert state.env_runs == {"t/base": "install-failed"}


def test_the_lite_set_is_named_by_its_content() -> None:
    digest = lite_digest()
    assert re.fullmatch(r"[0-9a-f]{16}", digest) and lite_digest() == digest
    assert digest in lite_index_label()
