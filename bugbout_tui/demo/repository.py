"""The sample repository's history, replayed with plain `git` from the patches in `history/`.

Each change of invoicekit is one patch file in `history/`, oldest first, as `git
diff-tree -p` shows that commit; `invoicekit/` holds the project as the last one leaves
it, for reading, linting and running its tests. The commit messages, and which changes
came as pull requests, are listed here beside their patches.

The history is written with a fixed identity and fixed dates and without the user's git
configuration, so every machine gets the same shas. It holds six real bug fixes (each
with the maintainers' new test and an issue reference in a different form) among
features, a refactor, docs, a release and four fixes the mining rules leave out, so the
funnel in the report has every step to show.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.demo.bugs import (
    DISCOUNT_TWICE,
    HALF_CENTS,
    MONTH_END,
    NUMBER_WIDTH,
    SLUG_ACCENTS,
    THOUSANDS,
    Bug,
    read_data,
)

_IDENTITY = {
    "GIT_AUTHOR_NAME": "invoicekit maintainers",
    "GIT_AUTHOR_EMAIL": "maintainers@invoicekit.invalid",
    "GIT_COMMITTER_NAME": "invoicekit maintainers",
    "GIT_COMMITTER_EMAIL": "maintainers@invoicekit.invalid",
}
_START = datetime(2024, 2, 5, 9, 30, tzinfo=UTC)


@dataclass(frozen=True)
class Change:
    """One change on the main branch: its message and its patch in `history/`.

    A change with `pull` is a pull request: committed on a side branch and merged with
    GitHub's merge message, so the main branch sees one merge commit.
    """

    message: str
    patch: str
    pull: int | None = None
    branch: str = ""


def _fix(bug: Bug, message: str, *, pull: int | None = None, branch: str = "") -> Change:
    """The maintainers' fix of `bug`: their source change and their new test."""
    return Change(message, bug.patch, pull=pull, branch=branch)


def history() -> list[Change]:
    """Every change of the sample repository, oldest first."""
    return [
        Change("Start invoicekit: money amounts, invoices and line items", "01-start.patch"),
        Change("Add due dates and monthly renewals", "02-due-dates.patch"),
        Change("Add invoice numbering", "03-numbering.patch"),
        Change("Render invoices as text, and name their PDF files", "04-render.patch"),
        _fix(DISCOUNT_TWICE, "Fix discounted totals shrinking each time they are computed (#4)"),
        Change("Document how amounts are parsed and rounded", "06-docs-amounts.patch"),
        _fix(MONTH_END, "fix(dates): add_months crashes at the end of long months (fixes #7)"),
        Change("Add CSV import and export of invoice lines (fixes #8)", "08-csv.patch"),
        Change(
            "Fix a crash rendering an invoice without lines", "09-fix-render-without-lines.patch"
        ),
        _fix(NUMBER_WIDTH, "Fix six-digit invoice numbers losing digits (#11)"),
        Change("Add payment reminders", "11-reminders.patch"),
        _fix(HALF_CENTS, "Fix half-cent rounding of line amounts (#5)"),
        Change(
            "Refactor: lay out the rows of render_text in one helper",
            "13-refactor-render-rows.patch",
        ),
        Change("Fix amounts shown without the invoice's currency (#14)", "14-fix-currency.patch"),
        _fix(THOUSANDS, "Fix parse_amount for amounts with thousands separators (#16)"),
        Change("Fix wording of the payment reminder (#17)", "16-fix-reminder-wording.patch"),
        _fix(
            SLUG_ACCENTS,
            "Fix slugs of customer names with accents\n\nFixes #18. Letters are decomposed "
            '(NFKD) and their accents dropped,\nso the PDF of "Café Olé" is '
            "invoice-cafe-ole-....pdf again.",
            pull=19,
            branch="slug-accents",
        ),
        Change("Fix broken link in the README", "18-fix-readme-link.patch"),
        Change("Release 0.4.0", "19-release-0.4.0.patch"),
    ]


def _git_env(when: datetime) -> dict[str, str]:
    """git without the user's configuration, as the maintainers, at `when`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_IDENTITY)
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_DATE=when.isoformat(),
        GIT_COMMITTER_DATE=when.isoformat(),
        LC_ALL="C",
    )
    return env


def _git(repo: Path, *args: str, when: datetime = _START, stdin: str | None = None) -> None:
    argv = ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args]
    try:
        subprocess.run(
            argv,
            cwd=repo,
            env=_git_env(when),
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=True,
        )
    except FileNotFoundError:
        raise BugboutError(
            "The demo needs git to build its sample repository, and git is not installed.",
            hint="Install git with your package manager, e.g. `apt-get install git`.",
        ) from None
    except subprocess.CalledProcessError as error:
        raise BugboutError(
            f"git {args[0]} failed while building the demo repository in {repo}: "
            f"{error.stderr.strip() or error.stdout.strip()}"
        ) from None


def write_repository(repo: Path) -> None:
    """Create the sample repository at `repo` (which must not exist) with its whole history.

    Changes land a day or two apart at working hours, from a fixed start, so the shas are
    the same on every machine.
    """
    repo.mkdir(parents=True)
    _git(repo, "init", "--quiet", "--initial-branch=main")
    when = _START
    for index, change in enumerate(history()):
        when += timedelta(days=1 + index % 3, hours=(index * 5) % 7 - 3)
        if change.pull is None:
            _commit(repo, change, change.message, when)
            continue
        _git(repo, "switch", "--quiet", "--create", change.branch, when=when)
        _commit(repo, change, change.message.splitlines()[0], when - timedelta(hours=20))
        _git(repo, "switch", "--quiet", "main", when=when)
        merge = f"Merge pull request #{change.pull} from contributor/{change.branch}"
        message = f"{merge}\n\n{change.message}\n"
        _git(repo, "merge", "--quiet", "--no-ff", "-m", message, change.branch, when=when)
        _git(repo, "branch", "--quiet", "-d", change.branch, when=when)


def _commit(repo: Path, change: Change, message: str, when: datetime) -> None:
    _git(repo, "apply", "-", when=when, stdin=read_data(f"history/{change.patch}"))
    _git(repo, "add", "--all", when=when)
    _git(
        repo, "commit", "--quiet", "--cleanup=verbatim", "-F", "-", when=when, stdin=message + "\n"
    )
