"""A scripted coding agent for the demo, run by bugbout as an ordinary `command` agent.

    python -m bugbout_tui.demo.agent --style careful --prompt-file PROMPT

It works the way a real agent is made to: it reads the prompt bugbout gives it, works in
the history-free working copy it is started in, edits files there, runs the tests with
the command the prompt names, and prints what it is doing. Where a real agent would
think, it looks the issue up in `bugs.PLAYBOOKS`: the words that give a bug away and
what an agent of its style does about it. It never sees the fix, the maintainers' tests
or the history; bugbout's sandbox hides them, and nothing here asks for them.

A checkout of one of the Lite projects is an environment task: the agent recognises the
project by its files (`lite_playbooks.recognise_checkout`) and edits what the project
declares it needs, as `lite_playbooks.ENV_PLAYBOOKS` says its style does.

Styles:

- careful: fixes every bug it recognises, with a regression test, and checks it.
- hasty: fixes the example in the issue, sometimes wrongly, and runs nothing.
- slow: fixes like careful, but takes its time, so the live board has something to show.
- rationed: fixes like careful until its plan's usage limit, counted in `--state-dir`;
  the plan refills `--window` seconds after it first turns an attempt away, and allows
  `--cap` attempts at most in ten minutes.
- examiner: writes tests from the issue and touches no source file.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO, cast

from bugbout_tui.demo.bugs import STYLES, Recipe, Style, recognise
from bugbout_tui.demo.lite_playbooks import EnvPlaybook, recognise_checkout

PACES: dict[Style, float] = {
    "careful": 0.1,
    "hasty": 0.0,
    "slow": 0.35,
    "rationed": 0.1,
    "examiner": 0.1,
}
"""Seconds each style pauses after a line of progress."""

LIMIT_MESSAGE = "You've hit your usage limit."
"""The wording real agents use, which bugbout's usage-limit patterns recognise."""
USAGE_FILE = "usage.json"
DEFAULT_WINDOW = 600.0
"""How long the rationed agent's plan takes to refill once spent, in seconds."""
CAP_WINDOW = 600.0
"""The span of the rationed agent's larger limit (`--cap`), from its first attempt."""
TEST_TIMEOUT = 120.0

_TEST_COMMAND = re.compile(r"^ {4}(\S.*\bpytest\b.*)$", re.MULTILINE)
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - .*)?$", re.MULTILINE)
_SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed|error).*?)\s*=*$", re.MULTILINE)


def issue_text(prompt: str) -> str:
    """The issue inside the prompt's `<issue>` tags; the whole prompt when there are none."""
    start, end = prompt.find("<issue>"), prompt.find("</issue>")
    if start < 0 or end < start:
        return prompt
    return prompt[start + len("<issue>") : end].strip()


def test_command(prompt: str) -> str | None:
    """The command line the prompt says runs the project's tests."""
    found = _TEST_COMMAND.search(prompt)
    return found.group(1).strip() if found else None


def spend_allowance(
    state_dir: Path, allowance: int, window: float, now: float, *, cap: int | None = None
) -> str | None:
    """Count one attempt against the plan; the usage-limit message once it is spent.

    The plan allows `allowance` attempts, then refills `window` seconds after the first
    attempt it turned away, like a vendor's limit that names its reset. Anchored there,
    the third attempt is turned away however fast or slow the machine runs the first
    two. Over that, `cap` attempts at most in `CAP_WINDOW` from the first one (a weekly
    limit beside the five-hour one). A reset is named to the second, rounded up, so it
    is never too early.
    """
    path = state_dir / USAGE_FILE
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = {}
    plan = recorded if isinstance(recorded, dict) else {}
    used, total = _count(plan.get("used")), _count(plan.get("total"))
    refills, first = _moment(plan.get("refills_at")), _moment(plan.get("first_at"))
    if refills is not None and now >= refills:
        used, refills = 0, None
    if first is not None and now >= first + CAP_WINDOW:
        total, first = 0, None
    resets: float | None = None
    if cap is not None and first is not None and total >= cap:
        resets = first + CAP_WINDOW
    elif used >= allowance:
        resets = refills = now + window if refills is None else refills
    else:
        used, total, first = used + 1, total + 1, now if first is None else first
    state_dir.mkdir(parents=True, exist_ok=True)
    plan = {"used": used, "refills_at": refills, "total": total, "first_at": first}
    path.write_text(json.dumps(plan), encoding="utf-8")
    if resets is None:
        return None
    when = time.strftime("%H:%M:%S", time.localtime(math.ceil(resets)))
    return f"{LIMIT_MESSAGE} Try again later (your limit resets at {when})."


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


def _moment(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


@dataclass
class TestReport:
    returncode: int
    summary: str
    failed: list[str] = field(default_factory=list)
    """Node ids of the tests that failed or errored."""


def run_tests(command: str, workdir: Path) -> TestReport:
    """Run the project's tests as the prompt says; quietly, without third-party plugins."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    try:
        done = subprocess.run(
            ["sh", "-c", f"{command} -q"],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=TEST_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return TestReport(-1, f"the tests did not finish within {TEST_TIMEOUT:.0f}s")
    output = done.stdout + done.stderr
    summaries = _SUMMARY.findall(output)
    summary = summaries[-1] if summaries else f"pytest exited with {done.returncode}"
    return TestReport(done.returncode, summary, _FAILED.findall(output))


class DemoAgent:
    """One scripted agent of one style, working in `workdir`."""

    def __init__(self, style: Style, workdir: Path, *, pace: float, out: TextIO) -> None:
        self.style = style
        self.workdir = workdir
        self.pace = pace
        self.out = out

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)
        if self.pace:
            time.sleep(self.pace)

    def run(self, prompt: str) -> int:
        issue = issue_text(prompt)
        title = issue.splitlines()[0].lstrip("# ").strip() if issue else "(empty)"
        self.say(f"reading the issue: {title}")
        environment = recognise_checkout(self.workdir)
        if environment is not None:
            return self._repair_environment(environment)
        book = recognise(issue)
        if book is None:
            self.say("I cannot tell which code this issue is about; leaving everything as it is.")
            return 0
        recipe = book.recipe(self.style)
        for path in recipe.reads:
            self.say(f"reading {path} ({self._lines(path)})")
        command = test_command(prompt)
        if self.style == "slow" and command is not None:
            self.say("running the tests before changing anything...")
            self.say(f"tests: {run_tests(command, self.workdir).summary}")
        if not self._change(recipe):
            return 1
        if command is not None and self.style != "hasty" and recipe.tests is not None:
            self._check(recipe, command)
        if recipe.says:
            self.say(recipe.says)
        return 0

    def _repair_environment(self, book: EnvPlaybook) -> int:
        """Edit the environment files as the style does; no tests to write or run."""
        recipe = book.recipe(self.style)
        for path in recipe.reads:
            self.say(f"reading {path} ({self._lines(path)})")
        if not self._change(recipe):
            return 1
        self.say(recipe.says)
        return 0

    def _lines(self, path: str) -> str:
        try:
            text = (self.workdir / path).read_text(encoding="utf-8")
        except OSError:
            return "not found"
        return f"{len(text.splitlines())} lines"

    def _change(self, recipe: Recipe) -> bool:
        """Make the recipe's edits and write its tests; nothing at all if any edit misfits."""
        edited: dict[Path, str] = {}
        for edit in recipe.edits:
            path = self.workdir / edit.path
            try:
                before = edited[path] if path in edited else path.read_text(encoding="utf-8")
                edited[path] = edit.apply(before)
            except (OSError, ValueError) as error:
                self.say(f"{error}: the code is not what I expected; stopping without a change")
                return False
        for path, text in edited.items():
            self.say(f"editing {path.relative_to(self.workdir)}")
            path.write_text(text, encoding="utf-8")
        if recipe.tests is not None:
            self.say(f"writing {recipe.tests.path}")
            target = self.workdir / recipe.tests.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(recipe.tests.text, encoding="utf-8")
        return True

    def _check(self, recipe: Recipe, command: str) -> None:
        assert recipe.tests is not None
        self.say("running the tests...")
        report = run_tests(command, self.workdir)
        self.say(f"tests: {report.summary}")
        if self.style != "examiner":
            return
        mine = [t for t in report.failed if t.startswith(recipe.tests.path + "::")]
        written = len(re.findall(r"^def test_", recipe.tests.text, re.MULTILINE))
        if mine:
            self.say(
                f"{len(mine)} of my {written} tests {'fails' if len(mine) == 1 else 'fail'} "
                "on this code, as they should"
            )
        else:
            self.say(f"none of my {written} tests fails on this code")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bugbout_tui.demo.agent",
        description="A scripted coding agent for bugbout's demo; run it in a working copy.",
    )
    parser.add_argument("--style", choices=STYLES, required=True)
    parser.add_argument("--prompt-file", type=Path, required=True, metavar="PATH")
    parser.add_argument(
        "--pace", type=float, default=None, help="seconds to pause after each line of progress"
    )
    parser.add_argument(
        "--state-dir", type=Path, metavar="DIR", help="where a rationed plan counts attempts"
    )
    parser.add_argument("--allowance", type=int, default=2, help="attempts per window")
    parser.add_argument(
        "--cap", type=int, default=None, help=f"attempts at most in {CAP_WINDOW:g} seconds"
    )
    parser.add_argument(
        "--window", type=float, default=DEFAULT_WINDOW, help="seconds a spent plan takes to refill"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.pace is not None and args.pace < 0:
        parser.error("--pace cannot be negative")
    style = cast(Style, args.style)
    try:
        prompt = args.prompt_file.read_text(encoding="utf-8")
    except OSError as error:
        print(f"cannot read the prompt: {error}", file=sys.stderr)
        return 2
    if style == "rationed" and args.state_dir is not None:
        limit = spend_allowance(
            args.state_dir, args.allowance, args.window, time.time(), cap=args.cap
        )
        if limit is not None:
            print(limit, flush=True)
            return 1
    pace = PACES[style] if args.pace is None else args.pace
    return DemoAgent(style, Path.cwd(), pace=pace, out=sys.stdout).run(prompt)


if __name__ == "__main__":
    raise SystemExit(main())
